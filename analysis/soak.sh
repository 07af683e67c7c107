#!/usr/bin/env bash
# The soak: llrp-llhttp under mixed traffic for 10 minutes at about 75 % of the highest rate the same traffic reaches,
# with an origin restart every minute; every body checked by SHA-256; the proxy's RSS, descriptors, threads and CPU µs
# per response sampled every second and charted.
#
# usage: analysis/soak.sh [--out DIR] [--llrp-dir DIR] [--downstream-dir DIR] [SOAK_OPTIONS...] [-- PROXY_ARGS...]
#   --out DIR            where the results go (default analysis/results/<UTC date-time>-soak)
#   --llrp-dir DIR       a published LLRP (crank/publish.sh llrp) to soak (default: publish this checkout)
#   --downstream-dir D   a published Downstream (default: publish this checkout)
#   SOAK_OPTIONS         --duration --calibrate --share --restart-every --workers --port, passed to analysis/Soak (its --help)
#   PROXY_ARGS           extra LLRP options (the proxy always runs --client llhttp against the one origin)
#
# The traffic (analysis/Soak/Traffic.cs): 64 workers, each with one client connection at a time, of five kinds:
# keep-alive for 1-50 requests (55 %), one request with Connection: close (15 %), keep-alive then the client's FIN
# after its last response (10 %), one request then the client's FIN at once (10 %), slow (10 %: head in three
# pieces, bodies sent in 8 KiB and read in 4 KiB pieces with pauses). Requests: GET /?s=N and GET /chunked?s=N
# (downloads), POST /echo with a Content-Length or chunked body (uploads, echoed back), N from 10 B to 1 MiB.
# Outcomes: a 200 whose body's length and SHA-256 are right; near an origin restart (while it is down and 5 s
# after) a clean 502/503/504, a response cut (the origin died mid-body: the proxy aborts the client connection, so
# the framing shows it), or a close before any answer; a client that sent its FIN with its request may get its
# answer, or a close or a cut answer (the proxy takes the FIN as the client leaving). Anything else fails the soak: a corrupt
# response (wrong status, framing, length or hash), a lost one (no answer, cut or hung away from a restart), an
# error answer away from a restart, or a connection the proxy did not close when it should have.
#
# Bounded: the tool stops itself after calibration + duration + the last reads (30 s); this script kills it at
# duration + 5 minutes. Run it under the load lock: flock /tmp/llrp-load.lock analysis/soak.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="" llrp_dir="" ds_dir="" duration=600
soak_args=() proxy_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?}"; shift 2 ;;
    --llrp-dir) llrp_dir="${2:?}"; shift 2 ;;
    --downstream-dir) ds_dir="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; soak_args+=("$1" "$2"); shift 2 ;;
    --calibrate|--share|--restart-every|--workers|--port) soak_args+=("$1" "${2:?}"); shift 2 ;;
    --) shift; proxy_args=("$@"); break ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "soak: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || out="$ROOT/analysis/results/$(date -u +%Y%m%d-%H%M)-soak"
mkdir -p "$out"

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
work="$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ -z "$llrp_dir" ]; then
  PUBLISH_DIR="$work/publish" "$ROOT/crank/publish.sh" llrp > "$work/publish.log" 2>&1 || { cat "$work/publish.log" >&2; exit 1; }
  llrp_dir="$work/publish/llrp"
fi
if [ -z "$ds_dir" ]; then
  PUBLISH_DIR="$work/publish" "$ROOT/crank/publish.sh" downstream > "$work/publish-ds.log" 2>&1 || { cat "$work/publish-ds.log" >&2; exit 1; }
  ds_dir="$work/publish/downstream"
fi
dotnet build "$ROOT/analysis/Soak/Soak.csproj" -c Release -nologo -v quiet -o "$work/soak" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; exit 1; }

# Descriptors: the proxy holds one per client and per downstream connection; 64 workers need a few hundred.
ulimit -n "$(ulimit -Hn)"
{
  echo "started $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet -- src || echo ' (src/ modified)')"
  echo "machine $(nproc) CPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/^Mem:/ {print $2}') GiB, kernel $(uname -r)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command analysis/soak.sh ${soak_args[*]:-} ${proxy_args[*]:+-- ${proxy_args[*]}}"
} > "$out/run.txt"
status=0
timeout -s TERM $((duration + 300)) "$work/soak/Soak" --proxy "$llrp_dir/LLRP" --origin "$ds_dir/Downstream" --out "$out" \
  "${soak_args[@]}" -- "${proxy_args[@]}" || status=$?
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/run.txt"
exit "$status"
