#!/usr/bin/env bash
# fuzz/smoke.sh: the CI smoke of the fuzz targets. Every target runs under afl-fuzz from its committed corpus
# (fuzz/corpus/TARGET) for SMOKE_SECONDS (default 6) after calibration, at the lowest CPU priority: a few thousand
# executions or more each, about a minute for all ten. Fails when any target saves a crash or a hang, or runs fewer
# than SMOKE_MIN_EXECS (default 1000) executions (a target that cannot run is no smoke).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

seconds=${SMOKE_SECONDS:-6}
min_execs=${SMOKE_MIN_EXECS:-1000}

ensure_afl
afl_environment
build_instrumented

failed=0
for target in "${TARGETS[@]}"; do
  output="$ARTIFACTS/smoke/$target"
  log="$ARTIFACTS/smoke-$target.log"
  if ! run_afl "$target" "$seconds" "$FUZZ_DIR/corpus/$target" "$output" > "$log" 2>&1; then
    echo "$target: afl-fuzz failed:" >&2
    tail -20 "$log" >&2
    failed=1
    continue
  fi
  execs=$(stat "$output" execs_done)
  found=$(findings_of "$output")
  echo "$target: $execs executions, $(stat "$output" corpus_count) paths, $found crashes or hangs"
  if [ "$found" -ne 0 ]; then
    for file in "$output"/default/crashes/id* "$output"/default/hangs/id*; do
      [ -f "$file" ] && dotnet "$BUILD/LLRP.Fuzz.dll" "$target" "$file" >&2 || true
    done
    failed=1
  elif [ "$execs" -lt "$min_execs" ]; then
    echo "$target: only $execs executions (at least $min_execs expected)" >&2
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz smoke: FAILED" >&2
  exit 1
fi
echo "fuzz smoke: every target ran clean"
