#!/usr/bin/env bash
# Load job of the fixed-rate (open-loop) scenarios (benchmarks.yml: job "fixedrate", scenarios fixedrate-*; crank/
# run-local.sh --fixed-rate): requests go out at a set rate whatever the server's pace, and every request is timed from
# when it was due, so a stall shows in the latencies of every request it held back (coordinated omission corrected).
#
# The tool is h2load (Debian's nghttp2-client) over HTTP/1.1:
#   h2load --h1 -t 1 -c CONNECTIONS --rps RATE/CONNECTIONS -D DURATION_S --log-file LOG URL
# Each connection has its own timer that makes a request due every CONNECTIONS/RATE seconds; an HTTP/1.1 connection
# carries one request at a time, so a request that falls due while the previous answer is still out waits, and h2load
# sends the ones that waited together once the answer is in. h2load times a request from when it sent it: a 200 ms
# stall of the server shows as one slow request per connection and a burst of fast ones after it (crank/README.md,
# "Fixed rate", has the experiment). This job re-times them from the per-request log: the connections start together
# and tick together, so the k-th request sent (in order of sending) was due at the k-th due time,
#   due(k) = first send + floor(k / CONNECTIONS) * CONNECTIONS / RATE,
# and its latency is its end minus due(k), or h2load's own time when that is longer (h2load counts the requests due
# with round(), so a late timer tick may send one up to half an interval early). Requests that were due in the window but had no answer when it ended
# (never sent, or still out) count with the time from their due time to the window's end, a lower bound, so an
# overloaded server's tail is not cut off. h2load's own figures stay beside them (fixedrate/uncorrected/...).
#
# Statistics (crank's stdout block), under the wrk job's names where they overlap: http/latency/{50,90,99,99.9,max,mean}
# (ms, corrected; also as fixedrate/latency/...), http/rps/mean (2xx+3xx answers per second), http/requests (answers),
# http/requests/badresponses (4xx/5xx), http/requests/errors (failed otherwise: stream errors, time-outs); and
# fixedrate/rate (offered), fixedrate/due (requests due in the window), fixedrate/sent (requests/s h2load sent),
# fixedrate/missed (due but unanswered at the end), fixedrate/uncorrected/latency/{50,99,99.9,max}.
#
# usage: fixedrate-job.sh --rate R [-w WARMUP_S] [-d DURATION_S] [-c CONNECTIONS] [--headers plaintext|browser|handshake|none]
#                         [-H 'Name: value']... [--body-size BYTES] [--body-framing content-length] [--max-errors N] URL
#        fixedrate-job.sh --parse H2LOAD_OUTPUT LOG_FILE RATE CONNECTIONS DURATION_S   (crank/tests/parsers-test.sh)
# Defaults: -w 20 -d 15 -c 64 (run-local.sh's), headers plaintext. The warm-up runs at the same rate, unmeasured.
# --body-size N > 0: every request is a POST with an N-byte body with Content-Length (h2load -d); h2load cannot send a
# chunked body, so --body-framing chunked is refused (the wrk job sends it).
# Environment: H2LOAD (default: h2load on PATH); WRK_JOB_HOOK, as for wrk-job.sh: called with measure-start and
# measure-end around the measured run (run-local.sh samples the processes there).
# Bounds: at most MAX_DURATION_S (3600 s) measured and as much warm-up; h2load is stopped 30 s after its -D should have ended.
# Exit code: 0; 2 bad usage; 3 the h2load report cannot be parsed; 4 more bad responses + errors than --max-errors
# (statistics printed first); or h2load's own exit code.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib-headers.sh disable=SC1091
. "$here/lib-headers.sh"
# shellcheck source=lib-statistics.sh disable=SC1091
. "$here/lib-statistics.sh"

# An hour: far beyond any sitting's run (15 s) and the bound a forgotten unit (ms for s) runs into.
MAX_DURATION_S=3600

die() { echo "fixedrate-job: $*" >&2; exit 2; }

