#!/usr/bin/env bash
# What a .NET variant still JIT-compiles late under steady load, and when: runs the published origin and LLRP with
# one --client on loopback, puts wrk -t1 -c CONNECTIONS on it for SECONDS, and records, once a second, how many
# methods the runtime has compiled so far (DOTNET_JitStdOutFile + DOTNET_JitDisasmSummary: one line per compiled
# method, with its tier). Writes to OUT: jit.txt (every compiled method, in order), counts.txt ("<s since load
# start> <methods so far>"), app.log (LLRP's statistics blocks), wrk.log, late.txt (the methods compiled after LATE
# seconds of load and before its end, with their tiers), late-methods.txt (the same, grouped by declaring type) and
# window-figures.txt (LLRP's per-second jit/interior-share and cpu-per-request over its trailing 10 s window).
#
# usage: analysis/late-jit.sh [--client C] [--seconds S] [--connections N] [--late L] OUT
#        defaults: httpclient, 150 s, 64 connections, 25 s. Ports 19080 (proxy) and 19081 (origin) must be free.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
client=httpclient seconds=150 connections=64 late=25 out=""
usage() { echo "usage: analysis/late-jit.sh [--client C] [--seconds S] [--connections N] [--late L] OUT" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --client) client="${2:?}"; shift 2 ;;
    --seconds) seconds="${2:?}"; shift 2 ;;
    --connections) connections="${2:?}"; shift 2 ;;
    --late) late="${2:?}"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "late-jit: unknown option $1" >&2; usage ;;
    *) out="$1"; shift ;;
  esac
done
[ -n "$out" ] || usage
for n in "$seconds" "$connections" "$late"; do [[ "$n" =~ ^[0-9]+$ ]] || { echo "late-jit: not a number: $n" >&2; exit 2; }; done
command -v wrk > /dev/null || { echo "late-jit: needs wrk (apt-get install wrk)" >&2; exit 2; }
"$root/crank/publish.sh" llrp downstream > /dev/null
llrp="$("$root/crank/publish.sh" --exe llrp)" origin="$("$root/crank/publish.sh" --exe downstream)"
mkdir -p "$out"; rm -f "$out"/jit.txt "$out"/counts.txt
"$origin" --urls http://127.0.0.1:19081 > "$out/origin.log" 2>&1 & origin_pid=$!
DOTNET_JitStdOutFile="$out/jit.txt" DOTNET_JitDisasmSummary=1 "$llrp" --urls http://127.0.0.1:19080 \
  --downstream http://127.0.0.1:19081 --client "$client" --statsInterval 1 --statsWindow 10 > "$out/app.log" 2>&1 & app_pid=$!
trap 'kill "$app_pid" "$origin_pid" 2> /dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q "Application started" "$out/app.log" && break; sleep 0.1; done
start="$(date +%s.%N)"
timeout $((seconds + 15)) wrk -t1 -c"$connections" -d"${seconds}s" http://127.0.0.1:19080/ > "$out/wrk.log" 2>&1 & wrk_pid=$!
while kill -0 "$wrk_pid" 2> /dev/null; do
  awk -v now="$(date +%s.%N)" -v start="$start" -v n="$( (wc -l < "$out/jit.txt") 2> /dev/null || echo 0)" \
    'BEGIN { printf "%.1f %d\n", now - start, n }' >> "$out/counts.txt"
  sleep 1
done
wait "$wrk_pid" || true
# Late: after $late s of load and up to the last count taken under load (closing the connections compiles more).
first_late="$(awk -v late="$late" '$1 >= late { print $2; exit }' "$out/counts.txt")"
last="$(tail -n 1 "$out/counts.txt" | awk '{ print $2 }')"
sed -n "$((first_late + 1)),${last}p" "$out/jit.txt" | sed -E 's/^ *[0-9]+: JIT compiled //' > "$out/late.txt"
sed -E 's/\(.*//; s/:[^:]*$//; s/\[.*//' "$out/late.txt" | sort | uniq -c | sort -rn > "$out/late-methods.txt"
grep -o '"Name":"\(jit/interior-share\|llrp/cpu-per-request\)","Value":[0-9.]*' "$out/app.log" \
  | sed -E 's/"Name":"([^"]*)","Value":/\1 /' > "$out/window-figures.txt" || true
echo "late-jit: $(wc -l < "$out/jit.txt") methods compiled in all, $(wc -l < "$out/late.txt") after ${late}s of load and before its end; see $out"
