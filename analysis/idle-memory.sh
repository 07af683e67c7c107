#!/usr/bin/env bash
# Memory per idle client connection: RSS of the proxy process before and after COUNT idle connections.
#
# usage: analysis/idle-memory.sh [options] [PROXY...]
#   PROXY              llrp-llhttp llrp-httpclient nginx haproxy (default: all four)
#   --connections N    idle client connections per run (default 10000)
#   --modes "M..."     none: connections that never send a request; request: one keep-alive GET / each,
#                      then idle (llhttp's affinity slot gives its downstream connection to the shared idle pool
#                      after downstreamShareAfter, 1 s)
#                      (default "none request")
#   --settle S         seconds after warm-up before the baseline reading, and between the connections going idle and
#                      the settled reading (default 10; at least 2)
#   --gcdump DIR       after the readings, a dotnet-gcdump of each LLRP process (its live managed objects by type) into
#                      DIR/<proxy>-<mode>.gcdump and .txt (needs dotnet-gcdump on PATH: dotnet tool install -g dotnet-gcdump)
#   --llrp-dir DIR     a published LLRP (crank/publish.sh llrp) to measure (default: publish this checkout)
#   --downstream-dir D a published Downstream (default: publish this checkout)
#   --label L          name for the LLRP build in the output (default "current")
#   --port P           proxy port; the origin listens on P+1 (default 60080)
#   --json FILE        append one JSON object per run (default: stdout only): kibPerConnectionAt1s (at 1 s) and
#                      kibPerConnection (settled, the figure the earlier results folders report)
#   --llrp-env K=V     extra environment for LLRP (repeatable)
#   --tls              the clients speak TLS: every proxy listens on https with one self-signed ECDSA P-256
#                      certificate made for the run (TLS 1.2/1.3, each proxy's default cipher choice; session
#                      tickets as each proxy defaults), and the idle connections have completed their handshake
#
# Each run: start the origin and the proxy, warm the proxy with 200 requests on one connection (so the
# request path's JIT and first-use allocations land in the baseline), settle, read VmRSS (the baseline), open COUNT
# connections with analysis/idle-clients.py, and read VmRSS twice, each as ΔRSS / COUNT:
#   at 1 s      1 s after the connections went idle (the last one connected and, in mode request, answered): what a
#               user sees from outside right after a burst;
#   settled     S seconds after they went idle: by then the proxy's idle trim (idleTrimAfter, 0.5 s; 5 s before 2026-11-28) has given back
#               the buffers and heap the burst left, so this counts what the idle connections themselves hold.
# Memory does not depend on CPU noise, so these figures are stable on a shared machine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
count=10000 modes="none request" settle=10 llrp_dir="" ds_dir="" label=current port=60080 json_out="" tls=0 gcdump_dir=""
llrp_env=()
proxies=()
while [ $# -gt 0 ]; do
  case "$1" in
    --connections) count="${2:?}"; shift 2 ;;
    --modes) modes="${2:?}"; shift 2 ;;
    --settle) settle="${2:?}"; shift 2 ;;
    --llrp-dir) llrp_dir="${2:?}"; shift 2 ;;
    --downstream-dir) ds_dir="${2:?}"; shift 2 ;;
    --label) label="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    --json) json_out="${2:?}"; shift 2 ;;
    --llrp-env) llrp_env+=("${2:?}"); shift 2 ;;
    --tls) tls=1; shift ;;
    --gcdump) gcdump_dir="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    llrp-llhttp|llrp-httpclient|nginx|haproxy) proxies+=("$1"); shift ;;
    *) echo "idle-memory: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ "${#proxies[@]}" -gt 0 ] || proxies=(llrp-llhttp llrp-httpclient nginx haproxy)
[ "$settle" -ge 2 ] || { echo "idle-memory: --settle must be at least 2 (the first reading is at 1 s)" >&2; exit 2; }
if [ -n "$gcdump_dir" ]; then
  command -v dotnet-gcdump > /dev/null || { echo "idle-memory: --gcdump needs dotnet-gcdump on PATH (dotnet tool install -g dotnet-gcdump)" >&2; exit 2; }
  mkdir -p "$gcdump_dir"
fi
ds_port=$((port + 1))
# A port inside the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range) can be held by any outgoing
# connection of another program; a proxy that cannot bind is reported with the first lines of its log and skipped.

# Every connection is a descriptor in the proxy and in the opener; idle downstream connections are shared and bounded
# (llhttp: downstreamShareAfter, at most 1,024; nginx: keepalive 1024), so COUNT + a few thousand fit. A proxy that
# holds one downstream connection per idle client connection needs 2 x COUNT.
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((count * 2 + 256)) ]; then
  echo "idle-memory: ulimit -n $(ulimit -n) is below 2 x $count + 256: a proxy that holds a downstream connection per idle client connection runs out of descriptors" >&2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/idle-memory.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
