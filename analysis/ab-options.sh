#!/usr/bin/env bash
# Interleaved A/B of llrp-llhttp configurations that differ only in the proxy's environment, each run under the load
# lock: analysis/Runner's AbOptions.cs. `analysis/ab-options.sh --help` says how.
#   analysis/ab-options.sh [--summary] OUT_DIR NAME='K=V K=V' [NAME='...']...
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/crank/runner.sh" ab-options "$@"
