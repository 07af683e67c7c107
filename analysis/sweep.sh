#!/usr/bin/env bash
# Benchmark sweep: connection counts and response sizes (and PGO profiles), repeated in interleaved rounds through
# crank/run-local.sh, then analysis/Report on the saved JSON (the same report run-local.sh writes). Keeps to a time
# budget by cutting rounds, never the warm-up: every point of a sitting gets the same warm-up and duration, so the
# default, pgo and nopgo points are comparable.
#
# usage: analysis/sweep.sh [options] [SCENARIO...]
#   SCENARIO             default: every scenario of benchmarks.yml (direct nginx haproxy yarp, the four llrp-*
#                        variants, httpclientproxy)
#   --quick              try the pipeline in a few minutes: 1 round, 1 s + 2 s runs, connections 32 64, size 1 KB,
#                        no adaptive warm-up or retries (too short for steady state: for trying the scripts only)
#   --budget-minutes M   stop starting runs once M minutes are used (default 180; 6 with --quick); the measured
#                        duration shrinks to fit the plan, down to 10 s; the warm-up never shrinks
#   --rounds N           rounds (default 3); each round runs every point once, scenarios interleaved inside, in
#                        each round's own order (crank/lib-rounds.sh, through run-local.sh --round-offset)
#   --connections LIST   connection sweep at the default response size, comma-separated (default 64,256)
#   --sizes LIST         response sizes in bytes for the size sweep, as the origin's /?s=N at the base connections
#                        (default: none; e.g. 1024,65536; with --origin nginx only sizes the origin serves,
#                        crank/nginx-job.sh's ORIGIN_BODY_SIZES); 10 B, the origin's body for /, is the base point
#   --base-connections C connections for the size sweep and the PGO points (default 64)
#   --duration S / --warmup S   fixed seconds per run (default warm-up: 20 s, run-local.sh's; docs/methodology.md)
#   --warmup-max S       .NET scenarios: adaptive warm-up until the proxy's JIT is quiet, at most S seconds
#                        (run-local.sh's --warmup-max, default 60; 0: fixed warm-up)
#   --steady-retries N   run an unsteady run again, at most N more times (run-local.sh's, default 2)
#   --pgo | --no-pgo     also run the .NET variants with run-local's --pgo and --nopgo at the base point
#                        (default: on, except with --quick)
#   --pgo-connections LIST  the connection counts of those pgo and nopgo points, comma-separated (default: the
#                        base connections)
#   Topology: run-local.sh's default unless one of these is given (--pin-proxy --origin nginx where it can run)
#   --pin                pass --pin to run-local.sh (wrk on CPU 0, proxy + origin on CPU 1)
#   --pin-proxy          pass --pin-proxy to run-local.sh (the proxy alone on CPU 1, wrk + origin on CPU 0)
#   --origin O           pass --origin O to run-local.sh: nginx or downstream (the Downstream app)
#   --shared             pass --shared to run-local.sh (nothing pinned, Downstream as the origin)
#   --proxy-threads N    pass --proxy-threads N to run-local.sh: every proxy's threads or processes (default 1; run
#                        the sweep once per count, each with its own --out)
#   --headers H / --request-body-size N / --request-body-framing F   pass the request matrix to run-local.sh
#                        (crank/README.md, "The matrix"): every point of the sweep sends that request
#   --ports P,Q          proxy and origin ports (default 18080,18081, away from crank/smoke.sh's 8080/8081;
#                        when either is in use, the next free pair P+10,Q+10 ...)
#   --out DIR            results directory (default analysis/results/<date>-<nproc>cpu-<cpu model>-<topology>;
#                        with --quick artifacts/analysis/..., which git ignores)
#   --dry-run            print the plan and the time estimate, run nothing
#   --no-report          do not run analysis/Report at the end
#   --no-install         never call apt-get (otherwise, as root, a missing jq is installed here and wrk, nginx,
#                        HAProxy by run-local.sh)
#   --fallback           pass --fallback to run-local.sh (run the job scripts directly even where crank is installed)
# Output: DIR/<point>/r<round>/ (run-local.sh's JSON, run.json, machine.txt, logs/), DIR/sitting.json (every run,
# run.json and sweep.json folded by analysis/aggregate.sh; `analysis/aggregate.sh --prune DIR` leaves only it before a
# sitting is committed), DIR/sweep.json (machine, commit, plan, every command), DIR/machine.txt, DIR/sweep.log, and
# DIR/report.md + PNG charts.
# Exit status: 0 when every run succeeded, 1 when some failed or were cut by the budget, 2 on bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_LOCAL="$ROOT/crank/run-local.sh"
SWEEP_COMMAND="analysis/sweep.sh$(printf ' %q' "$@")"

