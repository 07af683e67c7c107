#!/usr/bin/env bash
# crank "executable" job (and run-local.sh job) that runs Debian's nginx as the proxy (port 8080 by default), or
# with NGINX_CONFIG=origin.conf as the origin (run-local.sh --origin nginx).
#
# It renders crank/nginx/nginx.conf into a writable work folder, checks it with "nginx -t", starts a
# background probe that prints the ready line once the port accepts connections, then exec's nginx
# so that the PID the crank agent tracks (CPU, working set, SIGTERM on stop) is nginx itself.
# nginx runs with "master_process off; daemon off;": one process, which exits on SIGTERM.
#
# Environment (all optional; set but empty is an error, so that a forgotten benchmarks.yml variable
# is never replaced by a default):
#   LISTEN_ADDRESS (127.0.0.1; 0.0.0.0 = every interface)  LISTEN_PORT (8080)
#   DOWNSTREAM_ADDRESS (127.0.0.1)  DOWNSTREAM_PORT (8081)
#   DOWNSTREAMS    several replicas instead, "ADDRESS:PORT ADDRESS:PORT ...": one "server" line each in the upstream
#                  block, which nginx balances round-robin (its default); the scaling comparison sets it
#   NGINX_WORKERS  worker_processes (default 1: benchmarks.yml's "threads"). With more than one, nginx needs its master
#                  process to run the workers, so the config gets "master_process on" and the agent then tracks the
#                  master; run-local.sh's /proc samples count the whole process group (crank/README.md, "Equal threads")
#   NGINX_CONFIG   template in crank/nginx/ (default nginx.conf, the tuned proxy; nginx-default.conf: Debian's stock
#                  proxy settings, no upstream keep-alive; origin.conf: nginx as the origin, DOWNSTREAM_* unused)
#   ORIGIN_BODY_SIZES  origin.conf only: the body sizes in bytes it serves, as /?s=N (default "0 10 100 1024 10240
#                  65536 102400": the sizes the sweeps and the matrix use; "/" answers 10 bytes, Downstream's default,
#                  from the config)
#   JOB_WORK_DIR   folder for the rendered config, pid and temp files, kept (run-local.sh puts it in
#                  its logs). Default: a new temp folder, removed as soon as nginx exits.
#   TLS_CERT, TLS_KEY  listen with TLS (benchmarks.yml's serverScheme=https): this PEM certificate and key
#                  (crank/tls-cert.sh); TLS 1.2 and 1.3, as every proxy here: nginx 1.22 (Debian 12's) enables TLS 1.0-1.2
#                  only (1.3 is its default from 1.23.4), so without ssl_protocols it negotiates TLS 1.2 where the
#                  others negotiate 1.3. Sessions are resumed with TLS tickets (nginx's default, as the others')
#   DOWNSTREAM_TLS_CA  proxy to the upstream over TLS (downstreamScheme=https), verifying its certificate against
#                  this PEM file for the name "localhost" (nginx checks DNS names only), SNI on, sessions reused,
#                  TLS 1.2 and 1.3 (proxy_ssl_protocols: the same 1.22 default as ssl_protocols)
#   PROTOCOLS      what the listener speaks (benchmarks.yml's protocols): http1 (default; empty is the default too),
#                  h2 or http1,h2. h2 in it adds "http2" to the listen line: with TLS_CERT, ALPN offers h2 and http/1.1
#                  (nginx cannot offer h2 alone); without, prior-knowledge h2c only, so http1,h2 needs TLS_CERT. The
#                  upstream stays HTTP/1.1. Only nginx.conf takes it (the other templates are HTTP/1.1)
#   NGINX          nginx binary (default /usr/sbin/nginx)
#   READY_TIMEOUT  seconds to wait for the port before reporting failure (default 30)
# Ready line (crank readyStateText): "nginx-job: ready"
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${LISTEN_ADDRESS=127.0.0.1}" "${LISTEN_PORT=8080}"
: "${DOWNSTREAM_ADDRESS=127.0.0.1}" "${DOWNSTREAM_PORT=8081}"
: "${NGINX:=/usr/sbin/nginx}" "${READY_TIMEOUT:=30}" "${NGINX_CONFIG:=nginx.conf}" "${NGINX_WORKERS:=1}"
[[ "$NGINX_WORKERS" =~ ^[1-9][0-9]*$ ]] || { echo "nginx-job: NGINX_WORKERS='$NGINX_WORKERS' is not a whole number >= 1" >&2; exit 2; }
# One worker runs as the single process (master_process off), so the tracked PID is the one doing the work; more
# workers need the master to start them.
master=off; [ "$NGINX_WORKERS" = 1 ] || master=on
[ -f "$here/nginx/$NGINX_CONFIG" ] || { echo "nginx-job: NGINX_CONFIG=$NGINX_CONFIG is not a file in crank/nginx/" >&2; exit 2; }
servers="    server $DOWNSTREAM_ADDRESS:$DOWNSTREAM_PORT;"
if [ -n "${DOWNSTREAMS:-}" ]; then
  servers=""
  for d in $DOWNSTREAMS; do
    [[ "$d" =~ ^[^:[:space:]]+:[0-9]+$ ]] || { echo "nginx-job: DOWNSTREAMS entry '$d' is not ADDRESS:PORT" >&2; exit 2; }
    servers="$servers${servers:+\n}    server $d;"
  done
fi

