#!/usr/bin/env bash
# The four published proxy comparisons as runs on one machine; crank/run-local.sh hands its first argument
# "scaling", "sweep", "ab", "ramp" or "comparisons" (all four) to this script. crank/README.md, "Comparisons",
# describes each one and its benchmarks.yml scenarios.
#
#   scaling  horizontal scaling: 1, 2, 3, 5 Downstream replicas behind each proxy and each load-balancing policy,
#            wrk with 200 connections (the published YARP load-balancing comparison: k6, 200 virtual users); RPS, p95
#   sweep    10, 50, 100, 200 connections against /json (a small JSON answer) through llrp-llhttp, yarp, the tuned
#            nginx, nginx-default (Debian's stock proxy settings: no upstream keep-alive) and haproxy; RPS, p90, p95
#   ab       ApacheBench, 200 concurrent clients, one 26 KB page (/?s=26624), direct and through each proxy;
#            requests/s, mean time per request, failed requests (crank/ab-job.sh)
#   ramp     open-loop h2load at rising rates (crank/ramp-job.sh) through llrp-llhttp, nginx and haproxy: per step the
#            offered and achieved rate, p50/p99, availability, the proxy's CPU and memory
#
# usage: crank/run-local.sh COMPARISON [options]     (or crank/comparisons.sh COMPARISON [options])
#   COMPARISON      scaling | sweep | ab | ramp | comparisons (all four, in that order)
#   --rounds N      interleaved rounds (default 1)
#   --warmup S      unmeasured seconds before each measured run (default 20, as run-local.sh; ramp: at its first rate)
#   --duration S    measured seconds per run (default 15); ramp: seconds per step (default 10)
#   --proxies LIST  comma-separated, from llrp-llhttp,yarp,nginx,nginx-default,haproxy,direct (default: the
#                   comparison's own list)
#   --policies LIST scaling: load-balancing policies of llrp-llhttp and yarp (default: every one each has)
#   --replicas LIST scaling: replica counts (default 1,2,3,5)
#   --connections LIST  sweep: connection counts (default 10,50,100,200)
#   --scaling-connections N  scaling: wrk connections (default 200)
#   --ab-clients N  ab: concurrent clients (default 200)   --ab-path P  ab: the page (default /?s=26624)
#   --ramp-start R --ramp-step R --ramp-steps N --ramp-connections C   ramp (defaults 4000, 4000, 8, 100: 4k to 32k
#                   req/s; ramp-job.sh says where the range comes from)
#   --proxy-threads N  every proxy's threads or processes (benchmarks.yml's "threads", default 1: crank/README.md,
#                   "Equal threads"): nginx worker_processes, HAProxy nbthread, LLRP --engineThreads, YARP's
#                   DOTNET_PROCESSOR_COUNT
#   --proxy-port P / --downstream-port P   the proxy's port and the first replica's (replica i: P + i - 1);
#                   defaults 8080 / 8081 (then run under flock /tmp/llrp-ports.lock)
#   --json-dir DIR  where results go (default artifacts/crank/<date>-<time>-<comparison>)
#   --fallback      never use crank, even if it is installed
#   --no-install    never call apt-get
#   --no-report     do not write comparisons.md and the charts
# With crank (crank on PATH or in .tools/crank/, and an agent on http://127.0.0.1:5010) every run is
# "crank --config benchmarks.yml --scenario <comparison scenario> --profile local ..."; otherwise the same job
# scripts run directly. Writes <json-dir>/<comparison>.<proxy>[.<policy>].n<replicas>.c<connections>.r<round>.json
# (crank --json shape), comparisons.json (one row per run), comparisons.md with PNG charts, logs under logs/.
# Exit status: 0 every run succeeded, 1 a run failed, 2 bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CRANK_DIR="$ROOT/crank"
COMMAND_LINE="crank/run-local.sh$(printf ' %q' "$@")"
LLRP_POLICIES=(ConnectionRoundRobin PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests)
YARP_POLICIES=(PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests)
# Seconds a run costs beyond warm-up + measured time (start the replicas and the proxy, stop them, write the JSON).
RUN_OVERHEAD=8
ready_timeout=60

log() { printf '[comparisons %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
warn() { printf '[comparisons %s] WARNING: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
usage() { sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }
bad_usage() { echo "comparisons: $* (see --help)" >&2; exit 2; }
need_int() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] || bad_usage "$1 needs a whole number >= 1, got '$2'"; }
need_list() { [[ "$2" =~ ^[0-9]+(,[0-9]+)*$ ]] || bad_usage "$1 needs comma-separated whole numbers, got '$2'"; }

