#!/usr/bin/env bash
# Load job of the HTTP/2 scenarios (benchmarks.yml: job "h2load", scenarios h2load-*; crank/run-local.sh --load h2load):
# h2load (Debian's nghttp2-client) over HTTP/2, closed loop by default: -c connections, each with up to -m streams in
# flight, a new request on a stream as soon as its answer is in (the .NET team's proxy lab: connections = cores, 100
# streams each). https:// URLs negotiate h2 with ALPN; http:// URLs speak prior-knowledge h2c. A run whose connections
# did not speak h2 (a server that chose http/1.1 in ALPN, or answered h2c with HTTP/1.1) fails with exit code 5:
# it measured something else.
#
# With --rate R the load is open loop instead (the stepped comparison, crank/stepped.sh): R requests/s over all
# connections (h2load --rps R/CONNECTIONS per connection). A request falls due on its connection's timer and goes out at
# once while fewer than -m streams are in flight there, so a slow server is not shielded by held-back requests until a
# connection has -m outstanding; h2load times each request from when it sent it, and the rate it really sent
# (h2load/sent) shows when requests were held back.
#
# Like crank/wrk-job.sh: an unmeasured warm-up run (adaptive with WRK_JOB_WARM_PROBE and --warmup-max:
# crank/lib-warmup.sh), then the measured run, announced as "##ChildProcessId:<pid>" (crank's protocol, so an agent
# measures h2load), between "$WRK_JOB_HOOK measure-start" and "measure-end". It prints crank's statistics block under wrk-job.sh's names, each
# figure as h2load/... and http/... (a name "a;b" is stored under both), so analysis/Report reads it as a wrk run:
#   h2load/rps/mean;http/rps/mean           responses per second (h2load's own req/s: completed streams / duration)
#   h2load/requests;http/requests           responses (completed streams, any status)
#   h2load/latency/{mean,max};http/...      ms, h2load's "time for request" (stream opened to answer complete)
#   h2load/latency/{50,75,90,95,99,99.9}    ms, nearest rank over the measured run's per-request log (answered streams)
#   h2load/errors/badresponses;http/requests/badresponses   4xx and 5xx answers
#   h2load/errors/socketerrors;http/requests/errors         requests that failed without an answer (stream and
#                                           connection errors, time-outs: h2load's failed minus the 4xx/5xx answers)
#   h2load/throughput;http/throughput       MB/s received (h2load's traffic total: frames, headers and data)
#   h2load/rps/2xx                          2xx and 3xx answers per second (the achieved rate)
#   h2load/availability                     2xx and 3xx answers / requests that ended, in %
#   h2load/connections, h2load/streams      the shape of the load (streams in flight at most: their product)
#   h2load/rate, h2load/sent                open loop only: offered and really sent requests/s
#   warmup/seconds, warmup/capped           as wrk-job.sh's
#
# usage: h2load-job.sh [-w WARMUP_S] [--warmup-max S] [-d DURATION_S] [-t THREADS] [-c CONNECTIONS] [-m STREAMS]
#                      [--rate R] [--headers plaintext|browser|none] [-H 'Name: value']... [--body-size BYTES]
#                      [--max-errors N] URL
#        h2load-job.sh [-d DURATION_S] [-c C] [-m M] [--rate R] [--max-errors N] --parse H2LOAD_OUTPUT LOG_FILE
#                      (the statistics of a saved run: crank/tests/parsers-test.sh)
# Defaults: -w 20 -d 15 (run-local.sh's), -t 1, -c 2 (the cores of the 2-core box), -m 100 (the lab's streams per
# connection; also Kestrel's and HAProxy's default limit of concurrent streams, and under nginx's 128), headers
# plaintext.
# Header presets (crank/lib-headers.sh) lose their Connection field: connection-specific fields make an HTTP/2 request
# malformed (RFC 9113 §8.2.2), so "handshake" (Connection: close) has no HTTP/2 meaning and is refused.
# --body-size N > 0: every request is a POST with an N-byte body (h2load -d; DATA frames, no chunked framing in h2).
# Environment: H2LOAD (default h2load on PATH); WRK_JOB_HOOK and WRK_JOB_WARM_PROBE as for wrk-job.sh.
# Bounds: at most MAX_DURATION_S (3600 s) measured and as much warm-up; h2load is stopped 30 s after its -D should have
# ended.
# Exit code: 0; 2 bad usage; 3 the h2load report cannot be parsed; 4 more bad responses + errors than --max-errors
# (statistics printed first); 5 the connections did not speak h2 (statistics printed first); or h2load's own exit code.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib-headers.sh disable=SC1091
. "$here/lib-headers.sh"
# shellcheck source=lib-statistics.sh disable=SC1091
. "$here/lib-statistics.sh"
# shellcheck source=lib-warmup.sh disable=SC1091
. "$here/lib-warmup.sh"

