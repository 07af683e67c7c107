#!/usr/bin/env bash
# Runs crank/Jobs, benchmarks.yml's load and server jobs (crank/README.md, "Jobs"), building it first when one of its
# sources is newer than the build (on a crank agent, the first job builds it): usage: crank/jobs.sh JOB [options].
# The crank/<job>-job.sh scripts are the names crank and the runner call.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib-build.sh disable=SC1091
. "$here/lib-build.sh"
build_when_stale "$here/Jobs" Jobs
exec dotnet "$here/Jobs/bin/Release/net10.0/Jobs.dll" "$@"
