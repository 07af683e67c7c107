#!/usr/bin/env bash
# crank's wrk job (benchmarks.yml): crank/Jobs/WrkJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" wrk "$@"
