#!/usr/bin/env bash
# Load job of the "ab" comparison: ApacheBench (Debian's apache2-utils) with many concurrent clients on one page,
# the way the published Netflix Zuul vs nginx comparison measured (ab, 200 concurrent clients, one 26 KB page,
# direct and through each proxy). Used by benchmarks.yml (scenarios ab-*) and by crank/comparisons.sh.
#
# It runs an unmeasured warm-up, then the measured ab as a child announced with "##ChildProcessId:<pid>" on stderr
# (crank's protocol: the agent measures ab, not this script), parses ab's report and prints crank's statistics
# block (#StartJobStatistics / JSON / #EndJobStatistics): ab/rps/mean, ab/time-per-request/mean (ab's "Time per
# request (mean)", i.e. concurrency / rate), ab/requests, ab/failed, ab/non2xx, ab/latency/50|90|95|99|max (ms, ab's
# percentage table, whole milliseconds), each also under crank's http/* names where one exists.
#
# usage: ab-job.sh [-w WARMUP_S] [-d DURATION_S] [-c CLIENTS] [-k] [--max-errors N] URL
#        ab-job.sh --parse REPORT_FILE      only parse a saved ab report (tests: crank/tests/parsers-test.sh)
#
# Defaults: -c 200 (the published comparison), 5 s warm-up, 15 s measured (ab -t with a request cap so large that
# the time ends the run; ab's own -t implies -n 50000, which would end a fast run early). No keep-alive unless -k:
# ab's default, and the published comparison's, so every request opens a connection.
#
# Environment: AB (ab binary, default: ab on PATH); AB_JOB_HOOK, like wrk-job.sh's WRK_JOB_HOOK: called with
# "measure-start" / "measure-end" around the measured run (crank/comparisons.sh samples the processes with it).
# Exit code: ab's own, 2 bad usage, 3 the report cannot be parsed, 4 failed + non-2xx requests exceed --max-errors.
set -euo pipefail
# shellcheck source=lib-statistics.sh disable=SC1091
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib-statistics.sh"

# Prints crank's statistics block for the ab report in $1; fails when the report lacks its summary lines.
# Lines used (ab 2.3):
#   Complete requests:      10000
#   Failed requests:        0
#   Non-2xx responses:      12            (only when > 0)
#   Requests per second:    8103.45 [#/sec] (mean)
#   Time per request:       24.681 [ms] (mean)
#   Time per request:       0.123 [ms] (mean, across all concurrent requests)
#     95%     31                           (percentage table, ms)
#    100%     45 (longest request)
parse_report() {
  local rows
  rows="$(awk -v CONVFMT=%.10g '
    $1 == "Complete" && $2 == "requests:" { complete = $3 + 0; seen_complete = 1 }
    $1 == "Failed" && $2 == "requests:" { failed = $3 + 0 }
    $1 == "Non-2xx" && $2 == "responses:" { non2xx = $3 + 0 }
    $1 == "Requests" && $2 == "per" && $3 == "second:" { rps = $4 + 0; seen_rps = 1 }
    $1 == "Time" && $2 == "per" && $3 == "request:" && $5 == "[ms]" && $6 == "(mean)" { tpr = $4 + 0; seen_tpr = 1 }
    $1 == "50%" { p50 = $2 + 0 }
    $1 == "90%" { p90 = $2 + 0 }
    $1 == "95%" { p95 = $2 + 0 }
    $1 == "99%" { p99 = $2 + 0 }
    $1 == "100%" { pmax = $2 + 0 }
    END {
      if (!seen_complete || !seen_rps || !seen_tpr) exit 1
      n = 0
      m[++n] = "ab/rps/mean;http/rps/mean|Max|Sum|Requests/sec|Requests per second (ab)|n0|" rps
      m[++n] = "ab/time-per-request/mean|Max|Avg|Time per request (ms)|Mean time per request, ab: concurrency / rate (ms)|n2|" tpr
      m[++n] = "ab/requests;http/requests|Max|Sum|Requests|Complete requests|n0|" complete
      m[++n] = "ab/failed;http/requests/errors|Max|Sum|Failed requests|Failed requests (connect, receive, length, exceptions)|n0|" failed + 0
      m[++n] = "ab/non2xx;http/requests/badresponses|Max|Sum|Non-2xx responses|Non-2xx responses|n0|" non2xx + 0
      if (p50 != "") m[++n] = "ab/latency/50;http/latency/50|Max|Max|Latency 50th (ms)|Latency 50th (ms)|n0|" p50
      if (p90 != "") m[++n] = "ab/latency/90;http/latency/90|Max|Max|Latency 90th (ms)|Latency 90th (ms)|n0|" p90
      if (p95 != "") m[++n] = "ab/latency/95;http/latency/95|Max|Max|Latency 95th (ms)|Latency 95th (ms)|n0|" p95
      if (p99 != "") m[++n] = "ab/latency/99;http/latency/99|Max|Max|Latency 99th (ms)|Latency 99th (ms)|n0|" p99
      if (pmax != "") m[++n] = "ab/latency/max;http/latency/max|Max|Max|Max latency (ms)|Longest request (ms)|n0|" pmax
      # One tab-separated line per measurement for statistics_block (lib-statistics.sh), which writes the JSON.
      for (i = 1; i <= n; i++) { gsub(/\|/, "\t", m[i]); print m[i] }
    }' "$1")" || return 1
  printf '%s\n' "$rows" | statistics_block ab
}