# An hour: far beyond any sitting's run (15 s) and the bound a forgotten unit (ms for s) runs into.
MAX_DURATION_S=3600

die() { echo "h2load-job: $*" >&2; exit 2; }

warmup=20 warmup_max="" duration=15 threads=1 connections=2 streams=100 rate="" preset=plaintext headers=()
body_size=0 max_errors="" url="" parse_output="" parse_log=""
while [ $# -gt 0 ]; do
  case "$1" in
    -w|--warmup) warmup="${2:?}"; shift 2 ;;
    --warmup-max) warmup_max="${2:?}"; shift 2 ;;
    -d|--duration) duration="${2:?}"; shift 2 ;;
    -t|--threads) threads="${2:?}"; shift 2 ;;
    -c|--connections) connections="${2:?}"; shift 2 ;;
    -m|--streams) streams="${2:?}"; shift 2 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --headers) preset="${2:?}"; shift 2 ;;
    -H|--header) headers+=("${2:?}"); shift 2 ;;
    --body-size) body_size="${2:?}"; shift 2 ;;
    --max-errors) max_errors="${2:?}"; shift 2 ;;
    --parse) parse_output="${2:?}"; parse_log="${3:?--parse needs H2LOAD_OUTPUT LOG_FILE}"; shift 3 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$url" ] || die "more than one URL ($url, $1)"; url="$1"; shift ;;
  esac
