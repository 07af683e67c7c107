#!/usr/bin/env bash
# Publishes the .NET apps of the benchmark scenarios to artifacts/publish/<name>/ (framework-dependent,
# Release, with an apphost), one project at a time, never the whole solution.
#
# Used by benchmarks.yml (crank "beforeJob" commands: the controller runs them on its own machine,
# then uploads the folder with localFolder) and by run-local.sh. Publishing on the controller side
# means the crank agent never builds .NET code, so it never resolves or downloads SDKs and runtimes
# (docs/crank-offline.md).
#
# usage: crank/publish.sh NAME...          publish (NAME: downstream llrp httpclientproxy yarp)
#        crank/publish.sh --exe NAME       print the path of NAME's published executable
#        crank/publish.sh --project NAME   print NAME's project path (exit 1 if it does not exist)
# Environment: PUBLISH_DIR (default <repo>/artifacts/publish), PUBLISH_ARGS (extra dotnet publish args)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_root="${PUBLISH_DIR:-$root/artifacts/publish}"

project_of() {
  local dir
  case "$1" in
    downstream) dir="src/Downstream" ;;
    llrp) dir="src/LLRP" ;;
    httpclientproxy) dir="src/Baselines/HttpClientProxy" ;;
    yarp) dir="src/Baselines/Yarp" ;;
    *) echo "publish: unknown app '$1' (downstream llrp httpclientproxy yarp)" >&2; return 2 ;;
  esac
  local projects=("$root/$dir"/*.csproj)
  if [ ! -e "${projects[0]}" ]; then echo "publish: no project in $dir" >&2; return 1; fi
  if [ "${#projects[@]}" -ne 1 ]; then echo "publish: more than one project in $dir" >&2; return 1; fi
  echo "${projects[0]}"
}

exe_of() {
  local project
  project="$(project_of "$1")"
  # The apphost is named after the assembly, i.e. the project file unless <AssemblyName> says otherwise.
  local name
  name="$(sed -n 's:.*<AssemblyName>\(.*\)</AssemblyName>.*:\1:p' "$project" | head -n 1)"
  [ -n "$name" ] || name="$(basename "$project" .csproj)"
  echo "$out_root/$1/$name"
}

case "${1:-}" in
  "") sed -n '2,14p' "$0"; exit 2 ;;
  --exe) exe_of "${2:?}"; exit 0 ;;
  --project) project_of "${2:?}"; exit 0 ;;
esac

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
for app in "$@"; do
  project="$(project_of "$app")"
  echo "publish: $app <- ${project#"$root"/} -> ${out_root#"$root"/}/$app"
  # shellcheck disable=SC2086  # PUBLISH_ARGS is a list of arguments on purpose
  dotnet publish "$project" -c Release -o "$out_root/$app" -p:UseAppHost=true -nologo -v quiet ${PUBLISH_ARGS:-}
  exe="$(exe_of "$app")"
  [ -x "$exe" ] || { echo "publish: $exe was not produced" >&2; exit 1; }
done
