#!/usr/bin/env bash
# Writes the index of analysis/results/ into docs/results.md, between its "index:start" and "index:end" lines: one row
# per folder, oldest first. A crank sitting (a sitting.json) gets its date, commit, command, topology and, per point,
# llrp-llhttp's ratios from `Report --headline`; any other study gets its README's title.
#
# usage: analysis/results-index.sh [--print]   (--print: write the rows to standard output, leave docs/results.md)
# Exit status: 0 written, 1 a folder without a README or a report that failed, 2 bad usage.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
print=0
case "${1:-}" in --print) print=1 ;; "") ;; *) echo "results-index: usage: analysis/results-index.sh [--print]" >&2; exit 2 ;; esac
doc="$ROOT/docs/results.md"
report="$ROOT/analysis/Report/bin/Release/net10.0/Report.dll"
[ -f "$report" ] || dotnet build "$ROOT/analysis/Report/Report.csproj" -c Release -nologo -v quiet > /dev/null

rows="$(mktemp)"
trap 'rm -f "$rows"' EXIT
echo '| sitting (UTC) | kind | commit | command | topology | per point, llrp-llhttp ÷ best of nginx/HAProxy (RPS) / ÷ full YARP (RPS) / full YARP ÷ llrp-llhttp (CPU), or the study |' > "$rows"
echo '|---|---|---|---|---|---|' >> "$rows"
status=0
for dir in "$ROOT"/analysis/results/*/; do
  dir="${dir%/}" name="$(basename "$dir")"
  stamp="${name:0:4}-${name:4:2}-${name:6:2} ${name:9:2}:${name:11:2}" kind="${name:14}"
  link="[$stamp](../analysis/results/$name/README.md)"
  if [ ! -f "$dir/README.md" ]; then
    echo "results-index: $name has no README.md" >&2; status=1; link="$stamp"
  fi
  # The stepped and fixed-rate studies fold their runs too, but their figures are per offered rate, not a closed-loop
  # point: they get their title, like any other study.
  if [ -f "$dir/sitting.json" ] && [ ! -f "$dir/stepped.json" ] && [ ! -f "$dir/fixedrate.json" ]; then
    if ! out="$(dotnet "$report" --headline "$dir" 2>&1)"; then
      # No llrp-llhttp at a default point (an A/B of other variants): the folder's title instead of ratios.
      out=""
    fi
    points="$(printf '%s\n' "$out" | awk -F' \\| ' '/^\| \[/ { gsub(/\*/, ""); printf "%s%s: %s / %s / %s", sep, $2, $6, $7, substr($8, 1, length($8) - 2); sep = " · " }')"
    note="$(printf '%s\n' "$out" | grep -m1 '^- ' || true)"
    commit="$(printf '%s' "$note" | sed -n 's/.*commit `\([0-9a-f?]*\)`.*/`\1`/p')"
    dirty=""; [[ "$note" != *"(uncommitted changes)"* ]] || dirty=" (dirty)"
    topology="$(printf '%s' "$note" | sed -n 's/.*topology: \(.*\); `.*/\1/p' | sed 's/pinned application=cpu1 load,downstream=cpu0/proxy alone on CPU 1/; s/pinned load=cpu0 application,downstream=cpu1/load alone on CPU 0/')"
    command="$(printf '%s' "$note" | sed -n 's/.*; `\(.*\)`$/\1/p' | sed 's/ --out [^ ]*//; s/ --json-dir [^ ]*//')"
    if [ -z "$points" ]; then
      points="$(sed -n '1s/^# *//p' "$dir/README.md" 2>/dev/null || true)"
    fi
    printf '| %s | %s | %s%s | `%s` | %s | %s |\n' "$link" "$kind" "${commit:-?}" "$dirty" "${command:-?}" "${topology:-?}" "${points:-?}" >> "$rows"
  else
    title="$(sed -n '1s/^# *//p' "$dir/README.md" 2>/dev/null | sed 's/|/\\|/g' || true)"
    commit="$(grep -m1 -o -E '\*\*Commit:?\*\*:? *`?[0-9a-f]{7,40}' "$dir/README.md" 2>/dev/null | grep -o -E '[0-9a-f]{7,40}$' | cut -c1-7 || true)"
    [ -n "$commit" ] || commit="$(sed -n 's/^commit: *\([0-9a-f]\{7\}\).*/\1/p' "$dir/machine.txt" 2>/dev/null | head -n 1 || true)"
    printf '| %s | %s | %s | see README | see README | %s |\n' "$link" "$kind" "${commit:+\`$commit\`}" "${title:-?}" >> "$rows"
  fi
done

if [ "$print" = 1 ]; then cat "$rows"; exit "$status"; fi
grep -q '^<!-- index:start -->$' "$doc" && grep -q '^<!-- index:end -->$' "$doc" \
  || { echo "results-index: $doc needs <!-- index:start --> and <!-- index:end --> lines" >&2; exit 1; }
tmp="$(mktemp)"
awk -v rows="$rows" '
  /^<!-- index:start -->$/ { print; while ((getline line < rows) > 0) print line; skip = 1; next }
  /^<!-- index:end -->$/ { skip = 0 }
  !skip { print }' "$doc" > "$tmp" && mv "$tmp" "$doc"
echo "results-index: $(( $(wc -l < "$rows") - 2 )) folder(s) -> ${doc#"$ROOT"/}"
exit "$status"
