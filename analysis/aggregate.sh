#!/usr/bin/env bash
# Folds a sitting's result files into one file, DIR/sitting.json, the form a sitting is committed in (git keeps the
# per-run files of sittings committed before this form; logs and /proc samples stay out of git: .gitignore).
#
# usage: analysis/aggregate.sh [--prune] DIR
#   Reads, under DIR: every per-run result (<scenario>.r<N>.json, run-local.sh's output, not under logs/), every
#   <scenario>.runs.json (the earlier folded form) and every run.json / sweep.json (machine, commit, commands).
#   Writes DIR/sitting.json:
#     { "runs":  [ crank --json runs, each with "file" (its path under DIR) and, in a round folder r<N>,
#                  jobResults.properties.round; without the raw per-sample "measurements" and the per-job
#                  "metadata" (descriptions; every aggregated figure stays in each job's "results") ],
#       "metas": [ { "file": path under DIR, "content": the run.json / sweep.json object } ] }
#   An existing DIR/sitting.json is folded in too (its runs and metas kept, so folding twice changes nothing).
#   analysis/Report reads sitting.json as it reads the files it came from.
#   --prune then deletes what was folded (per-run files, *.runs.json, run.json, sweep.json, and machine.txt
#   of round folders, the same machine as DIR/machine.txt, which is kept or copied up from the first round) and
#   the PNG charts (drawn again by `dotnet run --project analysis/Report -c Release -- DIR --out OUT`, with --stepped or
#   --fixed-rate before DIR for those studies).
# Exit status: 0 done, 1 nothing to fold, 2 bad usage.
set -euo pipefail
prune=0
[ "${1:-}" = "--prune" ] && { prune=1; shift; }
dir="${1:-}"
[ -n "$dir" ] && [ "$#" -eq 1 ] || { echo "aggregate: usage: analysis/aggregate.sh [--prune] DIR" >&2; exit 2; }
[ -d "$dir" ] || { echo "aggregate: $dir is not a directory" >&2; exit 2; }
command -v jq > /dev/null || { echo "aggregate: jq is required (apt-get install -y jq)" >&2; exit 1; }
dir="${dir%/}"
out="$dir/sitting.json"

runs=() ; folded=() ; metas=()
while IFS= read -r -d '' f; do
  rel="${f#"$dir"/}"
  case "$rel" in logs/* | */logs/*) continue ;; esac
  case "$(basename "$f")" in
    sitting.json) [ "$rel" = sitting.json ] || continue ;;
    run.json | sweep.json) metas+=("$f") ;;
    *.runs.json) folded+=("$f") ;;
    *.r[0-9]*.json) [[ "$(basename "$f")" =~ \.r[0-9]+\.json$ ]] && runs+=("$f") ;;
  esac
done < <(find "$dir" -type f -name '*.json' -print0 | sort -zV)

[ -f "$out" ] || [ "${#runs[@]}" -gt 0 ] || [ "${#folded[@]}" -gt 0 ] ||
  { echo "aggregate: no <scenario>.r<N>.json, *.runs.json or sitting.json under $dir" >&2; exit 1; }

# Each source becomes a stream of {run} or {meta} objects; one jq -s puts them together.
strip='if (.jobResults.jobs? | type) == "object" then .jobResults.jobs |= map_values(del(.measurements, .metadata)) else . end'
tmp="$(mktemp "$dir/.results.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
{
  if [ -f "$out" ]; then jq -c '(.runs[] | {run: .}), (.metas[] | {meta: .})' "$out"; fi
  for f in "${folded[@]}"; do
    jq -c --arg file "${f#"$dir"/}" 'to_entries[] | .key as $i | {run: (.value | '"$strip"' | .file = "\($file)#\($i + 1)")}' "$f"
  done
  for f in "${runs[@]}"; do
    # A sweep runs one round per folder r<N>: that folder name is the run's round.
    round="$(basename "$(dirname "$f")")"
    if [[ "$round" =~ ^r([0-9]+)$ ]]; then round="${BASH_REMATCH[1]}"; else round=""; fi
    jq -c --arg file "${f#"$dir"/}" --arg round "$round" \
      '{run: ((if $round != "" then .jobResults.properties.round = $round else . end) | '"$strip"' | .file = $file)}' "$f"
  done
  for f in "${metas[@]}"; do
    jq -c --arg file "${f#"$dir"/}" '{meta: {file: $file, content: .}}' "$f"
  done
} | jq -s '{runs: [.[] | .run // empty] | unique_by(.file) | sort_by(.file),
            metas: [.[] | .meta // empty] | unique_by(.file) | sort_by(.file)}' > "$tmp"
# One line per run and per meta: small, and a diff between two foldings reads run by run.
jq -r '"{\"runs\": [", (.runs | map(tojson) | join(",\n")), "],", "\"metas\": [", (.metas | map(tojson) | join(",\n")), "]}"' "$tmp" > "$out"
jq -e '.runs | length > 0' "$out" > /dev/null || { echo "aggregate: $out holds no run" >&2; exit 1; }
echo "aggregate: $out <- $(jq '.runs | length' "$out") run(s), $(jq '.metas | length' "$out") run.json/sweep.json"

if [ "$prune" = 1 ]; then
  if [ ! -f "$dir/machine.txt" ]; then
    first="$(find "$dir" -mindepth 2 -name machine.txt -not -path '*/logs/*' | sort -V | head -n 1)"
    [ -n "$first" ] && cp "$first" "$dir/machine.txt"
  fi
  rm -f -- "${runs[@]}" "${folded[@]}" "${metas[@]}"
  find "$dir" -mindepth 2 -name machine.txt -delete
  find "$dir" -name '*.png' -delete
  find "$dir" -depth -mindepth 1 -type d -empty -delete
fi