if [ -z "$llrp_dir" ]; then
  PUBLISH_DIR="$work/publish" "$ROOT/crank/publish.sh" llrp > "$work/publish.log" 2>&1 || { cat "$work/publish.log" >&2; exit 1; }
  llrp_dir="$work/publish/llrp"
fi
if [ -z "$ds_dir" ]; then
  PUBLISH_DIR="$work/publish" "$ROOT/crank/publish.sh" downstream > "$work/publish-ds.log" 2>&1 || { cat "$work/publish-ds.log" >&2; exit 1; }
  ds_dir="$work/publish/downstream"
fi
llrp_exe="$llrp_dir/LLRP"
ds_exe="$ds_dir/Downstream"
scheme=http
client_tls=()
if [ "$tls" = 1 ]; then
  scheme=https
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
    -days 2 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2> "$work/openssl.log" \
    || { cat "$work/openssl.log" >&2; exit 1; }
  cat "$work/cert.pem" "$work/key.pem" > "$work/combined.pem"
  client_tls=("$work/cert.pem")
fi

wait_port() {
  local deadline=$(( $(date +%s) + 30 ))
  until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "idle-memory: nothing on port $1" >&2; return 1; }
    sleep 0.2
  done
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

start_proxy() {
  case "$1" in
    llrp-llhttp|llrp-httpclient)
      local tls_args=()
      [ "$tls" = 0 ] || tls_args=(--certificate "$work/cert.pem" --certificateKey "$work/key.pem")
      env "${llrp_env[@]}" "$llrp_exe" --urls "$scheme://127.0.0.1:$port" "${tls_args[@]}" --downstream "http://127.0.0.1:$ds_port" \
        --client "${1#llrp-}" > "$work/proxy.log" 2>&1 &
      ;;
    nginx)
      # The crank template (its tokens as crank/nginx-job.sh fills them) with one worker and no master process, as the
      # benchmarks run it, and room for the connections (its worker_connections counts both sides).
      mkdir -p "$work/nginx"
      local listen_ssl="" server_tls=""
      [ "$tls" = 0 ] || { listen_ssl=" ssl"; server_tls="ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;"; }
      sed -e "s|@LISTEN_ADDRESS@|127.0.0.1|g" -e "s|@LISTEN_PORT@|$port|g" -e "s|@LISTEN_SSL@|$listen_ssl|g" \
          -e "s|@SERVER_TLS@|$server_tls|g" -e "s|@UPSTREAM_SCHEME@|http|g" -e "s|@UPSTREAM_TLS@||g" \
          -e "s|@LISTEN_HTTP2@||g" -e "s|@MASTER@|off|g" -e "s|@WORKERS@|1|g" \
          -e "s|^ *@SERVERS@$|        server 127.0.0.1:$ds_port;|" -e "s|@WORK_DIR@|$work/nginx|g" \
          -e "s|worker_connections  *[0-9]*;|worker_connections  $((count * 2 + 256));|" \
          "$ROOT/crank/nginx/nginx.conf" > "$work/nginx/nginx.conf"
      # A token the template gained and this list does not fill would only show as nginx refusing to start.
      local left
      left=$(grep -v '^ *#' "$work/nginx/nginx.conf" | grep -o '@[A-Z0-9_]*@' | sort -u | tr '\n' ' ' || true)
      if [ -n "$left" ]; then
        echo "idle-memory: crank/nginx/nginx.conf has a token this script does not fill: $left" >&2
        exit 2
      fi
      /usr/sbin/nginx -p "$work/nginx/" -c "$work/nginx/nginx.conf" -e stderr > "$work/proxy.log" 2>&1 &
      ;;
    haproxy)
      # The crank config with room for the connections. HAProxy reserves two descriptors per connection (client and
      # server side) and by default refuses to start when 2 x maxconn exceeds the descriptor limit (20,000 where the
      # hard limit cannot be raised); "no strict-limits" lets it start with a warning and use the descriptors there are,
      # which idle client connections and its shared idle server connections fit in.
      sed -e "s|^    maxconn 4096 .*|    maxconn $((count + 64))\n    no strict-limits|" \
          "$ROOT/crank/haproxy/haproxy.cfg" > "$work/haproxy.cfg"
      [ "$tls" = 0 ] || sed -i -e "s|^\( *bind \"\${LISTEN_ADDRESS}:\${LISTEN_PORT}\"\)|\1 ssl crt $work/combined.pem|" "$work/haproxy.cfg"
      LISTEN_ADDRESS=127.0.0.1 LISTEN_PORT=$port DOWNSTREAM_ADDRESS=127.0.0.1 DOWNSTREAM_PORT=$ds_port HAPROXY_THREADS=1 \
        /usr/sbin/haproxy -db -f "$work/haproxy.cfg" > "$work/proxy.log" 2>&1 &
      ;;
  esac
  proxy_pid=$!
  pids+=("$proxy_pid")
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

