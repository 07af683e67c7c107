#!/usr/bin/env bash
# crank's haproxy job (benchmarks.yml): crank/Jobs/HaproxyJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" haproxy "$@"
