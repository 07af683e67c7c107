#!/usr/bin/env bash
# The nginx-vs-Pingora style comparison as a scenario: HTTP/2 over TLS to the proxy (ALPN h2, the run's self-signed
# certificate), HTTP/1.1 to the origin, X-Forwarded-For on in every proxy, and the offered load stepped up until each
# proxy fails; at each step p99 latency, availability (non-2xx answers and errors), the proxy's CPU and its resident
# memory, for nginx, HAProxy, llrp-llhttp and full YARP. Then the report (analysis/Report --stepped: stepped.md and a
# chart of each figure against the offered load).
#
# How the load steps: open loop, h2load --rps (crank/h2load-job.sh --rate), the same offered requests/s for every proxy
# at a step. Steps of connections (closed loop) were the other choice and were not taken: a closed loop offers each
# proxy only what it answers, so its x axis would be a different load per proxy, and it never fails by overload, it
# slows down. An open loop puts every proxy at the same load, and past its capacity the achieved rate falls behind the
# offered one and the latency grows without bound: the failure the comparison looks for. HTTP/2 keeps the loop open
# while fewer than --streams requests are in flight on a connection (h2load-job.sh says more).
#
# Each step is one crank/run-local.sh call with every proxy still standing (its rounds interleave them, each run starts
# its proxy afresh with its warm-up, and /proc sampling gives the CPU and memory of the measured window). A proxy
# fails a step when, in the median of its runs there, its achieved rate of 2xx answers is below --fail-achieved % of the
# offered rate, or its availability is below --fail-availability %, or no run of it succeeded; it is not offered the
# next steps. The steps end when every proxy has failed, or after --steps.
#
# usage: crank/stepped.sh [--start R] [--step R] [--steps N] [--fail-achieved P] [--fail-availability P] [--out DIR]
#                         [--no-report] [run-local.sh options...] [SCENARIO...]
#        crank/run-local.sh stepped ...   (the same)
#   --start R, --step R   the first offered rate and the increment, requests/s over all connections (default 2000,
#                    2000: on the 2-core box with the proxy on a core of its own, full YARP over h2 and TLS is expected
#                    to fail within the first few steps and nginx within twenty, so the curves have points below each
#                    knee)
#   --steps N        at most N steps (default 30, up to 60,000 requests/s by default; at most 60)
#   --fail-achieved P     a step fails below P % of the offered rate achieved (default 95: h2load's rate control lands
#                    a few percent off the offered rate on a step the proxy keeps up with, as in the saturation ramp)
#   --fail-availability P a step fails below P % of requests answered 2xx or 3xx (default 100: any failed request is a
#                    failure, as maxErrors 0 makes it for every other run here)
#   --out DIR        results (default artifacts/crank/stepped-<date>-<time>): DIR/s<rate>/ is one run-local.sh folder per
#                    step, DIR/stepped.json the plan and each proxy's failing step, DIR/stepped.md + PNGs the report
#   SCENARIO         default: nginx haproxy llrp-llhttp yarp
# Every other option goes to each run-local.sh call as given (--rounds, --warmup, --duration, --connections, --streams,
# --protocols, --pin-proxy, --response-size, ports...). Set here, before them (so a later one wins): --rounds 1
# --warmup 10 --duration 10 --steady-retries 0 (an overloaded proxy is not steady, and a retry would not make it so).
# Fixed here: --load h2load --server-scheme https, X-Forwarded-For (HAPROXY_FORWARDFOR; the others always send it), and
# maxErrors high enough that a step with errors is recorded rather than failed: this script judges the steps.
# Exit status: 0 every step ran (whatever the proxies did in it); 1 a run-local.sh call or the report failed; 2 bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMMAND_LINE="crank/stepped.sh$(printf ' %q' "$@")"
ALL=(direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp llrp-kestrel-h1)
DEFAULT_SCENARIOS=(nginx haproxy llrp-llhttp yarp)
# The errors a step may have and still be recorded as a run: a billion is beyond any step's request count.
STEP_MAX_ERRORS=1000000000
MAX_STEPS=60

