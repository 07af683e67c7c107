#!/usr/bin/env bash
# fuzz/run.sh TARGET SECONDS: one campaign of afl-fuzz on one target, bounded by time (afl-fuzz -V), at the lowest
# CPU priority. Input: the committed corpus fuzz/corpus/TARGET (or the raw seeds fuzz/make-seeds.py writes, when the
# corpus is empty). Output: artifacts/fuzz/campaign/TARGET (afl-fuzz's folder: queue, crashes, hangs, fuzzer_stats).
# Prints executions, paths and findings; exits 1 when afl-fuzz saved any crash or hang. Minimise the corpus after a
# campaign with fuzz/cmin.sh TARGET.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [ $# -ne 2 ] || [[ ! " ${TARGETS[*]} " =~ " $1 " ]] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/run.sh TARGET SECONDS; targets: ${TARGETS[*]}" >&2
  exit 2
fi
target=$1 seconds=$2

ensure_afl
afl_environment
build_instrumented

input="$FUZZ_DIR/corpus/$target"
if [ -z "$(ls -A "$input" 2> /dev/null)" ]; then
  [ -d "$FUZZ_DIR/seeds/$target" ] || python3 "$FUZZ_DIR/make-seeds.py"
  input="$FUZZ_DIR/seeds/$target"
fi
output="$ARTIFACTS/campaign/$target"
echo "== afl-fuzz $target for ${seconds} s from $input"
run_afl "$target" "$seconds" "$input" "$output" > "$ARTIFACTS/campaign-$target.log" 2>&1 || {
  tail -30 "$ARTIFACTS/campaign-$target.log" >&2
  exit 1
}

found=$(findings_of "$output")
echo "$target: $(stat "$output" execs_done) executions in $(stat "$output" run_time) s, $(stat "$output" corpus_count) paths" \
  "(corpus), $(stat "$output" saved_crashes) crashes, $(stat "$output" saved_hangs) hangs, $(stat "$output" bitmap_cvg) map coverage"
if [ "$found" -ne 0 ]; then
  echo "$target: $found crash or hang inputs in $output/default/{crashes,hangs}; replay one with:" >&2
  echo "  dotnet $BUILD/LLRP.Fuzz.dll $target FILE" >&2
  exit 1
fi
