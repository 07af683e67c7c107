#!/usr/bin/env bash
# Writes the option table of docs/options.md (between its "options:start" and "options:end" lines) from the options
# themselves (src/LLRP/CommandLine.cs, rendered by `LLRP --help-markdown`): each option's name, default, help line and
# the reason for its default. CommandLineTests fails while the committed table differs from that rendering.
#
# usage: docs/options.sh [--print]   (--print: write the table to standard output, leave docs/options.md)
# Builds src/LLRP (Release) first. Exit status: 0 written, 1 no table, 2 bad usage.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in --print | "") ;; *) echo "options: usage: docs/options.sh [--print]" >&2; exit 2 ;; esac
dll="$ROOT/src/LLRP/bin/Release/net10.0/LLRP.dll"
dotnet build "$ROOT/src/LLRP/LLRP.csproj" -c Release -nologo -v quiet > /dev/null
table="$(dotnet "$dll" --help-markdown)"
[ -n "$table" ] || { echo "options: LLRP --help-markdown printed no table" >&2; exit 1; }
if [ "${1:-}" = --print ]; then printf '%s\n' "$table"; exit 0; fi
doc="$ROOT/docs/options.md"
tmp="$(mktemp)"
printf '%s\n' "$table" > "$tmp.rows"
awk -v rows="$tmp.rows" '
  /^<!-- options:start -->$/ { print; while ((getline line < rows) > 0) print line; skip = 1; next }
  /^<!-- options:end -->$/ { skip = 0 }
  !skip { print }' "$doc" > "$tmp" && mv "$tmp" "$doc"
rm -f "$tmp.rows"
echo "options: $(printf '%s\n' "$table" | tail -n +3 | wc -l) row(s) -> docs/options.md"
