#!/usr/bin/env bash
# Checks that the load job scripts read their tools' reports: ab-job.sh and ramp-job.sh on recorded output
# (crank/tests/data/README.md), and that a report they cannot read fails with exit code 3. A few seconds; no network.
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

"$crank/ab-job.sh" --parse "$data/ab-2.3.txt" > "$out"; check "ab-job: exit code" "$?" 0
check "ab-job: figures" "$(results_of "$out")" \
  '{"ab/rps/mean":435.58,"ab/time-per-request/mean":459.16,"ab/requests":1335,"ab/failed":0,"ab/non2xx":0,"ab/latency/50":338,"ab/latency/90":693,"ab/latency/95":770,"ab/latency/99":899,"ab/latency/max":900}'
check "ab-job: crank names" "$(sed -n 2p "$out" | jq -r '[.Metadata[].Name] | map(select(startswith("ab/rps/mean") or startswith("ab/failed"))) | join(" ")')" \
  'ab/rps/mean;http/rps/mean ab/failed;http/requests/errors'
"$crank/ab-job.sh" --parse "$data/ab-2.3-failures.txt" > "$out"
check "ab-job: failed and non-2xx" "$(results_of "$out" | jq -c '[.["ab/failed"], .["ab/non2xx"]]')" '[3,7]'
"$crank/ab-job.sh" --parse "$data/h2load-1.52.txt" > /dev/null 2>&1; check "ab-job: not an ab report" "$?" 3

check "ramp-job: step" "$("$crank/ramp-job.sh" --parse-step "$data/h2load-1.52.txt" "$data/h2load-1.52.log" 1000 3)" \
  '1000 533.7 533.7 36.560 103.254 100.000 1601 1601'
check "ramp-job: step with failures" "$("$crank/ramp-job.sh" --parse-step "$data/h2load-1.52-failures.txt" "$data/h2load-1.52.log" 1000 3)" \
  '1000 533.7 530.0 36.560 103.254 99.313 1590 1601'
"$crank/ramp-job.sh" --parse-step "$data/ab-2.3.txt" "$data/h2load-1.52.log" 1000 3 > /dev/null 2>&1
check "ramp-job: not an h2load report" "$?" 3
"$crank/ramp-job.sh" --steps 31 http://127.0.0.1:1/ > /dev/null 2>&1; check "ramp-job: more than 30 steps refused" "$?" 2

echo "parsers-test: $((checks - failed)) of $checks checks passed"
[ "$failed" = 0 ]
