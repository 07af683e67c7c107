#!/usr/bin/env bash
# LLRP's benchmark driver on one machine: crank when it is installed, otherwise the same job scripts
# run directly (see crank/README.md).
#
# usage: crank/run-local.sh [options] [SCENARIO...]
#        crank/run-local.sh scaling|sweep|ab|ramp|comparisons [options]   the published comparisons (crank/comparisons.sh)
#        crank/run-local.sh fixed-rate (--max-rps N | --max-from DIR) [options]   open-loop latency at 25/50/75/90 % of a
#                   measured maximum (crank/fixedrate.sh)
#        crank/run-local.sh stepped [options]   the seeds' comparison: TLS and h2 to the proxy, X-Forwarded-For on, the
#                   offered load stepped up until each proxy fails (crank/stepped.sh)
#   SCENARIO        direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext
#                   llrp-yarp httpclientproxy yarp (default: every one that can run here); also llrp-kestrel-h1
#                   (llhttp behind LLRP's Kestrel HTTP/1.1 front end: --front-end kestrel; not a default until LLRP has it)
#   --rounds N      interleaved rounds (default 3): round 1 runs A B C D, round 2 A D C B, round 3 C D A B, ...
#                   (crank/lib-rounds.sh: no scenario always runs first, last or right after the same one)
#   --round-offset K  run round R in round R+K's order (default 0; analysis/sweep.sh runs one round per call and
#                   passes its round number - 1)
#   --duration S    measured seconds per run (default 15)
#   --warmup S      warm-up seconds before each measured run (default 20: see docs/methodology.md); for the
#                   .NET scenarios the minimum of an adaptive warm-up (--warmup-max)
#   --warmup-max S  .NET scenarios: keep warming up after --warmup until the proxy's JIT is quiet (at most
#                   --warm-jit methods compiled in 3 s), at most S seconds in all; a run that reaches S is
#                   flagged (default 60; 0 or <= --warmup: fixed warm-up)
#   --warm-jit N    the JIT is quiet at N methods or fewer in 3 s (default 2)
#   --connections C load connections (default 64: 2-core box, see README)
#   --load-threads T  wrk threads (default 1; benchmarks.yml's loadThreads; "--threads" was this before the proxies
#                   had a thread count, and is refused so that an old command line cannot change meaning silently)
#   --proxy-threads N  every proxy's threads or processes (benchmarks.yml's threads; default 1): nginx
#                   worker_processes, HAProxy nbthread, LLRP --engineThreads, DOTNET_PROCESSOR_COUNT for full YARP
#                   and HttpClientProxy (crank/README.md, "Equal threads")
#   --path P        request path, e.g. '/?s=1024' (default /)
#   --response-size N  the origin's body in bytes: path '/?s=N' (benchmarks.yml's responseSize; not with --path)
#   --request-body-size N  0 = GET (default); N = POST with an N-byte body (benchmarks.yml's requestBodySize)
#   --request-body-framing F  content-length (default) or chunked (wrk only)
#   --headers H     request header preset: plaintext (default), browser, handshake (plaintext with "Connection: close":
#                   a new connection, and with https a full TLS handshake, for every request), none (crank/lib-headers.sh)
#   --server-scheme S      http (default) or https: the load speaks TLS to the proxy (benchmarks.yml's serverScheme)
#   --downstream-scheme S  http (default) or https: the proxy speaks TLS to the origin (downstreamScheme). Every
#                   proxy and origin of the run presents one self-signed ECDSA P-256 certificate made for it
#                   (crank/tls-cert.sh, in the run's tls/ folder) and trusts only it downstream
#   --load L        wrk (default: closed loop, crank/wrk-job.sh), fixedrate (open loop at --rate requests/s,
#                   crank/fixedrate-job.sh; fixed warm-up, no adaptive one; crank/fixedrate.sh runs it at 25/50/75/90 %
#                   of a measured maximum) or h2load (HTTP/2 from the load, crank/h2load-job.sh: closed loop, -c
#                   connections with --streams streams each; open loop with --rate; no direct scenario: the origin
#                   speaks HTTP/1.1)
#   --rate R        fixedrate: offered requests/s over all connections (benchmarks.yml's rate); h2load: open loop at R
#   --streams N     h2load: concurrent streams per connection (benchmarks.yml's streams; default 100, the .NET lab's,
#                   with --connections defaulting to the cores: crank/README.md, "HTTP/2")
#   --protocols P   what every proxy's listener speaks (benchmarks.yml's protocols): http1, h2 or http1,h2; on https
#                   ALPN chooses, on http h2 is prior-knowledge h2c. Default: nothing passed (HTTP/1.1), except with
#                   --load h2load: http1,h2 on https, h2 on http. The origin always gets HTTP/1.1 (crank/lib-protocols.sh)
#   --front-end F   LLRP's front end, passed to every LLRP scenario (benchmarks.yml's frontEnd; e.g. kestrel)
#   --json-dir DIR  where the JSON files go (default artifacts/crank/<date>-<time>)
#   Topology (default, without crank on one machine of 2+ CPUs: --pin-proxy --origin nginx, the README
#   headline's; with crank, --agents, --netns or 1 CPU: unpinned, Downstream as the origin):
#   --pin-proxy     taskset: the proxy alone on CPU 1, load generator and origin on CPU 0 (fallback only):
#                   the proxy has a core of its own, as on a machine of its own in crank's three-machine
#                   profile, and every proxy gets the same one core (nginx and HAProxy run one worker/thread)
#   --pin           taskset: load generator on CPU 0, proxy and origin on CPU 1 (fallback only)
#   --origin O      nginx (nginx as the origin, crank/nginx/origin.conf; fallback only): an origin that needs about
#                   two thirds of Downstream's CPU per request, so that with --pin-proxy the proxy, not the origin
#                   and wrk, is the bottleneck (docs/methodology.md, "The origin"); it answers GET / and /?s=N for
#                   N in 0 10 1024 65536 (another --path gets Downstream unless --origin nginx is given), or
#                   downstream (the Downstream app, Kestrel, benchmarks.yml's job)
#   --shared        the topology of the sittings before 2026-11-27 07:00: nothing pinned, Downstream as the
#                   origin (--pin, --pin-proxy or --origin given as well still apply)
#   --dry-run       print the plan (scenarios, each round's order, topology, expected time) and exit 0; nothing
#                   is installed, published or started
#   --own-sessions  start each job in a session (and scheduler autogroup) of its own, as run-local.sh did until
#                   2026-11-26 (fallback only; the default is one session, as crank's agent: docs/methodology.md)
#   --pgo | --nopgo run the proxy (application) with the "pgo" / "nopgo" environment (benchmarks.yml profiles)
#   --app-env K=V   extra environment variable for the proxy, e.g. shareClients=true (repeatable)
#   --proxy-port P / --downstream-port P   (defaults 8080 / 8081)
#   --steady-tolerance P   largest change of the proxy's CPU us/request between the two halves of the
#                   measured window for a run to count as steady, in percent (default 15)
#   --steady-jit-share P   largest share of a .NET proxy's CPU time in the measured window that its JIT may
#                   spend compiling for the run to count as steady, in percent (default 5)
#   --steady-retries N     run an unsteady run again, at most N more times (default 2); every attempt is
#                   logged and counted, the last one is kept
#   --fallback      do not use crank even if it is installed
#   --no-install    never call apt-get
#   --no-report     do not write report.md and the charts at the end
#   --variable NAME=VALUE  a benchmarks.yml variable (passed on to crank): serverAddress, serverListenAddress,
#                   downstreamAddress, downstreamListenAddress (default 127.0.0.1 / the target), maxErrors
#                   (default 0: a run with more bad responses + socket errors fails)
#   --agents load=URL,application=URL,downstream=URL  crank across three machines' agents with
#                   --profile multimachine; serverAddress and downstreamAddress have no default then
#   --netns load=NS,application=NS,downstream=NS  the fallback across network namespaces (crank/hosts.sh):
#                   each role's processes run in its namespace; the addresses have no default either
# Writes <json-dir>/<scenario>.r<round>.json (crank --json shape), run.json, machine.txt, report.md
# with PNG charts, and each run's logs under <json-dir>/logs/. Exit status: 0 if every run that was
# attempted succeeded, 1 otherwise, 2 on bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CRANK_DIR="$ROOT/crank"
# The published comparisons run several replicas and their own load jobs: crank/comparisons.sh drives them.
case "${1:-}" in scaling|sweep|ab|ramp|comparisons) exec "$CRANK_DIR/comparisons.sh" "$@" ;; esac
# Open-loop latency at shares of a measured maximum: crank/fixedrate.sh calls this script once per share.
if [ "${1:-}" = fixed-rate ]; then shift; exec "$CRANK_DIR/fixedrate.sh" "$@"; fi
ALL_SCENARIOS=(direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp)
# Scenarios run only when named: LLRP's Kestrel front end (issue 39) is not in every build yet.
NAMED_SCENARIOS=(llrp-kestrel-h1)
# The seeds' stepped comparison runs this script once per step: crank/stepped.sh drives it.
if [ "${1:-}" = stepped ]; then shift; exec "$CRANK_DIR/stepped.sh" "$@"; fi
COMMAND_LINE="crank/run-local.sh$(printf ' %q' "$@")"