# analyse OUTPUT LOG RATE CONNECTIONS DURATION_S: the statistics rows (statistics_block's format) of one run.
# Lines used (h2load 1.52):
#   requests: 300 total, 302 started, 300 done, 300 succeeded, 0 failed, 0 errored, 0 timeout
#   status codes: 300 2xx, 0 3xx, 0 4xx, 0 5xx
# and the log: start (us since the epoch), status (-1: no answer), microseconds until the end of the answer; one line
# per request that ended, in the order they ended.
analyse() {
  local output="$1" log_file="$2" rate="$3" connections="$4" duration="$5" counts corrected uncorrected
  counts="$(awk '$1 == "requests:" { started = $4; done = $6; failed = $10; seen = 1 }
                 $1 == "status" && $2 == "codes:" { ok = $3 + $5; bad = $7 + $9 }
                 END { if (!seen) exit 1; print started + 0, done + 0, failed + 0, ok + 0, bad + 0 }' "$output")" || return 1
  # corrected: one line per answered request and per request due but unanswered at the window's end, in ms.
  # Sorted by start: the order of sending. The window is the first send + DURATION_S.
  corrected="$(sort -n -k1,1 "$log_file" | awk -F '\t' -v rate="$rate" -v c="$connections" -v d="$duration" -v OFMT=%.6f '
    $2 > 0 {
      if (first == "") first = $1
      due = first + int(k / c) * c / rate * 1e6
      k++
      # Never less than the time h2load measured: it counts the requests due with round(), so a late timer tick can send one
      # up to half an interval early, and such a request was not held back.
      late = $1 + $3 - due
      print (late > $3 ? late : $3) / 1000
    }
    END {
      if (first == "") exit 0
      end = first + d * 1e6
      # The rest of the schedule: every due time before the end without an answer.
      for (; ; k++) { due = first + int(k / c) * c / rate * 1e6; if (due >= end) break; print (end - due) / 1000 }
    }' | sort -g)"
  uncorrected="$(awk -F '\t' -v OFMT=%.6f '$2 > 0 { print $3 / 1000 }' "$log_file" | sort -g)"
  # percentiles: nearest rank of p (in %) over the sorted list on stdin: "p50 p90 p99 p99.9 max mean count".
  local pct='{ v[NR] = $1; s += $1 }
    END {
      if (NR == 0) exit 1
      split("50 90 99 99.9", p, " ")
      for (i = 1; i <= 4; i++) { r = int(NR * p[i] / 100 + 0.999999); if (r < 1) r = 1; printf "%s ", v[r] }
      print v[NR], s / NR, NR
    }'
  local c_stats u_stats
  c_stats="$(printf '%s\n' "$corrected" | awk -v OFMT=%.6f "$pct")" || return 1
  u_stats="$(printf '%s\n' "$uncorrected" | awk -v OFMT=%.6f "$pct")" || return 1
  awk -v counts="$counts" -v cs="$c_stats" -v us="$u_stats" -v rate="$rate" -v d="$duration" -v OFS='\t' -v OFMT=%.10g 'BEGIN {
    split(counts, n, " "); split(cs, a, " "); split(us, u, " ")
    started = n[1]; done = n[2]; failed = n[3]; ok = n[4]; bad = n[5]
    errors = failed - bad; if (errors < 0) errors = 0
    # a[7]: the corrected list has one entry per answer and per unanswered due request: its length is what was due.
    due = a[7]; answered = ok + bad; missed = due - answered; if (missed < 0) missed = 0
    print "fixedrate/rate", "Max", "Sum", "Offered rate (req/s)", "Requests per second the job sends (open loop)", "n0", rate + 0
    print "fixedrate/due", "Max", "Sum", "Requests due", "Requests due in the measured window at the offered rate", "n0", due + 0
    print "fixedrate/sent", "Max", "Sum", "Sent rate (req/s)", "Requests per second h2load sent", "n1", started / d
    print "fixedrate/missed", "Max", "Sum", "Missed", "Requests due in the window without an answer at its end (never sent or still out)", "n0", missed
    print "fixedrate/rps;http/rps/mean", "Max", "Sum", "Requests/sec", "2xx and 3xx answers per second", "n0", ok / d
    print "fixedrate/requests;http/requests", "Max", "Sum", "Requests", "Requests answered (any status) or failed", "n0", done + 0
    print "fixedrate/errors/badresponses;http/requests/badresponses", "Max", "Sum", "Bad responses", "4xx and 5xx answers", "n0", bad + 0
    print "fixedrate/errors/socketerrors;http/requests/errors", "Max", "Sum", "Errors", "Requests failed without an answer (stream errors, time-outs)", "n0", errors
    split("50 90 99 99.9", p, " ")
    for (i = 1; i <= 4; i++)
      print "fixedrate/latency/" p[i] ";http/latency/" p[i], "Max", "Max", "Latency " p[i] "th (ms)", "Latency " p[i] "th from the due time (ms), coordinated omission corrected", "n2", a[i] + 0
    print "fixedrate/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Largest latency from the due time (ms)", "n2", a[5] + 0
    print "fixedrate/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean latency from the due time (ms)", "n2", a[6] + 0
    for (i = 1; i <= 4; i++) if (p[i] != "90")
      print "fixedrate/uncorrected/latency/" p[i], "Max", "Max", "h2load latency " p[i] "th (ms)", "Latency " p[i] "th from the actual send, as h2load times it (ms)", "n2", u[i] + 0
    print "fixedrate/uncorrected/latency/max", "Max", "Max", "h2load max latency (ms)", "Largest latency from the actual send (ms)", "n2", u[5] + 0
  }'
}