die() { echo "ab-job: $*" >&2; exit 2; }

if [ "${1:-}" = --parse ]; then
  [ -f "${2:-}" ] || die "--parse needs a saved ab report"
  parse_report "$2" || { echo "ab-job: could not parse the ab report $2" >&2; exit 3; }
  exit 0
fi

warmup=5 duration=15 clients=200 keepalive=() url="" max_errors=""
# ab needs a request cap; the measured time ends the run long before this one (ab holds no per-request state).
request_cap=100000000
while [ $# -gt 0 ]; do
  case "$1" in
    -w|--warmup) warmup="${2:?}"; shift 2 ;;
    -d|--duration) duration="${2:?}"; shift 2 ;;
    -c|--clients) clients="${2:?}"; shift 2 ;;
    -k|--keepalive) keepalive=(-k); shift ;;
    --max-errors) max_errors="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$url" ] || die "more than one URL ($url, $1)"; url="$1"; shift ;;
  esac
done
[ -n "$url" ] || die "missing URL"
warmup="${warmup%s}" duration="${duration%s}"
for v in "$warmup" "$duration" "$clients" ${max_errors:+"$max_errors"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$duration" -gt 0 ] && [ "$clients" -gt 0 ] || die "duration and clients must be > 0"
# ab needs a path, even "/": http://host:port alone is refused.
[[ "$url" =~ ^http://[^/]+/ ]] || die "URL must be http://HOST:PORT/PATH: $url"

AB="${AB:-$(command -v ab || true)}"
[ -n "$AB" ] && [ -x "$AB" ] || die "ab not found (apt-get install -y apache2-utils)"
hook() { if [ -n "${AB_JOB_HOOK:-}" ]; then "$AB_JOB_HOOK" "$1"; fi; }

# -r: a socket receive error is counted as a failed request instead of ending the run; -q: no progress lines.
args=(-q -r -c "$clients" "${keepalive[@]}")
if [ "$warmup" -gt 0 ]; then
  echo "ab-job: warm-up: $AB -t $warmup -n $request_cap${args[*]/#/ } $url"
  "$AB" -t "$warmup" -n "$request_cap" "${args[@]}" "$url" 2>&1 | sed 's/^/  warm-up| /' || true
fi

report="$(mktemp "${TMPDIR:-/tmp}/ab-job.XXXXXX")"
ab_pid=""
trap 'rm -f "$report"; [ -z "$ab_pid" ] || kill "$ab_pid" 2> /dev/null || true' EXIT
echo "ab-job: measured: $AB -t $duration -n $request_cap${args[*]/#/ } $url"
hook measure-start
"$AB" -t "$duration" -n "$request_cap" "${args[@]}" "$url" > "$report" 2>&1 &
ab_pid=$!
echo "##ChildProcessId:$ab_pid" >&2
set +e
wait "$ab_pid"
rc=$?
set -e
ab_pid=""
hook measure-end
cat "$report"
[ "$rc" -eq 0 ] || { echo "ab-job: ab exited with $rc" >&2; exit "$rc"; }
parse_report "$report" || { echo "ab-job: could not parse the ab report above" >&2; exit 3; }

if [ -n "$max_errors" ]; then
  errors="$(awk '$1 == "Failed" && $2 == "requests:" { n += $3 } $1 == "Non-2xx" && $2 == "responses:" { n += $3 } END { print n + 0 }' "$report")"
  if [ "$errors" -gt "$max_errors" ]; then
    echo "ab-job: $errors failed + non-2xx requests in the measured run, more than --max-errors $max_errors: failing the job" >&2
    exit 4
  fi
fi