done
warmup="${warmup%s}" duration="${duration%s}" warmup_max="${warmup_max%s}"
for v in "$warmup" "$duration" "$threads" "$connections" "$streams" "$body_size" ${rate:+"$rate"} ${max_errors:+"$max_errors"} ${warmup_max:+"$warmup_max"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$duration" -ge 1 ] && [ "$duration" -le "$MAX_DURATION_S" ] && [ "$warmup" -le "$MAX_DURATION_S" ] \
  || die "-d must be 1 to $MAX_DURATION_S seconds, -w at most $MAX_DURATION_S"
[ "$connections" -ge 1 ] && [ "$streams" -ge 1 ] && [ "$threads" -ge 1 ] || die "-c, -m and -t must be >= 1"
[ "$threads" -le "$connections" ] || die "h2load needs connections (-c $connections) >= threads (-t $threads)"
[ -z "$rate" ] || [ "$rate" -ge 1 ] || die "--rate must be >= 1 request/s"

# analyse OUTPUT LOG: the statistics rows (statistics_block's format) of one measured run. Lines used (h2load 1.52):
#   Application protocol: h2   (h2c over cleartext)
#   finished in 15.00s, 31234.50 req/s, 9.12MB/s
#   requests: 468518 total, 468618 started, 468518 done, 468518 succeeded, 0 failed, 0 errored, 0 timeout
#   status codes: 468518 2xx, 0 3xx, 0 4xx, 0 5xx
#   traffic: 136.82MB (143466502) total, 2.68MB (2811108) headers (space savings 95.22%), 4.47MB (4685180) data
#   time for request:      512us     41.20ms      6.31ms      2.03ms    71.52%
# and the log: start (us since the epoch), status (-1: no answer), microseconds until the answer was complete.
# Returns 1 (nothing printed) when the report lacks the request counts, the rate or the request times.
analyse() {
  local output="$1" log_file="$2" pcts
  # Nearest rank of p (in %) over the answered requests' times, in ms; "nan" for each when none was answered.
  pcts="$(awk -F '\t' '$2 > 0 { print $3 }' "$log_file" | sort -n | awk '
    { v[NR] = $1 }
    END {
      n = split("50 75 90 95 99 99.9", p, " ")
      for (i = 1; i <= n; i++) {
        if (NR == 0) { printf "nan "; continue }
        r = int(NR * p[i] / 100 + 0.999999); if (r < 1) r = 1
        printf "%.3f ", v[r] / 1000
      }
      print ""
    }')"
  awk -v pcts="$pcts" -v d="$duration" -v c="$connections" -v m="$streams" -v rate="$rate" -v OFS='\t' -v OFMT=%.10g '
  function ms(s,   n, u) {
    n = s; sub(/[a-z]+$/, "", n); u = s; sub(/^[0-9.]+/, "", u)
    if (u == "us") return n / 1000
    if (u == "ms") return n + 0
    if (u == "s")  return n * 1000
    return -1
  }
  $1 == "finished" && $2 == "in" { rps = $4 + 0; seen_rps = 1 }
  $1 == "requests:" { started = $4; done = $6; succeeded = $8; failed = $10; seen_req = 1 }
  $1 == "status" && $2 == "codes:" { ok = $3 + $5; bad = $7 + $9 }
  $1 == "traffic:" { bytes = $3; gsub(/[()]/, "", bytes) }
  $1 == "time" && $2 == "for" && $3 == "request:" { lat_max = ms($5); lat_mean = ms($6); seen_lat = 1 }
  END {
    if (!seen_req || !seen_rps || !seen_lat) exit 1
    errors = failed - bad; if (errors < 0) errors = 0
    avail = done > 0 ? ok * 100 / done : 0
    print "h2load/rps/mean;http/rps/mean", "Max", "Sum", "Requests/sec", "Responses per second (completed streams / duration)", "n0", rps
    print "h2load/requests;http/requests", "Max", "Sum", "Requests", "Responses (completed streams, any status)", "n0", succeeded + 0
    print "h2load/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean time for request (ms)", "n2", lat_mean
    print "h2load/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Largest time for request (ms)", "n2", lat_max
    print "h2load/errors/badresponses;http/requests/badresponses", "Max", "Sum", "Bad responses", "4xx and 5xx answers", "n0", bad + 0
    print "h2load/errors/socketerrors;http/requests/errors", "Max", "Sum", "Errors", "Requests failed without an answer (stream or connection errors, time-outs)", "n0", errors
    print "h2load/throughput;http/throughput", "Max", "Sum", "Read throughput (MB/s)", "Bytes received per second, frames included (MB/s)", "n2", bytes / d / 1048576
    n = split("50 75 90 95 99 99.9", p, " "); split(pcts, v, " ")
    for (i = 1; i <= n; i++) if (v[i] != "nan")
      print "h2load/latency/" p[i] ";http/latency/" p[i], "Max", "Max", "Latency " p[i] "th (ms)", "Latency " p[i] "th over the answered requests (ms)", "n2", v[i] + 0
    print "h2load/rps/2xx", "Max", "Sum", "2xx/s", "2xx and 3xx answers per second (the achieved rate)", "n0", ok / d
    print "h2load/availability", "Max", "Min", "Availability (%)", "2xx and 3xx answers / requests that ended, in %", "n3", avail
    print "h2load/connections", "Max", "Sum", "Connections", "HTTP/2 connections", "n0", c + 0
    print "h2load/streams", "Max", "Max", "Streams per connection", "Concurrent streams per connection at most (h2load -m)", "n0", m + 0
    if (rate != "") {
      print "h2load/rate", "Max", "Sum", "Offered rate (req/s)", "Requests per second the job offers (open loop)", "n0", rate + 0
      print "h2load/sent", "Max", "Sum", "Sent rate (req/s)", "Requests per second h2load sent", "n1", started / d
    }
  }' "$output"
}

# protocol_of OUTPUT: the application protocol h2load negotiated ("none" when the report names none).
protocol_of() { awk '$1 == "Application" && $2 == "protocol:" { p = $3 } END { print (p == "" ? "none" : p) }' "$1"; }

# report OUTPUT LOG WARM_S WARM_CAPPED: the statistics block, then the protocol and error checks (exit 5, 4).
report() {
  local rows errors protocol
  rows="$(analyse "$1" "$2")" || { echo "h2load-job: could not parse the h2load report $1" >&2; exit 3; }
  rows="$rows"$'\n'"$(printf 'warmup/seconds\tMax\tMax\tWarm-up (s)\tSeconds of load before the measured run\tn0\t%s' "$3")"
  [ -z "$4" ] || rows="$rows"$'\n'"$(printf 'warmup/capped\tMax\tMax\tWarm-up capped\t1: the adaptive warm-up reached --warmup-max before the server was warm\tn0\t1')"
  printf '%s\n' "$rows" | statistics_block h2load
  protocol="$(protocol_of "$1")"
  # h2load names prior-knowledge cleartext h2 "h2c".
  if [ "$protocol" != h2 ] && [ "$protocol" != h2c ]; then
    echo "h2load-job: the connections spoke '$protocol', not h2 (an https server that does not offer h2 in ALPN, or an http server without prior-knowledge h2c): failing the job" >&2
    exit 5
  fi
  [ -n "$max_errors" ] || return 0
  errors="$(awk -F '\t' '$1 ~ /^h2load\/errors\// { n += $7 } END { print n + 0 }' <<< "$rows")"
  if [ "$errors" -gt "$max_errors" ]; then
    echo "h2load-job: $errors bad responses + errors in the measured run, more than --max-errors $max_errors: failing the job" >&2
    exit 4
  fi
}

if [ -n "$parse_output" ]; then
  [ -f "$parse_output" ] && [ -f "$parse_log" ] || die "--parse needs an h2load report and its log file"
  report "$parse_output" "$parse_log" 0 ""
  exit 0
fi
[ -n "$url" ] || die "missing URL"
case "$url" in https://*|http://*) ;; *) die "the URL must be https:// (h2 with ALPN) or http:// (prior-knowledge h2c): $url" ;; esac
[ "$preset" != handshake ] || die "--headers handshake (Connection: close) has no HTTP/2 meaning: connection-specific fields make an h2 request malformed (RFC 9113 §8.2.2)"
load_preset_headers "$preset" || die "unknown header preset '$preset' (plaintext|browser|none)"
sent_headers=()
for h in "${PRESET_HEADERS[@]}" "${headers[@]}"; do
  # Connection-specific fields (RFC 9113 §8.2.2) are what a proxy must reject in h2: they are not sent.
  case "${h,,}" in connection:*|keep-alive:*|proxy-connection:*|transfer-encoding:*|upgrade:*) continue ;; esac
  sent_headers+=("$h")