# errors_of ROWS: bad responses + errors from analyse's rows.
errors_of() {
  awk -F '\t' '$1 ~ /^fixedrate\/errors\// { n += $7 } END { print n + 0 }' <<< "$1"
}

if [ "${1:-}" = --parse ]; then
  [ $# -eq 6 ] && [ -f "$2" ] && [ -f "$3" ] || die "--parse needs H2LOAD_OUTPUT LOG_FILE RATE CONNECTIONS DURATION_S"
  rows="$(analyse "$2" "$3" "$4" "$5" "$6")" || { echo "fixedrate-job: could not parse the h2load report $2" >&2; exit 3; }
  printf '%s\n' "$rows" | statistics_block fixedrate
  exit 0
fi

warmup=20 duration=15 connections=64 rate="" preset=plaintext headers=() body_size=0 body_framing=content-length
max_errors="" url=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="${2:?}"; shift 2 ;;
    -w|--warmup) warmup="${2:?}"; shift 2 ;;
    -d|--duration) duration="${2:?}"; shift 2 ;;
    -c|--connections) connections="${2:?}"; shift 2 ;;
    --headers) preset="${2:?}"; shift 2 ;;
    -H|--header) headers+=("${2:?}"); shift 2 ;;
    --body-size) body_size="${2:?}"; shift 2 ;;
    --body-framing) body_framing="${2:?}"; shift 2 ;;
    --max-errors) max_errors="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$url" ] || die "more than one URL ($url, $1)"; url="$1"; shift ;;
  esac
done
[ -n "$url" ] || die "missing URL"
[ -n "$rate" ] || die "--rate is required (requests per second over all connections)"
warmup="${warmup%s}" duration="${duration%s}"
for v in "$rate" "$warmup" "$duration" "$connections" "$body_size" ${max_errors:+"$max_errors"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$rate" -ge 1 ] && [ "$connections" -ge 1 ] || die "--rate and -c must be >= 1"
[ "$duration" -ge 1 ] && [ "$duration" -le "$MAX_DURATION_S" ] && [ "$warmup" -le "$MAX_DURATION_S" ] \
  || die "-d must be 1 to $MAX_DURATION_S seconds, -w at most $MAX_DURATION_S"
case "$body_framing" in
  content-length) ;;
  chunked) [ "$body_size" = 0 ] || die "h2load sends request bodies with Content-Length only: --body-framing chunked is the wrk job's (benchmarks.yml job wrk)" ;;
  *) die "--body-framing must be content-length or chunked, not '$body_framing'" ;;
esac
load_preset_headers "$preset" || die "unknown header preset '$preset' (plaintext|browser|handshake|none)"
headers=("${PRESET_HEADERS[@]}" "${headers[@]}")

