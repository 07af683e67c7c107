#!/usr/bin/env bash
# Allocated bytes per request of --client llhttp under load, for every --loadBalancing policy, with 3 downstreams.
#
# usage: analysis/balancing-allocation.sh [options] [POLICY...]
#   POLICY             ConnectionRoundRobin PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests
#                      (default: all six)
#   --llrp-dir DIR     a published LLRP (crank/publish.sh llrp) (default: publish this checkout)
#   --downstream-dir D a published Downstream (default: publish this checkout)
#   --warmup S         warm-up load in seconds (default 15)
#   --duration S       measured load in seconds (default 25)
#   --window S         the proxy's statsWindow: the last S seconds of the measured load (default 10)
#   --connections N    wrk connections (default 64)
#   --port P           proxy port; the downstreams listen on P+10..P+12 (default 18700)
#
# Per policy: start LLRP (statsInterval 1, statsWindow S), wrk warm-up then the measured run on the same process
# (both under flock /tmp/llrp-load.lock, so no other benchmark overlaps), wait for two more statistics blocks,
# and print the last one's window figures: llrp/allocated-per-request is the whole process's
# GC.GetTotalAllocatedBytes delta over the window divided by the requests completed in it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
llrp_dir="" ds_dir="" warmup=15 duration=25 window=10 connections=64 port=18700
policies=()
while [ $# -gt 0 ]; do
  case "$1" in
    --llrp-dir) llrp_dir="${2:?}"; shift 2 ;;
    --downstream-dir) ds_dir="${2:?}"; shift 2 ;;
    --warmup) warmup="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --window) window="${2:?}"; shift 2 ;;
    --connections) connections="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    ConnectionRoundRobin|PowerOfTwoChoices|FirstAlphabetical|Random|RoundRobin|LeastRequests) policies+=("$1"); shift ;;
    *) echo "balancing-allocation: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ "${#policies[@]}" -gt 0 ] || policies=(ConnectionRoundRobin PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests)

work="$(mktemp -d "${TMPDIR:-/tmp}/balancing-allocation.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
if [ -z "$llrp_dir" ] || [ -z "$ds_dir" ]; then
  PUBLISH_DIR="$work/publish" "$ROOT/crank/publish.sh" llrp downstream > "$work/publish.log" 2>&1 || { cat "$work/publish.log" >&2; exit 1; }
  llrp_dir="${llrp_dir:-$work/publish/llrp}" ds_dir="${ds_dir:-$work/publish/downstream}"
fi

wait_port() {
  local deadline=$(( $(date +%s) + 30 ))
  until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "balancing-allocation: nothing listens on port $1" >&2; return 1; }
    sleep 0.2
  done
}

for p in "$port" $((port + 10)) $((port + 11)) $((port + 12)); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "balancing-allocation: port $p is already in use" >&2; exit 1
  fi
done

downstreams=()
for i in 0 1 2; do
  p=$((port + 10 + i))
  "$ds_dir/Downstream" --urls "http://127.0.0.1:$p" --name "d$((i + 1))" > "$work/d$i.log" 2>&1 &
  pids+=($!)
  downstreams+=("http://127.0.0.1:$p")
  wait_port "$p"
done
ds_list="$(IFS=';'; echo "${downstreams[*]}")"

printf '%-22s %12s %12s %10s %12s\n' policy "B/request" "requests" "window s" "wrk req/s"
for policy in "${policies[@]}"; do
  log="$work/llrp-$policy.log"
  "$llrp_dir/LLRP" --urls "http://127.0.0.1:$port" --downstream "$ds_list" --client llhttp \
    --loadBalancing "$policy" --statsInterval 1 --statsWindow "$window" > "$log" 2>&1 &
  llrp=$!
  pids+=("$llrp")
  wait_port "$port"
  flock /tmp/llrp-load.lock bash -c "
    timeout $((warmup + 30)) wrk -t1 -c$connections -d${warmup}s http://127.0.0.1:$port/ > '$work/warmup-$policy.txt'
    timeout $((duration + 30)) wrk -t1 -c$connections -d${duration}s http://127.0.0.1:$port/ > '$work/wrk-$policy.txt'"
  sleep 3
  kill "$llrp"; wait "$llrp" 2>/dev/null || true
  # The last statistics block printed before the stop: its window is the end of the measured run.
  block="$(awk '/^#StartJobStatistics/{b="";next} /^#EndJobStatistics/{last=b;next} {b=b $0} END{print last}' "$log")"
  [ -n "$block" ] || { echo "balancing-allocation: no statistics block from LLRP ($policy)" >&2; tail -n 20 "$log" >&2; exit 1; }
  value() { jq -r --arg n "$1" '[.Measurements[] | select(.Name == $n)] | last | .Value' <<< "$block"; }
  rps="$(awk '/^Requests\/sec:/{print $2}' "$work/wrk-$policy.txt")"
  printf '%-22s %12.1f %12s %10.1f %12s\n' "$policy" "$(value llrp/allocated-per-request)" \
    "$(value llrp/requests)" "$(value llrp/window)" "$rps"
  if grep -q 'Non-2xx\|Socket errors' "$work/wrk-$policy.txt"; then
    grep 'Non-2xx\|Socket errors' "$work/wrk-$policy.txt" | sed "s/^/  $policy: /"
  fi
done
