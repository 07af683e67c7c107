#!/usr/bin/env bash
# LLRP's benchmark driver on one machine: crank when it is installed, otherwise the same job scripts run directly
# (crank/README.md). The runner is analysis/Runner; `crank/run-local.sh --help` lists every option.
#   crank/run-local.sh [options] [SCENARIO...]
#   crank/run-local.sh scaling|sweep|ab|ramp|comparisons [options]   the published comparisons (analysis/Runner, Comparisons.cs)
#   crank/run-local.sh fixed-rate (--max-rps N | --max-from DIR) [options]   open-loop latency (analysis/Runner, FixedRate.cs)
#   crank/run-local.sh stepped [options]   TLS and h2 to the proxy at rising offered load until each proxy fails (analysis/Runner, Stepped.cs)
set -euo pipefail
CRANK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "${1:-}" in
  scaling|sweep|ab|ramp|comparisons) exec "$CRANK_DIR/runner.sh" comparisons "$@" ;;
  fixed-rate) shift; exec "$CRANK_DIR/runner.sh" fixed-rate "$@" ;;
  stepped) shift; exec "$CRANK_DIR/runner.sh" stepped "$@" ;;
esac
exec "$CRANK_DIR/runner.sh" run-local "$@"