quick=0 budget_min="" rounds="" conns="" sizes="" base_c=64 pgo_conns="" fixed_d="" fixed_w="" pgo="" pin="" origin="" shared=0
warmup_max="" steady_retries="" matrix_args=()
proxy_port=18080 origin_port=18081 out="" dry=0 report=1 install=1 fallback=0
scenarios=()
# Seconds a run costs beyond warm-up + measured time (start origin and proxy, readiness, stop, JSON), and a
# run-local.sh invocation beyond its runs (publishing the apps, up to date). Measured on the 2-core box; the
# running averages replace them once the sweep has timed its own invocations.
RUN_OVERHEAD=6
INVOCATION_OVERHEAD=10
# The expected cost of steadiness on top of that, per run: the adaptive warm-up of a .NET run past its 20 s minimum
# (assumed 10 s) and retries (assumed one run in eight, so an eighth of a run is added to every run). Both are
# estimates, not yet measured by a sitting with the adaptive warm-up; --dry-run also prints the longest case.
ADAPTIVE_EXTRA=10
RETRY_SHARE=8

die() { echo "sweep: $*" >&2; exit 2; }
need_int() { [[ "$2" =~ ^[0-9]+$ ]] || die "$1 needs a whole number, got '$2'"; }
need_list() { [[ "$2" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "$1 needs a comma-separated list of whole numbers, got '$2'"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --budget-minutes) need_int "$1" "${2:-}"; budget_min="$2"; shift 2 ;;
    --rounds) need_int "$1" "${2:-}"; rounds="$2"; shift 2 ;;
    --connections) need_list "$1" "${2:-}"; conns="$2"; shift 2 ;;
    --sizes) sizes="${2-}"; if [ -z "$sizes" ]; then sizes=none; else need_list "$1" "$sizes"; fi; shift 2 ;;
    --base-connections) need_int "$1" "${2:-}"; base_c="$2"; shift 2 ;;
    --duration) need_int "$1" "${2:-}"; fixed_d="$2"; shift 2 ;;
    --warmup) need_int "$1" "${2:-}"; fixed_w="$2"; shift 2 ;;
    --warmup-max) need_int "$1" "${2:-}"; warmup_max="$2"; shift 2 ;;
    --steady-retries) need_int "$1" "${2:-}"; steady_retries="$2"; shift 2 ;;
    --pgo) pgo=1; shift ;;
    --pgo-connections) need_list "$1" "${2:-}"; pgo_conns="$2"; shift 2 ;;
    --no-pgo) pgo=0; shift ;;
    --pin|--pin-proxy) [ -z "$pin" ] || [ "$pin" = "$1" ] || die "--pin and --pin-proxy exclude each other"; pin="$1"; shift ;;
    --shared) shared=1; shift ;;
    --origin) case "${2:-}" in downstream|nginx) origin="$2" ;; *) die "--origin must be downstream or nginx, not '${2:-}'" ;; esac; shift 2 ;;
    --proxy-threads|--request-body-size) need_int "$1" "${2:-}"; matrix_args+=("$1" "$2"); shift 2 ;;
    --headers|--request-body-framing) [ -n "${2:-}" ] || die "$1 needs a value"; matrix_args+=("$1" "$2"); shift 2 ;;
    --ports) [[ "${2:-}" =~ ^[0-9]+,[0-9]+$ ]] || die "--ports needs P,Q"; proxy_port="${2%,*}"; origin_port="${2#*,}"; shift 2 ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --no-report) report=0; shift ;;
    --no-install) install=0; shift ;;
    --fallback) fallback=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    -*) die "unknown option $1 (--help)" ;;
    *) scenarios+=("$1"); shift ;;
  esac
