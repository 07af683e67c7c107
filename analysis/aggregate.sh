#!/usr/bin/env bash
# Folds a sitting's per-run results, *.runs.json and run.json / sweep.json into DIR/sitting.json, the form a sitting is
# committed in; --prune then deletes what it folded and the PNG charts. The work is analysis/Report's --aggregate
# (analysis/Report/Aggregate.cs), built first when one of its sources is newer than the build.
# usage: analysis/aggregate.sh [--prune] DIR   (exit status: 0 done, 1 nothing to fold, 2 bad usage)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../crank/lib-build.sh disable=SC1091
. "$ROOT/crank/lib-build.sh"
build_when_stale "$ROOT/analysis/Report" Report
exec dotnet "$ROOT/analysis/Report/bin/Release/net10.0/Report.dll" --aggregate "$@"
