#!/usr/bin/env bash
# crank "executable" job (and run-local.sh job) that runs Debian's HAProxy as the proxy (port 8080 by default).
#
# It validates crank/haproxy/haproxy.cfg ("haproxy -c"), starts a background probe that prints the
# ready line once the port accepts connections, then exec's "haproxy -db" (foreground, no master
# process) so that the PID the crank agent tracks is the HAProxy process doing the work. HAProxy
# exits on SIGTERM (hard stop) and SIGUSR1 (soft stop).
#
# Environment (all optional; set but empty is an error, so that a forgotten benchmarks.yml variable
# is never replaced by a default):
#   LISTEN_ADDRESS (127.0.0.1; 0.0.0.0 = every interface)  LISTEN_PORT (8080)
#   DOWNSTREAM_ADDRESS (127.0.0.1)  DOWNSTREAM_PORT (8081)
#   DOWNSTREAMS    several replicas instead, "ADDRESS:PORT ADDRESS:PORT ...": one "server" line each (the same
#                  maxconn), balanced round-robin (HAProxy's default); the scaling comparison sets it. The config is
#                  then rendered into a temp file, removed when HAProxy exits.
#   HAPROXY_THREADS (1)  HAPROXY (/usr/sbin/haproxy)  READY_TIMEOUT (30 s)
#   TLS_CERT, TLS_KEY  listen with TLS (benchmarks.yml's serverScheme=https): this PEM certificate and key
#                  (crank/tls-cert.sh), joined into TLS_CERT.haproxy.pem, the one file HAProxy's "crt" reads
#   DOWNSTREAM_TLS_CA  connect to the upstream over TLS (downstreamScheme=https), verifying its certificate against
#                  this PEM file for the name "localhost", SNI "localhost"
#   PROTOCOLS      what the listener speaks (benchmarks.yml's protocols): http1 (default; empty is the default too),
#                  h2 or http1,h2: with TLS_CERT, the ALPN list (http/1.1, h2, h2,http/1.1); without, h2 is
#                  prior-knowledge h2c ("proto h2") and http1,h2 is refused (ALPN needs TLS). The upstream stays HTTP/1.1
#   HAPROXY_FORWARDFOR  set (to anything): "option forwardfor", X-Forwarded-For to the upstream (haproxy.cfg)
# Ready line (crank readyStateText): "haproxy-job: ready"
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${LISTEN_ADDRESS=127.0.0.1}" "${LISTEN_PORT=8080}"
: "${DOWNSTREAM_ADDRESS=127.0.0.1}" "${DOWNSTREAM_PORT=8081}"
: "${HAPROXY_THREADS:=1}" "${HAPROXY:=/usr/sbin/haproxy}" "${READY_TIMEOUT:=30}"
export LISTEN_ADDRESS LISTEN_PORT DOWNSTREAM_ADDRESS DOWNSTREAM_PORT HAPROXY_THREADS
# haproxy.cfg's ".if defined(...)" blocks choose TLS on either side.
if [ -n "${TLS_CERT:-}" ]; then
  [ -r "$TLS_CERT" ] && [ -r "${TLS_KEY:-}" ] || { echo "haproxy-job: TLS_CERT and TLS_KEY must be readable files" >&2; exit 2; }
  cat "$TLS_CERT" "$TLS_KEY" > "$TLS_CERT.haproxy.pem"
  export HAPROXY_TLS_CRT="$TLS_CERT.haproxy.pem"
fi
case "${PROTOCOLS:-http1}" in
  http1) alpn=http/1.1 ;;
  h2) alpn=h2; [ -n "${TLS_CERT:-}" ] || export HAPROXY_H2C=1 ;;
  http1,h2)
    [ -n "${TLS_CERT:-}" ] || { echo "haproxy-job: PROTOCOLS=http1,h2 needs TLS (ALPN chooses); a cleartext port speaks http1 or prior-knowledge h2c (h2)" >&2; exit 2; }
    alpn=h2,http/1.1 ;;
  *) echo "haproxy-job: PROTOCOLS='$PROTOCOLS' is not http1, h2 or http1,h2" >&2; exit 2 ;;
esac
export HAPROXY_ALPN="$alpn"
if [ -n "${DOWNSTREAM_TLS_CA:-}" ]; then
  [ -r "$DOWNSTREAM_TLS_CA" ] || { echo "haproxy-job: DOWNSTREAM_TLS_CA must be a readable file" >&2; exit 2; }
  export HAPROXY_DOWNSTREAM_CA="$DOWNSTREAM_TLS_CA"
fi

[ -x "$HAPROXY" ] || { echo "haproxy-job: $HAPROXY not found (apt-get install -y haproxy)" >&2; exit 2; }
[ -n "$LISTEN_ADDRESS" ] || { echo "haproxy-job: LISTEN_ADDRESS is empty (benchmarks.yml: serverListenAddress / serverAddress)" >&2; exit 2; }
"$here/require-address.sh" --listen "LISTEN_ADDRESS=$LISTEN_ADDRESS" --target "DOWNSTREAM_ADDRESS=$DOWNSTREAM_ADDRESS"
for v in LISTEN_PORT DOWNSTREAM_PORT HAPROXY_THREADS; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "haproxy-job: $v='${!v}' is not a whole number" >&2; exit 2; }
done
cfg="$here/haproxy/haproxy.cfg"
if [ -n "${DOWNSTREAMS:-}" ]; then
  for d in $DOWNSTREAMS; do
    [[ "$d" =~ ^[^:[:space:]]+:[0-9]+$ ]] || { echo "haproxy-job: DOWNSTREAMS entry '$d' is not ADDRESS:PORT" >&2; exit 2; }
  done
  rendered="$(mktemp "${TMPDIR:-/tmp}/haproxy-job.XXXXXX.cfg")"
  # exec leaves no shell to clean up: a detached remover waits for this PID (HAProxy after the exec) to go.
  job_pid=$$
  ( trap '' TERM INT HUP
    while kill -0 "$job_pid" 2>/dev/null; do sleep 0.2; done
    rm -f "$rendered" ) < /dev/null > /dev/null 2>&1 &
  # The template's one server line becomes one line per replica, s1..sN, with the rest of the line kept.
  awk -v list="$DOWNSTREAMS" '$1 == "server" && $2 == "server1" {
      n = split(list, d, " ")
      rest = ""; for (k = 4; k <= NF; k++) rest = rest " " $k
      for (i = 1; i <= n; i++) printf "    server s%d %s%s\n", i, d[i], rest
      next }
    { print }' "$cfg" > "$rendered"
  cfg="$rendered"
fi
"$HAPROXY" -c -q -f "$cfg"

# shellcheck source=lib-ready.sh disable=SC1091
. "$here/lib-ready.sh"
announce_when_listening "haproxy-job" "$LISTEN_ADDRESS" "$LISTEN_PORT" "$READY_TIMEOUT" &

echo "haproxy-job: $("$HAPROXY" -v | head -n 1), nbthread $HAPROXY_THREADS, listening on $LISTEN_ADDRESS:$LISTEN_PORT ($([ -n "${TLS_CERT:-}" ] && echo "https, ALPN $alpn" || echo "http, ${PROTOCOLS:-http1}")${HAPROXY_FORWARDFOR:+, X-Forwarded-For}), upstream ${DOWNSTREAMS:-$DOWNSTREAM_ADDRESS:$DOWNSTREAM_PORT}"
exec "$HAPROXY" -db -f "$cfg"