die() { echo "stepped: $* (see --help)" >&2; exit 2; }
start=2000 step=2000 steps=30 fail_achieved=95 fail_availability=100 out="" report=1 pass=() scenarios=()
need_int() { [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || die "$1 needs a whole number >= 1"; }
need_pct() { [[ "${2:-}" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v p="$2" 'BEGIN { exit !(p > 0 && p <= 100) }' || die "$1 needs a percentage above 0, at most 100"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --start) need_int "$1" "${2:-}"; start="$2"; shift 2 ;;
    --step) need_int "$1" "${2:-}"; step="$2"; shift 2 ;;
    --steps) need_int "$1" "${2:-}"; [ "$2" -le "$MAX_STEPS" ] || die "--steps: at most $MAX_STEPS"; steps="$2"; shift 2 ;;
    --fail-achieved) need_pct "$1" "${2:-}"; fail_achieved="$2"; shift 2 ;;
    --fail-availability) need_pct "$1" "${2:-}"; fail_availability="$2"; shift 2 ;;
    --out) [ -n "${2:-}" ] || die "--out needs a folder"; out="$2"; shift 2 ;;
    --no-report) report=0; shift ;;
    --load|--rate|--json-dir|--server-scheme|--dry-run) die "$1 is set by this script (or has no meaning per step)" ;;
    # run-local.sh's options without a value; every other one takes the next word.
    --pin-proxy|--pin|--shared|--own-sessions|--pgo|--nopgo|--fallback|--no-install) pass+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) [ $# -ge 2 ] || die "$1 needs a value"; pass+=("$1" "$2"); shift 2 ;;
    *)
      known=0
      for s in "${ALL[@]}"; do [ "$s" = "$1" ] && known=1; done
      [ "$known" = 1 ] || die "unknown scenario '$1' (${ALL[*]})"
      [ "$1" != direct ] || die "direct has no place here: the origin speaks HTTP/1.1"
      scenarios+=("$1"); shift ;;
  esac
done
[ "${#scenarios[@]}" -gt 0 ] || scenarios=("${DEFAULT_SCENARIOS[@]}")
command -v jq > /dev/null || { echo "stepped: jq is required" >&2; exit 1; }

[ -n "$out" ] || out="$ROOT/artifacts/crank/stepped-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
echo "stepped: ${scenarios[*]}; from $start requests/s by $step, at most $steps steps; a proxy fails a step below $fail_achieved % achieved or $fail_availability % available; results in $out"

# verdict DIR SCENARIO OFFERED: "ok" or why the scenario failed the step, from its runs in DIR (medians over rounds).
verdict() {
  local dir="$1" s="$2" offered="$3" files=()
  shopt -s nullglob; files=("$dir/$s".r*.json); shopt -u nullglob
  [ "${#files[@]}" -gt 0 ] || { echo "no result"; return; }
  jq -r -s --argjson offered "$offered" --argjson achieved "$fail_achieved" --argjson available "$fail_availability" '
    def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    [.[] | select(.returnCode == 0) | .jobResults.jobs.load.results] as $ok
    | if ($ok | length) == 0 then "no run succeeded"
      else ([$ok[]["h2load/rps/2xx"] // 0] | median) as $a | ([$ok[]["h2load/availability"] // 0] | median) as $v
        | if $a < $offered * $achieved / 100 then "achieved \($a | floor)/s of \($offered)/s offered"
          elif $v < $available then "availability \($v * 1000 | floor / 1000) %"
          else "ok" end
      end' "${files[@]}"
}

rc=0 standing=("${scenarios[@]}") rates=() failed_json='{}'
for ((i = 0; i < steps && ${#standing[@]} > 0; i++)); do
  rate=$(( start + i * step ))
  rates+=("$rate")
  echo "stepped: step $((i + 1)): $rate requests/s offered to ${standing[*]}"
  "$ROOT/crank/run-local.sh" --no-report --rounds 1 --warmup 10 --duration 10 --steady-retries 0 "${pass[@]}" \
    --load h2load --server-scheme https --rate "$rate" --variable "maxErrors=$STEP_MAX_ERRORS" \
    --app-env HAPROXY_FORWARDFOR=1 --json-dir "$out/s$rate" "${standing[@]}" || rc=1
  kept=()
  for s in "${standing[@]}"; do
    why="$(verdict "$out/s$rate" "$s" "$rate")"
    if [ "$why" = ok ]; then
      kept+=("$s")
    else
      echo "stepped: $s failed at $rate requests/s: $why"
      failed_json="$(jq -c --arg s "$s" --argjson r "$rate" --arg why "$why" '. + {($s): {rate: $r, reason: $why}}' <<< "$failed_json")"
    fi
  done
  standing=("${kept[@]}")
done
[ "${#standing[@]}" = 0 ] || echo "stepped: still standing after the last step: ${standing[*]}"

jq -n --argjson start "$start" --argjson step "$step" --argjson steps "$steps" --argjson failAchieved "$fail_achieved" \
  --argjson failAvailability "$fail_availability" --argjson failed "$failed_json" --arg command "$COMMAND_LINE" \
  --argjson rates "$(printf '%s\n' "${rates[@]}" | jq -s .)" \
  --argjson scenarios "$(printf '%s\n' "${scenarios[@]}" | jq -R . | jq -s .)" \
  '{start: $start, step: $step, steps: $steps, failAchievedPercent: $failAchieved, failAvailabilityPercent: $failAvailability,
    rates: $rates, scenarios: $scenarios, failedAt: $failed, command: $command}' > "$out/stepped.json"

if [ "$report" = 1 ]; then
  if (cd "$ROOT" && timeout 900 dotnet run --project analysis/Report/Report.csproj -c Release -- --stepped "$out") > "$out/report.log" 2>&1; then
    echo "stepped: report $out/stepped.md"
  else
    echo "stepped: the report failed; last lines of $out/report.log:" >&2
    tail -n 15 "$out/report.log" >&2 || true
    rc=1
  fi
fi
exit "$rc"
