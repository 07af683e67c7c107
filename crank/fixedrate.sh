#!/usr/bin/env bash
# Open-loop latency at shares of a measured maximum: crank/run-local.sh --load fixedrate at 25, 50, 75 and 90 % of the
# best peer's maximum requests/s, for direct, llrp-llhttp, nginx, haproxy and full YARP (the method of dpbench: latency
# at a share of the maximum load, beside direct at the same offered load), then the report (analysis/Report
# --fixed-rate: fixedrate.md with the table and the charts of latency against offered load).
#
# usage: crank/fixedrate.sh (--max-rps N | --max-from DIR) [--percents LIST] [--out DIR] [--no-report]
#                           [run-local.sh options...] [SCENARIO...]
#        crank/run-local.sh fixed-rate ...   (the same)
#   --max-rps N      the maximum the shares are taken of, in requests/s
#   --max-from DIR   take it from closed-loop runs: a run-local.sh results folder (or a sweep point's round folder)
#                    with nginx and/or haproxy closed-loop (wrk) runs; the maximum is the higher of their median
#                    http/rps/mean there, "the best peer's measured maximum" (fixed-rate runs there are left out:
#                    they answer what they were offered). Measure it at the same connections, sizes, headers, proxy
#                    threads and pinning as the fixed-rate runs.
#   --percents LIST  comma-separated shares in percent (default 25,50,75,90), run from the lowest up
#   --out DIR        results (default artifacts/crank/fixedrate-<date>-<time>): DIR/p<percent>/ is one run-local.sh
#                    folder per share, DIR/fixedrate.json the plan, DIR/fixedrate.md + PNGs the report
#   SCENARIO         default: direct llrp-llhttp nginx haproxy yarp
# Every other option goes to each run-local.sh call as given (--rounds, --warmup, --duration, --connections,
# --proxy-threads, --pin-proxy, --response-size, --request-body-size, --headers, ports, ...). The shares run one after
# another, each in its own run-local.sh call (its rounds interleave the scenarios); one call per share keeps each
# share's results in its own folder, as analysis/sweep.sh keeps its points.
# Exit status: 0 every run succeeded; 1 a run failed; 2 bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMMAND_LINE="crank/fixedrate.sh$(printf ' %q' "$@")"
ALL=(direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp)
DEFAULT_SCENARIOS=(direct llrp-llhttp nginx haproxy yarp)
# dpbench's shares: from light load to just below saturation, where a proxy's tail shows first.
percents=25,50,75,90

die() { echo "fixedrate: $* (see --help)" >&2; exit 2; }
max_rps="" max_from="" out="" report=1 pass=() scenarios=()
while [ $# -gt 0 ]; do
  case "$1" in
    --max-rps) [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || die "--max-rps needs a whole number >= 1"; max_rps="$2"; shift 2 ;;
    --max-from) [ -d "${2:-}" ] || die "--max-from needs a results folder"; max_from="$2"; shift 2 ;;
    --percents) [[ "${2:-}" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--percents needs a comma-separated list of whole numbers"; percents="$2"; shift 2 ;;
    --out) [ -n "${2:-}" ] || die "--out needs a folder"; out="$2"; shift 2 ;;
    --no-report) report=0; shift ;;
    --load|--rate|--json-dir) die "$1 is set by this script" ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *)
      known=0
      for s in "${ALL[@]}"; do [ "$s" = "$1" ] && known=1; done
      if [ "$known" = 1 ]; then scenarios+=("$1"); else pass+=("$1"); fi
      shift ;;
  esac
done
[ -n "$max_rps" ] || [ -n "$max_from" ] || die "give the maximum: --max-rps N or --max-from DIR"
[ -z "$max_rps" ] || [ -z "$max_from" ] || die "--max-rps and --max-from exclude each other"
[ "${#scenarios[@]}" -gt 0 ] || scenarios=("${DEFAULT_SCENARIOS[@]}")
command -v jq > /dev/null || { echo "fixedrate: jq is required" >&2; exit 1; }

source_text="given (--max-rps)"
if [ -n "$max_from" ]; then
  # The median http/rps/mean of each peer's runs under the folder; the higher of the two.
  read -r max_rps source_text < <(find "$max_from" -name '*.r*.json' \( -name 'nginx.r*' -o -name 'haproxy.r*' \) -print0 \
    | xargs -0 -r jq -c '{scenario: (.jobResults.properties.scenario // (input_filename | split("/") | last | split(".r") | first)),
                         rps: .jobResults.jobs.load.results["http/rps/mean"], ok: (.returnCode == 0),
                         open: (.jobResults.jobs.load.results["fixedrate/rate"] != null)}' \
    | jq -r -s --arg dir "$max_from" '
        [.[] | select(.ok and .rps != null and (.open | not))] | group_by(.scenario)
        | map({scenario: .[0].scenario, n: length, median: ([.[].rps] | sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end)})
        | max_by(.median) // empty
        | "\(.median | floor) the median of \(.n) \(.scenario) run(s) in \($dir)"') || true
  [ -n "$max_rps" ] && [ "$max_rps" -ge 1 ] || { echo "fixedrate: no successful nginx or haproxy run with http/rps/mean under $max_from" >&2; exit 1; }
fi

[ -n "$out" ] || out="$ROOT/artifacts/crank/fixedrate-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
IFS=, read -r -a shares <<< "$percents"
mapfile -t shares < <(printf '%s\n' "${shares[@]}" | sort -n -u)
rates=()
for p in "${shares[@]}"; do
  [ "$p" -ge 1 ] && [ "$p" -le 200 ] || die "a share must be 1 to 200 %, not $p"
  rates+=($(( max_rps * p / 100 )))
done
jq -n --argjson max "$max_rps" --arg source "$source_text" --arg command "$COMMAND_LINE" \
  --argjson percents "$(printf '%s\n' "${shares[@]}" | jq -s .)" --argjson rates "$(printf '%s\n' "${rates[@]}" | jq -s .)" \
  --argjson scenarios "$(printf '%s\n' "${scenarios[@]}" | jq -R . | jq -s .)" \
  '{maxRps: $max, maxSource: $source, percents: $percents, rates: $rates, scenarios: $scenarios, command: $command}' > "$out/fixedrate.json"
echo "fixedrate: maximum $max_rps requests/s ($source_text); shares ${shares[*]} % = ${rates[*]} requests/s; ${scenarios[*]}"

rc=0
for i in "${!shares[@]}"; do
  p="${shares[$i]}" rate="${rates[$i]}"
  [ "$rate" -ge 1 ] || { echo "fixedrate: $p % of $max_rps is below 1 request/s; skipped" >&2; rc=1; continue; }
  echo "fixedrate: $p % = $rate requests/s"
  "$ROOT/crank/run-local.sh" --no-report "${pass[@]}" --load fixedrate --rate "$rate" --json-dir "$out/p$p" "${scenarios[@]}" || rc=1
done

if [ "$report" = 1 ]; then
  if (cd "$ROOT" && timeout 900 dotnet run --project analysis/Report/Report.csproj -c Release -- --fixed-rate "$out") > "$out/report.log" 2>&1; then
    echo "fixedrate: report $out/fixedrate.md"
  else
    echo "fixedrate: the report failed; last lines of $out/report.log:" >&2
    tail -n 15 "$out/report.log" >&2 || true
    rc=1
  fi
fi
exit "$rc"
