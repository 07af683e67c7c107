#!/usr/bin/env bash
# Runs analysis/Runner, the benchmark runner behind crank/run-local.sh (crank/README.md, "The runner"), building it
# first when one of its sources is newer than the build: usage: crank/runner.sh run-local ... | order ROUND ITEM...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dll="$ROOT/analysis/Runner/bin/Release/net10.0/Runner.dll"
stale="$([ -f "$dll" ] || echo missing)"
[ -n "$stale" ] || stale="$(find "$ROOT/analysis/Runner" "$ROOT"/Directory.*.props -newer "$dll" \( -name '*.cs' -o -name '*.csproj' -o -name '*.props' \) \
  -not -path '*/bin/*' -not -path '*/obj/*' -print -quit)"
if [ -n "$stale" ]; then
  mkdir -p "$ROOT/artifacts"
  echo "runner: building analysis/Runner (log: artifacts/runner-build.log)" >&2
  # One build at a time: two runners started together must not write the same obj/ folder.
  if ! (flock 9 && dotnet build "$ROOT/analysis/Runner/Runner.csproj" -c Release -nologo -v quiet > "$ROOT/artifacts/runner-build.log" 2>&1) \
      9> "$ROOT/artifacts/runner-build.lock"; then
    tail -n 20 "$ROOT/artifacts/runner-build.log" >&2
    echo "runner: analysis/Runner does not build (artifacts/runner-build.log)" >&2
    exit 1
  fi
fi
LLRP_ROOT="$ROOT" exec dotnet "$dll" "$@"
