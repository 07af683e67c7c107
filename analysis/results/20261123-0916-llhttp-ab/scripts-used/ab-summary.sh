#!/usr/bin/env bash
# Per label: each round's RPS, CPU us/request, B/request, steady; then medians.
dir="$1"; shift
for label in "$@"; do
  jq -s --arg build "$label" '
    def med: sort | if length == 0 then null elif length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
    [ .[] | { rps: .jobResults.jobs.load.results["wrk/rps/mean"],
              cpu: .jobResults.jobs.application.results["proc/cpu/per-request"],
              alloc: .jobResults.jobs.application.results["llrp/allocated-per-request"],
              p99: .jobResults.jobs.load.results["wrk/latency/99"],
              steady: .jobResults.jobs.application.results["steady/ok"] } ] as $runs
    | { build: $build, runs: $runs,
        median: { rps: ([$runs[].rps] | med), cpuUsPerRequest: ([$runs[].cpu] | med),
                  allocatedBytesPerRequest: ([$runs[].alloc] | med), p99ms: ([$runs[].p99] | med) },
        steadyRuns: ([$runs[].steady] | add) }' "$dir/$label"/r*/llrp-llhttp.r1.json
done | jq -s '.'
