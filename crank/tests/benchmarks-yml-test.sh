#!/usr/bin/env bash
# Checks benchmarks.yml's references: every job a scenario names ("job: NAME") is defined under jobs:, every command a
# job runs first (beforeJob) under commands:, and every scenario the profiles or the README's crank commands name
# exists. crank reports a missing job only when a run reaches it; this finds it in a second, without crank.
# Exit status: 0 every reference resolves, 1 otherwise.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
yml="$root/benchmarks.yml"

# The names defined at two spaces' indent under a top-level key.
section() {
  awk -v key="$1" '
    /^[A-Za-z]/ { in_section = ($0 ~ "^" key ":") ; next }
    in_section && /^  [A-Za-z0-9_.-]+:/ { name = $1; sub(":$", "", name); print name }' "$yml" | sort -u
}
jobs=$(section jobs)
commands=$(section commands)
scenarios=$(section scenarios)
failed=0

# "job: NAME" inside scenarios: (the flow form { job: NAME, ... } and the block form).
refs=$(awk '/^[A-Za-z]/ { s = ($0 ~ /^scenarios:/); next } s' "$yml" | grep -o 'job: *[A-Za-z0-9_.-]*' | sed 's/job: *//' | sort -u)
for name in $refs; do
  grep -qx -- "$name" <<< "$jobs" || { echo "benchmarks.yml: a scenario names job '$name', which jobs: does not define"; failed=1; }
done
# beforeJob: [ a, b ] inside jobs:.
before=$(awk '/^[A-Za-z]/ { s = ($0 ~ /^jobs:/); next } s' "$yml" | grep -o 'beforeJob: *\[[^]]*\]' | sed 's/.*\[//; s/\]//; s/,/ /g')
for name in $before; do
  grep -qx -- "$name" <<< "$commands" || { echo "benchmarks.yml: beforeJob names '$name', which commands: does not define"; failed=1; }
done
# Scenarios named on a crank command line in the docs.
for doc in "$root/README.md" "$root/crank/README.md"; do
  # Lower-case names only: an upper-case word is a placeholder ("--scenario S"), which matches nothing here.
  for name in $(grep -oE -- '--scenario [a-z0-9_.-]+( |$|`)' "$doc" | awk '{ print $2 }' | tr -d '`' | sort -u); do
    grep -qx -- "$name" <<< "$scenarios" || { echo "${doc#"$root"/}: names scenario '$name', which benchmarks.yml does not define"; failed=1; }
  done
done

# Every scenario run-local runs (analysis/Runner/Options.cs) under every load: with crank, --load fixedrate and h2load
# run fixedrate-S and h2load-S (h2load has no direct scenario: the origin speaks HTTP/1.1).
runner_scenarios=$(grep -E 'static readonly string\[\] (AllScenarios|NamedScenarios)' -A1 "$root/analysis/Runner/Options.cs" | grep -oE '"[a-z0-9-]+"' | tr -d '"' | sort -u)
[ "$(wc -w <<< "$runner_scenarios")" -gt 5 ] || { echo "analysis/Runner/Options.cs: could not read the runner's scenarios"; failed=1; }
for name in $runner_scenarios; do
  for scenario in "$name" "fixedrate-$name" $([ "$name" = direct ] || echo "h2load-$name"); do
    grep -qx -- "$scenario" <<< "$scenarios" || { echo "benchmarks.yml: run-local runs scenario '$scenario' with crank, which benchmarks.yml does not define"; failed=1; }
  done
done

[ "$(wc -l <<< "$jobs")" -gt 3 ] && [ "$(wc -l <<< "$scenarios")" -gt 3 ] || { echo "benchmarks.yml: could not read its jobs and scenarios"; failed=1; }
[ "$failed" = 0 ] && echo "benchmarks.yml: $(wc -w <<< "$refs") job references, $(wc -w <<< "$before") beforeJob commands, docs' and run-local's scenarios: all defined"
exit "$failed"
