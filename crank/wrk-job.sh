#!/usr/bin/env bash
# Load job for LLRP's crank scenarios, and the same script the offline runner (run-local.sh) uses.
#
# It stands in for crank's own wrk job (Microsoft.Crank.Jobs.Wrk), which the agent would git-clone
# and build from GitHub, impossible offline (docs/crank-offline.md). It drives Debian's wrk 4.1.0 the
# same way: one request timed on its own (http/firstrequest), an unmeasured warm-up run, then the
# measured run with --latency; it parses wrk's text report and prints crank's stdout statistics block
# (#StartJobStatistics / JSON / #EndJobStatistics) with the names and operations crank's wrk job
# registers: every figure under "wrk/..." and "http/..." at once (a name "a;b" is stored under both),
# Max as the aggregate, Sum as the reduction of counts and rates, Max for the latency percentiles.
#
# The measured wrk runs as a child; its PID is announced on stderr as "##ChildProcessId:<pid>" (crank's
# protocol) so that a crank agent measures wrk's CPU and memory, not this script's.
#
# usage: wrk-job.sh [-w WARMUP_S] [--warmup-max S] [-d DURATION_S] [-t THREADS] [-c CONNECTIONS] [--timeout S]
#                   [--headers plaintext|browser|handshake|none] [-H 'Name: value']... [--max-errors N]
#                   [--body-size BYTES] [--body-framing content-length|chunked] URL
#        wrk-job.sh --parse REPORT   (the statistics block of a saved wrk report; crank/tests/parsers-test.sh)
#        wrk-job.sh --parse-tls FIRST SECOND   (the TLS block of two saved probes, see "TLS probe" below)
#
# Defaults: -t 1 -c 64 (a 2-core box runs load, proxy and origin at once), 20 s warm-up + 15 s
# measured (docs/methodology.md explains the warm-up; crank's own defaults are 15 s + 15 s).
# "--headers plaintext" (default) adds the two headers of crank's "plaintext" preset
# (Accept: text/plain,... and Connection: keep-alive) so every scenario sends the same request; "browser" a
# browser's eleven (crank/lib-headers.sh). --body-size N > 0 makes every request a POST with an N-byte body, framed
# by Content-Length or chunked (crank/wrk-request.lua builds it once; wrk sends it as its static request).
#
# Adaptive warm-up: with --warmup-max S (> WARMUP_S) and WRK_JOB_WARM_PROBE set, the warm-up load runs at least
# WARMUP_S seconds and then until the probe says the server is warm, at most S seconds in all (one wrk run, stopped
# with SIGINT); then settle cycles of a 1 s pause and 3 s of load until a cycle is quiet (see "Settle" below). The job
# prints "wrk-job: warm-up: N s in all, warm|cap then warm|cap" and, if either reached its cap, statistics
# "warmup/capped" = 1; warmup/seconds counts both runs.
#
# Environment:
#   WRK            wrk binary (default: wrk on PATH)
#   WRK_JOB_WARM_PROBE  optional executable, run once a second after the minimum warm-up; exit 0 = warm
#   WRK_JOB_HOOK   optional executable, called as "$WRK_JOB_HOOK measure-start" right before the
#                  measured run and "$WRK_JOB_HOOK measure-end" right after it. run-local.sh uses it
#                  to sample the processes over exactly the measured window. Unset under crank.
#
# TLS probe (https URLs): before any load, two connections with OpenSSL's client (openssl s_client, ALPN http/1.1),
# the second resuming the first's session, give a second statistics block, aggregated "First": "tls/protocol",
# "tls/cipher" and "tls/group" (the key exchange group), strings as OpenSSL names them, and "tls/resumed", 1 when the
# server resumed the session, else 0. wrk uses the same OpenSSL with its default offer, so it negotiates the same; and
# wrk keeps a connection's session when it reconnects (SSL_clear), so with the handshake preset a server that resumes
# sessions is measured on resumed handshakes and one that does not on full ones: tls/resumed says which. A failed
# probe prints a warning and no block; the load runs anyway.
#
# Exit code: wrk's own, 2 on bad usage, 3 when its report cannot be parsed (no statistics then), or 4
# when the measured run's bad responses (non-2xx/3xx) plus socket errors exceed --max-errors
# (statistics printed first). Without --max-errors any count passes.
set -euo pipefail

