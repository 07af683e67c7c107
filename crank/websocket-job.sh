#!/usr/bin/env bash
# crank's websocket job (benchmarks.yml): crank/Jobs/WebSocketJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" websocket "$@"
