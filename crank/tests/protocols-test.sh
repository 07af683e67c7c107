#!/usr/bin/env bash
# Checks the configurations nginx-job.sh and haproxy-job.sh render from PROTOCOLS and HAPROXY_FORWARDFOR without
# starting a server, each checked by the server itself (nginx -t, haproxy -c); what --protocols resolves to and what
# each kind of proxy is given are tests/Runner.Tests' (H2LoadOptionsTests). The jobs run
# with a stand-in binary that runs the real one's configuration check and exits where they would start the server.
# A few seconds; no network. Needs nginx and haproxy (run-local.sh installs them); skips those checks without them.
# Exit status: 0 all checks passed, 1 otherwise.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crank="$here/.."
failed=0 checks=0
check() {  # check NAME ACTUAL EXPECTED
  checks=$((checks + 1))
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: got '$2', expected '$3'"; failed=$((failed + 1)); fi
}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$crank/tls-cert.sh" "$work/tls" 127.0.0.1 > /dev/null 2>&1 || echo "protocols-test: tls-cert.sh failed"
# stand-in NAME REAL CHECK: a binary that runs REAL when given the option CHECK (its configuration check: nginx -t,
# haproxy -c; never the server itself) and otherwise prints the HAPROXY_* environment the job gave it and exits, where
# the job would start the server. NGINX is unset for the check: nginx reads that variable as inherited sockets.
stand_in() {
  printf '#!/usr/bin/env bash\ncase " $* " in *" %s "*) unset NGINX; exec %s "$@" ;; esac\nenv | grep "^HAPROXY_" | sort\n' "$3" "$2" > "$work/$1"
  chmod +x "$work/$1"
}

if [ -x /usr/sbin/nginx ]; then
  stand_in nginx /usr/sbin/nginx -t
  # nginx_listen PROTOCOLS [TLS]: the rendered listen line after nginx -t accepted the configuration, or the exit code.
  nginx_listen() {
    local dir="$work/nginx-$RANDOM" tls=()
    [ -z "${2:-}" ] || tls=("TLS_CERT=$work/tls/cert.pem" "TLS_KEY=$work/tls/key.pem")
    env NGINX="$work/nginx" READY_TIMEOUT=1 JOB_WORK_DIR="$dir" LISTEN_PORT=18479 PROTOCOLS="$1" "${tls[@]}" \
      "$crank/nginx-job.sh" > /dev/null 2>&1 || { echo "exit $?"; return; }
    sed -n 's/^ *listen \(.*\);$/\1/p' "$dir/nginx.conf"
  }
  check "nginx: h2 over TLS" "$(nginx_listen http1,h2 tls)" "127.0.0.1:18479 ssl http2"
  check "nginx: h2c" "$(nginx_listen h2)" "127.0.0.1:18479 http2"
  check "nginx: HTTP/1.1 by default" "$(nginx_listen "")" "127.0.0.1:18479"
  check "nginx: http1,h2 without TLS refused" "$(nginx_listen http1,h2)" "exit 2"
  check "nginx: h2 in a template without it refused" "$(NGINX_CONFIG=nginx-default.conf nginx_listen h2)" "exit 2"
else
  echo "protocols-test: nginx not installed; its checks skipped"
fi

if [ -x /usr/sbin/haproxy ]; then
  stand_in haproxy /usr/sbin/haproxy -c
  # haproxy_env PROTOCOLS [TLS] [FORWARDFOR]: the HAPROXY_* variables the job set, after haproxy -c accepted the config.
  haproxy_env() {
    local tls=() fwd=()
    [ -z "${2:-}" ] || tls=("TLS_CERT=$work/tls/cert.pem" "TLS_KEY=$work/tls/key.pem")
    [ -z "${3:-}" ] || fwd=(HAPROXY_FORWARDFOR=1)
    env HAPROXY="$work/haproxy" READY_TIMEOUT=1 LISTEN_PORT=18479 PROTOCOLS="$1" "${tls[@]}" "${fwd[@]}" \
      "$crank/haproxy-job.sh" 2> /dev/null | grep '^HAPROXY_' | grep -v '^HAPROXY_TLS_CRT\|^HAPROXY_THREADS' | tr '\n' ' ' || true
  }
  check "HAProxy: ALPN h2,http/1.1 over TLS" "$(haproxy_env http1,h2 tls)" "HAPROXY_ALPN=h2,http/1.1 "
  check "HAProxy: h2c" "$(haproxy_env h2 "" fwd)" "HAPROXY_ALPN=h2 HAPROXY_FORWARDFOR=1 HAPROXY_H2C=1 "
  check "HAProxy: HTTP/1.1 by default" "$(haproxy_env "" tls)" "HAPROXY_ALPN=http/1.1 "
else
  echo "protocols-test: haproxy not installed; its checks skipped"
fi

echo "protocols-test: $((checks - failed)) of $checks checks passed"
[ "$failed" = 0 ]
