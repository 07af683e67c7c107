#!/usr/bin/env bash
# crank's nginx job (benchmarks.yml): crank/Jobs/NginxJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" nginx "$@"
