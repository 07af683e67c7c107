#!/usr/bin/env bash
# crank's fixedrate job (benchmarks.yml): crank/Jobs/FixedRateJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" fixedrate "$@"
