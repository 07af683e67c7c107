#!/usr/bin/env bash
# crank's ramp job (benchmarks.yml): crank/Jobs/RampJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" ramp "$@"
