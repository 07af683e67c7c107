#!/usr/bin/env bash
# CI smoke test of the benchmark pipeline: a few seconds of "direct" and of one proxy scenario
# through run-local.sh (so: publish, start, ready texts, wrk-job.sh, statistics, JSON, stop).
# Fails (exit 1) when a scenario produced no result, zero requests, any bad response or any
# socket error. Measures nothing worth keeping: the numbers are only printed.
#
# usage: crank/smoke.sh [SCENARIO...]     (default: direct llrp-llhttp)
# Environment: SMOKE_DIR (default artifacts/crank/smoke), SMOKE_DURATION (3 s), SMOKE_CONNECTIONS (16),
#   SMOKE_OPTIONS (more run-local.sh options, split at spaces, e.g. "--pin-proxy --origin nginx": run-local.sh's
#   default topology, which the smoke otherwise leaves for --shared)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${SMOKE_DIR:-$root/artifacts/crank/smoke}"
scenarios=("$@")
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(direct llrp-llhttp)

rm -rf "$dir"
rc=0
# --fallback: the smoke checks the job scripts themselves, also where crank is installed. --warmup-max 0 and
# --steady-retries 0: a fixed 1 s warm-up and no retries, since the smoke checks the harness, not steady state.
# --shared: Downstream as the origin, unpinned, so that the harness's own origin is covered too; SMOKE_OPTIONS
# "--pin-proxy --origin nginx" (.ci/run's second smoke) gives run-local.sh's default topology back.
# shellcheck disable=SC2086  # SMOKE_OPTIONS is split into words on purpose
"$root/crank/run-local.sh" --fallback --shared --no-report --rounds 1 --warmup 1 --warmup-max 0 --steady-retries 0 --duration "${SMOKE_DURATION:-3}" \
  --connections "${SMOKE_CONNECTIONS:-16}" --json-dir "$dir" ${SMOKE_OPTIONS:-} "${scenarios[@]}" || rc=$?

failed=0
for s in "${scenarios[@]}"; do
  f="$dir/$s.r1.json"
  if [ ! -f "$f" ]; then
    echo "smoke: FAIL $s: no result (see $dir/logs)"; failed=$((failed + 1)); continue
  fi
  read -r requests bad socket rps < <(jq -r '.jobResults.jobs.load.results
    | "\(.["wrk/requests"] // 0) \(.["wrk/errors/badresponses"] // -1) \(.["wrk/errors/socketerrors"] // -1) \(.["wrk/rps/mean"] // 0)"' "$f")
  if [ "$requests" = 0 ] || [ "$bad" != 0 ] || [ "$socket" != 0 ]; then
    echo "smoke: FAIL $s: requests=$requests bad=$bad socket_errors=$socket (see $dir/logs)"; failed=$((failed + 1))
  else
    echo "smoke: ok   $s: requests=$requests rps=$rps bad=0 socket_errors=0"
  fi
done
if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
  echo "smoke: run-local.sh exited with $rc"
  echo "smoke: $(( ${#scenarios[@]} - failed )) scenarios ok, $failed scenarios failed"
  exit 1
fi
echo "smoke: ${#scenarios[@]} scenarios ok"
