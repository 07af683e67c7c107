#!/usr/bin/env bash
# Runs every test project of the solution and prints one closing line: "tests: N passed, N failed, N skipped".
# Exit status: dotnet test's own when it fails; 1 when any test failed or no test ran; 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Printed: each failing test with the first lines of its message (up to its stack trace), each project's summary, and
# errors. The filter's exit status must not hide dotnet test's: take PIPESTATUS at once.
dotnet test LLRP.slnx -c Release -nologo "$@" 2>&1 | tee "$log" | awk '
  /^[[:space:]]*Failed [^!]/ { print; detail = 8; next }
  detail > 0 && /Stack Trace:/ { detail = 0 }
  detail > 0 { print; detail--; next }
  /^[[:space:]]*(Passed!|Failed!|Skipped) |error|Total tests|Test Run/ { print }'
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
