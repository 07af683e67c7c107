#!/usr/bin/env bash
# Runs analysis/Runner, the benchmark runner behind crank/run-local.sh (crank/README.md, "The runner"), building it
# first when one of its sources is newer than the build: usage: crank/runner.sh run-local ... | order ROUND ITEM...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib-build.sh disable=SC1091
. "$ROOT/crank/lib-build.sh"
build_when_stale "$ROOT/analysis/Runner" Runner
LLRP_ROOT="$ROOT" exec dotnet "$ROOT/analysis/Runner/bin/Release/net10.0/Runner.dll" "$@"
