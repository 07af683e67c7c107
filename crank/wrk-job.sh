#!/usr/bin/env bash
# Load job for LLRP's crank scenarios, and the same script the offline runner (run-local.sh) uses.
#
# It replaces crank's own Microsoft.Crank.Jobs.Wrk, which the agent would git-clone and build from
# GitHub (impossible offline; crank-offline.md §4). It drives Debian's wrk 4.1.0 the same way:
# an unmeasured warm-up run, then the measured run with --latency, then it parses wrk's text report
# and prints crank's stdout statistics protocol (#StartJobStatistics / JSON / #EndJobStatistics,
# crank docs/measurements.md, crank-offline.md §4), using the measurement names of crank's wrk job
# (wrk/requests, wrk/rps/mean, wrk/latency/*, wrk/errors/badresponses, wrk/errors/socketerrors).
#
# usage: wrk-job.sh [-w WARMUP_S] [-d DURATION_S] [-t THREADS] [-c CONNECTIONS] [--timeout S]
#                   [--headers plaintext|none] [-H 'Name: value']... [--max-errors N] URL
#
# Defaults follow benchmarking.md for the 2-core box: -t 1, -c 64, 5 s warm-up, 15 s measured.
# (crank's wrk.yml uses -c 256 -t 32 -w 15 -d 15 for 28-core lab machines.)
# "--headers plaintext" (default) adds the two headers of crank's "plaintext" preset
# (reference-proxy-internals.md §5.5) so every scenario sends the same request.
#
# Environment:
#   WRK            wrk binary (default: wrk on PATH)
#   WRK_JOB_HOOK   optional executable, called as "$WRK_JOB_HOOK measure-start" right before the
#                  measured run and "$WRK_JOB_HOOK measure-end" right after it. run-local.sh uses it
#                  to read the proxy's CPU time over exactly the measured window. Unset under crank.
#
# Exit code: wrk's own, 3 when its report cannot be parsed (no statistics are printed then), or 4 when
# the measured run's bad responses (non-2xx/3xx) plus socket errors exceed --max-errors (statistics
# printed first). Without --max-errors any count passes.
set -euo pipefail

warmup=5
duration=15
threads=1
connections=64
timeout_s=""
preset=plaintext
headers=()
url=""
max_errors=""

die() { echo "wrk-job: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    -w|--warmup) warmup="${2:?}"; shift 2 ;;
    -d|--duration) duration="${2:?}"; shift 2 ;;
    -t|--threads) threads="${2:?}"; shift 2 ;;
    -c|--connections) connections="${2:?}"; shift 2 ;;
    --timeout) timeout_s="${2:?}"; shift 2 ;;
    --headers) preset="${2:?}"; shift 2 ;;
    -H|--header) headers+=("${2:?}"); shift 2 ;;
    --max-errors) max_errors="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$url" ] || die "more than one URL ($url, $1)"; url="$1"; shift ;;
  esac
done
[ -n "$url" ] || die "missing URL"

# crank passes seconds; also accept "15s".
warmup="${warmup%s}"
duration="${duration%s}"
for v in "$warmup" "$duration" "$threads" "$connections" ${max_errors:+"$max_errors"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$duration" -gt 0 ] || die "duration must be > 0"

case "$preset" in
  plaintext)
    # crank wrk.yml / bombardier "plaintext" preset headers.
    headers=("Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
             "Connection: keep-alive" "${headers[@]}") ;;
  none|"") ;;
  *) die "unknown header preset '$preset' (plaintext|none)" ;;
esac

WRK="${WRK:-$(command -v wrk || true)}"
if [ -z "$WRK" ] || [ ! -x "$WRK" ]; then die "wrk not found (apt-get install -y wrk)"; fi

args=(-t "$threads" -c "$connections" --latency)
[ -z "$timeout_s" ] || args+=(--timeout "${timeout_s%s}s")
for h in "${headers[@]}"; do args+=(-H "$h"); done

hook() {
  if [ -n "${WRK_JOB_HOOK:-}" ]; then "$WRK_JOB_HOOK" "$1"; fi
}

if [ "$warmup" -gt 0 ]; then
  echo "wrk-job: warm-up: wrk -d ${warmup}s$(printf ' %q' "${args[@]}") $url"
  # Warm-up output is shown but never parsed.
  "$WRK" -d "${warmup}s" "${args[@]}" "$url" | sed 's/^/  warm-up| /'
fi

report="$(mktemp "${TMPDIR:-/tmp}/wrk-job.XXXXXX")"
trap 'rm -f "$report"' EXIT

echo "wrk-job: measured: wrk -d ${duration}s$(printf ' %q' "${args[@]}") $url"
hook measure-start
set +e
"$WRK" -d "${duration}s" "${args[@]}" "$url" > "$report"
rc=$?
set -e
hook measure-end
cat "$report"
[ "$rc" -eq 0 ] || { echo "wrk-job: wrk exited with $rc" >&2; exit "$rc"; }