warmup=20
# The settle cycles after an adaptive warm-up (see "Settle" below): a 1 s pause is ten times the runtime's 100 ms
# tiering delay (TieredCompilation's call-counting delay); 3 s of load makes a cycle (4 s) longer than the quiet
# probe's 3 s span, so each check covers a whole pause; 6 cycles (24 s) bound it.
SETTLE_PAUSE_S=1 SETTLE_LOAD_S=3 SETTLE_CYCLES=6
duration=15
threads=1
connections=64
timeout_s=""
preset=plaintext
headers=()
url=""
max_errors=""
warmup_max=""
body_size=0
body_framing=content-length
parse_only=""
parse_tls=()

die() { echo "wrk-job: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    -w|--warmup) warmup="${2:?}"; shift 2 ;;
    --warmup-max) warmup_max="${2:?}"; shift 2 ;;
    -d|--duration) duration="${2:?}"; shift 2 ;;
    -t|--threads) threads="${2:?}"; shift 2 ;;
    -c|--connections) connections="${2:?}"; shift 2 ;;
    --timeout) timeout_s="${2:?}"; shift 2 ;;
    --headers) preset="${2:?}"; shift 2 ;;
    -H|--header) headers+=("${2:?}"); shift 2 ;;
    --max-errors) max_errors="${2:?}"; shift 2 ;;
    --body-size) body_size="${2:?}"; shift 2 ;;
    --body-framing) body_framing="${2:?}"; shift 2 ;;
    --parse) parse_only="${2:?}"; shift 2 ;;
    --parse-tls) parse_tls=("${2:?}" "${3:?}"); shift 3 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$url" ] || die "more than one URL ($url, $1)"; url="$1"; shift ;;
  esac
done
[ -n "$parse_only" ] || [ "${#parse_tls[@]}" -gt 0 ] || [ -n "$url" ] || die "missing URL"

# crank passes seconds; also accept "15s".
warmup="${warmup%s}"
duration="${duration%s}"
warmup_max="${warmup_max%s}"
for v in "$warmup" "$duration" "$threads" "$connections" "$body_size" ${max_errors:+"$max_errors"} ${warmup_max:+"$warmup_max"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$duration" -gt 0 ] || die "duration must be > 0"
case "$body_framing" in content-length|chunked) ;; *) die "--body-framing must be content-length or chunked, not '$body_framing'" ;; esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib-headers.sh disable=SC1091
. "$here/lib-headers.sh"
# shellcheck source=lib-statistics.sh disable=SC1091
. "$here/lib-statistics.sh"
load_preset_headers "$preset" || die "unknown header preset '$preset' (plaintext|browser|handshake|none)"
headers=("${PRESET_HEADERS[@]}" "${headers[@]}")

# parse REPORT: crank's statistics block for a wrk report (function below), then the error check.
if [ -n "$parse_only" ]; then
  [ -f "$parse_only" ] || die "--parse: no file $parse_only"
fi

WRK="${WRK:-$(command -v wrk || true)}"
if [ -z "$parse_only" ] && { [ -z "$WRK" ] || [ ! -x "$WRK" ]; }; then die "wrk not found (apt-get install -y wrk)"; fi

args=(-t "$threads" -c "$connections" --latency)
[ -z "$timeout_s" ] || args+=(--timeout "${timeout_s%s}s")
for h in "${headers[@]}"; do args+=(-H "$h"); done
# wrk-request.lua builds the request (a POST body when asked) and adds the 95th percentile to the report; every run
# gets it, so the warm-up sends the same request as the measured run. Its arguments follow the URL, after "--".
args+=(-s "$here/wrk-request.lua")
script_args=()
[ "$body_size" = 0 ] || script_args=(-- "$body_size" "$body_framing")