done

if [ "$quick" = 1 ]; then
  : "${budget_min:=6}" "${rounds:=1}" "${conns:=32,64}" "${sizes:=1024}" "${pgo:=0}" "${fixed_d:=2}" "${fixed_w:=1}"
  # Too short to be steady anyway: no adaptive warm-up, no retries.
  : "${warmup_max:=0}" "${steady_retries:=0}"
else
  : "${budget_min:=180}" "${rounds:=3}" "${conns:=64,256}" "${sizes:=}" "${pgo:=1}"
  # run-local.sh's default warm-up, the steady-state floor (docs/methodology.md).
  : "${fixed_w:=20}"
fi
[ "$sizes" != none ] || sizes=""
[ "$rounds" -ge 1 ] || die "--rounds must be >= 1"
[ "$budget_min" -ge 1 ] || die "--budget-minutes must be >= 1"
[ -z "$fixed_d" ] || [ "$fixed_d" -ge 1 ] || die "--duration must be >= 1"
[ -x "$RUN_LOCAL" ] || die "crank/run-local.sh not found or not executable"
bash -n "$RUN_LOCAL" || die "crank/run-local.sh does not parse (work in progress?)"

started=$(date +%s)
deadline=$(( started + budget_min * 60 ))
log() { printf '[sweep %s +%ds] %s\n' "$(date +%H:%M:%S)" "$(( $(date +%s) - started ))" "$*"; }
warn() { printf '[sweep %s +%ds] WARNING: %s\n' "$(date +%H:%M:%S)" "$(( $(date +%s) - started ))" "$*" >&2; }

# Other work on the box may hold the ports (a colleague's test, a smoke run): move to the next free pair.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_ports() {
  local i
  for ((i = 0; i < 20; i++)); do
    if ! port_busy "$proxy_port" && ! port_busy "$origin_port"; then return 0; fi
    log "ports $proxy_port/$origin_port are in use; trying $((proxy_port + 10))/$((origin_port + 10))"
    proxy_port=$((proxy_port + 10)); origin_port=$((origin_port + 10))
  done
  return 1
}

# ---------------------------------------------------------------- scenarios
dotnet_scenario() { case "$1" in llrp-*|httpclientproxy|yarp) return 0 ;; *) return 1 ;; esac; }

if [ "${#scenarios[@]}" -eq 0 ]; then
  scenarios=(direct nginx haproxy yarp llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy)
fi
dotnet_scenarios=()
for s in "${scenarios[@]}"; do if dotnet_scenario "$s"; then dotnet_scenarios+=("$s"); fi; done
if [ "$pgo" = 1 ] && [ "${#dotnet_scenarios[@]}" -eq 0 ]; then pgo=0; fi

# ---------------------------------------------------------------- plan
# A point is one run-local.sh invocation per round: NAME CONNECTIONS PATH PROFILE SCENARIOS...
points=()
IFS=, read -r -a conn_list <<< "$conns"
IFS=, read -r -a size_list <<< "$sizes"
for c in "${conn_list[@]}"; do points+=("c$c-s10|$c|/||${scenarios[*]}"); done
for z in "${size_list[@]}"; do
  [ -n "$z" ] || continue
  [ "$z" != 10 ] || continue
  points+=("c$base_c-s$z|$base_c|/?s=$z||${scenarios[*]}")
