#!/usr/bin/env bash
# fuzz/cmin.sh TARGET: replaces fuzz/corpus/TARGET with the smallest set of inputs (afl-cmin) that keeps the coverage
# of the committed corpus and of the last campaign's queue (artifacts/fuzz/campaign/TARGET), dropping inputs over
# MAX_INPUT_BYTES (default 8 KiB) first so the committed corpus stays small. Run fuzz/run.sh TARGET SECONDS first.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

target=${1:?usage: fuzz/cmin.sh TARGET}
max_bytes=${MAX_INPUT_BYTES:-8192}
ensure_afl
afl_environment
[ -x "$INSTRUMENTED/LLRP.Fuzz.dll" ] || [ -f "$INSTRUMENTED/LLRP.Fuzz.dll" ] || build_instrumented

pool="$ARTIFACTS/cmin/$target-pool"
rm -rf "$pool" "$ARTIFACTS/cmin/$target-out"
mkdir -p "$pool"
for dir in "$FUZZ_DIR/corpus/$target" "$ARTIFACTS/campaign/$target/default/queue"; do
  [ -d "$dir" ] && find "$dir" -maxdepth 1 -type f -size -"$((max_bytes + 1))"c -exec cp {} "$pool/" \;
done
nice -n 19 afl-cmin -i "$pool" -o "$ARTIFACTS/cmin/$target-out" -t "$AFL_TIMEOUT_MS" -m none \
  -- "$(command -v dotnet)" "$INSTRUMENTED/LLRP.Fuzz.dll" "$target" > "$ARTIFACTS/cmin-$target.log" 2>&1 || {
  tail -20 "$ARTIFACTS/cmin-$target.log" >&2
  exit 1
}
rm -rf "$FUZZ_DIR/corpus/$target"
mkdir -p "$FUZZ_DIR/corpus/$target"
# Content-named files: the same input keeps the same name from one minimisation to the next.
for file in "$ARTIFACTS/cmin/$target-out"/*; do
  cp "$file" "$FUZZ_DIR/corpus/$target/$(sha1sum "$file" | cut -c1-16)"
done
echo "$target: $(ls "$FUZZ_DIR/corpus/$target" | wc -l) inputs, $(cat "$FUZZ_DIR/corpus/$target"/* | wc -c) bytes"
