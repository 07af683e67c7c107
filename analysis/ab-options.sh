#!/usr/bin/env bash
# Interleaved A/B of llrp-llhttp configurations that differ only in the proxy's environment (LLRP options such as
# inlineScheduling=true and runtime settings such as DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0): one published
# build, fresh origin and proxy per run, rounds interleaved in crank/lib-rounds.sh's order (round 1 runs A B C,
# round 2 A C B, round 3 C A B, ...: no configuration always runs first or right after the same one). Each run
# takes the load lock for itself, so other loads on a shared machine can run between runs, never during one.
#
# usage: analysis/ab-options.sh [--summary] OUT_DIR NAME='K=V K=V' [NAME='...']...
#   --summary  run nothing: write OUT_DIR/summary.tsv again from the runs already there (ROUNDS as when they ran)
#   NAME=''  the configuration's extra environment for the proxy ('' = the defaults); a word LLRP_DIR=PATH runs that
#            published build instead of the shared one, so two commits can be compared in one sitting; a word
#            CLIENT=NAME runs that forwarding variant (LLRP's --client; default llhttp)
# Environment: ROUNDS (3), WARMUP_S (15), DURATION_S (10), CONNECTIONS (64), URL_PATH (/; Downstream answers
#   /?s=N with N body bytes), PROXY_PORT (9780), DS_PORT (9781), LLRP_DIR and DS_DIR (published builds; default:
#   published here into OUT_DIR/bin from this checkout), LOCK (/tmp/llrp-load.lock), LOCK_WAIT_S (900: a run
#   that cannot take the lock by then is skipped and reported).
# Writes OUT_DIR/<NAME>.r<round>.{warmup,wrk,proc,origin,proxy,downstream}.txt and OUT_DIR/summary.tsv: per run
# requests, RPS, proxy CPU us/request (utime+stime of every thread from /proc over the measured wrk run / wrk's
# requests), the origin's CPU us/request over the same window (the same build serving the same requests in every
# run: a control for the machine's speed during the run, docs/methodology.md "The origin as a control"),
# voluntary and involuntary context switches per request, the number of the runtime's socket engine threads
# (".NET Sockets": 1 on this machine by default, one per core when DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1
# took effect) and their share of the proxy's CPU, the number of LLHttp's epoll engine threads ("LLHttp epoll N":
# engineThreads when socketEngine=epoll); then the median per configuration.
set -euo pipefail

