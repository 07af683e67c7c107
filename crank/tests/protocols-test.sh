#!/usr/bin/env bash
# Checks the HTTP/2 plumbing without starting a server: what --protocols resolves to for each load and scheme
# (crank/lib-protocols.sh), what each kind of proxy is given, and the configurations nginx-job.sh and haproxy-job.sh
# render from PROTOCOLS and HAPROXY_FORWARDFOR, each checked by the server itself (nginx -t, haproxy -c). The jobs run
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
# shellcheck source=../lib-protocols.sh disable=SC1091
. "$crank/lib-protocols.sh"

resolve() { protocols_resolve "$@" 2> /dev/null || echo "refused"; }
check "h2load on https defaults to ALPN's choice" "$(resolve h2load https "")" http1,h2
check "h2load on http defaults to h2c" "$(resolve h2load http "")" h2
check "wrk passes nothing by default" "$(resolve wrk http "")" ""
check "h2,http1 is http1,h2" "$(resolve wrk https h2,http1)" http1,h2
check "http1,h2 on http is refused" "$(resolve h2load http http1,h2)" refused
check "h2load with http1 is refused" "$(resolve h2load https http1)" refused
check "wrk to an h2c-only proxy is refused" "$(resolve wrk http h2)" refused
check "wrk to ALPN h2 over https is allowed" "$(resolve wrk https h2)" h2
check "an unknown protocol is refused" "$(resolve h2load https h3)" refused

protocols_proxy_args nginx "" h2 ""; check "nginx gets PROTOCOLS" "${PROTO_ENV[*]}|${PROTO_ARGS[*]}" "PROTOCOLS=h2|"
protocols_proxy_args dotnet llrp http1,h2 kestrel
check "LLRP gets --protocols and the front end" "${PROTO_ENV[*]}|${PROTO_ARGS[*]}" "|--protocols http1,h2 $LLRP_FRONT_END_OPTION kestrel"
protocols_proxy_args dotnet yarp h2 kestrel
check "full YARP gets Kestrel's protocols, no front end" "${PROTO_ARGS[*]}" "--Kestrel:EndpointDefaults:Protocols=Http2"
protocols_proxy_args dotnet httpclientproxy http1,h2 ""
check "HttpClientProxy gets Http1AndHttp2" "${PROTO_ARGS[*]}" "--Kestrel:EndpointDefaults:Protocols=Http1AndHttp2"
protocols_proxy_args haproxy "" "" ""; check "nothing passed by default" "${#PROTO_ENV[@]}${#PROTO_ARGS[@]}" 00
protocols_curl_args h2 http; check "curl to h2c" "${CURL_PROTO[*]}" --http2-prior-knowledge

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