# statistics REPORT FIRST_MS WARM_CAPPED WARM_S: crank's statistics block for wrk 4.1.0's report REPORT (crank's wrk
# job names), with http/firstrequest (FIRST_MS, empty: none), warmup/seconds and warmup/capped (WARM_CAPPED = 1).
# Latencies are converted to ms, throughput to MB/s. Lines used (the same ones crank's wrk wrapper reads):
#     Latency   620.51us  229.13us   8.41ms   85.33%
#     50%  590.00us  (Latency Distribution, with --latency; 95% from wrk-request.lua)
#   123456 requests in 5.00s, 14.72MB read
#   Non-2xx or 3xx responses: 12          (only when > 0)
#   Socket errors: connect 0, read 1, write 0, timeout 0   (only when > 0)
#   Requests/sec:  24683.12
#   Transfer/sec:      2.94MB
# Returns 1 (nothing printed) when the report lacks the request count, the rate or the latency line.
statistics() {
  local rows
  rows="$(awk -v first="$2" -v capped="$3" -v warm="$4" -v OFS='\t' -v OFMT=%.10g '
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
  # OFMT=%.10g: print keeps ten significant digits of a number (the default keeps six).
  function num(v) { return v + 0 }
  $1 == "Latency" && NF >= 4 && !seen_lat { lat_mean = ms($2); lat_max = ms($4); seen_lat = 1 }
  $1 == "50%" { p50 = ms($2) }
  $1 == "75%" { p75 = ms($2) }
  $1 == "90%" { p90 = ms($2) }
  $1 == "95%" { p95 = ms($2) }
  $1 == "99%" { p99 = ms($2) }
  $2 == "requests" && $3 == "in" { requests = $1 + 0; seen_req = 1 }
  /Non-2xx or 3xx responses:/ { bad = $NF + 0 }
  /Socket errors:/ { gsub(/,/, ""); sock = $4 + $6 + $8 + $10 }
  $1 == "Requests/sec:" { rps = $2 + 0; seen_rps = 1 }
  $1 == "Transfer/sec:" { tput = mb($2) }
  END {
    if (!seen_req || !seen_rps || !seen_lat) exit 1
    # name(s), aggregate, reduce, short description, long description, format, value
    print "wrk/rps/mean;http/rps/mean", "Max", "Sum", "Requests/sec", "Requests per second", "n0", num(rps)
    print "wrk/requests;http/requests", "Max", "Sum", "Requests", "Total number of requests", "n0", num(requests)
    print "wrk/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean latency (ms)", "n2", num(lat_mean)
    print "wrk/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Max latency (ms)", "n2", num(lat_max)
    print "wrk/errors/badresponses;http/requests/badresponses", "Max", "Sum", "Bad responses", "Non-2xx or 3xx responses", "n0", num(bad)
    print "wrk/errors/socketerrors;http/requests/errors", "Max", "Sum", "Socket errors", "Socket errors", "n0", num(sock)
    print "wrk/throughput;http/throughput", "Max", "Sum", "Read throughput (MB/s)", "Read throughput (MB/s)", "n2", num(tput)
    if (p50 != "") print "wrk/latency/50;http/latency/50", "Max", "Max", "Latency 50th (ms)", "Latency 50th (ms)", "n2", num(p50)
    if (p75 != "") print "wrk/latency/75;http/latency/75", "Max", "Max", "Latency 75th (ms)", "Latency 75th (ms)", "n2", num(p75)
    if (p90 != "") print "wrk/latency/90;http/latency/90", "Max", "Max", "Latency 90th (ms)", "Latency 90th (ms)", "n2", num(p90)
    if (p95 != "") print "wrk/latency/95;http/latency/95", "Max", "Max", "Latency 95th (ms)", "Latency 95th (ms)", "n2", num(p95)
    if (p99 != "") print "wrk/latency/99;http/latency/99", "Max", "Max", "Latency 99th (ms)", "Latency 99th (ms)", "n2", num(p99)
    if (first != "") print "http/firstrequest", "Max", "Max", "First Request (ms)", "Time to first request in ms", "n0", num(first)
    print "warmup/seconds", "Max", "Max", "Warm-up (s)", "Seconds of load before the measured run", "n0", num(warm)
    if (capped != "") print "warmup/capped", "Max", "Max", "Warm-up capped", "1: the adaptive warm-up reached --warmup-max before the server was warm", "n0", 1
  }' "$1")" || return 1
  printf '%s\n' "$rows" | statistics_block wrk
}

