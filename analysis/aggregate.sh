#!/usr/bin/env bash
# Folds the per-run result files of a results directory into one file per point and scenario, the form a
# sitting is committed in (per-run files, logs and /proc samples stay out of git: .gitignore).
#
# usage: analysis/aggregate.sh DIR
#   For every folder under DIR holding <scenario>.r<N>.json files (run-local.sh's output), writes
#   <point>/<scenario>.runs.json: a JSON array of those runs, in crank's --json shape, without the raw
#   per-sample "measurements" (every aggregated figure stays in each job's "results"). <point> is the
#   folder itself, or its parent when the folder is a round folder r<N> (analysis/sweep.sh's layout).
#   analysis/Report reads *.runs.json when a directory holds no per-run files.
# Exit status: 0 done, 1 nothing to fold, 2 bad usage.
set -euo pipefail
dir="${1:-}"
[ -n "$dir" ] && [ "$#" -eq 1 ] || { echo "aggregate: usage: analysis/aggregate.sh DIR" >&2; exit 2; }
[ -d "$dir" ] || { echo "aggregate: $dir is not a directory" >&2; exit 2; }
command -v jq > /dev/null || { echo "aggregate: jq is required (apt-get install -y jq)" >&2; exit 1; }

declare -A groups=()
while IFS= read -r -d '' f; do
  base="$(basename "$f")"
  scenario="${base%.r*.json}"
  folder="$(dirname "$f")"
  point="$folder"
  [[ "$(basename "$folder")" =~ ^r[0-9]+$ ]] && point="$(dirname "$folder")"
  groups["$point/$scenario"]+="$f"$'\n'
done < <(find "$dir" -type f -regex '.*/[^/]*\.r[0-9]+\.json' -print0 | sort -z)

[ "${#groups[@]}" -gt 0 ] || { echo "aggregate: no <scenario>.r<N>.json under $dir" >&2; exit 1; }
for key in "${!groups[@]}"; do
  mapfile -t files < <(printf '%s' "${groups[$key]}" | sort -V)
  for f in "${files[@]}"; do
    # A sweep runs one round per folder r<N>: that folder name is the run's round.
    round="$(basename "$(dirname "$f")")"
    if [[ "$round" =~ ^r([0-9]+)$ ]]; then round="${BASH_REMATCH[1]}"; else round=""; fi
    jq --arg round "$round" '(if $round != "" then .jobResults.properties.round = $round else . end)
      | if (.jobResults.jobs? | type) == "object" then .jobResults.jobs |= map_values(del(.measurements)) else . end' "$f"
  done | jq -s . > "$key.runs.json"
  echo "aggregate: ${key#"$dir"/}.runs.json <- ${#files[@]} run(s)"
done
