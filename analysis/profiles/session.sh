#!/usr/bin/env bash
# One bounded profiling session against one proxy: starts the origin and the proxy on private ports, warms up,
# then records what MODE asks for while wrk loads the proxy. Run it under "flock /tmp/llrp-load.lock timeout N"
# so that no other load runs at the same time and the session is bounded.
#
# usage: analysis/profiles/session.sh MODE TARGET OUT_DIR [LABEL]
#   MODE    profile  perf record -e cpu-clock -g for the PERF_S-second wrk run, plus perf stat (CPU, context switches)
#           count    perf stat only (CPU, syscalls, context switches per request), no perf record
#           strace   strace -c -f for STRACE_S seconds (syscall breakdown; strace slows the process)
#   TARGET  llhttp | httpclient (LLRP with that --client) | nginx | haproxy
# Environment: LLRP_DIR (published LLRP, default /tmp/prof/llrp), DS_DIR (published Downstream, /tmp/prof/ds),
#   PROXY_PORT (58080), DS_PORT (58081), WARMUP_S (15), PERF_S (10), STRACE_S (5), CONNECTIONS (64), URL_PATH (/;
#   the origin answers /?s=N with N body bytes),
#   PROXY_ENV ("K=V K=V", extra environment for the .NET proxy), BASE_ENV (environment the profile mode adds so
#   that perf can name .NET frames; empty in the other modes),
#   PIN (none | proxy: the proxy alone on CPU 1, the origin and wrk on CPU 0, as run-local.sh --pin-proxy),
#   ORIGIN (downstream: Downstream from DS_DIR | nginx: crank/nginx/origin.conf, as run-local.sh --origin nginx),
#   LOAD (wrk | h2load: HTTP/2 from h2load -c CONNECTIONS -m STREAMS (16) -t 1, the proxy listening with h2 only),
#   SCHEME (http | https: TLS with the run's certificate from crank/tls-cert.sh; with h2load, ALPN h2, else h2c),
#   BODY_BYTES (0: GETs; N: with wrk, POSTs of N bytes framed by Content-Length, built by crank/wrk-request.lua as the
#   sittings' wrk job builds them).
# Writes OUT_DIR/<LABEL>.* : perf.data, perf-stat.csv (`perf stat -x,`: value,unit,event,...), wrk.txt, proc.txt (CPU ticks and context switches over
# all threads before/after), strace.txt; in count mode also origin-perf-stat.csv and wrk-perf-stat.csv (the same
# counters for the origin and for wrk, the load side's cost per request) and origin-connections.txt (the proxy's
# established connections to the origin, counted once mid-run); nginx as the proxy or as the origin keeps its
# configuration, temporary files and logs in OUT_DIR/<LABEL>.nginx and <LABEL>.origin.
set -euo pipefail
mode="${1:?mode}" target="${2:?target}" out="${3:?out dir}" label="${4:-$2}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# Job control: each background server becomes the leader of its own process group (stopped as a group) within this
# session, as the runner starts them (analysis/Runner/ProcessGroups.cs says why not a session of its own: setsid).
set -m
: "${LLRP_DIR:=/tmp/prof/llrp}" "${DS_DIR:=/tmp/prof/ds}" "${PROXY_PORT:=58080}" "${DS_PORT:=58081}"
: "${WARMUP_S:=15}" "${PERF_S:=10}" "${STRACE_S:=5}" "${CONNECTIONS:=64}" "${URL_PATH:=/}" "${PROXY_ENV:=}" "${PIN:=none}" "${ORIGIN:=downstream}"
: "${LOAD:=wrk}" "${SCHEME:=http}" "${STREAMS:=16}" "${BODY_BYTES:=0}"
case "$ORIGIN" in downstream|nginx) ;; *) echo "session: ORIGIN must be downstream or nginx, not '$ORIGIN'" >&2; exit 2 ;; esac
case "$LOAD" in wrk|h2load) ;; *) echo "session: LOAD must be wrk or h2load, not '$LOAD'" >&2; exit 2 ;; esac
case "$SCHEME" in http|https) ;; *) echo "session: SCHEME must be http or https, not '$SCHEME'" >&2; exit 2 ;; esac
case "$BODY_BYTES" in *[!0-9]*|'') echo "session: BODY_BYTES must be a byte count, not '$BODY_BYTES'" >&2; exit 2 ;; esac
if [ "$BODY_BYTES" -gt 0 ] && [ "$LOAD" != wrk ]; then echo "session: BODY_BYTES needs LOAD=wrk" >&2; exit 2; fi
case "$PIN" in
  none) pin_proxy=() pin_load=() ;;
  proxy) pin_proxy=(taskset -c 1) pin_load=(taskset -c 0) ;;
  *) echo "session: PIN must be none or proxy, not '$PIN'" >&2; exit 2 ;;