# Warm-up: full YARP, the slowest .NET variant to reach tier-1 code, needed ~20 s of load on the shared
# 2-core box before its CPU us/request stopped falling (docs/methodology.md, "Warm-up"); crank's own
# default, 15 s, is the floor; the measured duration is crank's default.
rounds=3 round_offset=0 duration=15 warmup=20 connections=64 load_threads=1 req_path=/
# Every proxy gets the same thread/process count; 1 is what nginx and HAProxy always had here, and on the shared 2-core
# box (load, proxy and origin together) there is no second core to give any proxy (benchmarks.yml's "threads").
proxy_threads=1 response_size="" body_size=0 body_framing=content-length headers_preset=plaintext load_kind=wrk rate=""
server_scheme=http downstream_scheme=http
# HTTP/2 (crank/lib-protocols.sh): streams per h2load connection (the .NET lab's 100), the proxies' protocols, LLRP's
# front end; connections_given: whether --connections was given (h2load's default is the cores instead).
streams=100 protocols="" front_end="" connections_given=0
json_dir="" pin="" origin="" shared=0 dry_run=0 own_sessions=0 pgo="" use_crank=1 install=1 proxy_port=8080 downstream_port=8081
ready_timeout=60
# The steadiness criterion (docs/methodology.md, "The steadiness check"). 15 %: nginx, HAProxy and direct (no
# JIT) had halves within 15 % in 16 of 18 runs of the 2026-11-23 sitting on the shared 2-core box, within 10 % in
# 14; a variant still replacing tier-0 code differs by 15-50 %. 5 % of the window's CPU time spent compiling: what
# the JIT costs then cannot move CPU us/request by more than 5 %, a third of the halves' tolerance, while a proxy
# still tiering its request path spends 18 % there (llrp-httpclient's first 10 s of load). What still compiles after
# 25 s is timer-driven code, not the request path (Kestrel's heartbeat, HttpClient's pool scavenging, thread-pool
# hill climbing, the per-second report), and the compile time is wall time that a busy box stretches: in the sitting
# of 2026-11-24 that put 1-4.4 % into windows whose CPU us/request halves agreed (docs/methodology.md, "The steadiness
# check"; analysis/results/20261126-0138-late-jit).
# 2 retries: with about one run in eight noisy on that box, three noisy attempts in a row are rare (~0.2 %).
steady_tolerance=15 steady_jit_share=5 steady_retries=2 report=1
# Adaptive warm-up of the .NET scenarios: the JIT counts as quiet at 2 methods or fewer in 3 s; 60 s caps it at
# three times the 20 s the slowest variant (full YARP) needed on the shared 2-core box (docs/methodology.md,
# "Warm-up").
warmup_max=60 warm_jit=2
WARM_QUIET_SECONDS=3
# Seconds a run costs beyond warm-up + measured time: start the origin and the proxy, wait for them,
# one first request, stop both (SIGTERM), write the JSON. Timed on the 2-core box.
RUN_OVERHEAD=6
# Seconds an adaptive warm-up can run past --warmup-max: crank/wrk-job.sh's settle cycles after it (6 x (1 s pause
# + 3 s load) = 24 s) and the JIT probe's own time each second; the 134 .NET runs of the sittings of 2026-11-27
# (cap 60 s) warmed up for 39-85 s in all.
WARM_SETTLE_MAX=30
# The typical adaptive warm-up in percent of its cap: those 134 runs' median was 51 s, 85 % of the 60 s cap.
WARM_TYPICAL_PERCENT=85
app_env=()
scenarios=()

log() { printf '[run-local %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
warn() { printf '[run-local %s] WARNING: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# --help prints the usage block of the header (without the comment marks); bad usage is one line and exit 2.
usage() { sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }
bad_usage() { echo "run-local: $* (see --help)" >&2; exit 2; }
need_int() { [[ "$2" =~ ^[0-9]+$ ]] || bad_usage "$1 needs a whole number, got '$2'"; }
need_number() { [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad_usage "$1 needs a number such as 1 or 0.5, got '$2'"; }

# ---------------------------------------------------------------- machines and addresses
# benchmarks.yml's address variables, the error threshold and, for runs across machines, the crank
# agents (--agents) or the network namespaces of the fallback (--netns). Across machines no address
# has a default (the multimachine profile's rule): a forgotten one stops the run before any job.
declare -A yml_vars=([serverListenAddress]="" [downstreamListenAddress]="" [maxErrors]=0)
declare -A given_vars=() agents=() netns=()
machines_option() {
  local option="$1" value="$2" kv role kvs
  case "$option" in
    --variable)
      [[ "$value" == *=* ]] || bad_usage "--variable needs NAME=VALUE"
      case "${value%%=*}" in
        serverAddress|serverListenAddress|downstreamAddress|downstreamListenAddress) ;;
        maxErrors) need_int "--variable maxErrors" "${value#*=}" ;;
        *) bad_usage "--variable ${value%%=*}: only serverAddress, serverListenAddress, downstreamAddress, downstreamListenAddress and maxErrors" ;;
      esac
      given_vars[${value%%=*}]="${value#*=}" ;;
    --agents|--netns)
      [ -n "$value" ] || bad_usage "$option needs load=...,application=...,downstream=..."
      IFS=, read -r -a kvs <<< "$value"
      for kv in "${kvs[@]}"; do
        role="${kv%%=*}"
        case "$role" in load|application|downstream) ;; *) bad_usage "$option: unknown role '$role' (load, application, downstream)" ;; esac
        [[ "$kv" == *=?* ]] || bad_usage "$option: '$kv' needs ROLE=VALUE"
        if [ "$option" = --agents ]; then agents[$role]="${kv#*=}"; else netns[$role]="${kv#*=}"; fi
      done ;;
  esac
}

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) need_int "$1" "${2:-}"; rounds="$2"; shift 2 ;;
    --round-offset) need_int "$1" "${2:-}"; round_offset="$2"; shift 2 ;;
    --duration) need_int "$1" "${2:-}"; duration="$2"; shift 2 ;;
    --warmup) need_int "$1" "${2:-}"; warmup="$2"; shift 2 ;;
    --connections) need_int "$1" "${2:-}"; connections="$2"; connections_given=1; shift 2 ;;
    --streams) need_int "$1" "${2:-}"; streams="$2"; shift 2 ;;
    --protocols) [ -n "${2:-}" ] || bad_usage "--protocols needs http1, h2 or http1,h2"; protocols="$2"; shift 2 ;;
    --front-end) [ -n "${2:-}" ] || bad_usage "--front-end needs a value"; front_end="$2"; shift 2 ;;
    --threads) bad_usage "--threads is ambiguous now: --load-threads T for wrk's threads, --proxy-threads N for the proxies'" ;;
    --load-threads) need_int "$1" "${2:-}"; load_threads="$2"; shift 2 ;;
    --proxy-threads) need_int "$1" "${2:-}"; proxy_threads="$2"; shift 2 ;;
    --path) [ -n "${2:-}" ] || bad_usage "--path needs a value"; req_path="$2"; shift 2 ;;
    --response-size) need_int "$1" "${2:-}"; response_size="$2"; shift 2 ;;
    --request-body-size) need_int "$1" "${2:-}"; body_size="$2"; shift 2 ;;
    --request-body-framing)
      case "${2:-}" in content-length|chunked) body_framing="$2" ;; *) bad_usage "--request-body-framing must be content-length or chunked, not '${2:-}'" ;; esac
      shift 2 ;;
    --headers)
      case "${2:-}" in plaintext|browser|handshake|none) headers_preset="$2" ;; *) bad_usage "--headers must be plaintext, browser, handshake or none, not '${2:-}'" ;; esac
      shift 2 ;;
    --server-scheme|--downstream-scheme)
      case "${2:-}" in http|https) ;; *) bad_usage "$1 must be http or https, not '${2:-}'" ;; esac
      if [ "$1" = --server-scheme ]; then server_scheme="$2"; else downstream_scheme="$2"; fi
      shift 2 ;;
    --load)
      case "${2:-}" in wrk|fixedrate|h2load) load_kind="$2" ;; *) bad_usage "--load must be wrk, fixedrate or h2load, not '${2:-}'" ;; esac
      shift 2 ;;
    --rate) need_int "$1" "${2:-}"; rate="$2"; shift 2 ;;
    --json-dir) [ -n "${2:-}" ] || bad_usage "--json-dir needs a value"; json_dir="$2"; shift 2 ;;
    --steady-tolerance) need_int "$1" "${2:-}"; steady_tolerance="$2"; shift 2 ;;
    --steady-jit-share) need_number "$1" "${2:-}"; steady_jit_share="$2"; shift 2 ;;
    --steady-retries) need_int "$1" "${2:-}"; steady_retries="$2"; shift 2 ;;
    --warmup-max) need_int "$1" "${2:-}"; warmup_max="$2"; shift 2 ;;
    --warm-jit) need_int "$1" "${2:-}"; warm_jit="$2"; shift 2 ;;
    --no-report) report=0; shift ;;
    --pin|--pin-proxy)
      mode_of_pin=load; [ "$1" = --pin ] || mode_of_pin=proxy
      [ -z "$pin" ] || [ "$pin" = "$mode_of_pin" ] || bad_usage "--pin and --pin-proxy exclude each other"
      pin="$mode_of_pin"; shift ;;
    --origin)
      case "${2:-}" in downstream|nginx) origin="$2" ;; *) bad_usage "--origin must be downstream or nginx, not '${2:-}'" ;; esac
      shift 2 ;;
    --shared) shared=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    --own-sessions) own_sessions=1; shift ;;
    --pgo) pgo=pgo; shift ;;
    --nopgo) pgo=nopgo; shift ;;
    --app-env) [[ "${2:-}" == *=* ]] || bad_usage "--app-env needs K=V"; app_env+=("$2"); shift 2 ;;
    --proxy-port) need_int "$1" "${2:-}"; proxy_port="$2"; shift 2 ;;
    --downstream-port) need_int "$1" "${2:-}"; downstream_port="$2"; shift 2 ;;
    --fallback) use_crank=0; shift ;;
    --no-install) install=0; shift ;;
    --variable|--agents|--netns) machines_option "$1" "${2:-}"; shift 2 ;;
    -h|--help) usage ;;
    -*) bad_usage "unknown option $1" ;;
    *)
      known=0
      for s in "${ALL_SCENARIOS[@]}" "${NAMED_SCENARIOS[@]}"; do [ "$s" = "$1" ] && known=1; done
      [ "$known" = 1 ] || bad_usage "unknown scenario '$1' (${ALL_SCENARIOS[*]} ${NAMED_SCENARIOS[*]})"
      scenarios+=("$1"); shift ;;
  esac
done
if [ "$rounds" -lt 1 ] || [ "$duration" -lt 1 ] || [ "$connections" -lt 1 ] || [ "$load_threads" -lt 1 ] || [ "$proxy_threads" -lt 1 ]; then
  bad_usage "rounds, duration, connections, load threads and proxy threads must be >= 1"
