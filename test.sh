#!/usr/bin/env bash
# Runs every test project of the solution and prints one closing line: "tests: N passed, N failed, N skipped".
# Exit status: dotnet test's own when it fails; 1 when any test failed or no test ran; 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The filter's own exit status (grep finds nothing: 1) must not hide dotnet test's: take PIPESTATUS at once.
dotnet test LLRP.slnx -c Release -nologo "$@" 2>&1 | tee "$log" | grep -E "^\s*(Failed|Passed!|Failed!|Skipped) |error|Total tests|Test Run"
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