done
case ",$conns," in *",$base_c,"*) ;; *) [ -z "$sizes" ] || points+=("c$base_c-s10|$base_c|/||${scenarios[*]}") ;; esac
if [ "$pgo" = 1 ]; then
  IFS=, read -r -a pgo_conn_list <<< "${pgo_conns:-$base_c}"
  for c in "${pgo_conn_list[@]}"; do
    points+=("c$c-s10-pgo|$c|/|pgo|${dotnet_scenarios[*]}")
    points+=("c$c-s10-nopgo|$c|/|nopgo|${dotnet_scenarios[*]}")
  done
fi

runs_per_round=0 dotnet_runs_per_round=0
for p in "${points[@]}"; do
  IFS='|' read -r _ _ _ _ list <<< "$p"
  read -r -a ss <<< "$list"
  runs_per_round=$(( runs_per_round + ${#ss[@]} ))
  for s in "${ss[@]}"; do if dotnet_scenario "$s"; then dotnet_runs_per_round=$((dotnet_runs_per_round + 1)); fi; done
done
budget_s=$(( budget_min * 60 ))
report_reserve=$(( report ? 45 : 0 ))
# run-local.sh's defaults when not given here.
: "${warmup_max:=60}" "${steady_retries:=2}"
adaptive=$(( warmup_max > fixed_w ? 1 : 0 ))
estimate() {  # estimate WARMUP DURATION -> seconds for the whole plan: typical adaptive warm-up and retries
  local run=$(( $1 + $2 + RUN_OVERHEAD ))
  echo $(( rounds * (${#points[@]} * INVOCATION_OVERHEAD + runs_per_round * run + dotnet_runs_per_round * adaptive * ADAPTIVE_EXTRA
    + (steady_retries > 0 ? runs_per_round * run / RETRY_SHARE : 0)) + report_reserve ))
}
longest() {  # longest WARMUP DURATION -> seconds when every .NET run warms up to the cap and every run takes every attempt
  echo $(( rounds * (${#points[@]} * INVOCATION_OVERHEAD + (1 + steady_retries) * (runs_per_round * ($1 + $2 + RUN_OVERHEAD)
    + dotnet_runs_per_round * adaptive * (warmup_max - $1))) + report_reserve ))
}
warmup="$fixed_w"
if [ -n "$fixed_d" ]; then
  duration="$fixed_d"
else
  # Longest measured time (15 s, run-local's default, down to 10 s) whose plan fits the budget; the warm-up stays.
  duration=15
  while [ "$(estimate "$warmup" "$duration")" -gt "$budget_s" ] && [ "$duration" -gt 10 ]; do
    duration=$(( duration - 1 ))
  done
fi
total_estimate="$(estimate "$warmup" "$duration")"

if [ -z "$out" ]; then
  cpu_slug="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | tr '[:upper:]' '[:lower:]' | sed 's/([^)]*)//g; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//' | cut -c1-32)"
  # --quick runs are for trying the pipeline, too short to keep: they go under the ignored artifacts/.
  if [ "$quick" = 1 ]; then parent="$ROOT/artifacts/analysis"; else parent="$ROOT/analysis/results"; fi
  # The topology in the name, as the committed sittings have it (run-local.sh's default: pin-proxy-nginx-origin).
  topo=""
  if [ "$shared" = 1 ] && [ -z "$pin$origin" ]; then topo=-shared
  elif [ -z "$pin$origin" ] && [ "$shared" = 0 ]; then topo=-pin-proxy-nginx-origin
  else topo="${pin:+-${pin#--}}$([ "$origin" != nginx ] || echo -nginx-origin)"; fi
  out="$parent/$(date +%Y%m%d-%H%M)-$(nproc)cpu-${cpu_slug:-unknown}$topo$([ "$quick" = 0 ] || echo -quick)"
fi

log "plan: ${#points[@]} point(s) x $rounds round(s), $runs_per_round run(s) per round, ${warmup}s warm-up + ${duration}s measured per run"
for p in "${points[@]}"; do
  IFS='|' read -r name c path profile list <<< "$p"
  log "  $name: -c $c, path $path${profile:+, --$profile}: $list"
done
log "estimate: ~$(( (total_estimate + 59) / 60 )) min of a ${budget_min} min budget (with the typical adaptive warm-up and retries; at most ~$(( ($(longest "$warmup" "$duration") + 59) / 60 )) min if every .NET run needed the ${warmup_max}s cap and every run all $((steady_retries + 1)) attempts); results: ${out#"$ROOT"/}"
if [ "$total_estimate" -gt "$budget_s" ]; then
  warn "the plan does not fit the budget even with ${warmup}s + ${duration}s runs: the last rounds will be cut (fewer points, sizes or rounds, or a larger --budget-minutes)"
fi
[ "$dry" = 0 ] || exit 0

# ---------------------------------------------------------------- tools
# jq writes sweep.json; wrk, nginx and HAProxy are run-local.sh's to install.
missing=()
command -v jq > /dev/null || missing+=(jq)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$install" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    log "installing ${missing[*]} (apt-get)"
    { timeout 600 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
      > /dev/null 2>&1 || warn "apt-get install ${missing[*]} failed"
  else
    warn "missing ${missing[*]} and not installing them (not root, no apt-get, or --no-install)"
  fi
fi
command -v jq > /dev/null || { echo "sweep: jq is required (apt-get install -y jq)" >&2; exit 1; }

# ---------------------------------------------------------------- machine facts
mkdir -p "$out"
out="$(cd "$out" && pwd)"
exec > >(tee -a "$out/sweep.log") 2>&1
git_head="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
# A whole status (not piped into head: pipefail would turn its SIGPIPE into a failure), leaving out the sitting's
# own output folder, which this script has just created inside the repository.
out_rel="${out#"$ROOT"/}"
git_dirty=0; [ -z "$(git -C "$ROOT" status --porcelain -- . ":(exclude)$out_rel" 2>/dev/null)" ] || git_dirty=1
cpu_model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
dotnet_sdk="$(dotnet --version 2>/dev/null || echo none)"
dotnet_runtime="$(dotnet --list-runtimes 2>/dev/null | awk '$1 == "Microsoft.NETCore.App" { v = $2 } END { print v }')"
{
  echo "date:          $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:        $git_head$([ "$git_dirty" = 0 ] || echo ' (work tree has uncommitted changes)')"
  echo "nproc:         $(nproc)"
  echo "cpu:           $cpu_model"
  echo "memory:        $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "kernel:        $(uname -r)"
  echo "dotnet sdk:    $dotnet_sdk"
  echo "dotnet runtime: ${dotnet_runtime:-none}"
  echo "load average:  $(cut -d' ' -f1-3 /proc/loadavg) (at the start)"
  echo "command:       $SWEEP_COMMAND"
} > "$out/machine.txt"

# The apps are published again by every run-local.sh invocation, so an edit under src/ during the sweep would mix
# builds: fingerprint the sources before each invocation and say so when it changes.
source_state() {
  (cd "$ROOT" && { git diff HEAD -- src crank 2>/dev/null; git ls-files -o --exclude-standard -z -- src crank 2>/dev/null | xargs -0 -r sha1sum; } | sha1sum | cut -c1-12)
}
first_state="$(source_state)"
start_state="$first_state"
commands=()
warnings=()
write_sweep_json() {
  local cmds
  cmds="$(printf '%s\n' "${commands[@]}" | jq -R . | jq -s 'map(select(length > 0))')"
  local warns
  warns="$(printf '%s\n' "${warnings[@]}" | jq -R . | jq -s 'map(select(length > 0))')"
  jq -n --arg date "$(date -u -d "@$started" +%Y-%m-%dT%H:%M:%SZ)" --arg commit "$git_head" --argjson dirty "$git_dirty" \
    --argjson nproc "$(nproc)" --arg cpu "$cpu_model" --arg kernel "$(uname -r)" --arg sdk "$dotnet_sdk" \
    --arg runtime "${dotnet_runtime:-}" --arg command "$SWEEP_COMMAND" --argjson commands "$cmds" \
    --argjson rounds "$rounds" --argjson warmup "$warmup" --argjson duration "$duration" --argjson budget "$budget_min" \
    --arg loadavg "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson quick "$quick" \
    --argjson points "$(printf '%s\n' "${points[@]}" | jq -R 'split("|") | {name: .[0], connections: (.[1] | tonumber), path: .[2], profile: .[3], scenarios: (.[4] | split(" "))}' | jq -s .)" \
    --arg status "$1" --argjson warnings "$warns" --arg sourceState "$start_state" \
    '{date: $date, commit: $commit, dirty: ($dirty > 0), nproc: $nproc, cpuModel: $cpu, kernel: $kernel,
      dotnetVersion: $sdk, dotnetRuntime: $runtime, command: $command, commands: $commands, rounds: $rounds,
      warmup: $warmup, duration: $duration, budgetMinutes: $budget, quick: ($quick == 1), points: $points,
      loadAverageAtEnd: $loadavg, status: $status, sourceStateAtStart: $sourceState, warnings: $warnings}' > "$out/sweep.json"
}
write_sweep_json running

# ---------------------------------------------------------------- run
child=""
on_signal() {
  warn "interrupted; stopping the current run-local.sh"
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  write_sweep_json interrupted
  exit 130
}
trap on_signal INT TERM

failures=0 cut=0 done_invocations=0 spent_invocations=0 spent_runs=0 timed_runs=0
total_invocations=$(( rounds * ${#points[@]} ))
for ((r = 1; r <= rounds; r++)); do
  for p in "${points[@]}"; do
    IFS='|' read -r name c path profile list <<< "$p"
    read -r -a ss <<< "$list"
    # Cost of this invocation, from the sweep's own timings once it has some.
    per_run=$(( warmup + duration + RUN_OVERHEAD ))
    [ "$timed_runs" = 0 ] || per_run=$(( (spent_runs + timed_runs - 1) / timed_runs ))
    inv_over=$INVOCATION_OVERHEAD
    [ "$done_invocations" = 0 ] || inv_over=$(( spent_invocations / done_invocations ))
    need=$(( inv_over + ${#ss[@]} * per_run ))
    left=$(( deadline - $(date +%s) - report_reserve ))
    if [ "$need" -gt "$left" ]; then
      warnings+=("round $r $name: skipped by the budget (needed ~${need}s, ${left}s left)")
      warn "${warnings[-1]}"
      cut=$((cut + 1)); continue
    fi
    dir="$out/$name/r$r"
    if ! pick_ports; then
      warnings+=("round $r $name: no free port pair from $proxy_port upwards; skipped")
      warn "${warnings[-1]}"
      failures=$((failures + 1)); continue
    fi
    state="$(source_state)"
    if [ "$state" != "$first_state" ]; then
      warnings+=("src/ or crank/ changed during the sweep (fingerprint $first_state -> $state before round $r $name): later runs measure another build")
      warn "${warnings[-1]}"
      first_state="$state"
    fi
    # --no-report: one report over the whole sweep at the end.
    # --round-offset: round r runs its scenarios in round r's order (crank/lib-rounds.sh), though run-local.sh runs one.
    args=(--rounds 1 --round-offset $((r - 1)) --warmup "$warmup" --warmup-max "$warmup_max" --steady-retries "$steady_retries"
          --duration "$duration" --connections "$c" --path "$path" --no-report
          --proxy-port "$proxy_port" --downstream-port "$origin_port" --json-dir "$dir")
    [ -z "$profile" ] || args+=("--$profile")
    [ -z "$pin" ] || args+=("$pin")
    [ -z "$origin" ] || args+=(--origin "$origin")
    args+=("${matrix_args[@]}")
    [ "$shared" = 0 ] || args+=(--shared)
    [ "$install" = 1 ] || args+=(--no-install)
    [ "$fallback" = 0 ] || args+=(--fallback)
    cmd="crank/run-local.sh$(printf ' %q' "${args[@]}" "${ss[@]}")"
    commands+=("$cmd")
    write_sweep_json running
    log "[$(( done_invocations + cut + 1 ))/$total_invocations] round $r, $name (-c $c, $path${profile:+, $profile}): ${ss[*]}"
    t0=$(date +%s)
    # Hard limit: twice the estimate plus a minute, never past the budget by more than two minutes.
    limit=$(( need * 2 + 60 )); [ "$limit" -le $(( left + 120 )) ] || limit=$(( left + 120 ))
    rc=0
    # run-local.sh prints its own "[run-local ...]" progress lines; timeout stops it (SIGTERM: it cleans up).
    (cd "$ROOT" && exec timeout --kill-after=30 "$limit" "$RUN_LOCAL" "${args[@]}" "${ss[@]}") &
    child=$!
    wait "$child" || rc=$?
    child=""
    t1=$(date +%s)
    # Split the time into publishing (until run-local.sh writes run.json) and runs, for the next estimates.
    n_json=0
    for s in "${ss[@]}"; do [ ! -f "$dir/$s.r1.json" ] || n_json=$((n_json + 1)); done
    if [ "$n_json" -gt 0 ]; then
      pub=$(( $(stat -c %Y "$dir/run.json" 2>/dev/null || echo "$t0") - t0 ))
      [ "$pub" -ge 0 ] || pub=0
      spent_invocations=$(( spent_invocations + pub ))
      spent_runs=$(( spent_runs + (t1 - t0 - pub) )); timed_runs=$(( timed_runs + n_json ))
    else
      spent_invocations=$(( spent_invocations + t1 - t0 ))
    fi
    done_invocations=$((done_invocations + 1))
    if [ "$n_json" -lt "${#ss[@]}" ]; then
      warnings+=("round $r $name: $(( ${#ss[@]} - n_json )) of ${#ss[@]} scenario(s) wrote no result (run-local.sh lines in sweep.log; logs in ${dir#"$out"/}/logs)")
      warn "${warnings[-1]}"
      failures=$((failures + 1))
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      warnings+=("round $r $name: run-local.sh hit the ${limit}s limit")
      warn "${warnings[-1]}"
      failures=$((failures + 1))
    elif [ "$rc" != 0 ]; then
      warnings+=("round $r $name: run-local.sh exited with $rc (failed runs; its lines are in sweep.log)")
      warn "${warnings[-1]}"
      failures=$((failures + 1))
    fi
    log "round $r $name: done in $(( t1 - t0 ))s"
  done
done
trap - INT TERM
status=complete
[ "$cut" = 0 ] || status="cut by the budget ($cut of $total_invocations invocations skipped)"
write_sweep_json "$status"
log "sweep $status; $(( $(date +%s) - started ))s used of ${budget_s}s"

"$ROOT/analysis/aggregate.sh" "$out" > /dev/null || warn "analysis/aggregate.sh found no run to fold"
if [ "$report" = 1 ]; then
  log "report: dotnet run --project analysis/Report -c Release -- ${out#"$ROOT"/}"
  if (cd "$ROOT" && timeout 300 dotnet run --project analysis/Report/Report.csproj -c Release -- "$out"); then
    log "report: ${out#"$ROOT"/}/report.md"
  else
    warn "the report failed (see above)"; failures=$((failures + 1))
  fi
fi
[ "$failures" = 0 ] && [ "$cut" = 0 ] || exit 1