fi
[ "$load_threads" -le "$connections" ] || bad_usage "wrk needs connections >= threads"
[[ "$req_path" == /* ]] || bad_usage "--path must start with /"
if [ -n "$response_size" ]; then
  [ "$req_path" = / ] || bad_usage "--response-size and --path exclude each other (--response-size N is --path '/?s=N')"
  req_path="/?s=$response_size"
fi
[ "$body_size" = 0 ] || [ "$origin" != nginx ] || bad_usage "--request-body-size needs the Downstream origin: --origin nginx answers GET and HEAD only (crank/nginx/origin.conf)"
if [ "$load_kind" = fixedrate ]; then
  [ -n "$rate" ] && [ "$rate" -ge 1 ] || bad_usage "--load fixedrate needs --rate R (requests/s, >= 1)"
  [ "$body_size" = 0 ] || [ "$body_framing" = content-length ] || bad_usage "--load fixedrate sends bodies with Content-Length only (h2load); chunked is wrk's"
elif [ "$load_kind" = h2load ]; then
  [ "$headers_preset" != handshake ] || bad_usage "--headers handshake (Connection: close) has no HTTP/2 meaning; --load h2load refuses it"
  [ "$body_size" = 0 ] || [ "$body_framing" = content-length ] || bad_usage "--load h2load sends bodies in DATA frames; chunked framing is wrk's"
  # The .NET lab's shape: one connection per core of the load machine (this one), --streams streams each.
  [ "$connections_given" = 1 ] || connections="$(nproc)"
  [ "$load_threads" -le "$connections" ] || bad_usage "h2load needs connections >= threads"
  [ -z "$rate" ] || [ "$rate" -ge 1 ] || bad_usage "--rate must be >= 1"
else
  [ -z "$rate" ] || bad_usage "--rate is for --load fixedrate or h2load"
fi
# shellcheck source=crank/lib-protocols.sh
. "$CRANK_DIR/lib-protocols.sh"
protocols="$(protocols_resolve "$load_kind" "$server_scheme" "$protocols" 2>&1)" || bad_usage "$protocols"
explicit_scenarios=0
if [ "${#scenarios[@]}" -gt 0 ]; then explicit_scenarios=1; else scenarios=("${ALL_SCENARIOS[@]}"); fi
if [ "$load_kind" = h2load ]; then
  # direct would send h2 to the origin, which speaks HTTP/1.1 here.
  kept=(); for s in "${scenarios[@]}"; do [ "$s" = direct ] || kept+=("$s"); done
  [ "${#kept[@]}" = "${#scenarios[@]}" ] || { [ "$explicit_scenarios" = 0 ] || bad_usage "--load h2load has no direct scenario: the origin speaks HTTP/1.1"; }
  scenarios=("${kept[@]}")
fi

# shellcheck source=crank/lib-rounds.sh
. "$CRANK_DIR/lib-rounds.sh"

# ---------------------------------------------------------------- machines and addresses (resolved)
multimachine=0 in_load=() in_application=() in_downstream=()
if [ "${#agents[@]}" -gt 0 ] && [ "${#netns[@]}" -gt 0 ]; then echo "run-local: --agents (crank) and --netns (fallback) exclude each other" >&2; exit 2; fi
for r in load application downstream; do
  if [ "${#agents[@]}" -gt 0 ] && [ -z "${agents[$r]:-}" ]; then echo "run-local: --agents needs a URL for $r" >&2; exit 2; fi
  if [ "${#netns[@]}" -gt 0 ] && [ -z "${netns[$r]:-}" ]; then echo "run-local: --netns needs a namespace for $r" >&2; exit 2; fi
done
if [ "${#agents[@]}" -gt 0 ]; then
  multimachine=1
  [ "$use_crank" = 1 ] || { echo "run-local: --agents drives crank; it cannot be combined with --fallback" >&2; exit 2; }
elif [ "${#netns[@]}" -gt 0 ]; then
  multimachine=1 use_crank=0
  [ "$(id -u)" = 0 ] || { echo "run-local: --netns needs root (ip netns exec)" >&2; exit 2; }
  for r in load application downstream; do
    ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qx "${netns[$r]}" \
      || { echo "run-local: --netns: namespace '${netns[$r]}' ($r) does not exist (crank/hosts.sh up)" >&2; exit 2; }
  done
  in_load=(ip netns exec "${netns[load]}") in_application=(ip netns exec "${netns[application]}")
  in_downstream=(ip netns exec "${netns[downstream]}")
fi
if [ "$multimachine" = 0 ]; then yml_vars[serverAddress]=127.0.0.1 yml_vars[downstreamAddress]=127.0.0.1; fi
for k in "${!given_vars[@]}"; do yml_vars[$k]="${given_vars[$k]}"; done
ds_target="${yml_vars[downstreamAddress]:-}" srv_target="${yml_vars[serverAddress]:-}"
ds_listen="${yml_vars[downstreamListenAddress]:-$ds_target}" srv_listen="${yml_vars[serverListenAddress]:-$srv_target}"
max_errors="${yml_vars[maxErrors]}"
# The same rules as the multimachine profile's endpoints, before anything is published or started.
address_checks=(--target "downstreamAddress=$ds_target" --listen "downstreamListenAddress=${yml_vars[downstreamListenAddress]}")
for s in "${scenarios[@]}"; do
  if [ "$s" != direct ]; then
    address_checks+=(--target "serverAddress=$srv_target" --listen "serverListenAddress=${yml_vars[serverListenAddress]}"); break
  fi
done
[ "$multimachine" = 0 ] || address_checks=(--remote "${address_checks[@]}")
"$ROOT/crank/require-address.sh" "${address_checks[@]}" || { echo "run-local: no job started: fix the address variables above" >&2; exit 2; }

# ---------------------------------------------------------------- crank or the fallback
crank_bin="" agent_bin=""
for d in "$ROOT/.tools/crank" "$ROOT/.tools" ""; do
  if [ -z "$d" ]; then
    crank_bin="$(command -v crank || true)"; agent_bin="$(command -v crank-agent || true)"
  elif [ -x "$d/crank" ] && [ -x "$d/crank-agent" ]; then
    crank_bin="$d/crank"; agent_bin="$d/crank-agent"
  fi
  [ -z "$crank_bin" ] || [ -z "$agent_bin" ] || break
  crank_bin="" agent_bin=""
done
mode=fallback
if [ "$use_crank" = 1 ] && [ -n "$crank_bin" ]; then mode=crank; fi

# ---------------------------------------------------------------- topology
# The default is the README headline's (--pin-proxy --origin nginx) wherever it can run: the fallback on one
# machine with 2 CPUs or more. Elsewhere (crank, several machines or namespaces, 1 CPU) the shared topology.
nproc_n="$(nproc)"
headline_ok=1
if [ "$mode" = crank ] || [ "$multimachine" = 1 ] || [ "$nproc_n" -lt 2 ] || [ "$shared" = 1 ]; then headline_ok=0; fi
topology_note=""
if [ -z "$pin" ]; then
  if [ "$headline_ok" = 1 ]; then pin=proxy; else pin=none; fi
fi
origin_defaulted=0
if [ -z "$origin" ]; then
  origin=downstream origin_defaulted=1
  if [ "$headline_ok" = 1 ] && [ "$body_size" != 0 ]; then
    topology_note=" (Downstream: the nginx origin answers GET and HEAD only, and this run sends bodies)"
  elif [ "$headline_ok" = 1 ]; then
    case "$req_path" in
      / | '/?s=0' | '/?s=10' | '/?s=1024' | '/?s=65536') origin=nginx ;;
      *) topology_note=" (Downstream: the nginx origin serves / and /?s=0|10|1024|65536 only, not $req_path)" ;;
    esac
  fi
fi
[ "$headline_ok" = 1 ] || [ "$shared" = 1 ] || topology_note=" (the default where --pin-proxy --origin nginx cannot run: $([ "$mode" = crank ] && echo crank || { [ "$multimachine" = 1 ] && echo 'several hosts' || echo '1 CPU'; }))"
# pinning_of FORMAT: the pinning in words (text) or as role=cpu lists (short).
pinning_of() {
  case "$pin/$1" in
    load/text) echo 'load on CPU 0, proxy + origin on CPU 1' ;;
    load/short) echo 'load=cpu0 application,downstream=cpu1' ;;
    proxy/text) echo 'proxy alone on CPU 1, load + origin on CPU 0' ;;
    proxy/short) echo 'application=cpu1 load,downstream=cpu0' ;;
    *) echo none ;;
  esac
}
topology_text() {
  local p="nothing pinned"
  [ "$pin" = none ] || p="$(pinning_of text)"
  echo "$p; origin $([ "$origin" = nginx ] && echo 'nginx (crank/nginx/origin.conf)' || echo 'Downstream (Kestrel)')$topology_note"
}

# ---------------------------------------------------------------- expected time
[ "$warmup_max" -gt "$warmup" ] || warmup_max=0
is_dotnet() { case "$1" in direct|nginx|haproxy) return 1 ;; *) return 0 ;; esac; }
# estimate_line SCENARIO...: the expected time (every run steady at once, each .NET warm-up the typical share of
# its cap) and the longest (every .NET warm-up at its cap plus the settle cycles, every run taking all its
# attempts). The adaptive warm-up runs in the fallback only; crank's is fixed.
estimate_line() {
  local n=$# n_dotnet=0 s typ_warm=$warmup max_warm=$warmup expected longest
  for s in "$@"; do ! is_dotnet "$s" || n_dotnet=$((n_dotnet + 1)); done
  if [ "$mode" = fallback ] && [ "$warmup_max" -gt 0 ]; then
    typ_warm=$(( warmup_max * WARM_TYPICAL_PERCENT / 100 )) max_warm=$(( warmup_max + WARM_SETTLE_MAX ))
    [ "$typ_warm" -ge "$warmup" ] || typ_warm=$warmup
  fi
  expected=$(( rounds * ((n - n_dotnet) * (warmup + duration + RUN_OVERHEAD) + n_dotnet * (typ_warm + duration + RUN_OVERHEAD)) ))
  longest=$(( (1 + steady_retries) * rounds * ((n - n_dotnet) * (warmup + duration + RUN_OVERHEAD) + n_dotnet * (max_warm + duration + RUN_OVERHEAD)) ))
  printf 'expected time ~%d min, at most ~%d min: %d scenario(s) x %d round(s); a run is %ss warm-up%s + %ss measured + ~%ss start/stop; at most %d retries per unsteady run%s' \
    $(( (expected + 59) / 60 )) $(( (longest + 59) / 60 )) "$n" "$rounds" "$warmup" \
    "$([ "$max_warm" = "$warmup" ] || echo " (${n_dotnet} .NET: until the JIT is quiet, typically ${typ_warm}s, at most ${max_warm}s)")" \
    "$duration" "$RUN_OVERHEAD" "$steady_retries" "$([ "$report" = 0 ] || echo '; then the report (~1 min)')"
}

log "topology: $(topology_text)"
log "$(estimate_line "${scenarios[@]}")"
if [ "$dry_run" = 1 ]; then
  echo "plan ($([ "$mode" = crank ] && echo crank || echo 'the job scripts without crank')), nothing run:"
  echo "  scenarios:  ${scenarios[*]}"
  echo "  load:       $(case "$load_kind" in wrk) echo "wrk -t $load_threads" ;; h2load) echo "h2load -t $load_threads -m $streams${rate:+ at $rate/s}" ;; *) echo "fixed rate $rate/s" ;; esac) -c $connections,${protocols:+ protocols $protocols,} path $req_path, $server_scheme to the proxy, $downstream_scheme to the origin, proxy threads $proxy_threads"
  for ((r = 1; r <= rounds; r++)); do
    echo "  round $r:    $(round_order $((r + round_offset)) "${scenarios[@]}" | tr '\n' ' ')"
  done
  echo "  topology:   $(topology_text)"
  echo "  $(estimate_line "${scenarios[@]}")"
  echo "  results:    ${json_dir:-artifacts/crank/<date>-<time>}$([ "$report" = 0 ] || echo ', then report.md and PNG charts (analysis/Report)')"
  exit 0
fi

[ -n "$json_dir" ] || json_dir="$ROOT/artifacts/crank/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$json_dir/logs"
json_dir="$(cd "$json_dir" && pwd)"
log "results go to ${json_dir#"$ROOT"/}"
# TLS on either side: one certificate for every proxy and origin of the run, for the addresses they are reached at.
tls_dir="$json_dir/tls"
if [ "$server_scheme" = https ] || [ "$downstream_scheme" = https ]; then
  "$ROOT/crank/tls-cert.sh" "$tls_dir" "$srv_target" "$ds_target" | while read -r line; do log "$line"; done
fi

# ---------------------------------------------------------------- process bookkeeping
# Every server is started as its own process group (OWN_GROUP), so its PID is also its group; stop_group signals the
# whole group (wrapper scripts, probes, children). stop_started_groups (crank/lib-process.sh) runs on every exit path.
agent_pid=""
# shellcheck source=crank/lib-process.sh
. "$CRANK_DIR/lib-process.sh"
# shellcheck source=crank/lib-rounds.sh
. "$CRANK_DIR/lib-rounds.sh"
# shellcheck source=crank/lib-statistics.sh
. "$CRANK_DIR/lib-statistics.sh"
trap stop_started_groups EXIT
[ "$own_sessions" = 0 ] || START_OWN_SESSION=1
trap 'warn "interrupted"; exit 130' INT
trap 'warn "terminated"; exit 143' TERM

# ---------------------------------------------------------------- tools
need_nginx=0 need_haproxy=0
[ "$origin" = downstream ] || need_nginx=1
for s in "${scenarios[@]}"; do
  case "$s" in nginx) need_nginx=1 ;; haproxy) need_haproxy=1 ;; esac
done
missing=()
command -v jq > /dev/null || missing+=(jq)
command -v wrk > /dev/null || missing+=(wrk)
[ "$load_kind" = wrk ] || command -v h2load > /dev/null || missing+=(nghttp2-client)
command -v perl > /dev/null || missing+=(perl-base)
[ "$own_sessions" = 0 ] || command -v setsid > /dev/null || missing+=(util-linux)
[ "$need_nginx" = 0 ] || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
[ "$need_haproxy" = 0 ] || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$install" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    log "installing ${missing[*]} (apt-get)"
    timeout 600 apt-get update -qq > "$json_dir/logs/apt.log" 2>&1 || warn "apt-get update failed (see logs/apt.log)"
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      >> "$json_dir/logs/apt.log" 2>&1 || warn "apt-get install failed (see logs/apt.log)"
  else
    warn "missing ${missing[*]} and not installing them (not root, no apt-get, or --no-install)"
  fi
fi
command -v jq > /dev/null || { echo "run-local: jq is required" >&2; exit 1; }
command -v wrk > /dev/null || { echo "run-local: wrk is required (apt-get install -y wrk)" >&2; exit 1; }
[ "$load_kind" = wrk ] || command -v h2load > /dev/null || { echo "run-local: --load fixedrate needs h2load (apt-get install -y nghttp2-client)" >&2; exit 1; }
if [ "$origin" = nginx ] && [ ! -x /usr/sbin/nginx ]; then
  [ "$origin_defaulted" = 1 ] || { echo "run-local: --origin nginx needs nginx (apt-get install -y nginx-light)" >&2; exit 1; }
  # The default topology's origin: without nginx, Downstream, said loudly (the headline's ratios need nginx).
  warn "nginx is not installed: Downstream is the origin, not the README headline's nginx (apt-get install -y nginx-light)"
  origin=downstream topology_note=" (nginx missing)"
fi
if [ -z "${DOTNET_ROOT:-}" ] && command -v dotnet > /dev/null; then
  DOTNET_ROOT="$(dirname "$(readlink -f "$(command -v dotnet)")")"
  export DOTNET_ROOT   # lets the published apphosts find the runtime wherever dotnet lives
fi
if [ "$pin" != none ] && [ "$nproc_n" -lt 2 ]; then warn "--pin and --pin-proxy need 2 CPUs; not pinning"; pin=none; fi

# ---------------------------------------------------------------- which scenarios can run
app_of() {
  case "$1" in
    direct|nginx|haproxy) echo "" ;;
    llrp-*) echo llrp ;;
    httpclientproxy) echo httpclientproxy ;;
    yarp) echo yarp ;;
  esac
}
declare -A publish_state=()   # app -> ok | failed | absent
publish_app() {
  local app="$1"
  [ -z "${publish_state[$app]:-}" ] || return 0
  if ! "$CRANK_DIR/publish.sh" --project "$app" > /dev/null 2>&1; then
    publish_state[$app]=absent; return 0
  fi
  log "publishing $app"
  if timeout 900 "$CRANK_DIR/publish.sh" "$app" > "$json_dir/logs/publish-$app.log" 2>&1; then
    publish_state[$app]=ok
  else
    publish_state[$app]=failed
    warn "publishing $app failed; last lines of logs/publish-$app.log:"
    tail -n 10 "$json_dir/logs/publish-$app.log" >&2 || true
  fi
}

runnable=()
failures=0
skip() {  # skip SCENARIO REASON: a default scenario is skipped quietly, a requested one fails the run
  if [ "$explicit_scenarios" = 1 ]; then warn "$1 cannot run: $2"; failures=$((failures + 1)); else log "skipping $1: $2"; fi
}
publish_app downstream
[ "${publish_state[downstream]}" = ok ] || { echo "run-local: src/Downstream must publish (see logs/publish-downstream.log)" >&2; exit 1; }
for s in "${scenarios[@]}"; do
  app="$(app_of "$s")"
  case "$s" in
    nginx) [ -x /usr/sbin/nginx ] || { skip "$s" "nginx is not installed"; continue; } ;;
    haproxy) [ -x /usr/sbin/haproxy ] || { skip "$s" "haproxy is not installed"; continue; } ;;
  esac
  if [ -n "$app" ]; then
    publish_app "$app"
    case "${publish_state[$app]}" in
      absent)
        skip "$s" "the $app project does not exist"; continue ;;
      failed) skip "$s" "$app does not build (logs/publish-$app.log)"; continue ;;
    esac
  fi
  runnable+=("$s")
done
[ "${#runnable[@]}" -gt 0 ] || { warn "no scenario can run"; exit 1; }
[ "${#runnable[@]}" = "${#scenarios[@]}" ] || log "$(estimate_line "${runnable[@]}") (the scenarios that can run here)"

# ---------------------------------------------------------------- run metadata
git_head="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
# A whole status (not piped into head: pipefail would turn its SIGPIPE into a failure), leaving out analysis/results/:
# results folders hold no code a run builds, and a sitting (analysis/sweep.sh) writes its own output folder there
# before each of its run-local.sh invocations.
git_dirty=0; [ -z "$(git -C "$ROOT" status --porcelain -- . ':(exclude)analysis/results' 2>/dev/null)" ] || git_dirty=1
cpu_model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
dotnet_version="$(dotnet --version 2>/dev/null || echo none)"
wrk_version="$(wrk -v 2>&1 | head -n 1 || true)"
nginx_version="$(/usr/sbin/nginx -v 2>&1 || echo none)"
haproxy_version="$(/usr/sbin/haproxy -v 2>/dev/null | head -n 1 || echo none)"
started_at="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

if [ "$mode" = crank ] && [ "$pin" != none ]; then warn "--pin and --pin-proxy apply to the fallback only (--fallback); not pinning"; pin=none; fi
if [ "$mode" = crank ] && [ "$origin" != downstream ]; then warn "--origin nginx applies to the fallback only (--fallback); the origin is Downstream"; origin=downstream; fi
if [ "${#agents[@]}" -gt 0 ] && [ "$mode" != crank ]; then
  echo "run-local: --agents needs crank (crank and crank-agent on PATH or in .tools/crank/; crank/README.md)" >&2; exit 1
fi

app_env_json="$(printf '%s\n' "${app_env[@]}" | jq -R -s 'split("\n") | map(select(length > 0))')"
jq -n --arg date "$started_at" --arg commit "$git_head" --argjson dirty "$git_dirty" \
  --argjson nproc "$nproc_n" --arg cpu "$cpu_model" --arg kernel "$(uname -r)" \
  --arg dotnet "$dotnet_version" --arg wrk "$wrk_version" --arg nginx "$nginx_version" \
  --arg haproxy "$haproxy_version" --arg command "$COMMAND_LINE" --arg mode "$mode" \
  --argjson rounds "$rounds" --argjson duration "$duration" --argjson warmup "$warmup" \
  --argjson connections "$connections" --argjson loadThreads "$load_threads" --arg path "$req_path" \
  --argjson threads "$proxy_threads" --argjson requestBodySize "$body_size" --arg requestBodyFraming "$body_framing" \
  --arg presetHeaders "$headers_preset" --arg load "$load_kind" --arg rate "$rate" \
  --argjson streams "$streams" --arg protocols "$protocols" --arg frontEnd "$front_end" \
  --arg pinning "$(pinning_of short)" --arg origin "$origin" --argjson ownSessions "$own_sessions" --arg pgo "$pgo" --argjson appEnv "$app_env_json" --argjson tolerance "$steady_tolerance" \
  --argjson steadyJitShare "$steady_jit_share" --argjson retries "$steady_retries" --argjson warmupMax "$warmup_max" --argjson warmJit "$warm_jit" \
  --argjson scenarios "$(printf '%s\n' "${runnable[@]}" | jq -R . | jq -s .)" \
  '{date: $date, commit: $commit, dirty: ($dirty > 0), nproc: $nproc, cpuModel: $cpu, kernel: $kernel,
    dotnetVersion: $dotnet, wrk: $wrk, nginx: $nginx, haproxy: $haproxy, command: $command, mode: $mode,
    rounds: $rounds, duration: $duration, warmup: $warmup, connections: $connections, loadThreads: $loadThreads,
    threads: $threads, requestBodySize: $requestBodySize, requestBodyFraming: $requestBodyFraming, presetHeaders: $presetHeaders,
    load: $load, rate: (if $rate == "" then null else ($rate | tonumber) end),
    streams: (if $load == "h2load" then $streams else null end), protocols: $protocols, frontEnd: $frontEnd,
    path: $path, pinned: ($pinning != "none"), pinning: $pinning, origin: $origin, ownSessions: ($ownSessions == 1), profile: $pgo, applicationEnvironment: $appEnv, scenarios: $scenarios,
    steadyTolerancePercent: $tolerance, steadyJitSharePercent: $steadyJitShare, steadyRetries: $retries,
    warmupMax: $warmupMax, warmQuietMethods: $warmJit, warmQuietSeconds: '"$WARM_QUIET_SECONDS"'}' \
  > "$json_dir/run.json"
{
  echo "date:        $started_at"
  echo "commit:      $git_head$([ "$git_dirty" = 0 ] || echo ' (work tree has uncommitted changes)')"
  echo "nproc:       $nproc_n"
  echo "cpu:         $cpu_model"
  echo "kernel:      $(uname -r)"
  echo "dotnet:      $dotnet_version"
  echo "wrk:         $wrk_version"
  echo "nginx:       $nginx_version"
  echo "haproxy:     $haproxy_version"
  echo "mode:        $mode"
  echo "pinning:     $(pinning_of text)"
  echo "origin:      $([ "$origin" = nginx ] && echo 'nginx (crank/nginx/origin.conf)' || echo 'Downstream (Kestrel)')"
  echo "sessions:    $([ "$own_sessions" = 1 ] && echo 'one per job (setsid: an autogroup each)' || echo 'one for every job (as crank'"'"'s agent)')"
  echo "command:     $COMMAND_LINE"
} > "$json_dir/machine.txt"

log "mode: $mode; scenarios: ${runnable[*]}; $rounds round(s) of ${warmup}s warm-up + ${duration}s, $(case "$load_kind" in wrk) echo "wrk -t $load_threads" ;; h2load) echo "h2load -t $load_threads -m $streams${rate:+ at $rate/s}" ;; *) echo "fixed rate $rate/s" ;; esac) -c $connections,${protocols:+ protocols $protocols,} path $req_path, $([ "$body_size" = 0 ] && echo GET || echo "POST $body_size B ($body_framing)"), headers $headers_preset; proxy threads $proxy_threads; $server_scheme to the proxy, $downstream_scheme to the origin"

# ---------------------------------------------------------------- crank mode
run_crank() {
  local s="$1" r="$2"
  local out="$json_dir/$s.r$r.json" args=() scenario="$s"
  # The fixed-rate and h2load loads have their own scenarios in benchmarks.yml (fixedrate-<scenario>, h2load-<scenario>).
  [ "$load_kind" = wrk ] || scenario="$load_kind-$s"
  args=(--config "$ROOT/benchmarks.yml" --scenario "$scenario" --json "$out" "${crank_machine_args[@]}"
        --variable "connections=$connections" --variable "loadThreads=$load_threads" --variable "threads=$proxy_threads"
        --variable "requestBodySize=$body_size" --variable "requestBodyFraming=$body_framing"
        --variable "presetHeaders=$headers_preset" --variable "serverScheme=$server_scheme" --variable "downstreamScheme=$downstream_scheme" --variable "tlsDir=$tls_dir" ${rate:+--variable "rate=$rate"} --variable "warmup=$warmup"
        --variable "duration=$duration" --variable "path=$req_path" --variable "streams=$streams"
        --variable "protocols=$protocols" --variable "frontEnd=$front_end"
        --variable "serverPort=$proxy_port" --variable "downstreamPort=$downstream_port"
        --property "scenario=$s" --property "round=$r" --property "runner=crank/run-local.sh")
  [ -z "$pgo" ] || args+=(--profile "$pgo")
  local kv
  for kv in "${app_env[@]}"; do args+=(--application.environmentVariables "$kv"); done
  log "$s round $r: crank ${args[*]}"
  # The controller resolves beforeJob commands and localFolder paths from the repository root.
  if (cd "$ROOT" && timeout $(( warmup + duration + 900 )) "$crank_bin" "${args[@]}") \
      > "$json_dir/logs/$s.r$r.crank.log" 2>&1; then
    log "$s round $r: done ($(jq -r '.jobResults.jobs.load.results["http/rps/mean"] // "?"' "$out") rps)"
  else
    warn "$s round $r: crank failed (logs/$s.r$r.crank.log)"
    failures=$((failures + 1))
  fi
}

# One local agent (--profile local), or the three agents of --agents (--profile multimachine).
crank_machine_args=(--profile local)
if [ "${#agents[@]}" -gt 0 ]; then
  crank_machine_args=(--profile multimachine --variable "loadAgent=${agents[load]}"
    --variable "applicationAgent=${agents[application]}" --variable "downstreamAgent=${agents[downstream]}")
fi
for k in "${!given_vars[@]}"; do crank_machine_args+=(--variable "$k=${given_vars[$k]}"); done

if [ "$mode" = crank ]; then
  if [ "${#agents[@]}" -gt 0 ]; then
    log "crank across the agents load=${agents[load]} application=${agents[application]} downstream=${agents[downstream]}"
  elif port_busy 5010; then
    log "a crank agent already listens on 127.0.0.1:5010; using it"
  else
    # The offline agent hook (crank/OfflineAgentHook, docs/crank-offline.md): without it an agent with no
    # internet dies on its first job trying to download dotnet-install.sh.
    hook_dir="$ROOT/artifacts/offline-agent-hook"
    log "building the offline agent hook (logs/hook-build.log)"
    if ! timeout 600 dotnet build "$ROOT/crank/OfflineAgentHook/OfflineAgentHook.csproj" -c Release -o "$hook_dir" -nologo \
        > "$json_dir/logs/hook-build.log" 2>&1; then
      warn "the offline agent hook does not build (logs/hook-build.log)"; exit 1
    fi
    log "starting crank-agent on http://127.0.0.1:5010 with the offline hook (log: logs/agent.log)"
    # net8.0 tools on a .NET 10-only machine need DOTNET_ROLL_FORWARD=Major to start; the hook then removes
    # it, DOTNET_STARTUP_HOOKS and its own variables from the agent's environment, so jobs inherit none.
    start_group "$json_dir/logs/agent.log" "$ROOT" env DOTNET_ROLL_FORWARD=Major \
      "DOTNET_STARTUP_HOOKS=$hook_dir/OfflineAgentHook.dll" "LLRP_CRANK_DOTNET_INSTALL_DIR=$hook_dir/dotnet-install" \
      LLRP_CRANK_HOOK_CLEAR=DOTNET_ROLL_FORWARD \
      "$agent_bin" --url http://127.0.0.1:5010 --hostname 127.0.0.1 \
      --dotnethome "${DOTNET_ROOT:-/usr/share/dotnet}"
    agent_pid="$STARTED_PID"
    deadline=$(( $(date +%s) + 60 ))
    until port_busy 5010; do
      if [ "$(date +%s)" -ge "$deadline" ] || [ -z "$(proc_state "$agent_pid")" ]; then
        warn "crank-agent did not start (logs/agent.log)"; exit 1
      fi
      sleep 0.5
    done
  fi
  for ((r = 1; r <= rounds; r++)); do
    for s in $(round_order $((r + round_offset)) "${runnable[@]}"); do run_crank "$s" "$r"; done
  done
  [ -z "$agent_pid" ] || stop_group "$agent_pid" 30
else
  log "crank is not available: Microsoft.Crank.Controller/Agent are not installable from this machine's package source (NuGet answers 404), so the job scripts of benchmarks.yml run directly"
fi

# ---------------------------------------------------------------- fallback mode
# Mirrors benchmarks.yml: same executables, arguments, ready texts and load job; run-local.sh plays
# the agent's part (start in order, wait for readiness, collect statistics, stop with SIGTERM).
ticks_per_s="$(getconf CLK_TCK)"

# proc_block ROLE SAMPLES REQUESTS: statistics block (crank stdout protocol) with the process
# measurements of ROLE over the measured window, from proc-sample.sh's lines (window edges + 1 s ticks).
# crank's own names keep crank's meaning: benchmarks/cpu and benchmarks/working-set are the maximum of
# the 1-second samples (benchmarks/cpu: 100 % = all cores; /raw: 100 % = one core). Window averages and
# deltas have their own names (proc/...). steady/* compares the CPU us/request of the window's two
# halves; the requests of each half come from the request bytes received on the load's port (ss), which
# grow in proportion to the requests when every request is the same, as in every scenario here.
# JIT: the share of its CPU time the process spent JIT-compiling in its measured window without the window's first and
# last second (its own jit/interior-share, %; empty for a process that reports none; src/Shared/SampleWindow.cs says
# why those two seconds are left out): a .NET process is steady only when that is at most $steady_jit_share %.
proc_block() {
  local role="$1" samples="$2" requests="$3" jit="${4:-}" rows
  rows="$(awk -v CONVFMT=%.10g -v role="$role" -v tck="$ticks_per_s" -v req="$requests" -v ncpu="$nproc_n" -v tol="$steady_tolerance" \
      -v jit="$jit" -v jitmax="$steady_jit_share" '
    $2 == role && NF >= 11 && ($1 == "measure-start" || $1 == "tick" || $1 == "measure-end") {
      if ($1 == "measure-start") { n = 0 }
      n++; t[n] = $3; c[n] = $4 + $5; rss[n] = $6; hwm = $7; thr = $8; b[n] = $11
      if ($1 == "measure-end") ok = 1
    }
    END {
      if (!ok || n < 2) exit 0
      win = (t[n] - t[1]) / 1e9; cpu_us = (c[n] - c[1]) * 1e6 / tck
      avg_raw = win > 0 ? cpu_us / 1e6 / win * 100 : 0
      max_raw = 0; max_rss = 0
      for (i = 1; i <= n; i++) if (rss[i] > max_rss) max_rss = rss[i]
      for (i = 2; i <= n; i++) {
        dt = (t[i] - t[i - 1]) / 1e9
        # crank samples every second: a last interval much shorter than that is too coarse to count.
        if (dt < 0.5) continue
        p = (c[i] - c[i - 1]) * 1e6 / tck / 1e6 / dt * 100
        if (p > max_raw) max_raw = p
      }
      if (max_raw == 0) max_raw = avg_raw
      k = 0
      m[++k] = "benchmarks/cpu|Max|Max|CPU usage (%)|Highest 1-second CPU usage in the measured window, 100% = all cores|n0|" max_raw / ncpu
      m[++k] = "benchmarks/cpu/raw|Max|Max|Cores usage (%)|Highest 1-second CPU usage in the measured window, 100% = one core|n0|" max_raw
      m[++k] = "benchmarks/working-set|Max|Max|Working set (MB)|Highest 1-second resident set (VmRSS) in the measured window|n0|" max_rss / 1024
      m[++k] = "proc/cpu/average|Max|Avg|CPU average (%)|Average CPU usage over the measured window, 100% = all cores|n1|" avg_raw / ncpu
      m[++k] = "proc/cpu/raw/average|Max|Avg|Cores average (%)|Average CPU usage over the measured window, 100% = one core|n1|" avg_raw
      m[++k] = "proc/working-set/end|Max|Max|Working set at end (MB)|Resident set (VmRSS) at the end of the measured window|n0|" rss[n] / 1024
      m[++k] = "proc/working-set/peak|Max|Max|Peak working set (MB)|Peak resident set of the process since it started (VmHWM)|n0|" hwm / 1024
      m[++k] = "proc/cpu/time|Max|Sum|CPU time (ms)|User + system CPU time over the measured window (ms)|n0|" cpu_us / 1000
      if (req > 0) m[++k] = "proc/cpu/per-request|Max|Avg|CPU per request (us)|CPU time per completed request over the measured window (us)|n2|" cpu_us / req
      m[++k] = "proc/threads|Max|Max|Threads|Threads at the end of the measured window|n0|" thr
      m[++k] = "proc/window|Max|Max|Measured window (s)|Wall-clock seconds between the two edge samples|n2|" win
      # The two halves: from the first sample to the last one that still saw the load connections (the
      # edge sample after wrk exits sees none), split at the sample nearest to the middle. Requests per
      # half: request bytes of the half / bytes per request, the latter from the whole stretch.
      last = n; while (last > 1 && b[last] <= 0) last--
      mid = 1; tm = (t[1] + t[last]) / 2
      for (i = 1; i <= last; i++) { d = t[i] - tm; dm = t[mid] - tm; if ((d < 0 ? -d : d) < (dm < 0 ? -dm : dm)) mid = i }
      span = (t[last] - t[1]) / (t[n] - t[1])
      if (req > 0 && span > 0.5 && mid > 1 && mid < last && b[mid] > b[1] && b[last] > b[mid]) {
        per_req = (b[last] - b[1]) / (req * span)
        r1 = (b[mid] - b[1]) / per_req; r2 = (b[last] - b[mid]) / per_req
        h1 = (c[mid] - c[1]) * 1e6 / tck / r1; h2 = (c[last] - c[mid]) * 1e6 / tck / r2
        change = (h2 - h1) / ((h1 + h2) / 2) * 100
        cpu_ok = (change <= tol && change >= -tol) ? 1 : 0
        jit_share = (jit != "") ? jit + 0 : 0
        jit_ok = (jit == "" || jit_share <= jitmax) ? 1 : 0
        steady = cpu_ok && jit_ok
        m[++k] = "steady/first-half|Max|Avg|CPU us/request, 1st half|CPU time per request in the first half of the measured window (us)|n2|" h1
        m[++k] = "steady/second-half|Max|Avg|CPU us/request, 2nd half|CPU time per request in the second half of the measured window (us)|n2|" h2
        m[++k] = "steady/change|Max|Max|Change between halves (%)|(2nd half - 1st half) / their mean, CPU us/request|n1|" change
        m[++k] = "steady/tolerance|Max|Max|Steady tolerance (%)|Largest change between halves that counts as steady|n0|" tol
        m[++k] = "steady/cpu-ok|Max|Min|Halves agree|1 when the change between halves is within the tolerance, else 0|n0|" cpu_ok
        if (jit != "") {
          m[++k] = "steady/jit-share|Max|Max|JIT share (%)|Time the JIT spent compiling / the process CPU time, in the window without its first and last second|n2|" jit_share
          m[++k] = "steady/jit-limit|Max|Max|JIT share limit (%)|Largest JIT share of the window CPU time that counts as steady|n2|" jitmax
          m[++k] = "steady/jit-ok|Max|Min|JIT quiet|1 when the JIT share is within the limit, else 0|n0|" jit_ok
        }
        m[++k] = "steady/ok|Max|Min|Steady|1 when the halves agree and, for a .NET process, its JIT was quiet in the window, else 0|n0|" steady
      }
      # One tab-separated line per measurement: statistics_block (crank/lib-statistics.sh) writes the JSON.
      for (i = 1; i <= k; i++) { gsub(/\|/, "\t", m[i]); print m[i] }
    }' "$samples")"
  # No window sampled: no block, as before any figure existed. The block's JSON line alone goes into the job's blocks.
  [ -z "$rows" ] || printf '%s\n' "$rows" | statistics_block run-local | sed -n 2p
}

# job_json ROLE LOG SAMPLES REQUESTS VARS_JSON OUT: crank JobResult for one service.
job_json() {
  local role="$1" log_file="$2" samples="$3" requests="$4" vars="$5" out="$6" blocks="$6.blocks"
  : > "$blocks"
  if [ -n "$log_file" ]; then
    if blocks_of "$log_file" | jq -e . > /dev/null 2>&1; then
      blocks_of "$log_file" >> "$blocks"
    elif [ -n "$(blocks_of "$log_file")" ]; then
      warn "$role printed a statistics block that is not valid JSON; ignored (see $log_file)"
    fi
  fi
  local jit=""
  [ ! -s "$blocks" ] || jit="$(jq -s -r '[.[].Measurements[]? | select(.Name == "jit/interior-share") | .Value] | last // ""' "$blocks")"
  [ -z "$samples" ] || proc_block "$role" "$samples" "$requests" "$jit" >> "$blocks"
  jq -n --slurpfile blocks "$blocks" --argjson vars "$vars" \
    --argjson env "{\"hw\":\"Unspecified\",\"env\":\"Unspecified\",\"os\":\"linux\",\"arch\":\"$(uname -m)\",\"proc\":$nproc_n,\"runner\":\"run-local\"}" \
    -f "$CRANK_DIR/results.jq" > "$out"
  rm -f "$blocks"
}

# run_fallback SCENARIO ROUND ATTEMPT: one run; writes <scenario>.r<round>.json, its logs under
# logs/<scenario>.r<round>[.a<attempt>].* (attempt 1 without the suffix).
run_fallback() {
  local s="$1" r="$2" attempt="${3:-1}"
  local tag="$s.r$r" logs="$json_dir/logs" app kind client="" ready=""
  [ "$attempt" = 1 ] || tag="$tag.a$attempt"
  local ds_pid="" app_pid="" target_port="$proxy_port" app_cmd=() pin_app=() pin_ds=() pin_load=()
  local out="$json_dir/$s.r$r.json" samples="$json_dir/logs/$tag.samples"
  app="$(app_of "$s")"
  case "$s" in
    direct) kind=none; target_port="$downstream_port" ;;
    nginx|haproxy) kind="$s" ;;
    *) kind=dotnet ;;
  esac
  case "$s" in
    llrp-llhttp) client=llhttp ;;
    llrp-httpclient) client=httpclient ;;
    llrp-httpclientwithcontext) client=httpclient-httpcontext ;;
    llrp-yarp) client=yarp ;;
    llrp-kestrel-h1) client=llhttp ;;
  esac
  # LLRP's front end: the scenario's own (llrp-kestrel-h1), else --front-end.
  local run_front_end="$front_end"
  [ "$s" != llrp-kestrel-h1 ] || run_front_end=kestrel
  case "$pin" in
    load) pin_app=(taskset -c 1) pin_ds=(taskset -c 1) pin_load=(taskset -c 0) ;;
    proxy) pin_app=(taskset -c 1) pin_ds=(taskset -c 0) pin_load=(taskset -c 0) ;;
  esac

  # Each port is checked where it will listen (in its namespace with --netns).
  local busy=""
  if "${in_downstream[@]}" bash -c "(exec 3<>/dev/tcp/$ds_target/$downstream_port) 2>/dev/null"; then busy="$ds_target:$downstream_port"
  elif [ "$kind" != none ] && "${in_application[@]}" bash -c "(exec 3<>/dev/tcp/$srv_target/$proxy_port) 2>/dev/null"; then busy="$srv_target:$proxy_port"; fi
  if [ -n "$busy" ]; then warn "$tag: $busy is already in use; run skipped"; failures=$((failures + 1)); return 0; fi
  : > "$samples"

  # TLS (--server-scheme / --downstream-scheme https): the run's certificate, as each kind of server takes it. The
  # .NET apps take an https --urls certificate from Kestrel's configuration; the baselines trust the run's authority
  # through SSL_CERT_FILE (the file the runtime reads its roots from on Linux), LLRP through --downstreamTrust.
  local kestrel_tls=(--Kestrel:Certificates:Default:Path="$tls_dir/cert.pem" --Kestrel:Certificates:Default:KeyPath="$tls_dir/key.pem")
  local job_server_tls=() job_downstream_tls=() origin_tls=()
  [ "$server_scheme" = http ] || job_server_tls=("TLS_CERT=$tls_dir/cert.pem" "TLS_KEY=$tls_dir/key.pem")
  [ "$downstream_scheme" = http ] || job_downstream_tls=("DOWNSTREAM_TLS_CA=$tls_dir/ca.pem")
  [ "$downstream_scheme" = http ] || origin_tls=("TLS_CERT=$tls_dir/cert.pem" "TLS_KEY=$tls_dir/key.pem")

  # 1. downstream (crank job "downstream"): the Downstream app, or nginx as the origin (--origin nginx)
  local ds_ready="Application started."
  if [ "$origin" = nginx ]; then
    mkdir -p "$logs/$tag.origin"
    start_group "$logs/$tag.downstream.log" "$CRANK_DIR" "${in_downstream[@]}" "${pin_ds[@]}" env "LISTEN_ADDRESS=$ds_listen" \
      "LISTEN_PORT=$downstream_port" NGINX_CONFIG=origin.conf "JOB_WORK_DIR=$logs/$tag.origin" "${origin_tls[@]}" "$CRANK_DIR/nginx-job.sh"
    ds_ready="nginx-job: ready"
  else
    local ds_exe ds_tls=(); ds_exe="$("$CRANK_DIR/publish.sh" --exe downstream)"
    [ "$downstream_scheme" = http ] || ds_tls=("${kestrel_tls[@]}")
    start_group "$logs/$tag.downstream.log" "$(dirname "$ds_exe")" "${in_downstream[@]}" "${pin_ds[@]}" "$ds_exe" \
      --urls "$downstream_scheme://$ds_listen:$downstream_port" "${ds_tls[@]}"
  fi
  ds_pid="$STARTED_PID"
  if ! wait_ready "$ds_pid" "$logs/$tag.downstream.log" "$ds_ready"; then
    stop_group "$ds_pid" 5; failures=$((failures + 1)); return 0
  fi

  # 2. application (the proxy on port 8080), with the pgo/nopgo profile and --app-env variables
  local env_args=()
  case "$pgo" in
    pgo) env_args=(DOTNET_TieredPGO=1 DOTNET_ReadyToRun=0 DOTNET_TC_QuickJitForLoops=1) ;;
    nopgo) env_args=(DOTNET_TieredPGO=0) ;;
  esac
  env_args+=("${app_env[@]}")
  local app_dir="$CRANK_DIR"
  # --protocols and --front-end, as each kind of proxy takes them (crank/lib-protocols.sh): PROTO_ENV, PROTO_ARGS.
  protocols_proxy_args "$kind" "$app" "$protocols" "$run_front_end"
  case "$kind" in
    nginx)
      mkdir -p "$logs/$tag.nginx"
      app_cmd=(env "LISTEN_ADDRESS=$srv_listen" "LISTEN_PORT=$proxy_port" "DOWNSTREAM_ADDRESS=$ds_target"
               "DOWNSTREAM_PORT=$downstream_port" "JOB_WORK_DIR=$logs/$tag.nginx" "NGINX_WORKERS=$proxy_threads"
               "${job_server_tls[@]}" "${job_downstream_tls[@]}" "${PROTO_ENV[@]}" "$CRANK_DIR/nginx-job.sh")
      ready="nginx-job: ready" ;;
    haproxy)
      app_cmd=(env "LISTEN_ADDRESS=$srv_listen" "LISTEN_PORT=$proxy_port" "DOWNSTREAM_ADDRESS=$ds_target"
               "DOWNSTREAM_PORT=$downstream_port" "HAPROXY_THREADS=$proxy_threads"
               "${job_server_tls[@]}" "${job_downstream_tls[@]}" "${PROTO_ENV[@]}" "$CRANK_DIR/haproxy-job.sh")
      ready="haproxy-job: ready" ;;
    dotnet)
      local exe; exe="$("$CRANK_DIR/publish.sh" --exe "$app")"
      app_dir="$(dirname "$exe")"
      app_cmd=("$exe" --urls "$server_scheme://$srv_listen:$proxy_port" --downstream "$downstream_scheme://$ds_target:$downstream_port")
      if [ "$app" = llrp ]; then
        [ "$server_scheme" = http ] || app_cmd+=(--certificate "$tls_dir/cert.pem" --certificateKey "$tls_dir/key.pem")
        [ "$downstream_scheme" = http ] || app_cmd+=(--downstreamTrust "$tls_dir/ca.pem")
      else
        [ "$server_scheme" = http ] || app_cmd+=("${kestrel_tls[@]}")
        [ "$downstream_scheme" = http ] || env_args+=("SSL_CERT_FILE=$tls_dir/ca.pem")
      fi
      # Every .NET process reports over the last $duration seconds with load, i.e. the measured window: LLRP its
      # own figures (requests, allocated B/request, CPU us/request: src/LLRP/Diagnostics/SelfReport.cs) and the
      # methods JIT-compiled, the baselines the methods JIT-compiled (src/Baselines/Shared/JitActivity.cs).
      [ -z "$client" ] || app_cmd+=(--client "$client")
      # Equal threads (benchmarks.yml's "threads"): LLRP's epoll loops; the baselines have no count of their own, and
      # the runtime sizes their thread pool, socket engine and Kestrel's I/O queues from the processors it sees.
      if [ "$app" = llrp ]; then app_cmd+=(--engineThreads "$proxy_threads"); else env_args+=("DOTNET_PROCESSOR_COUNT=$proxy_threads"); fi
      app_cmd+=(--statsInterval 1 --statsWindow "$duration" "${PROTO_ARGS[@]}")
      ready="Application started." ;;
  esac
  if [ "$kind" != none ]; then
    start_group "$logs/$tag.application.log" "$app_dir" "${in_application[@]}" env "${env_args[@]}" "${pin_app[@]}" "${app_cmd[@]}"
    app_pid="$STARTED_PID"
    if ! wait_ready "$app_pid" "$logs/$tag.application.log" "$ready"; then
      stop_group "$app_pid" 5
      local app_exit="$STOP_RC"
      stop_group "$ds_pid" 5
      # LLRP exits with 2 when it rejects its options, e.g. a --client this build does not have yet:
      # for a scenario that was only a default, that means "cannot run here", not a failed run.
      if [ "$app_exit" = 2 ] && [ "$explicit_scenarios" = 0 ]; then
        log "skipping $s from now on: the proxy rejected its options (exit code 2)"
        unavailable[$s]=1
      else
        failures=$((failures + 1))
      fi
      return 0
    fi
  fi

  # 3. load (crank job "load"): the same wrk-job.sh, with a hook that samples /proc around the
  # measured run.
  local target_address="$srv_target" target_scheme="$server_scheme"
  [ "$kind" != none ] || { target_address="$ds_target"; target_scheme="$downstream_scheme"; }
  local url="$target_scheme://$target_address:$target_port$req_path" first_status=""
  if command -v curl > /dev/null; then
    local curl_tls=()
    [ "$target_scheme" = http ] || curl_tls=(--cacert "$tls_dir/ca.pem")
    [ "$kind" = none ] || { protocols_curl_args "$protocols" "$target_scheme"; curl_tls+=("${CURL_PROTO[@]}"); }
    first_status="$("${in_load[@]}" curl -s "${curl_tls[@]}" -o /dev/null -w '%{http_code}' --max-time 5 "$url" || true)"
    [[ "$first_status" == 2* ]] || warn "$tag: first request to $url answered '${first_status:-nothing}'"
  fi
  local sample_pids="downstream=$ds_pid"
  [ -z "$app_pid" ] || sample_pids="application=$app_pid $sample_pids"
  # .NET proxies: adaptive warm-up, ended by the proxy's JIT going quiet (crank/jit-quiet.sh reads its log).
  local warm_args=() warm_env=() load_limit=$(( warmup + duration + 60 ))
  # The fixed-rate job has a fixed warm-up at its rate: an adaptive one would need a load that keeps running until
  # the probe says warm, which h2load's timed runs are not.
  if [ "$kind" = dotnet ] && [ "$warmup_max" -gt 0 ] && [ "$load_kind" != fixedrate ]; then
    rm -f "$logs/$tag.jit-state"
    warm_args=(--warmup-max "$warmup_max")
    warm_env=("WRK_JOB_WARM_PROBE=$CRANK_DIR/jit-quiet.sh" "JIT_LOG=$logs/$tag.application.log" "JIT_STATE=$logs/$tag.jit-state"
              "JIT_QUIET_METHODS=$warm_jit" "JIT_QUIET_SECONDS=$WARM_QUIET_SECONDS")
    load_limit=$(( warmup_max + duration + 60 ))
    log "$tag: load ${warmup}-${warmup_max}s (until the JIT is quiet) + ${duration}s on $url"
  else
    log "$tag: load ${warmup}s + ${duration}s on $url"
  fi
  # Its own process group too, so that Ctrl-C / SIGTERM of this script stops wrk at once.
  local load_rc=0
  # With --netns the server under load listens in another namespace than wrk: SAMPLE_NETNS points
  # proc-sample.sh's connection count there.
  local sample_netns="${netns[application]:-}"
  [ "$kind" != none ] || sample_netns="${netns[downstream]:-}"
  # The request matrix (benchmarks.yml's requestBodySize, requestBodyFraming, presetHeaders) goes to either load job.
  local load_cmd=(--headers "$headers_preset" --body-size "$body_size" --body-framing "$body_framing" --max-errors "$max_errors")
  if [ "$load_kind" = h2load ]; then
    h2load_load_cmd "$CRANK_DIR" "$warmup" "$duration" "$load_threads" "$connections" "$streams" "$rate" "$url" "${warm_args[@]}" \
      --headers "$headers_preset" --body-size "$body_size" --max-errors "$max_errors"
    load_cmd=("${LOAD_CMD[@]}")
  elif [ "$load_kind" = fixedrate ]; then
    load_cmd=("$CRANK_DIR/fixedrate-job.sh" -w "$warmup" -d "$duration" -c "$connections" --rate "$rate" "${load_cmd[@]}" "$url")
  else
    load_cmd=("$CRANK_DIR/wrk-job.sh" -w "$warmup" "${warm_args[@]}" -d "$duration" -t "$load_threads" -c "$connections" "${load_cmd[@]}" "$url")
  fi
  start_group "$logs/$tag.load.log" "$CRANK_DIR" "${in_load[@]}" env "SAMPLE_PIDS=$sample_pids" "SAMPLE_OUT=$samples" \
    "SAMPLE_PORT=$target_port" "SAMPLE_NETNS=$sample_netns" \
    "WRK_JOB_HOOK=$CRANK_DIR/proc-sample.sh" "${warm_env[@]}" timeout --kill-after=5 "$load_limit" \
    "${pin_load[@]}" "${load_cmd[@]}"
  local load_pid="$STARTED_PID"
  wait "$load_pid" || load_rc=$?
  stop_group "$load_pid" 1

  # 4. stop: application first, then downstream (crank stops jobs with SIGTERM, too)
  local app_rc="" ds_rc=""
  if [ -n "$app_pid" ]; then stop_group "$app_pid" 10; app_rc="$STOP_RC"; fi
  stop_group "$ds_pid" 10; ds_rc="$STOP_RC"

  # 5. results, in the shape of crank's --json output
  local requests
  requests="$(blocks_of "$logs/$tag.load.log" | jq -s '[.[].Measurements[]? | select(.Name | split(";") | index("http/requests")) | .Value] | last // 0' 2>/dev/null || echo 0)"
  local vars
  vars="$(jq -n --argjson connections "$connections" --argjson loadThreads "$load_threads" --argjson warmup "$warmup" \
    --argjson threads "$proxy_threads" --argjson requestBodySize "$body_size" --arg requestBodyFraming "$body_framing" \
    --arg presetHeaders "$headers_preset" --arg responseSize "$response_size" --arg load "$load_kind" --arg rate "$rate" \
    --argjson streams "$streams" --arg protocols "$protocols" --arg frontEnd "$run_front_end" \
    --argjson duration "$duration" --arg path "$req_path" --argjson serverPort "$proxy_port" \
    --argjson downstreamPort "$downstream_port" --arg client "$client" \
    --arg serverAddress "$srv_target" --arg serverListenAddress "${yml_vars[serverListenAddress]}" \
    --arg downstreamAddress "$ds_target" --arg downstreamListenAddress "${yml_vars[downstreamListenAddress]}" \
    --argjson maxErrors "$max_errors" \
    --arg serverScheme "$server_scheme" --arg downstreamScheme "$downstream_scheme" \
    '{serverScheme: $serverScheme, downstreamScheme: $downstreamScheme, serverAddress: $serverAddress, serverListenAddress: $serverListenAddress, serverPort: $serverPort,
      downstreamAddress: $downstreamAddress, downstreamListenAddress: $downstreamListenAddress, maxErrors: $maxErrors,
      downstreamPort: $downstreamPort, connections: $connections, loadThreads: $loadThreads, threads: $threads,
      warmup: $warmup, duration: $duration, path: $path, responseSize: $responseSize, requestBodySize: $requestBodySize,
      requestBodyFraming: $requestBodyFraming, presetHeaders: $presetHeaders, load: $load}
      + (if $rate == "" then {} else {rate: ($rate | tonumber)} end) + (if $client == "" then {} else {client: $client} end)
      + (if $load == "h2load" then {streams: $streams} else {} end) + (if $protocols == "" then {} else {protocols: $protocols} end)
      + (if $frontEnd == "" then {} else {frontEnd: $frontEnd} end)')"
  job_json load "$logs/$tag.load.log" "" 0 "$vars" "$logs/$tag.load.job.json"
  job_json downstream "$logs/$tag.downstream.log" "$samples" "$requests" "$vars" "$logs/$tag.downstream.job.json"
  # shellcheck disable=SC2016  # jq variables, not shell ones
  local jobs_filter='{load: $load[0], downstream: $downstream[0]}'
  local app_file="$logs/$tag.downstream.job.json"
  if [ -n "$app_pid" ]; then
    job_json application "$logs/$tag.application.log" "$samples" "$requests" "$vars" "$logs/$tag.application.job.json"
    app_file="$logs/$tag.application.job.json"
    # shellcheck disable=SC2016
    jobs_filter='{downstream: $downstream[0], application: $application[0], load: $load[0]}'
  fi
  local measure_start measure_end
  measure_start="$(awk '$1 == "measure-start" { print $3; exit }' "$samples")"
  measure_end="$(awk '$1 == "measure-end" { print $3; exit }' "$samples")"
  jq -n --slurpfile load "$logs/$tag.load.job.json" --slurpfile downstream "$logs/$tag.downstream.job.json" \
    --slurpfile application "$app_file" \
    --arg scenario "$s" --arg round "$r" --arg mode fallback --arg commit "$git_head" \
    --arg pinned "$(pinning_of short)" --arg origin "$origin" \
    --arg profile "$pgo" --arg appEnv "${app_env[*]}" --arg first "$first_status" --argjson ownSessions "$own_sessions" \
    --arg loadRc "$load_rc" --arg appRc "$app_rc" --arg dsRc "$ds_rc" \
    --arg mstart "$measure_start" --arg mend "$measure_end" --arg attempt "$attempt" \
    "{returnCode: (if \$loadRc == \"0\" then 0 else 1 end),
      jobResults: {jobs: $jobs_filter,
        properties: {scenario: \$scenario, round: \$round, runner: \"crank/run-local.sh\", mode: \$mode,
          commit: \$commit, pinning: \$pinned, origin: \$origin, ownSessions: (\$ownSessions == 1), profile: \$profile, applicationEnvironment: \$appEnv,
          firstRequestStatus: \$first, loadExitCode: \$loadRc, applicationExitCode: \$appRc,
          downstreamExitCode: \$dsRc, measureStartEpochNs: \$mstart, measureEndEpochNs: \$mend, attempt: \$attempt}},
      benchmarks: []}" > "$out"
  rm -f "$logs/$tag".*.job.json

  if [ "$load_rc" != 0 ]; then
    warn "$tag: load job failed with exit code $load_rc (logs/$tag.load.log)"
    failures=$((failures + 1)); return 0
  fi
  local line
  line="$(jq -r '.jobResults.jobs as $j | ($j.application // $j.downstream).results as $a
    | "\($j.load.results["http/rps/mean"] // 0 | floor) rps, p50 \($j.load.results["http/latency/50"] // "?") ms, p99 \($j.load.results["http/latency/99"] // "?") ms, "
      + "\(if $j.load.results["fixedrate/rate"] == null then "" else "p99.9 \($j.load.results["http/latency/99.9"]) ms (offered \($j.load.results["fixedrate/rate"]) req/s, missed \($j.load.results["fixedrate/missed"])), " end)"
      + "\($a["proc/cpu/per-request"] // "?" | if type == "number" then (. * 100 | round / 100) else . end) us CPU/request ('"$([ -n "$app_pid" ] && echo proxy || echo downstream)"'), "
      + "steady: \(if $a["steady/ok"] == null then "n/a" elif $a["steady/ok"] == 1 then "yes" else "NO" end) (halves \($a["steady/first-half"] // "?" | if type == "number" then (. * 10 | round / 10) else . end)/\($a["steady/second-half"] // "?" | if type == "number" then (. * 10 | round / 10) else . end) us, \($a["steady/change"] // "?" | if type == "number" then (. * 10 | round / 10) else . end) %), "
      + "\(if $a["jit/methods-in-window"] == null then "" else "JIT \($a["jit/methods-in-window"]) methods in the window (\($a["jit/methods/first-half"] // "?")+\($a["jit/methods/second-half"] // "?")), \($a["jit/time-in-window"] // "?") ms; JIT \($a["steady/jit-share"] // "?" | if type == "number" then (. * 100 | round / 100) else . end) % of its CPU under the load, " end)"
      + "warm-up \($j.load.results["warmup/seconds"] // "?") s\(if $j.load.results["warmup/capped"] == 1 then " (CAPPED: JIT not quiet)" else "" end), "
      + "bad \($j.load.results["http/requests/badresponses"] // "?"), socket errors \($j.load.results["http/requests/errors"] // "?")"' "$out")"
  log "$tag: $line"
  local who; who="$([ -n "$app_pid" ] && echo "proxy" || echo "downstream")"
  if [ "$(jq -r '.jobResults.jobs as $j | ($j.application // $j.downstream).results["steady/cpu-ok"] // ""' "$out")" = 0 ]; then
    warn "$tag: NOT steady: the $who's CPU us/request changed by more than ${steady_tolerance}% between the halves of the measured window"
  fi
  if [ "$(jq -r '.jobResults.jobs as $j | ($j.application // $j.downstream).results["steady/jit-ok"] // ""' "$out")" = 0 ]; then
    warn "$tag: NOT steady: the $who spent more than ${steady_jit_share}% of its CPU time in the measured window JIT-compiling (still tiering up: a longer --warmup-max may help)"
  fi
}

# run_steady SCENARIO ROUND: run_fallback until the run is steady, at most 1 + $steady_retries attempts. An
# unsteady attempt's JSON moves to logs/<scenario>.r<round>.a<attempt>.json; the last attempt's stays, with the
# number of attempts and each one's verdict in its properties (steadyAttempts, steadyHistory).
run_steady() {
  local s="$1" r="$2" attempt=1 out="$json_dir/$1.r$2.json" history="" ok before verdict rest change jit_share
  while :; do
    before="$failures"
    rm -f "$out"
    run_fallback "$s" "$r" "$attempt"
    # A run that failed outright (or wrote nothing) is a failure, not an unsteady run: no retry.
    [ -f "$out" ] && [ "$failures" = "$before" ] || return 0
    ok="$(jq -r '.jobResults.jobs as $j | ($j.application // $j.downstream).results
      | (.["steady/ok"] // "n/a" | tostring) + ":" + (.["steady/change"] // "" | if type == "number" then (. * 10 | round / 10 | tostring) else "" end)
        + ":" + (.["steady/jit-share"] // "" | if type == "number" then (. * 100 | round / 100 | tostring) else "" end)' "$out")"
    # ok = "<verdict>:<halves' change>:<JIT share>"; nginx, HAProxy and the origin have no JIT share.
    verdict="${ok%%:*}" rest="${ok#*:}"
    change="${rest%%:*}" jit_share="${rest#*:}"
    history="${history:+$history; }attempt $attempt: steady $verdict, halves $change %${jit_share:+, JIT $jit_share % of CPU}"
    if [ "$verdict" != 0 ] || [ "$attempt" -gt "$steady_retries" ]; then break; fi
    mv "$out" "$json_dir/logs/$s.r$r.a$attempt.json"
    attempt=$((attempt + 1))
    retries_done=$((retries_done + 1))
    log "$s.r$r: not steady; attempt $attempt of $((steady_retries + 1))"
  done
  [ "$verdict" != 0 ] || { unsteady_runs=$((unsteady_runs + 1)); warn "$s.r$r: NOT steady after $attempt attempt(s); the run stays flagged"; }
  local tmp="$out.tmp"
  jq --arg n "$attempt" --arg h "$history" '.jobResults.properties += {steadyAttempts: $n, steadyHistory: $h}' "$out" > "$tmp" && mv "$tmp" "$out"
}

declare -A unavailable=()
retries_done=0 unsteady_runs=0
if [ "$mode" = fallback ]; then
  for ((r = 1; r <= rounds; r++)); do
    for s in $(round_order $((r + round_offset)) "${runnable[@]}"); do
      [ -n "${unavailable[$s]:-}" ] || run_steady "$s" "$r"
    done
  done
fi

# ---------------------------------------------------------------- report
# The README's table (ratios to full YARP and to the best of nginx/HAProxy, R, CPU us/request, allocated
# B/request, p99, steadiness) and the PNG charts, from the JSON files just written (analysis/Report).
shopt -s nullglob
result_files=("$json_dir"/*.r*.json)
shopt -u nullglob
if [ "$report" = 1 ] && [ "${#result_files[@]}" -gt 0 ]; then
  log "report: dotnet run --project analysis/Report -c Release -- ${json_dir#"$ROOT"/} (log: logs/report.log)"
  if (cd "$ROOT" && timeout 900 dotnet run --project analysis/Report/Report.csproj -c Release -- "$json_dir" --print-table) \
      > "$json_dir/logs/report.log" 2>&1; then
    sed -n '/^<!-- table:start -->/,/^<!-- table:end -->/p' "$json_dir/logs/report.log" | sed '1d;$d'
    log "report: ${json_dir#"$ROOT"/}/report.md"
  else
    warn "the report failed; last lines of logs/report.log:"
    tail -n 15 "$json_dir/logs/report.log" >&2 || true
    failures=$((failures + 1))
  fi
fi

if [ "$mode" = fallback ]; then
  log "steadiness: $retries_done retry(ies); $unsteady_runs run(s) still not steady after every attempt"
fi
if [ "$failures" -gt 0 ]; then
  warn "$failures run(s) failed"
  exit 1
fi
log "all runs succeeded"
