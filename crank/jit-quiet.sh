#!/usr/bin/env bash
# run-local.sh's WRK_JOB_WARM_PROBE for the .NET scenarios: wrk-job.sh runs it once a second after the minimum
# warm-up and ends the warm-up when it exits 0. It reads the last cumulative "jit/methods" figure the proxy printed
# in its statistics blocks (JIT_LOG: the application's log; LLRP's SelfReport and the baselines' JitActivity print
# one a second while under load), appends "<epoch s> <methods>" to JIT_STATE, and answers "warm" once the JIT compiled
# at most JIT_QUIET_METHODS methods over the last JIT_QUIET_SECONDS seconds of its own observations.
# Exit: 0 warm, 1 not yet (or no figure yet), 2 bad environment.
set -euo pipefail
: "${JIT_LOG:?}" "${JIT_STATE:?}" "${JIT_QUIET_METHODS:?}" "${JIT_QUIET_SECONDS:?}"
now="$(date +%s)"
methods="$({ grep -o '"Name":"jit/methods","Value":[0-9]*' "$JIT_LOG" 2> /dev/null || true; } | tail -n 1 | sed 's/.*://')"
[ -n "$methods" ] || exit 1
echo "$now $methods" >> "$JIT_STATE"
# The newest observation at least JIT_QUIET_SECONDS old: the JIT's count then against now.
awk -v now="$now" -v m="$methods" -v span="$JIT_QUIET_SECONDS" -v quiet="$JIT_QUIET_METHODS" '
  now - $1 >= span { then = $2; seen = 1 }
  END { if (!seen) exit 1; exit (m - then <= quiet) ? 0 : 1 }' "$JIT_STATE"
