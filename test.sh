#!/usr/bin/env bash
# Runs every test project of the solution and prints one closing line: "tests: N passed, N failed, N skipped".
# Exit status: dotnet test's own when it fails; 1 when any test failed or no test ran; 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Printed: progress (each project built, each test assembly started, so the minutes of building are not silent), each
# failing test with the first lines of its message (up to its stack trace), each project's summary, and errors; every
# line flushed at once. The filter's exit status must not hide dotnet test's: take PIPESTATUS at once.
echo "test.sh: building the solution, then running each test project (about 3 min on 2 cores)"
started=$(date +%s)
dotnet test LLRP.slnx -c Release -nologo "$@" 2>&1 | tee "$log" | awk -v started="$started" '
  function elapsed() { return sprintf("%ds", systime_() - started) }
  function systime_(  t) { "date +%s" | getline t; close("date +%s"); return t }
  /^[[:space:]]*Failed [^!]/ { print; fflush(); detail = 8; next }
  detail > 0 && /Stack Trace:/ { detail = 0 }
  detail > 0 { print; detail--; fflush(); next }
  /^[[:space:]]*[A-Za-z0-9_.]+ -> \// { name = $1; printf "test.sh: built %s (%s)\n", name, elapsed(); fflush(); next }
  /^Test run for / { n = split($4, parts, "/"); printf "test.sh: testing %s (%s)\n", parts[n], elapsed(); fflush(); next }
  /^[[:space:]]*(Passed!|Failed!|Skipped) |error|Total tests|Test Run/ { print; fflush() }'
status=${PIPESTATUS[0]}
read -r passed failed skipped < <(grep -E "(Passed|Failed)! +- Failed: " "$log" \
  | sed -E 's/.*Failed: +([0-9]+), Passed: +([0-9]+), Skipped: +([0-9]+).*/\2 \1 \3/' \
  | awk '{p+=$1; f+=$2; s+=$3} END {print p+0, f+0, s+0}')
echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
if [ "$passed" -eq 0 ]; then
  echo "test.sh: no test ran (dotnet test exited with $status)" >&2
  exit 1
fi
if [ "$failed" -gt 0 ]; then
  echo "test.sh: $failed test(s) failed" >&2
  exit 1
fi
exit "$status"
