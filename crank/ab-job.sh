#!/usr/bin/env bash
# crank's ab job (benchmarks.yml): crank/Jobs/AbJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" ab "$@"