done

H2LOAD="${H2LOAD:-$(command -v h2load || true)}"
[ -n "$H2LOAD" ] && [ -x "$H2LOAD" ] || die "h2load not found (apt-get install -y nghttp2-client)"

work="$(mktemp -d "${TMPDIR:-/tmp}/h2load-job.XXXXXX")"
h2_pid=""
trap 'rm -rf "$work"; [ -z "$h2_pid" ] || kill "$h2_pid" 2> /dev/null || true' EXIT

args=(-t "$threads" -c "$connections" -m "$streams")
# h2load's --rps is per connection and takes a fraction.
[ -z "$rate" ] || args+=(--rps "$(awk -v r="$rate" -v c="$connections" 'BEGIN { printf "%.6f", r / c }')")
for h in "${sent_headers[@]}"; do args+=(-H "$h"); done
if [ "$body_size" -gt 0 ]; then
  head -c "$body_size" /dev/zero | tr '\0' x > "$work/body"
  args+=(-d "$work/body" -H "Content-Type: application/octet-stream")
fi

hook() { if [ -n "${WRK_JOB_HOOK:-}" ]; then "$WRK_JOB_HOOK" "$1"; fi; }
warm_load_background() {
  timeout --kill-after=5 $(( $1 + 30 )) "$H2LOAD" -D "$1" "${args[@]}" "$url" &
  WARM_LOAD_PID=$!
}
warm_load() { timeout --kill-after=5 $(( $1 + 30 )) "$H2LOAD" -D "$1" "${args[@]}" "$url"; }

echo "h2load-job: $("$H2LOAD" --version | head -n 1); $connections connection(s) x $streams stream(s), $([ -z "$rate" ] && echo "closed loop" || echo "open loop at $rate requests/s")$([ "$body_size" = 0 ] || echo ", POST bodies of $body_size bytes") on $url"
warm_s="$warmup" warm_capped=""
if [ "$warmup" -gt 0 ] && [ -n "$warmup_max" ] && [ "$warmup_max" -gt "$warmup" ] && [ -n "${WRK_JOB_WARM_PROBE:-}" ]; then
  adaptive_warmup h2load-job "$warmup" "$warmup_max"
  warm_s="$WARM_SECONDS" warm_capped="$WARM_CAPPED"
elif [ "$warmup" -gt 0 ]; then
  echo "h2load-job: warm-up: $H2LOAD -D $warmup$(printf ' %q' "${args[@]}") $url"
  warm_load "$warmup" 2>&1 | sed 's/^/  warm-up| /' || true
fi

out="$work/h2load.out" log_file="$work/h2load.log"
echo "h2load-job: measured: $H2LOAD -D $duration$(printf ' %q' "${args[@]}") --log-file h2load.log $url"
hook measure-start
timeout --kill-after=5 $(( duration + 30 )) "$H2LOAD" -D "$duration" "${args[@]}" --log-file "$log_file" "$url" > "$out" 2>&1 &
h2_pid=$!
echo "##ChildProcessId:$h2_pid" >&2
set +e; wait "$h2_pid"; rc=$?; set -e
h2_pid=""
hook measure-end
# The report without h2load's progress lines.
grep -v '^progress:\|^spawning thread\|^Warm-up\|^Main benchmark\|^Stopped all\|^starting benchmark' "$out" | sed 's/^/  measured| /' || true
[ "$rc" -eq 0 ] || { echo "h2load-job: h2load exited with $rc" >&2; exit "$rc"; }
report "$out" "$log_file" "$warm_s" "$warm_capped"