# errors_of REPORT: bad responses plus socket errors in a wrk report.
errors_of() {
  awk '/Non-2xx or 3xx responses:/ { n += $NF }
       /Socket errors:/ { gsub(/,/, ""); n += $4 + $6 + $8 + $10 }
       END { print n + 0 }' "$1"
}

# check_errors REPORT: exit 4 when the report has more bad responses + socket errors than --max-errors.
# A run whose measured window has errors did not measure the proxy: fail the job, so that crank's
# return code (and run-local.sh's exit status) says so. crank keeps the statistics printed before.
check_errors() {
  [ -n "$max_errors" ] || return 0
  local errors; errors="$(errors_of "$1")"
  if [ "$errors" -gt "$max_errors" ]; then
    echo "wrk-job: $errors bad responses + socket errors in the measured run, more than --max-errors $max_errors: failing the job" >&2
    exit 4
  fi
}

# tls_statistics FIRST SECOND: the TLS block of two probes' output (openssl s_client: FIRST with -brief, SECOND without,
# resuming FIRST's session). Lines used (OpenSSL 3.0; 3.2 and later name the group on the last line instead):
#   Protocol version: TLSv1.3
#   Ciphersuite: TLS_AES_256_GCM_SHA384
#   Server Temp Key: X25519, 253 bits          (or "Peer Temp Key: ECDH, prime256v1, 256 bits")
#   Negotiated TLS1.3 group: X25519
#   Reused, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384     (SECOND; "New, ..." when not resumed)
# Returns 1 (nothing printed) when FIRST names no protocol or cipher suite.
tls_statistics() {
  local protocol cipher group resumed
  protocol="$(awk -F': ' '$1 == "Protocol version" { print $2; exit }' "$1")"
  cipher="$(awk -F': ' '$1 == "Ciphersuite" { print $2; exit }' "$1")"
  group="$(awk -F': ' '$1 == "Negotiated TLS1.3 group" { print $2; exit }
    $1 == "Server Temp Key" || $1 == "Peer Temp Key" { n = split($2, f, ", "); g = ((f[1] == "ECDH" || f[1] == "DH") && n > 2) ? f[2] : f[1]; print g; exit }' "$1")"
  [ -n "$protocol" ] && [ -n "$cipher" ] || return 1
  resumed=0
  ! grep -q '^Reused, ' "$2" || resumed=1
  echo '#StartJobStatistics'
  jq -n -c --arg ts "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" --arg protocol "$protocol" --arg cipher "$cipher" --arg group "$group" \
    --argjson resumed "$resumed" '
    [["tls/protocol", "TLS protocol", "The TLS version the target negotiated with OpenSSL'"'"'s client", $protocol],
     ["tls/cipher", "TLS cipher suite", "The cipher suite the target negotiated", $cipher],
     ["tls/group", "TLS key exchange group", "The key exchange group of the handshake (empty: not printed)", $group],
     ["tls/resumed", "TLS session resumed", "1: a second connection resumed the first one'"'"'s session", $resumed]] as $rows
    | {Metadata: [$rows[] | {Source: "wrk", Name: .[0], Aggregate: "First", Reduce: "First", ShortDescription: .[1],
                            LongDescription: .[2], Format: (if .[3] | type == "number" then "n0" else "" end)}],
       Measurements: [$rows[] | {Timestamp: $ts, Name: .[0], Value: .[3]}]}'
  echo '#EndJobStatistics'
}

if [ "${#parse_tls[@]}" -gt 0 ]; then
  for f in "${parse_tls[@]}"; do [ -f "$f" ] || die "--parse-tls: no file $f"; done
  tls_statistics "${parse_tls[@]}" || { echo "wrk-job: no TLS protocol and cipher suite in ${parse_tls[0]}" >&2; exit 3; }
  exit 0
fi

if [ -n "$parse_only" ]; then
  statistics "$parse_only" "" "" 0 || { echo "wrk-job: could not parse the wrk report $parse_only" >&2; exit 3; }
  check_errors "$parse_only"
  exit 0
fi

hook() {
  if [ -n "${WRK_JOB_HOOK:-}" ]; then "$WRK_JOB_HOOK" "$1"; fi
}

# http/firstrequest: the time of one request on a new connection before any load, in ms.
first_ms=""
if command -v curl > /dev/null; then
  read -r first_code first_s < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 30 "$url" || true)
  # 000: no response at all (wrk will say why); nothing to time.
  [ "${first_code:-000}" = 000 ] || first_ms="$(awk -v s="$first_s" 'BEGIN { printf "%.0f", s * 1000 }')"
fi

# The TLS probe (see the header): two connections, the second resuming the first's session; each sends one request
# and reads to the end, so that the session tickets a TLS 1.3 server sends after the handshake arrive.
if [[ "$url" == https://* ]]; then
  if command -v openssl > /dev/null; then
    tls_out="$(mktemp -d "${TMPDIR:-/tmp}/wrk-job-tls.XXXXXX")"
    authority="${url#https://}"; authority="${authority%%/*}"
    [[ "$authority" =~ (:[0-9]+)$ ]] || authority="$authority:443"
    target_path="/${url#https://*/}"; [[ "$url" == https://*/* ]] || target_path=/
    request="GET $target_path HTTP/1.1"$'\r\n'"Host: ${authority}"$'\r\n'"Connection: close"$'\r\n\r\n'
    printf '%s' "$request" | timeout 10 openssl s_client -connect "$authority" -alpn http/1.1 -brief -ign_eof \
      -sess_out "$tls_out/session.pem" > "$tls_out/first" 2>&1 || true
    printf '%s' "$request" | timeout 10 openssl s_client -connect "$authority" -alpn http/1.1 -ign_eof \
      -sess_in "$tls_out/session.pem" > "$tls_out/second" 2>&1 || true
    if tls_statistics "$tls_out/first" "$tls_out/second" > "$tls_out/block"; then
      cat "$tls_out/block"
      echo "wrk-job: TLS: $(sed -n 2p "$tls_out/block" | jq -r '[.Measurements[] | "\(.Name | ltrimstr("tls/")) \(.Value)"] | join(", ")')"
    else
      echo "wrk-job: warning: the TLS probe of $authority negotiated nothing (no tls/* figures):" >&2
      sed 's/^/  tls-probe| /' "$tls_out/first" >&2
    fi
    rm -rf "$tls_out"
  else
    echo "wrk-job: warning: openssl not found: no TLS probe, no tls/* figures (apt-get install -y openssl)" >&2
  fi
fi

warm_capped="" warm_s="$warmup"
# One adaptive warm-up run: load for at least $2 s, then until the probe says warm, at most $3 s in all; $1 names it.
# Sets warm_state (warm or cap) and adds its seconds to warm_total.
warm_total=0
adaptive_warm() {
  local name="$1" min="$2" max="$3" out pid start
  echo "wrk-job: $name: wrk -d ${max}s$(printf ' %q' "${args[@]}") $url, stopped once $WRK_JOB_WARM_PROBE says warm after ${min}s"
  out="$(mktemp "${TMPDIR:-/tmp}/wrk-job-warm.XXXXXX")"
  "$WRK" -d "${max}s" "${args[@]}" "$url" "${script_args[@]}" > "$out" &
  pid=$!
  start=$(date +%s)
  warm_state=cap
  sleep "$min"
  # kill -0: wrk still runs, i.e. the cap is not reached yet.
  while kill -0 "$pid" 2> /dev/null; do
    if "$WRK_JOB_WARM_PROBE"; then warm_state=warm; kill -INT "$pid" 2> /dev/null || true; break; fi
    sleep 1
  done
  wait "$pid" || true
  # Warm-up output is shown but never parsed.
  sed "s/^/  $name| /" "$out"; rm -f "$out"
  warm_total=$(( warm_total + $(date +%s) - start ))
  echo "wrk-job: $name: $(( $(date +%s) - start )) s, $warm_state"
}
if [ "$warmup" -gt 0 ] && [ -n "$warmup_max" ] && [ "$warmup_max" -gt "$warmup" ] && [ -n "${WRK_JOB_WARM_PROBE:-}" ]; then
  adaptive_warm warm-up "$warmup" "$warmup_max"
  first_state="$warm_state"
  # Settle: under uninterrupted load the runtime's tiering falls behind (its background compiler competes with the
  # load for the cores, and promotion waits for a lull), and it catches up in a batch each time the load pauses: a
  # trial on the 2-core box saw ~560 methods compiled in the second after the warm-up run ended and ~340 after the
  # next pause, i.e. inside a measured window that starts after a pause. So pause and load again, in short cycles,
  # until a whole cycle (pause + load) compiles no more than the probe's quiet threshold, at most SETTLE_CYCLES times.
  # The probe compares against its observation from before the pause: a cycle lasts longer than its quiet span.
  settle_state=cap settle_start=$(date +%s)
  for ((cycle = 1; cycle <= SETTLE_CYCLES; cycle++)); do
    "$WRK_JOB_WARM_PROBE" > /dev/null 2>&1 || true
    sleep "$SETTLE_PAUSE_S"
    "$WRK" -d "${SETTLE_LOAD_S}s" "${args[@]}" "$url" "${script_args[@]}" > /dev/null || true
    if "$WRK_JOB_WARM_PROBE"; then settle_state=warm; break; fi
  done
  warm_total=$(( warm_total + $(date +%s) - settle_start ))
  echo "wrk-job: settle: $(( $(date +%s) - settle_start )) s, $(( cycle > SETTLE_CYCLES ? SETTLE_CYCLES : cycle )) cycle(s) of ${SETTLE_PAUSE_S} s pause + ${SETTLE_LOAD_S} s load, $settle_state"
  warm_state="$settle_state"
  warm_s="$warm_total"
  echo "wrk-job: warm-up: $warm_s s in all, $first_state then $warm_state"
  [ "$first_state" = warm ] && [ "$warm_state" = warm ] || warm_capped=1
elif [ "$warmup" -gt 0 ]; then
  echo "wrk-job: warm-up: wrk -d ${warmup}s$(printf ' %q' "${args[@]}") $url"
  # Warm-up output is shown but never parsed.
  "$WRK" -d "${warmup}s" "${args[@]}" "$url" "${script_args[@]}" | sed 's/^/  warm-up| /'
fi

report="$(mktemp "${TMPDIR:-/tmp}/wrk-job.XXXXXX")"
wrk_pid=""
trap 'rm -f "$report"; [ -z "$wrk_pid" ] || kill "$wrk_pid" 2> /dev/null || true' EXIT

echo "wrk-job: measured: wrk -d ${duration}s$(printf ' %q' "${args[@]}") $url${script_args[*]:+ ${script_args[*]}}"
hook measure-start
"$WRK" -d "${duration}s" "${args[@]}" "$url" "${script_args[@]}" > "$report" &
wrk_pid=$!
echo "##ChildProcessId:$wrk_pid" >&2
set +e
wait "$wrk_pid"
rc=$?
set -e
wrk_pid=""
hook measure-end
cat "$report"
[ "$rc" -eq 0 ] || { echo "wrk-job: wrk exited with $rc" >&2; exit "$rc"; }

statistics "$report" "$first_ms" "$warm_capped" "$warm_s" || { echo "wrk-job: could not parse the wrk report above" >&2; exit 3; }
check_errors "$report"