H2LOAD="${H2LOAD:-$(command -v h2load || true)}"
[ -n "$H2LOAD" ] && [ -x "$H2LOAD" ] || die "h2load not found (apt-get install -y nghttp2-client)"

work="$(mktemp -d "${TMPDIR:-/tmp}/fixedrate-job.XXXXXX")"
h2_pid=""
trap 'rm -rf "$work"; [ -z "$h2_pid" ] || kill "$h2_pid" 2> /dev/null || true' EXIT

# h2load's --rps is per connection and takes a fraction.
per_client="$(awk -v r="$rate" -v c="$connections" 'BEGIN { printf "%.6f", r / c }')"
args=(--h1 -t 1 -c "$connections" --rps "$per_client")
for h in "${headers[@]}"; do args+=(-H "$h"); done
if [ "$body_size" -gt 0 ]; then
  head -c "$body_size" /dev/zero | tr '\0' x > "$work/body"
  args+=(-d "$work/body" -H "Content-Type: application/octet-stream")
fi

hook() { if [ -n "${WRK_JOB_HOOK:-}" ]; then "$WRK_JOB_HOOK" "$1"; fi; }

echo "fixedrate-job: $("$H2LOAD" --version | head -n 1); $rate requests/s over $connections connections ($per_client each)$([ "$body_size" = 0 ] || echo ", POST bodies of $body_size bytes")"
if [ "$warmup" -gt 0 ]; then
  echo "fixedrate-job: warm-up: $H2LOAD -D $warmup$(printf ' %q' "${args[@]}") $url"
  timeout --kill-after=5 $(( warmup + 30 )) "$H2LOAD" -D "$warmup" "${args[@]}" "$url" 2>&1 | sed 's/^/  warm-up| /' || true
fi

out="$work/h2load.out" log_file="$work/h2load.log"
echo "fixedrate-job: measured: $H2LOAD -D $duration$(printf ' %q' "${args[@]}") --log-file h2load.log $url"
hook measure-start
timeout --kill-after=5 $(( duration + 30 )) "$H2LOAD" -D "$duration" "${args[@]}" --log-file "$log_file" "$url" > "$out" 2>&1 &
h2_pid=$!
echo "##ChildProcessId:$h2_pid" >&2
set +e; wait "$h2_pid"; rc=$?; set -e
h2_pid=""
hook measure-end
# The report without h2load's progress lines.
grep -v '^progress:\|^spawning thread\|^Warm-up\|^Main benchmark\|^Stopped all\|^starting benchmark' "$out" | sed 's/^/  measured| /' || true
[ "$rc" -eq 0 ] || { echo "fixedrate-job: h2load exited with $rc" >&2; exit "$rc"; }

rows="$(analyse "$out" "$log_file" "$rate" "$connections" "$duration")" || { echo "fixedrate-job: could not parse the h2load report above" >&2; exit 3; }
printf '%s\n' "$rows" | statistics_block fixedrate
printf '%s\n' "$rows" | awk -F '\t' '
  { v[$1] = $7 }
  END { printf "fixedrate-job: offered %s/s, sent %.0f/s, answered %.0f/s; p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms from the due time (h2load from the send: p99 %.3f ms, max %.3f ms); %d due, %d missed\n",
        v["fixedrate/rate"], v["fixedrate/sent"], v["fixedrate/rps;http/rps/mean"], v["fixedrate/latency/50;http/latency/50"],
        v["fixedrate/latency/99;http/latency/99"], v["fixedrate/latency/99.9;http/latency/99.9"], v["fixedrate/latency/max;http/latency/max"],
        v["fixedrate/uncorrected/latency/99"], v["fixedrate/uncorrected/latency/max"], v["fixedrate/due"], v["fixedrate/missed"] }'

if [ -n "$max_errors" ]; then
  errors="$(errors_of "$rows")"
  if [ "$errors" -gt "$max_errors" ]; then
    echo "fixedrate-job: $errors bad responses + errors in the measured run, more than --max-errors $max_errors: failing the job" >&2
    exit 4
  fi
fi
