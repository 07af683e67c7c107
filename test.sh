#!/usr/bin/env bash
# Runs every test project of the solution and prints one closing line: "tests: N passed, N failed, N skipped".
# Exit status: dotnet test's own when it fails; 1 when any test failed or no test ran; 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Printed: progress (each project built, each test assembly started, so the minutes of building are not silent), each
# failing test with the first lines of its message (up to its stack trace), each project's summary, and errors. The
# filter is a shell loop, which takes each line as it comes (mawk reads a pipe in blocks and would print the progress
# only at the end). The filter's exit status must not hide dotnet test's: take PIPESTATUS at once.
progress() {
  local line detail=0 name
  while IFS= read -r line; do
    if [[ "$line" =~ ^[[:space:]]*Failed\ [^!] ]]; then printf '%s\n' "$line"; detail=8; continue; fi
    # A test host that crashed: vstest's reason and the host's own last words (the unhandled exception and its stack).
    if [[ "$line" == *"test run was aborted"* || "$line" == *"host process crashed"* || "$line" == *"Unhandled exception"* \
      || "$line" == *"running when the crash occurred"* || "$line" == *"epoll engine: a completion failed"* ]]; then
      printf '%s\n' "$line"; detail=30; continue
    fi
    if [ "$detail" -gt 0 ]; then
      if [[ "$line" == *"Stack Trace:"* ]]; then detail=0; else printf '%s\n' "$line"; detail=$((detail - 1)); continue; fi
    fi
    if [[ "$line" =~ ^[[:space:]]*([A-Za-z0-9_.]+)\ -\>\ / ]]; then
      printf 'test.sh: built %s (%ds)\n' "${BASH_REMATCH[1]}" $(( $(date +%s) - started ))
    elif [[ "$line" =~ ^Test\ run\ for\ ([^ ]+) ]]; then
      name="${BASH_REMATCH[1]##*/}"
      printf 'test.sh: testing %s (%ds)\n' "$name" $(( $(date +%s) - started ))
    elif [[ "$line" =~ ^[[:space:]]*(Passed!|Failed!|Skipped)\  || "$line" == *error* || "$line" == *"Total tests"* || "$line" == *"Test Run"* ]]; then
      printf '%s\n' "$line"
    fi
  done
}
# What the tests need beyond the .NET SDK, installed when missing: openssl (the TLS tests run OpenSSL's s_server as an
# independent peer) and h2load from nghttp2-client (H2LoadVariantsTests). Without them those tests would fail, not skip.
missing=()
command -v openssl > /dev/null || missing+=(openssl)
command -v h2load > /dev/null || missing+=(nghttp2-client)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test.sh: installing ${missing[*]} (apt-get)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" > /dev/null; } \
    || { echo "test.sh: could not install ${missing[*]}; install them and run again" >&2; exit 1; }
fi
# --blame: a test host that crashes names the test that was running (vstest's "The test running when the crash
# occurred"), printed with the crash lines below.
echo "test.sh: building the solution, then running each test project (about 3 min on 2 cores)"
started=$(date +%s)
dotnet test LLRP.slnx -c Release -nologo --blame "$@" 2>&1 | tee "$log" | progress
status=${PIPESTATUS[0]}
read -r passed failed skipped < <(grep -E "(Passed|Failed)! +- Failed: " "$log" \
  | sed -E 's/.*Failed: +([0-9]+), Passed: +([0-9]+), Skipped: +([0-9]+).*/\2 \1 \3/' \
  | awk '{p+=$1; f+=$2; s+=$3} END {print p+0, f+0, s+0}')
echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
if [ "$passed" -eq 0 ]; then
  echo "test.sh: no test ran (dotnet test exited with $status)" >&2
  exit 1
fi
if grep -q "Test Run Aborted" "$log"; then
  echo "test.sh: a test host crashed (its reason above): the tests after the crash did not run" >&2
  exit 1
fi
if [ "$failed" -gt 0 ]; then
  echo "test.sh: $failed test(s) failed" >&2
  exit 1
fi
exit "$status"
