#!/usr/bin/env bash
# Checks that the load job scripts read their tools' reports: ramp-job.sh, fixedrate-job.sh and h2load-job.sh on
# recorded output (crank/tests/data/README.md), and that a report they cannot read fails with exit code 3 (wrk-job's
# and ab-job's checks: tests/Jobs.Tests). A few seconds; no network.
# Exit status: 0 all checks passed, 1 otherwise.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crank="$here/.." data="$here/data"
failed=0 checks=0

check() {  # check NAME ACTUAL EXPECTED
  checks=$((checks + 1))
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: got '$2', expected '$3'"; failed=$((failed + 1)); fi
}
# results_of FILE: the statistics block's measurements as {name: value}, each name of "a;b" under a.
results_of() {
  sed -n '/^#StartJobStatistics/,/^#EndJobStatistics/p' "$1" | sed '1d;$d' \
    | jq -c '[.Measurements[] | {key: (.Name | split(";")[0]), value: .Value}] | from_entries'
}

out="$(mktemp)"; trap 'rm -f "$out"' EXIT

check "ramp-job: step" "$("$crank/ramp-job.sh" --parse-step "$data/h2load-1.52.txt" "$data/h2load-1.52.log" 1000 3)" \
  '1000 533.7 533.7 36.560 103.254 100.000 1601 1601'
check "ramp-job: step with failures" "$("$crank/ramp-job.sh" --parse-step "$data/h2load-1.52-failures.txt" "$data/h2load-1.52.log" 1000 3)" \
  '1000 533.7 530.0 36.560 103.254 99.313 1590 1601'
"$crank/ramp-job.sh" --parse-step "$data/ab-2.3.txt" "$data/h2load-1.52.log" 1000 3 > /dev/null 2>&1
check "ramp-job: not an h2load report" "$?" 3
"$crank/ramp-job.sh" --steps 31 http://127.0.0.1:1/ > /dev/null 2>&1; check "ramp-job: more than 30 steps refused" "$?" 2

# fixedrate-job.sh on h2load's run against an origin that stalls every answer due from 1.0 to 1.2 s (2 connections,
# 50 requests/s each): h2load holds the 20 requests due in the stall back and times them from their late send
# (uncorrected p99 14.8 ms); from their due time they took 20 to 200 ms, 6.7 % of the 300, so p99 and p99.9 show it.
"$crank/fixedrate-job.sh" --parse "$data/h2load-1.52-stall.txt" "$data/h2load-1.52-stall.log" 100 2 3 > "$out"
check "fixedrate-job: exit code" "$?" 0
check "fixedrate-job: figures" "$(results_of "$out")" \
  '{"fixedrate/rate":100,"fixedrate/due":300,"fixedrate/sent":100.6666667,"fixedrate/missed":0,"fixedrate/rps":100,"fixedrate/requests":300,"fixedrate/errors/badresponses":0,"fixedrate/errors/socketerrors":0,"fixedrate/latency/50":1.545,"fixedrate/latency/90":4.615,"fixedrate/latency/99":182.687,"fixedrate/latency/99.9":202.281,"fixedrate/latency/max":202.281,"fixedrate/latency/mean":9.826963,"fixedrate/uncorrected/latency/50":0.843,"fixedrate/uncorrected/latency/99":14.777,"fixedrate/uncorrected/latency/99.9":201.474,"fixedrate/uncorrected/latency/max":201.474}'
check "fixedrate-job: the wrk job's names" "$(sed -n 2p "$out" | jq -r '[.Metadata[].Name | split(";")[1] // empty] | join(" ")')" \
  'http/rps/mean http/requests http/requests/badresponses http/requests/errors http/latency/50 http/latency/90 http/latency/99 http/latency/99.9 http/latency/max http/latency/mean'
