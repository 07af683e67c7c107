#!/usr/bin/env bash
# Writes the option table of docs/options.md (between its "options:start" and "options:end" lines) from the proxy's own
# `--help`, so that the table and the program cannot disagree: the column positions of --help's header line
# ("option", "default", "meaning") split every row.
#
# usage: docs/options.sh [--print]   (--print: write the table to standard output, leave docs/options.md)
# Builds src/LLRP (Release) when its build is missing. Exit status: 0 written, 1 --help printed no table, 2 bad usage.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in --print | "") ;; *) echo "options: usage: docs/options.sh [--print]" >&2; exit 2 ;; esac
dll="$ROOT/src/LLRP/bin/Release/net10.0/LLRP.dll"
[ -f "$dll" ] || dotnet build "$ROOT/src/LLRP/LLRP.csproj" -c Release -nologo -v quiet > /dev/null
table="$(dotnet "$dll" --help | awk '
  function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); gsub(/\|/, "\\|", s); return s }
  /^ +option +default +meaning$/ { o = index($0, "option"); d = index($0, "default"); m = index($0, "meaning")
    print "| option | default | meaning |"; print "|---|---|---|"; next }
  m && /^ +--/ { opt = trim(substr($0, o, d - o)); def = trim(substr($0, d, m - d)); mean = trim(substr($0, m))
    printf "| `%s` | %s | %s |\n", opt, def == "" ? "" : "`" def "`", mean }')"
[ -n "$table" ] || { echo "options: LLRP --help printed no option table" >&2; exit 1; }
if [ "${1:-}" = --print ]; then printf '%s\n' "$table"; exit 0; fi
doc="$ROOT/docs/options.md"
tmp="$(mktemp)"
printf '%s\n' "$table" > "$tmp.rows"
awk -v rows="$tmp.rows" '
  /^<!-- options:start -->$/ { print; while ((getline line < rows) > 0) print line; skip = 1; next }
  /^<!-- options:end -->$/ { skip = 0 }
  !skip { print }' "$doc" > "$tmp" && mv "$tmp" "$doc"
rm -f "$tmp.rows"
echo "options: $(printf '%s\n' "$table" | tail -n +3 | wc -l) option(s) -> docs/options.md"