# Parse wrk 4.1.0's report. Latencies are converted to ms, throughput to MB/s.
# Lines used (same ones crank's wrk wrapper reads):
#     Latency   620.51us  229.13us   8.41ms   85.33%
#     50%  590.00us  (Latency Distribution, with --latency)
#   123456 requests in 5.00s, 14.72MB read
#   Non-2xx or 3xx responses: 12          (only when > 0)
#   Socket errors: connect 0, read 1, write 0, timeout 0   (only when > 0)
#   Requests/sec:  24683.12
#   Transfer/sec:      2.94MB
ts="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
if ! awk -v ts="$ts" -v CONVFMT=%.10g '
  function ms(s,   n, u) {
    n = s; sub(/[a-z]+$/, "", n); u = s; sub(/^[0-9.]+/, "", u)
    if (u == "us") return n / 1000
    if (u == "ms") return n + 0
    if (u == "s")  return n * 1000
    if (u == "m")  return n * 60000
    if (u == "h")  return n * 3600000
    return -1
  }
  function mb(s,   n, u) {
    n = s; sub(/[A-Za-z]+$/, "", n); u = s; sub(/^[0-9.]+/, "", u)
    if (u == "B")  return n / 1048576
    if (u == "KB") return n / 1024
    if (u == "MB") return n + 0
    if (u == "GB") return n * 1024
    if (u == "TB") return n * 1048576
    return -1
  }
  $1 == "Latency" && NF >= 4 && !seen_lat { lat_mean = ms($2); lat_max = ms($4); seen_lat = 1 }
  $1 == "50%" { p50 = ms($2) }
  $1 == "75%" { p75 = ms($2) }
  $1 == "90%" { p90 = ms($2) }
  $1 == "99%" { p99 = ms($2) }
  $2 == "requests" && $3 == "in" { requests = $1 + 0; seen_req = 1 }
  /Non-2xx or 3xx responses:/ { bad = $NF + 0 }
  /Socket errors:/ { gsub(/,/, ""); sock = $4 + $6 + $8 + $10 }
  $1 == "Requests/sec:" { rps = $2 + 0; seen_rps = 1 }
  $1 == "Transfer/sec:" { tput = mb($2) }
  END {
    if (!seen_req || !seen_rps || !seen_lat) exit 1
    n = 0
    # name, aggregate, reduce, short description, long description, format, value
    m[++n] = "wrk/requests|Max|Sum|Requests|Total number of requests|n0|" requests
    m[++n] = "wrk/errors/badresponses|Max|Sum|Bad responses|Non-2xx or 3xx responses|n0|" bad + 0
    m[++n] = "wrk/errors/socketerrors|Max|Sum|Socket errors|Socket errors (connect, read, write, timeout)|n0|" sock + 0
    m[++n] = "wrk/rps/mean|Max|Sum|Requests/sec|Requests per second|n0|" rps
    m[++n] = "wrk/throughput|Max|Sum|Read throughput (MB/s)|Read throughput (MB/s)|n2|" tput + 0
    m[++n] = "wrk/latency/mean|Max|Avg|Mean latency (ms)|Mean latency (ms)|n2|" lat_mean
    m[++n] = "wrk/latency/max|Max|Max|Max latency (ms)|Max latency (ms)|n2|" lat_max
    if (p50 != "") m[++n] = "wrk/latency/50|Max|Avg|Latency 50th (ms)|Latency 50th (ms)|n2|" p50
    if (p75 != "") m[++n] = "wrk/latency/75|Max|Avg|Latency 75th (ms)|Latency 75th (ms)|n2|" p75
    if (p90 != "") m[++n] = "wrk/latency/90|Max|Avg|Latency 90th (ms)|Latency 90th (ms)|n2|" p90
    if (p99 != "") m[++n] = "wrk/latency/99|Max|Avg|Latency 99th (ms)|Latency 99th (ms)|n2|" p99
    meta = ""; meas = ""
    for (i = 1; i <= n; i++) {
      split(m[i], f, "|")
      meta = meta (i > 1 ? "," : "") sprintf("{\"Source\":\"wrk\",\"Name\":\"%s\",\"Aggregate\":\"%s\",\"Reduce\":\"%s\",\"ShortDescription\":\"%s\",\"LongDescription\":\"%s\",\"Format\":\"%s\"}", f[1], f[2], f[3], f[4], f[5], f[6])
      meas = meas (i > 1 ? "," : "") sprintf("{\"Timestamp\":\"%s\",\"Name\":\"%s\",\"Value\":%.10g}", ts, f[1], f[7])
    }
    print "#StartJobStatistics"
    print "{\"Metadata\":[" meta "],\"Measurements\":[" meas "]}"
    print "#EndJobStatistics"
  }' "$report"; then
  echo "wrk-job: could not parse the wrk report above" >&2
  exit 3
fi

# A run whose measured window has errors did not measure the proxy: fail the job, so that crank's
# return code (and run-local.sh's exit status) says so. crank keeps the statistics printed above.
if [ -n "$max_errors" ]; then
  errors="$(awk '/Non-2xx or 3xx responses:/ { n += $NF }
                 /Socket errors:/ { gsub(/,/, ""); n += $4 + $6 + $8 + $10 }
                 END { print n + 0 }' "$report")"
  if [ "$errors" -gt "$max_errors" ]; then
    echo "wrk-job: $errors bad responses + socket errors in the measured run, more than --max-errors $max_errors: failing the job" >&2
    exit 4
  fi
fi