# The same log read as a run of 4 s: the 100 requests due in the 4th second got no answer and count from due to end.
"$crank/fixedrate-job.sh" --parse "$data/h2load-1.52-stall.txt" "$data/h2load-1.52-stall.log" 100 2 4 > "$out"
check "fixedrate-job: unanswered requests count" "$(results_of "$out" | jq -c '[.["fixedrate/due"], .["fixedrate/missed"]]')" '[400,100]'
"$crank/fixedrate-job.sh" --parse "$data/ab-2.3.txt" "$data/h2load-1.52-stall.log" 100 2 3 > /dev/null 2>&1
check "fixedrate-job: not an h2load report" "$?" 3
"$crank/fixedrate-job.sh" --rate 100 --body-size 10 --body-framing chunked http://127.0.0.1:1/ > /dev/null 2>&1
check "fixedrate-job: chunked bodies refused" "$?" 2

# h2load-job.sh on h2load's run over h2 (TLS, ALPN) through nginx: the figures under wrk-job.sh's names, percentiles from
# the per-request log; the same with --rate (open loop: offered and sent rates); a report with failures against
# --max-errors; and an HTTP/1.1 report, which is not an h2 run (exit code 5).
"$crank/h2load-job.sh" -d 3 -c 2 -m 10 --parse "$data/h2load-1.52-h2.txt" "$data/h2load-1.52-h2.log" > "$out"
check "h2load-job: exit code" "$?" 0
check "h2load-job: figures" "$(results_of "$out")" '{"h2load/rps/mean":8850.67,"h2load/requests":26552,"h2load/latency/mean":2.07,"h2load/latency/max":15.48,"h2load/errors/badresponses":0,"h2load/errors/socketerrors":0,"h2load/throughput":0.6499614716,"h2load/latency/50":1.294,"h2load/latency/75":2.214,"h2load/latency/90":7.209,"h2load/latency/95":9.784,"h2load/latency/99":15.448,"h2load/latency/99.9":15.481,"h2load/rps/2xx":8850.666667,"h2load/availability":100,"h2load/connections":2,"h2load/streams":10,"warmup/seconds":0}'
check "h2load-job: the wrk job's names" "$(sed -n 2p "$out" | jq -r '[.Metadata[].Name | split(";")[1] // empty] | join(" ")')" \
  'http/rps/mean http/requests http/latency/mean http/latency/max http/requests/badresponses http/requests/errors http/throughput http/latency/50 http/latency/75 http/latency/90 http/latency/95 http/latency/99 http/latency/99.9'
"$crank/h2load-job.sh" -d 3 -c 2 -m 10 --rate 4000 --parse "$data/h2load-1.52-h2.txt" "$data/h2load-1.52-h2.log" > "$out"
check "h2load-job: open loop" "$(results_of "$out" | jq -c '[.["h2load/rate"], .["h2load/sent"]]')" '[4000,8857.333333]'
"$crank/h2load-job.sh" -d 3 -c 2 -m 10 --max-errors 8 --parse "$data/h2load-1.52-h2-failures.txt" "$data/h2load-1.52-h2.log" > "$out" 2> /dev/null
check "h2load-job: 9 errors, --max-errors 8" "$?" 4
check "h2load-job: bad responses, errors, availability" "$(results_of "$out" | jq -c '[.["h2load/errors/badresponses"], .["h2load/errors/socketerrors"], .["h2load/availability"]]')" '[5,4,99.96610425]'
"$crank/h2load-job.sh" -d 3 -c 2 -m 10 --max-errors 9 --parse "$data/h2load-1.52-h2-failures.txt" "$data/h2load-1.52-h2.log" > /dev/null
check "h2load-job: 9 errors, --max-errors 9" "$?" 0
"$crank/h2load-job.sh" -d 3 -c 20 --parse "$data/h2load-1.52.txt" "$data/h2load-1.52.log" > /dev/null 2>&1
check "h2load-job: an HTTP/1.1 run is not an h2 run" "$?" 5
"$crank/h2load-job.sh" --parse "$data/ab-2.3.txt" "$data/h2load-1.52.log" > /dev/null 2>&1; check "h2load-job: not an h2load report" "$?" 3
"$crank/h2load-job.sh" --headers handshake https://127.0.0.1:1/ > /dev/null 2>&1; check "h2load-job: Connection: close refused" "$?" 2

echo "parsers-test: $((checks - failed)) of $checks checks passed"
[ "$failed" = 0 ]
