#!/usr/bin/env bash
# Benchmark sweep: connection counts and response sizes (and PGO profiles) in interleaved rounds through
# crank/run-local.sh, within a time budget, then analysis/Report. The sweep is analysis/Runner's (Sweep.cs);
# `analysis/sweep.sh --help` lists every option.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/crank/runner.sh" sweep "$@"