[ $# -gt 0 ] || bad_usage "name a comparison: scaling, sweep, ab, ramp or comparisons"
case "$1" in
  scaling|sweep|ab|ramp) comparisons=("$1") ;;
  comparisons) comparisons=(scaling sweep ab ramp) ;;
  -h|--help) usage ;;
  *) bad_usage "unknown comparison '$1' (scaling, sweep, ab, ramp, comparisons)" ;;
esac
what="$1"; shift

rounds=1 warmup=20 duration="" proxies_opt="" policies_opt="" replicas_opt=1,2,3,5 connections_opt=""
scaling_connections=200 ab_clients=200 ab_path='/?s=26624' ramp_start=4000 ramp_step=4000 ramp_steps=8 ramp_connections=100
proxy_port=8080 downstream_port=8081 json_dir="" use_crank=1 install=1 report=1
# The same count for every proxy; 1 as run-local.sh's default (benchmarks.yml's "threads" says why).
proxy_threads=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) need_int "$1" "${2:-}"; rounds="$2"; shift 2 ;;
    --warmup) [[ "${2:-}" =~ ^[0-9]+$ ]] || bad_usage "--warmup needs a whole number"; warmup="$2"; shift 2 ;;
    --duration) need_int "$1" "${2:-}"; duration="$2"; shift 2 ;;
    --proxies) [ -n "${2:-}" ] || bad_usage "--proxies needs a list"; proxies_opt="$2"; shift 2 ;;
    --policies) [ -n "${2:-}" ] || bad_usage "--policies needs a list"; policies_opt="$2"; shift 2 ;;
    --replicas) need_list "$1" "${2:-}"; replicas_opt="$2"; shift 2 ;;
    --connections) need_list "$1" "${2:-}"; connections_opt="$2"; shift 2 ;;
    --scaling-connections) need_int "$1" "${2:-}"; scaling_connections="$2"; shift 2 ;;
    --ab-clients) need_int "$1" "${2:-}"; ab_clients="$2"; shift 2 ;;
    --ab-path) [[ "${2:-}" == /* ]] || bad_usage "--ab-path must start with /"; ab_path="$2"; shift 2 ;;
    --ramp-start) need_int "$1" "${2:-}"; ramp_start="$2"; shift 2 ;;
    --ramp-step) need_int "$1" "${2:-}"; ramp_step="$2"; shift 2 ;;
    --ramp-steps) need_int "$1" "${2:-}"; ramp_steps="$2"; shift 2 ;;
    --ramp-connections) need_int "$1" "${2:-}"; ramp_connections="$2"; shift 2 ;;
    --proxy-threads) need_int "$1" "${2:-}"; proxy_threads="$2"; shift 2 ;;
    --proxy-port) need_int "$1" "${2:-}"; proxy_port="$2"; shift 2 ;;
    --downstream-port) need_int "$1" "${2:-}"; downstream_port="$2"; shift 2 ;;
    --json-dir) [ -n "${2:-}" ] || bad_usage "--json-dir needs a value"; json_dir="$2"; shift 2 ;;
    --fallback) use_crank=0; shift ;;
    --no-install) install=0; shift ;;
    --no-report) report=0; shift ;;
    -h|--help) usage ;;
    *) bad_usage "unknown option $1" ;;
  esac
done
IFS=, read -r -a replica_counts <<< "$replicas_opt"
for n in "${replica_counts[@]}"; do [ "$n" -ge 1 ] && [ "$n" -le 5 ] || bad_usage "--replicas: 1 to 5 replicas, got $n"; done
max_replicas=1
for n in "${replica_counts[@]}"; do [ "$n" -le "$max_replicas" ] || max_replicas="$n"; done
[ "$((downstream_port + max_replicas - 1))" -lt "$proxy_port" ] || [ "$downstream_port" -gt "$proxy_port" ] \
  || bad_usage "the replicas' ports $downstream_port..$((downstream_port + max_replicas - 1)) include the proxy's $proxy_port"

# proxies_for COMPARISON: the proxies (scenario names) that comparison runs.
proxies_for() {
  local list
  case "$1" in
    scaling) list=llrp-llhttp,yarp,nginx,haproxy ;;
    sweep) list=llrp-llhttp,yarp,nginx,nginx-default,haproxy ;;
    ab) list=direct,llrp-llhttp,yarp,nginx,haproxy ;;
    ramp) list=llrp-llhttp,nginx,haproxy ;;
  esac
  echo "${proxies_opt:-$list}"
}
for c in "${comparisons[@]}"; do
  IFS=, read -r -a ps <<< "$(proxies_for "$c")"
  for p in "${ps[@]}"; do
    case "$p" in
      llrp-llhttp|yarp|nginx|nginx-default|haproxy) ;;
      direct) [ "$c" = ab ] || [ "$c" = sweep ] || bad_usage "--proxies: direct runs in the ab and sweep comparisons only" ;;
      *) bad_usage "--proxies: unknown proxy '$p' (llrp-llhttp, yarp, nginx, nginx-default, haproxy, direct)" ;;
    esac
  done
done
# policies_for PROXY: the load-balancing policies scaling runs it with ("-": the proxy's only one, round-robin).
policies_for() {
  local all=() p kept=()
  case "$1" in
    llrp-llhttp) all=("${LLRP_POLICIES[@]}") ;;
    yarp) all=("${YARP_POLICIES[@]}") ;;
    *) echo -; return ;;
  esac
  if [ -z "$policies_opt" ]; then echo "${all[*]}"; return; fi
  IFS=, read -r -a wanted <<< "$policies_opt"
  for p in "${wanted[@]}"; do
    local found=0 a
    for a in "${all[@]}"; do [ "${a,,}" = "${p,,}" ] && { kept+=("$a"); found=1; }; done
    [ "$found" = 1 ] || [ "$1" != llrp-llhttp ] || bad_usage "--policies: unknown policy '$p' (${LLRP_POLICIES[*]})"
  done
  echo "${kept[*]:-}"
}
policies_for llrp-llhttp > /dev/null

[ -n "$json_dir" ] || json_dir="$ROOT/artifacts/crank/$(date +%Y%m%d-%H%M%S)-$what"
mkdir -p "$json_dir/logs"
json_dir="$(cd "$json_dir" && pwd)"
log "results go to ${json_dir#"$ROOT"/}"

# ---------------------------------------------------------------- tools
missing=()
command -v jq > /dev/null || missing+=(jq)
command -v perl > /dev/null || missing+=(perl-base)
command -v ss > /dev/null || missing+=(iproute2)
for c in "${comparisons[@]}"; do
  case "$c" in
    scaling|sweep) command -v wrk > /dev/null || missing+=(wrk) ;;
    ab) command -v ab > /dev/null || missing+=(apache2-utils) ;;
    ramp) command -v h2load > /dev/null || missing+=(nghttp2-client) ;;
  esac
  IFS=, read -r -a ps <<< "$(proxies_for "$c")"
  for p in "${ps[@]}"; do
    case "$p" in
      nginx|nginx-default) [ -x /usr/sbin/nginx ] || missing+=(nginx-light) ;;
      haproxy) [ -x /usr/sbin/haproxy ] || missing+=(haproxy) ;;
    esac
  done
done
if [ "${#missing[@]}" -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [ "$install" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    log "installing ${missing[*]} (apt-get)"
    timeout 600 apt-get update -qq > "$json_dir/logs/apt.log" 2>&1 || warn "apt-get update failed (see logs/apt.log)"
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      >> "$json_dir/logs/apt.log" 2>&1 || warn "apt-get install failed (see logs/apt.log)"
  else
    warn "missing ${missing[*]} and not installing them (not root, no apt-get, or --no-install)"
  fi
fi
command -v jq > /dev/null || { echo "comparisons: jq is required" >&2; exit 1; }
if [ -z "${DOTNET_ROOT:-}" ] && command -v dotnet > /dev/null; then
  DOTNET_ROOT="$(dirname "$(readlink -f "$(command -v dotnet)")")"
  export DOTNET_ROOT
fi

# ---------------------------------------------------------------- crank or fallback
crank_bin=""
for c in "$ROOT/.tools/crank/crank" "$ROOT/.tools/crank" "$(command -v crank || true)"; do
  if [ -n "$c" ] && [ -f "$c" ] && [ -x "$c" ]; then crank_bin="$c"; break; fi
done
mode=fallback
if [ "$use_crank" = 1 ] && [ -n "$crank_bin" ]; then
  mode=crank
  (exec 3<>/dev/tcp/127.0.0.1/5010) 2>/dev/null \
    || { echo "comparisons: crank needs an agent on http://127.0.0.1:5010 (crank/README.md), or use --fallback" >&2; exit 1; }
fi

# ---------------------------------------------------------------- processes (fallback)
# shellcheck source=crank/lib-process.sh
. "$CRANK_DIR/lib-process.sh"
trap stop_started_groups EXIT
trap 'warn "interrupted"; exit 130' INT
trap 'warn "terminated"; exit 143' TERM

declare -A published=()
publish() {  # publish APP: once per invocation
  [ -z "${published[$1]:-}" ] || return 0
  log "publishing $1 (logs/publish-$1.log)"
  timeout 900 "$CRANK_DIR/publish.sh" "$1" > "$json_dir/logs/publish-$1.log" 2>&1 \
    || { warn "publishing $1 failed (logs/publish-$1.log)"; return 1; }
  published[$1]=1
}

failures=0
git_head="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"

# tag_of COMPARISON PROXY POLICY REPLICAS CONNECTIONS ROUND: the run's file name stem.
tag_of() { echo "$1.$2$([ "$3" = - ] || echo ".$3").n$4.c$5.r$6"; }

# run_one COMPARISON PROXY POLICY REPLICAS CONNECTIONS ROUND: one run, one result file.
run_one() {
  local comparison="$1" proxy="$2" policy="$3" replicas="$4" conns="$5" round="$6"
  local tag; tag="$(tag_of "$@")" logs="$json_dir/logs"
  local out="$json_dir/$tag.json" path measured
  case "$comparison" in
    sweep) path=/json ;;
    ab) path="$ab_path" ;;
    *) path=/ ;;
  esac
  measured="$duration"
  if [ "$mode" = crank ]; then run_crank "$@"; return 0; fi

  local i busy="" ds_pids=() list=() target_port="$proxy_port"
  for ((i = 0; i < replicas; i++)); do port_busy $((downstream_port + i)) && busy="$busy $((downstream_port + i))"; done
  if [ "$proxy" != direct ] && port_busy "$proxy_port"; then busy="$busy $proxy_port"; fi
  if [ -n "$busy" ]; then warn "$tag: port(s)$busy already in use; run skipped"; start_failed "$@"; return 0; fi

  local ds_exe; ds_exe="$("$CRANK_DIR/publish.sh" --exe downstream)"
  for ((i = 1; i <= replicas; i++)); do
    local port=$((downstream_port + i - 1))
    start_group "$logs/$tag.downstream$i.log" "$(dirname "$ds_exe")" "$ds_exe" --urls "http://127.0.0.1:$port" --name "d$i"
    ds_pids+=("$STARTED_PID"); list+=("127.0.0.1:$port")
    wait_ready "$STARTED_PID" "$logs/$tag.downstream$i.log" "Application started." || { stop_started_groups; start_failed "$@"; return 0; }
  done

  local app_pid="" app_cmd=() ready="" app_dir="$CRANK_DIR" urls
  urls="$(printf 'http://%s;' "${list[@]}")"; urls="${urls%;}"
  case "$proxy" in
    direct) target_port="$downstream_port" ;;
    llrp-llhttp)
      app_dir="$(dirname "$("$CRANK_DIR/publish.sh" --exe llrp)")"
      app_cmd=("$app_dir/LLRP" --urls "http://127.0.0.1:$proxy_port" --downstream "$urls" --client llhttp --engineThreads "$proxy_threads")
      # ConnectionRoundRobin is LLRP's default: a build without the option runs it too.
      [ "$policy" = - ] || [ "$policy" = ConnectionRoundRobin ] || app_cmd+=(--loadBalancing "$policy")
      ready="Application started." ;;
    yarp)
      app_dir="$(dirname "$("$CRANK_DIR/publish.sh" --exe yarp)")"
      app_cmd=(env "DOTNET_PROCESSOR_COUNT=$proxy_threads" "$app_dir/YarpProxy" --urls "http://127.0.0.1:$proxy_port" --downstream "$urls")
      [ "$policy" = - ] || [ -z "$policy" ] || app_cmd+=(--loadBalancing "$policy")
      ready="Application started." ;;
    nginx|nginx-default)
      mkdir -p "$logs/$tag.nginx"
      app_cmd=(env LISTEN_ADDRESS=127.0.0.1 "LISTEN_PORT=$proxy_port" "DOWNSTREAMS=${list[*]}" "JOB_WORK_DIR=$logs/$tag.nginx"
               "NGINX_CONFIG=$([ "$proxy" = nginx ] && echo nginx.conf || echo nginx-default.conf)" "NGINX_WORKERS=$proxy_threads" "$CRANK_DIR/nginx-job.sh")
      ready="nginx-job: ready" ;;
    haproxy)
      app_cmd=(env LISTEN_ADDRESS=127.0.0.1 "LISTEN_PORT=$proxy_port" "DOWNSTREAMS=${list[*]}" "HAPROXY_THREADS=$proxy_threads" "$CRANK_DIR/haproxy-job.sh")
      ready="haproxy-job: ready" ;;
  esac
  if [ "$proxy" != direct ]; then
    start_group "$logs/$tag.application.log" "$app_dir" "${app_cmd[@]}"
    app_pid="$STARTED_PID"
    wait_ready "$app_pid" "$logs/$tag.application.log" "$ready" || { stop_started_groups; start_failed "$@"; return 0; }
  fi

  local url="http://127.0.0.1:$target_port$path" load_cmd=() samples="$logs/$tag.samples" sampled
  sampled="$( [ -n "$app_pid" ] && echo "application=$app_pid" || echo "downstream=${ds_pids[0]}")"
  case "$comparison" in
    scaling|sweep)
      load_cmd=(env "SAMPLE_PIDS=$sampled" "SAMPLE_OUT=$samples" "WRK_JOB_HOOK=$CRANK_DIR/proc-sample.sh"
        "$CRANK_DIR/wrk-job.sh" -w "$warmup" -d "$measured" -t 1 -c "$conns" --headers plaintext --max-errors 0 "$url") ;;
    ab)
      load_cmd=(env "SAMPLE_PIDS=$sampled" "SAMPLE_OUT=$samples" "AB_JOB_HOOK=$CRANK_DIR/proc-sample.sh"
        "$CRANK_DIR/ab-job.sh" -w "$warmup" -d "$measured" -c "$conns" "$url") ;;
    ramp)
      load_cmd=("$CRANK_DIR/ramp-job.sh" -w "$warmup" -d "$measured" -c "$conns" --start "$ramp_start" --step "$ramp_step"
        --steps "$ramp_steps" --proxy-pid "${app_pid:-${ds_pids[0]}}" "$url") ;;
  esac
  local bound=$(( warmup + measured + 60 ))
  [ "$comparison" != ramp ] || bound=$(( warmup + ramp_steps * (measured + 35) + 60 ))
  log "$tag: load on $url ($comparison: ${warmup}s warm-up, then $([ "$comparison" = ramp ] && echo "$ramp_steps steps of ${measured}s" || echo "${measured}s measured"))"
  local load_rc=0
  start_group "$logs/$tag.load.log" "$CRANK_DIR" timeout --kill-after=5 "$bound" "${load_cmd[@]}"
  local load_pid="$STARTED_PID"
  wait "$load_pid" || load_rc=$?
  stop_group "$load_pid" 1
  [ -z "$app_pid" ] || stop_group "$app_pid" 10
  local p; for p in "${ds_pids[@]}"; do stop_group "$p" 10; done

  local blocks="$logs/$tag.blocks" vars
  blocks_of "$logs/$tag.load.log" > "$blocks"
  vars="$(jq -n --argjson c "$conns" --argjson w "$warmup" --argjson d "$measured" --arg path "$path" \
    --argjson n "$replicas" --arg policy "$policy" \
    '{connections: $c, warmup: $w, duration: $d, path: $path, downstreams: $n} + (if $policy == "-" then {} else {loadBalancing: $policy} end)')"
  jq -n --slurpfile blocks "$blocks" --argjson vars "$vars" \
    --argjson env "{\"os\":\"linux\",\"arch\":\"$(uname -m)\",\"proc\":$(nproc),\"runner\":\"run-local\"}" \
    -f "$CRANK_DIR/results.jq" > "$logs/$tag.load.job.json"
  rm -f "$blocks"
  write_result "$out" "$logs/$tag.load.job.json" "$comparison" "$proxy" "$policy" "$replicas" "$conns" "$round" fallback "$load_rc"
  rm -f "$logs/$tag.load.job.json"
  if [ "$load_rc" != 0 ]; then
    warn "$tag: load job failed with exit code $load_rc (logs/$tag.load.log)"; failures=$((failures + 1))
  else
    log "$tag: $(summary_of "$out")"
  fi
}

# start_failed COMPARISON PROXY POLICY REPLICAS CONNECTIONS ROUND: a run that never reached its load still has a
# result file (returnCode 1, no figures), so the report counts it.
start_failed() {
  local stem; stem="$(tag_of "$@")"
  echo '{}' > "$json_dir/logs/$stem.load.job.json"
  write_result "$json_dir/$stem.json" "$json_dir/logs/$stem.load.job.json" "$1" "$2" "$3" "$4" "$5" "$6" fallback not-started
  rm -f "$json_dir/logs/$stem.load.job.json"
  failures=$((failures + 1))
}

# write_result OUT LOAD_JOB_JSON COMPARISON PROXY POLICY REPLICAS CONNECTIONS ROUND MODE RC
write_result() {
  jq -n --slurpfile load "$2" --arg comparison "$3" --arg proxy "$4" --arg policy "$5" --arg replicas "$6" \
    --arg connections "$7" --arg round "$8" --arg mode "$9" --arg rc "${10}" --arg commit "$git_head" \
    '{returnCode: (if $rc == "0" then 0 else 1 end),
      jobResults: {jobs: {load: $load[0]},
        properties: {comparison: $comparison, scenario: $proxy, loadBalancing: $policy, downstreams: $replicas,
          connections: $connections, round: $round, runner: "crank/run-local.sh", mode: $mode, commit: $commit,
          loadExitCode: $rc}},
      benchmarks: []}' > "$1"
}

summary_of() {
  jq -r '.jobResults.jobs.load.results as $r
    | if $r["ramp/rps/max"] != null then "max \($r["ramp/rps/max"] | floor) rps over \($r["ramp/offered"] | length) steps"
      elif $r["ab/rps/mean"] != null then "\($r["ab/rps/mean"] | floor) rps, \($r["ab/time-per-request/mean"]) ms/request, failed \($r["ab/failed"])"
      else "\($r["wrk/rps/mean"] // 0 | floor) rps, p90 \($r["wrk/latency/90"] // "?") ms, p95 \($r["wrk/latency/95"] // "?") ms" end' "$1"
}

# crank: the comparison's benchmarks.yml scenario with the same variables (crank/README.md, "Comparisons").
run_crank() {
  local comparison="$1" proxy="$2" policy="$3" replicas="$4" conns="$5" round="$6"
  local tag scenario args=(); tag="$(tag_of "$@")"
  case "$comparison" in
    sweep) scenario="$proxy"; args=(--variable path=/json) ;;
    *) scenario="$comparison-$proxy" ;;
  esac
  args+=(--config "$ROOT/benchmarks.yml" --scenario "$scenario" --profile local --json "$json_dir/$tag.crank.json"
    --variable "connections=$conns" --variable "warmup=$warmup" --variable "duration=$duration"
    --variable "serverPort=$proxy_port" --variable "downstreamPort=$downstream_port" --variable "downstreams=$replicas"
    --variable "threads=$proxy_threads")
  [ "$policy" = - ] || args+=(--variable "loadBalancing=$policy")
  [ "$comparison" != ab ] || args+=(--variable "abPath=$ab_path")
  [ "$comparison" != ramp ] || args+=(--variable "rampStart=$ramp_start" --variable "rampStep=$ramp_step" --variable "rampSteps=$ramp_steps")
  log "$tag: crank ${args[*]}"
  local rc=0
  (cd "$ROOT" && timeout $(( warmup + duration * (ramp_steps + 1) + 900 )) "$crank_bin" "${args[@]}") \
    > "$json_dir/logs/$tag.crank.log" 2>&1 || rc=$?
  if [ -f "$json_dir/$tag.crank.json" ]; then
    jq '.jobResults.jobs.load' "$json_dir/$tag.crank.json" > "$json_dir/logs/$tag.load.job.json"
    write_result "$json_dir/$tag.json" "$json_dir/logs/$tag.load.job.json" "$comparison" "$proxy" "$policy" "$replicas" "$conns" "$round" crank "$rc"
    rm -f "$json_dir/logs/$tag.load.job.json"
  fi
  [ "$rc" = 0 ] || { warn "$tag: crank failed (logs/$tag.crank.log)"; failures=$((failures + 1)); }
}

# ---------------------------------------------------------------- the runs
plan=()   # "comparison proxy policy replicas connections"
for c in "${comparisons[@]}"; do
  IFS=, read -r -a ps <<< "$(proxies_for "$c")"
  for p in "${ps[@]}"; do
    case "$c" in
      scaling)
        for pol in $(policies_for "$p"); do for n in "${replica_counts[@]}"; do plan+=("$c $p $pol $n $scaling_connections"); done; done ;;
      sweep)
        IFS=, read -r -a cs <<< "${connections_opt:-10,50,100,200}"
        for k in "${cs[@]}"; do plan+=("$c $p - 1 $k"); done ;;
      ab) plan+=("$c $p - 1 $ab_clients") ;;
      ramp) plan+=("$c $p - 1 $ramp_connections") ;;
    esac
  done
done
[ "${#plan[@]}" -gt 0 ] || bad_usage "nothing to run (check --proxies and --policies)"

for entry in "${plan[@]}"; do
  read -r _ p _ _ _ <<< "$entry"
  case "$p" in
    llrp-llhttp) [ "$mode" = crank ] || publish llrp || exit 1 ;;
    yarp) [ "$mode" = crank ] || publish yarp || exit 1 ;;
  esac
done
[ "$mode" = crank ] || publish downstream || exit 1

expected=0
for entry in "${plan[@]}"; do
  read -r c _ _ _ _ <<< "$entry"
  d="${duration:-$([ "$c" = ramp ] && echo 10 || echo 15)}"
  if [ "$c" = ramp ]; then expected=$(( expected + warmup + ramp_steps * d + RUN_OVERHEAD ));
  else expected=$(( expected + warmup + d + RUN_OVERHEAD )); fi
done
expected=$(( expected * rounds ))
log "mode: $mode; ${#plan[@]} run(s) x $rounds round(s); expected run time ~$(( (expected + 59) / 60 )) min"

jq -n --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg commit "$git_head" --arg command "$COMMAND_LINE" --arg mode "$mode" \
  --argjson nproc "$(nproc)" --arg cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
  --arg wrk "$(wrk -v 2>&1 | head -n 1 || true)" --arg ab "$(ab -V 2>/dev/null | head -n 1 || true)" \
  --arg h2load "$(h2load --version 2>/dev/null | head -n 1 || true)" --arg nginx "$(/usr/sbin/nginx -v 2>&1 || true)" \
  --arg haproxy "$(/usr/sbin/haproxy -v 2>/dev/null | head -n 1 || true)" \
  '{date: $date, commit: $commit, command: $command, mode: $mode, nproc: $nproc, cpuModel: $cpu,
    tools: {wrk: $wrk, ab: $ab, h2load: $h2load, nginx: $nginx, haproxy: $haproxy}}' > "$json_dir/run.json"

for ((r = 1; r <= rounds; r++)); do
  for entry in "${plan[@]}"; do
    read -r c p pol n k <<< "$entry"
    saved="$duration"
    [ -n "$duration" ] || duration="$([ "$c" = ramp ] && echo 10 || echo 15)"
    run_one "$c" "$p" "$pol" "$n" "$k" "$r"
    duration="$saved"
  done
done

# ---------------------------------------------------------------- aggregate and report
shopt -s nullglob
results=("$json_dir"/*.r[0-9]*.json)
shopt -u nullglob
results=("${results[@]/*.crank.json/}")
if [ "${#results[@]}" -gt 0 ]; then
  jq -s --slurpfile run "$json_dir/run.json" '{run: $run[0], rows: [.[] | select(.jobResults != null) | .jobResults as $j
      | ($j.properties) + {ok: (.returnCode == 0), results: ($j.jobs.load.results // {})}]}' \
    $(printf '%s\n' "${results[@]}" | grep -v '^$') > "$json_dir/comparisons.json"
  log "aggregated: ${json_dir#"$ROOT"/}/comparisons.json"
  if [ "$report" = 1 ]; then
    if (cd "$ROOT" && timeout 900 dotnet run --project analysis/Report/Report.csproj -c Release -- --comparisons "$json_dir") \
        > "$json_dir/logs/report.log" 2>&1; then
      log "report: ${json_dir#"$ROOT"/}/comparisons.md"
    else
      warn "the report failed; last lines of logs/report.log:"; tail -n 15 "$json_dir/logs/report.log" >&2 || true
      failures=$((failures + 1))
    fi
  fi
fi
if [ "$failures" -gt 0 ]; then warn "$failures run(s) failed"; exit 1; fi
log "all runs succeeded"