# One run (the script calls itself under the lock): origin, proxy with the configuration's environment, warm-up,
# measured wrk run between two /proc samples. The origin and the proxy are stopped by their exact PIDs and waited
# for, however the run ends (normal end, a failed step, or timeout's SIGTERM).
if [ "${1:-}" = "--run" ]; then
  label="$2" env_words="$3"
  pids=()
  stop() {
    local p
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do
      for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    done
    pids=()
  }
  trap stop EXIT
  trap 'exit 143' TERM INT
  wait_port() { for _ in $(seq 1 300); do curl -fsS -o /dev/null "http://127.0.0.1:$1/" 2>/dev/null && return 0; sleep 0.1; done
                echo "ab-options: port $1 not ready" >&2; return 1; }
  # Process CPU ticks (every thread), context switches summed over its threads, socket engine threads and their ticks.
  proc_sample() {
    local pid="$1" stat v=0 n=0 engines=0 engine_ticks=0 loops=0 f t k val comm
    stat="$(cat "/proc/$pid/stat")"; read -r -a f <<< "${stat##*) }"
    for t in /proc/"$pid"/task/*; do
      while read -r k val; do
        case "$k" in voluntary_ctxt_switches:) v=$((v + val)) ;; nonvoluntary_ctxt_switches:) n=$((n + val)) ;; esac
      done < "$t/status" 2>/dev/null || true
      comm="$(cat "$t/comm" 2>/dev/null || true)"
      case "$comm" in "LLHttp epoll "*) loops=$((loops + 1)) ;; esac
      if [ "$comm" = ".NET Sockets" ]; then
        stat="$(cat "$t/stat")"; read -r -a tf <<< "${stat##*) }"
        engines=$((engines + 1)) engine_ticks=$((engine_ticks + tf[11] + tf[12]))
      fi
    done
    echo "$((f[11] + f[12])) $v $n $engines $engine_ticks $loops"
  }
  # exec'd by env: $! is the server's own PID.
  env DOTNET_TieredPGO=1 "$DS_DIR/Downstream" --urls "http://127.0.0.1:$DS_PORT" > "$OUT/$label.downstream.txt" 2>&1 &
  origin=$!; pids+=("$origin")
  wait_port "$DS_PORT"
  client=llhttp proxy_env=()
  for word in $env_words; do
    case "$word" in LLRP_DIR=*) LLRP_DIR="${word#LLRP_DIR=}" ;; CLIENT=*) client="${word#CLIENT=}" ;; *) proxy_env+=("$word") ;; esac
  done
  env "${proxy_env[@]}" "$LLRP_DIR/LLRP" --urls "http://127.0.0.1:$PROXY_PORT" \
    --downstream "http://127.0.0.1:$DS_PORT" --client "$client" > "$OUT/$label.proxy.txt" 2>&1 &
  proxy=$!; pids+=("$proxy")
  wait_port "$PROXY_PORT"
  url="http://127.0.0.1:$PROXY_PORT$URL_PATH"
  timeout $((WARMUP_S + 10)) wrk -t1 -c"$CONNECTIONS" -d"${WARMUP_S}s" "$url" > "$OUT/$label.warmup.txt"
  proc_sample "$proxy" > "$OUT/$label.proc.txt"; proc_sample "$origin" > "$OUT/$label.origin.txt"
  timeout $((DURATION_S + 10)) wrk -t1 -c"$CONNECTIONS" -d"${DURATION_S}s" "$url" > "$OUT/$label.wrk.txt"
  proc_sample "$proxy" >> "$OUT/$label.proc.txt"; proc_sample "$origin" >> "$OUT/$label.origin.txt"
  exit 0
fi

summary_only=false
if [ "${1:-}" = "--summary" ]; then summary_only=true; shift; fi
out="${1:?usage: analysis/ab-options.sh [--summary] OUT_DIR NAME='K=V ...'...}"; shift
[ $# -ge 1 ] || { echo "ab-options: name at least one configuration NAME='K=V ...'" >&2; exit 2; }
for config in "$@"; do
  [ "${config%%=*}" != "$config" ] || { echo "ab-options: '$config' is not NAME='K=V ...'" >&2; exit 2; }
done
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${ROUNDS:=3}" "${WARMUP_S:=15}" "${DURATION_S:=10}" "${CONNECTIONS:=64}" "${URL_PATH:=/}"
: "${PROXY_PORT:=9780}" "${DS_PORT:=9781}" "${LOCK:=/tmp/llrp-load.lock}" "${LOCK_WAIT_S:=900}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if ! $summary_only && { [ -z "${LLRP_DIR:-}" ] || [ -z "${DS_DIR:-}" ]; }; then
  dotnet publish "$repo/src/LLRP" -c Release -o "$out/bin/llrp" > "$out/publish.log" 2>&1
  dotnet publish "$repo/src/Downstream" -c Release -o "$out/bin/ds" >> "$out/publish.log" 2>&1
  LLRP_DIR="$out/bin/llrp" DS_DIR="$out/bin/ds"
fi
export DOTNET_ROOT="${DOTNET_ROOT:-$(dirname "$(readlink -f "$(command -v dotnet)")")}"
export OUT="$out" LLRP_DIR DS_DIR DS_PORT PROXY_PORT URL_PATH CONNECTIONS WARMUP_S DURATION_S
tick_hz="$(getconf CLK_TCK)"
self="$repo/analysis/ab-options.sh"
# shellcheck source=../crank/lib-rounds.sh
. "$repo/crank/lib-rounds.sh"

for r in $(seq 1 "$ROUNDS"); do
  $summary_only && break
  mapfile -t order < <(round_order "$r" "$@")
  for config in "${order[@]}"; do
    name="${config%%=*}" env_words="${config#*=}"
    label="$name.r$r"
    if flock -w "$LOCK_WAIT_S" "$LOCK" timeout $((WARMUP_S + DURATION_S + 90)) "$self" --run "$label" "$env_words"; then
      echo "$label done"
    else
      echo "ab-options: run $label failed or did not get the lock within ${LOCK_WAIT_S} s" >&2
    fi
  done
done

# Summary: per run, then the median per configuration (wrk's "N requests in" is the request count).
{
  printf 'run\trequests\trps\tcpu_us_per_request\torigin_cpu_us_per_request\tvol_per_request\tinvol_per_request\tengines\tengine_cpu_share\tepoll_threads\terrors\n'
  for config in "$@"; do
    name="${config%%=*}"
    for r in $(seq 1 "$ROUNDS"); do
      label="$name.r$r"
      [ -s "$out/$label.wrk.txt" ] && [ "$(wc -l < "$out/$label.proc.txt")" -eq 2 ] || continue
      requests="$(awk '/requests in/ {print $1}' "$out/$label.wrk.txt")"
      rps="$(awk '/^Requests\/sec/ {print $2}' "$out/$label.wrk.txt")"
      errors="$(awk '/Non-2xx|Socket errors/ {printf "%s ", $0}' "$out/$label.wrk.txt")"
      read -r t0 v0 n0 _ e0 _ < <(sed -n 1p "$out/$label.proc.txt"); read -r t1 v1 n1 engines e1 loops < <(sed -n 2p "$out/$label.proc.txt")
      # Runs from before the origin was sampled have no .origin.txt: their column is empty (-1 below).
      o0=0 o1=-1
      if [ -s "$out/$label.origin.txt" ]; then read -r o0 _ < <(sed -n 1p "$out/$label.origin.txt"); read -r o1 _ < <(sed -n 2p "$out/$label.origin.txt"); fi
      awk -v n="$label" -v q="$requests" -v rps="$rps" -v dt=$((t1 - t0)) -v hz="$tick_hz" -v dv=$((v1 - v0)) -v dn=$((n1 - n0)) \
        -v eng="$engines" -v de=$((e1 - e0)) -v loops="${loops:-0}" -v e="${errors:-none}" -v dorig=$((o1 - o0)) \
        'BEGIN { printf "%s\t%d\t%.0f\t%.1f\t%s\t%.2f\t%.2f\t%d\t%.2f\t%d\t%s\n", n, q, rps, dt / hz * 1e6 / q,
                 dorig < 0 ? "-" : sprintf("%.1f", dorig / hz * 1e6 / q), dv / q, dn / q, eng, dt ? de / dt : 0, loops, e }'
    done
  done
} > "$out/summary.tsv"
for config in "$@"; do
  name="${config%%=*}"
  awk -F'\t' -v n="$name" 'index($1, n ".r") == 1 { rps[++k] = $3; cpu[k] = $4; if ($5 != "-") o[++ko] = $5; v[k] = $6; i[k] = $7; s[k] = $9 }
    function med(a, m,   j, s, t, x) { for (j = 1; j <= m; j++) s[j] = a[j]
      for (j = 2; j <= m; j++) { x = s[j]; for (t = j - 1; t >= 1 && s[t] > x; t--) s[t + 1] = s[t]; s[t + 1] = x }
      return m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2 }
    END { if (k) printf "median %s (%d runs)\t-\t%.0f\t%.1f\t%s\t%.2f\t%.2f\t-\t%.2f\t-\t-\n", n, k, med(rps, k), med(cpu, k),
                        ko ? sprintf("%.1f", med(o, ko)) : "-", med(v, k), med(i, k), med(s, k) }' "$out/summary.tsv"
done >> "$out/summary.tsv"
column -t -s$'\t' "$out/summary.tsv"