esac
# perf resolves JIT frames through /tmp/perf-PID.map only if the code is not in the W^X double mapping, and it cannot
# name ReadyToRun code at all: so the profile runs JIT everything (the benchmarks' "pgo" profile does the same).
if [ "$mode" = profile ]; then : "${BASE_ENV=DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0 DOTNET_ReadyToRun=0}"; fi
: "${BASE_ENV=}"
mkdir -p "$out"
groups=()
cleanup() { for g in "${groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done; sleep 0.5
            for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done; }
trap cleanup EXIT

# server_pid PID LOG: the process to profile and sample: the child a job announced in LOG ("##ChildProcessId:<pid>":
# the nginx and HAProxy jobs run their server as one), else PID. The process groups stay the jobs'.
server_pid() { local c; c="$(sed -n 's/^##ChildProcessId:\([0-9][0-9]*\).*/\1/p' "$2" 2>/dev/null | tail -n 1 || true)"; echo "${c:-$1}"; }
wait_port() { for _ in $(seq 1 300); do curl -fsS -o /dev/null "http://127.0.0.1:$1/" 2>/dev/null && return 0; sleep 0.1; done
              echo "session: port $1 not ready" >&2; return 1; }
# Sum over every thread: /proc/PID/status alone reports the main thread only.
proc_sample() {
  local pid="$1" stat v=0 n=0 f
  stat="$(cat "/proc/$pid/stat")"; read -r -a f <<< "${stat##*) }"
  for t in /proc/"$pid"/task/*/status; do
    while read -r k val; do
      case "$k" in voluntary_ctxt_switches:) v=$((v + val)) ;; nonvoluntary_ctxt_switches:) n=$((n + val)) ;; esac
    done < "$t" 2>/dev/null || true
  done
  echo "$(date +%s%N) utime=${f[11]} stime=${f[12]} vol=$v invol=$n threads=$(ls /proc/"$pid"/task | wc -l)"
}

if [ "$ORIGIN" = nginx ]; then
  mkdir -p "$out/$label.origin"
  "${pin_load[@]}" env LISTEN_PORT="$DS_PORT" NGINX_CONFIG=origin.conf JOB_WORK_DIR="$out/$label.origin" \
    "$repo/crank/nginx-job.sh" > "$out/$label.downstream.log" 2>&1 &
else
  "${pin_load[@]}" env DOTNET_TieredPGO=1 "$DS_DIR/Downstream" --urls "http://127.0.0.1:$DS_PORT" > "$out/$label.downstream.log" 2>&1 &
fi
ds_pid=$!; groups+=("$ds_pid")
wait_port "$DS_PORT"
ds_pid="$(server_pid "$ds_pid" "$out/$label.downstream.log")"

# The listener: the protocol the load speaks, TLS with the run's certificate (as every proxy of a sitting presents).
protocols=http1
if [ "$LOAD" = h2load ]; then protocols=h2; fi
llrp_listen=(--urls "$SCHEME://127.0.0.1:$PROXY_PORT" --protocols "$protocols")
job_env=(PROTOCOLS="$protocols")
if [ "$SCHEME" = https ]; then
  "$repo/crank/tls-cert.sh" "$out/tls" > /dev/null
  llrp_listen+=(--certificate "$out/tls/cert.pem" --certificateKey "$out/tls/key.pem")
  job_env+=(TLS_CERT="$out/tls/cert.pem" TLS_KEY="$out/tls/key.pem")
fi
case "$target" in
  llhttp|httpclient)
    # shellcheck disable=SC2086
    "${pin_proxy[@]}" env $BASE_ENV $PROXY_ENV "$LLRP_DIR/LLRP" "${llrp_listen[@]}" \
      --downstream "http://127.0.0.1:$DS_PORT" --client "$target" > "$out/$label.proxy.log" 2>&1 & ;;
  nginx)
    mkdir -p "$out/$label.nginx"
    "${pin_proxy[@]}" env "${job_env[@]}" LISTEN_PORT="$PROXY_PORT" DOWNSTREAM_PORT="$DS_PORT" JOB_WORK_DIR="$out/$label.nginx" \
      "$repo/crank/nginx-job.sh" > "$out/$label.proxy.log" 2>&1 & ;;
  haproxy)
    "${pin_proxy[@]}" env "${job_env[@]}" LISTEN_PORT="$PROXY_PORT" DOWNSTREAM_PORT="$DS_PORT" "$repo/crank/haproxy-job.sh" > "$out/$label.proxy.log" 2>&1 & ;;
  *) echo "session: unknown target $target" >&2; exit 2 ;;
esac
pid=$!; groups+=("$pid")
# Ready when the port accepts (h2c and TLS listeners answer no plain HTTP/1.1 GET).
for _ in $(seq 1 300); do (exec 3<> "/dev/tcp/127.0.0.1/$PROXY_PORT") 2> /dev/null && break; sleep 0.1; done
pid="$(server_pid "$pid" "$out/$label.proxy.log")"
sleep 0.5
url="$SCHEME://127.0.0.1:$PROXY_PORT$URL_PATH"
# load_for SECONDS: sets load to the load tool's command for that long (its report on stdout).
load_for() {
  if [ "$LOAD" = h2load ]; then load=(h2load -c"$CONNECTIONS" -m"$STREAMS" -t1 -D"$1" "$url")
  elif [ "$BODY_BYTES" -gt 0 ]; then
    load=(wrk -t1 -c"$CONNECTIONS" -d"${1}s" -s "$repo/crank/wrk-request.lua" "$url" -- "$BODY_BYTES" content-length)
  else load=(wrk -t1 -c"$CONNECTIONS" -d"${1}s" "$url"); fi
}

load_for "$WARMUP_S"
timeout $((WARMUP_S + 5)) "${pin_load[@]}" "${load[@]}" > "$out/$label.warmup.txt"

events="cpu-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendmsg,syscalls:sys_enter_recvmsg,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_writev,syscalls:sys_enter_readv,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield,syscalls:sys_enter_poll"
# The monitors start first and stop after wrk: every request wrk counts ("N requests in") falls inside their window,
# and the idle second on each side adds only timer wake-ups.
case "$mode" in
  profile|count)
    d="$PERF_S"
    if [ "$mode" = profile ]; then
      timeout $((d + 20)) perf record -e cpu-clock -F 999 -g -p "$pid" -o "$out/$label.perf.data" -- sleep $((d + 2)) \
        2> "$out/$label.perf-record.log" &
      rec=$!
    fi
    # Syscall tracepoints slow every syscall: the profiled run counts only CPU time and context switches.
    if [ "$mode" = profile ]; then events="cpu-clock,context-switches"; fi
    timeout $((d + 20)) perf stat -x, -e "$events" -p "$pid" -o "$out/$label.perf-stat.csv" -- sleep $((d + 2)) &
    monitors=($!)
    wrk_stat=()
    if [ "$mode" = count ]; then
      timeout $((d + 20)) perf stat -x, -e "$events" -p "$ds_pid" -o "$out/$label.origin-perf-stat.csv" -- sleep $((d + 2)) &
      monitors+=($!)
      wrk_stat=(perf stat -x, -e "$events" -o "$out/$label.wrk-perf-stat.csv" --)
      ( sleep $((d / 2 + 1)); ss -Htn state established "dst 127.0.0.1:$DS_PORT" | wc -l > "$out/$label.origin-connections.txt" ) &
      monitors+=($!)
    fi
    sleep 1
    proc_sample "$pid" > "$out/$label.proc.txt"
    load_for "$d"
    timeout $((d + 10)) "${wrk_stat[@]}" "${pin_load[@]}" "${load[@]}" > "$out/$label.wrk.txt"
    proc_sample "$pid" >> "$out/$label.proc.txt"
    wait "${monitors[@]}"
    if [ "$mode" = profile ]; then wait "$rec"; fi ;;
  strace)
    timeout -s INT $((STRACE_S + 3)) strace -c -f -p "$pid" -o "$out/$label.strace.txt" 2> /dev/null &
    st=$!
    sleep 1.5
    load_for "$STRACE_S"
    timeout $((STRACE_S + 10)) "${load[@]}" > "$out/$label.wrk.txt"
    wait "$st" || true ;;
  *) echo "session: unknown mode $mode" >&2; exit 2 ;;
esac
case "$target" in llhttp|httpclient) cp "/tmp/perf-$pid.map" "$out/$label.perf-$pid.map" 2>/dev/null || true ;; esac
echo "$pid" > "$out/$label.pid"