for proxy in "${proxies[@]}"; do
  for mode in $modes; do
    "$ds_exe" --urls "http://127.0.0.1:$ds_port" > "$work/downstream.log" 2>&1 &
    ds_pid=$!; pids+=("$ds_pid")
    wait_port "$ds_port"
    start_proxy "$proxy"
    wait_port "$port" || { head -n 8 "$work/proxy.log" >&2; stop "$proxy_pid"; stop "$ds_pid"; continue; }
    # Warm-up: 200 requests on one connection, then closed.
    python3 - "$port" "${client_tls[@]}" <<'EOF'
import socket, ssl, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
if len(sys.argv) > 2:
    s = ssl.create_default_context(cafile=sys.argv[2]).wrap_socket(s, server_hostname="localhost")
for _ in range(200):
    s.sendall(b"GET / HTTP/1.1\r\nHost: warm\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(rest) < length:
        rest += s.recv(4096)
s.close()
EOF
    sleep "$settle"
    before=$(rss_kib "$proxy_pid")
    timeout $((settle * 4 + 900)) python3 "$ROOT/analysis/idle-clients.py" 127.0.0.1 "$port" "$count" "$mode" $((settle * 3 + 120)) \
      "${client_tls[@]}" > "$work/clients.out" 2>&1 &
    clients_pid=$!; pids+=("$clients_pid")
    # Polled often: the first reading is 1 s after the opener reports every connection idle.
    deadline=$(( $(date +%s) + 600 ))
    until grep -q '^ready' "$work/clients.out"; do
      if [ "$(date +%s)" -ge "$deadline" ] || ! kill -0 "$clients_pid" 2>/dev/null; then
        echo "idle-memory: $proxy $mode: the opener did not get ready; its output and the proxy's log:" >&2
        tail -n 5 "$work/clients.out" "$work/proxy.log" >&2
        break
      fi
      sleep 0.05
    done
    idle_at=$(date +%s.%N)
    ready="$(grep '^ready' "$work/clients.out" || echo 'ready 0')"
    sleep 1
    at1s=$(rss_kib "$proxy_pid")
    # The settled reading is S seconds after the connections went idle, however long the first reading took.
    sleep "$(awk -v s="$settle" -v t0="$idle_at" -v now="$(date +%s.%N)" 'BEGIN { d = s - (now - t0); print (d > 0 ? d : 0) }')"
    after=$(rss_kib "$proxy_pid")
    if [ -n "$gcdump_dir" ] && [[ "$proxy" == llrp-* ]]; then
      # After both readings: collecting a dump runs a full collection in the proxy.
      dump="$gcdump_dir/$proxy-$mode"
      if dotnet-gcdump collect -p "$proxy_pid" -o "$dump.gcdump" > "$dump.log" 2>&1; then
        dotnet-gcdump report "$dump.gcdump" > "$dump.txt" 2>> "$dump.log" || true
      else
        echo "idle-memory: $proxy $mode: dotnet-gcdump failed, see $dump.log" >&2
      fi
    fi
    opened=$(awk '{print $2}' <<< "$ready")
    stop "$clients_pid"; stop "$proxy_pid"; stop "$ds_pid"
    name="$proxy"; case "$proxy" in llrp-*) name="$proxy ($label)" ;; esac
    [ "$tls" = 0 ] || name="$name tls"
    per1s=$(awk -v a="$at1s" -v b="$before" -v n="$opened" 'BEGIN { printf "%.2f", (n > 0 ? (a - b) / n : 0) }')
    per=$(awk -v a="$after" -v b="$before" -v n="$opened" 'BEGIN { printf "%.2f", (n > 0 ? (a - b) / n : 0) }')
    printf '%-28s %-8s connections %-6s RSS before %8s KiB, at 1 s %8s KiB, settled (%ss) %8s KiB  => %s KiB per connection at 1 s, %s settled  [%s]\n' \
      "$name" "$mode" "$opened" "$before" "$at1s" "$settle" "$after" "$per1s" "$per" "$ready"
    line=$(jq -cn --arg proxy "$proxy" --arg build "$label" --arg mode "$mode" --argjson requested "$count" \
      --argjson opened "${opened:-0}" --argjson before "$before" --argjson at1s "$at1s" --argjson after "$after" --argjson settle "$settle" \
      --arg env "${llrp_env[*]:-}" --argjson tls "$tls" \
      '{proxy: $proxy, build: $build, mode: $mode, requested: $requested, opened: $opened, settleSeconds: $settle,
        rssBeforeKiB: $before, rssAt1sKiB: $at1s, rssAfterKiB: $after,
        kibPerConnectionAt1s: (if $opened > 0 then (($at1s - $before) / $opened * 100 | round) / 100 else null end),
        kibPerConnection: (if $opened > 0 then (($after - $before) / $opened * 100 | round) / 100 else null end),
        llrpEnv: $env, tls: ($tls == 1)}')
    [ -z "$json_out" ] || echo "$line" >> "$json_out"
  done
done
