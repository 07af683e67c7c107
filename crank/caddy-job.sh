#!/usr/bin/env bash
# crank's caddy job (benchmarks.yml): crank/Jobs/CaddyJob.cs; --help lists its options.
exec "$(dirname "${BASH_SOURCE[0]}")/jobs.sh" caddy "$@"
