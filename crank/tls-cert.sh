#!/usr/bin/env bash
# Makes the one TLS certificate every proxy and origin of a run presents (benchmarks.yml's serverScheme and
# downstreamScheme = https), so that all of them do the same handshake work: a self-signed ECDSA P-256 certificate
# (the cheap common choice of TLS benchmarks), valid for 2 days, for "localhost", 127.0.0.1 and the addresses given.
#
# usage: crank/tls-cert.sh DIR [ADDRESS...]
# Writes DIR/cert.pem, DIR/key.pem and DIR/ca.pem (the certificate itself, the one authority the clients and the
# proxies' downstream sides trust). An existing set with
# every asked address is kept, so every job of a run shares it. Prints DIR/cert.pem's subject and names.
set -euo pipefail
dir="${1:?usage: crank/tls-cert.sh DIR [ADDRESS...]}"; shift
command -v openssl > /dev/null || { echo "tls-cert: openssl not found (apt-get install -y openssl)" >&2; exit 2; }
names="DNS:localhost,IP:127.0.0.1"
for a in "$@"; do
  if [[ "$a" =~ ^[0-9.]+$ || "$a" == *:* ]]; then name="IP:$a"; else name="DNS:$a"; fi
  [[ ",$names," == *",$name,"* ]] || names="$names,$name"
done
mkdir -p "$dir"
if [ -s "$dir/cert.pem" ] && [ -s "$dir/key.pem" ] && [ "$(cat "$dir/names" 2>/dev/null)" = "$names" ]; then
  exit 0
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
  -addext "subjectAltName=$names" -keyout "$dir/key.pem" -out "$dir/cert.pem" 2> "$dir/openssl.log" \
  || { cat "$dir/openssl.log" >&2; exit 1; }
cp "$dir/cert.pem" "$dir/ca.pem"
echo "$names" > "$dir/names"
echo "tls-cert: $dir/cert.pem, ECDSA P-256, self-signed, $names"