[ -x "$NGINX" ] || { echo "nginx-job: $NGINX not found (apt-get install -y nginx-light)" >&2; exit 2; }
[ -n "$LISTEN_ADDRESS" ] || { echo "nginx-job: LISTEN_ADDRESS is empty (benchmarks.yml: serverListenAddress / serverAddress)" >&2; exit 2; }
"$here/require-address.sh" --listen "LISTEN_ADDRESS=$LISTEN_ADDRESS" --target "DOWNSTREAM_ADDRESS=$DOWNSTREAM_ADDRESS"
for v in LISTEN_PORT DOWNSTREAM_PORT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "nginx-job: $v='${!v}' is not a port number" >&2; exit 2; }
done

if [ -z "${JOB_WORK_DIR:-}" ]; then
  JOB_WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/nginx-job.XXXXXX")"
  # nginx writes its pid and temp files here while it runs, and exec leaves no shell to clean up
  # afterwards: a detached remover waits for this PID (nginx after the exec) to go, then deletes
  # the folder. It ignores the SIGTERM that stops nginx and holds none of the job's output open.
  work_dir="$JOB_WORK_DIR" job_pid=$$
  ( trap '' TERM INT HUP
    while kill -0 "$job_pid" 2>/dev/null; do sleep 0.2; done
    rm -rf "$work_dir" ) < /dev/null > /dev/null 2>&1 &
fi
mkdir -p "$JOB_WORK_DIR"
if [ "$NGINX_CONFIG" = origin.conf ]; then
  : "${ORIGIN_BODY_SIZES:=0 10 100 1024 10240 65536 102400}"
  mkdir -p "$JOB_WORK_DIR/bodies"
  for n in $ORIGIN_BODY_SIZES; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "nginx-job: ORIGIN_BODY_SIZES entry '$n' is not a whole number" >&2; exit 2; }
    head -c "$n" /dev/zero | tr '\0' 'x' > "$JOB_WORK_DIR/bodies/s$n"
  done
fi
conf="$JOB_WORK_DIR/nginx.conf"
listen_ssl="" server_tls="" upstream_scheme=http upstream_tls="" listen_http2=""
case "${PROTOCOLS:-http1}" in
  http1) ;;
  h2|http1,h2)
    grep -q '@LISTEN_HTTP2@' "$here/nginx/$NGINX_CONFIG" || { echo "nginx-job: PROTOCOLS=$PROTOCOLS: $NGINX_CONFIG speaks HTTP/1.1 only (nginx.conf takes h2)" >&2; exit 2; }
    [ "$PROTOCOLS" = h2 ] || [ -n "${TLS_CERT:-}" ] || { echo "nginx-job: PROTOCOLS=http1,h2 needs TLS (ALPN chooses); a cleartext port speaks http1 or prior-knowledge h2c (h2)" >&2; exit 2; }
    listen_http2=" http2" ;;
  *) echo "nginx-job: PROTOCOLS='$PROTOCOLS' is not http1, h2 or http1,h2" >&2; exit 2 ;;
esac
if [ -n "${TLS_CERT:-}" ]; then
  [ -r "$TLS_CERT" ] && [ -r "${TLS_KEY:-}" ] || { echo "nginx-job: TLS_CERT and TLS_KEY must be readable files" >&2; exit 2; }
  listen_ssl=" ssl"
  server_tls="ssl_protocols TLSv1.2 TLSv1.3; ssl_certificate $TLS_CERT; ssl_certificate_key $TLS_KEY;"
fi
if [ -n "${DOWNSTREAM_TLS_CA:-}" ]; then
  [ -r "$DOWNSTREAM_TLS_CA" ] || { echo "nginx-job: DOWNSTREAM_TLS_CA must be a readable file" >&2; exit 2; }
  upstream_scheme=https
  upstream_tls="proxy_ssl_verify on; proxy_ssl_trusted_certificate $DOWNSTREAM_TLS_CA; proxy_ssl_name localhost; proxy_ssl_server_name on; proxy_ssl_session_reuse on; proxy_ssl_protocols TLSv1.2 TLSv1.3;"
fi
sed -e "s|@LISTEN_SSL@|$listen_ssl|g" -e "s|@LISTEN_HTTP2@|$listen_http2|g" -e "s|@SERVER_TLS@|$server_tls|g" -e "s|@UPSTREAM_SCHEME@|$upstream_scheme|g" \
    -e "s|@UPSTREAM_TLS@|$upstream_tls|g" \
    -e "s|@LISTEN_ADDRESS@|$LISTEN_ADDRESS|g" -e "s|@WORKERS@|$NGINX_WORKERS|g" -e "s|@MASTER@|$master|g" -e "s|@LISTEN_PORT@|$LISTEN_PORT|g" \
    -e "s|^ *@SERVERS@$|$servers|" -e "s|@WORK_DIR@|$JOB_WORK_DIR|g" "$here/nginx/$NGINX_CONFIG" > "$conf"

# -p: prefix for relative paths; -e: the startup error log before the config's error_log applies.
"$NGINX" -t -q -p "$JOB_WORK_DIR/" -c "$conf" -e stderr

# shellcheck source=lib-ready.sh disable=SC1091
. "$here/lib-ready.sh"
announce_when_listening "nginx-job" "$LISTEN_ADDRESS" "$LISTEN_PORT" "$READY_TIMEOUT" &

role="upstream ${DOWNSTREAMS:-$DOWNSTREAM_ADDRESS:$DOWNSTREAM_PORT}"; [ "$NGINX_CONFIG" != origin.conf ] || role="the origin, bodies of $ORIGIN_BODY_SIZES bytes"
echo "nginx-job: $("$NGINX" -v 2>&1), worker_processes $NGINX_WORKERS, listening on $LISTEN_ADDRESS:$LISTEN_PORT ($([ -n "$listen_ssl" ] && echo https || echo http), ${PROTOCOLS:-http1}), $role, config $conf"
exec "$NGINX" -p "$JOB_WORK_DIR/" -c "$conf" -e stderr
