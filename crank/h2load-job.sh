#!/usr/bin/env bash
# crank's h2load job (benchmarks.yml): crank/Jobs/H2LoadJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" h2load "$@"
