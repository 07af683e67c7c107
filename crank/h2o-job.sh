#!/usr/bin/env bash
# crank's h2o job (benchmarks.yml): crank/Jobs/H2oJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" h2o "$@"
