#!/usr/bin/env bash
# Multi-host test of the benchmark pipeline on one machine: three network namespaces joined by a
# bridge (crank/hosts.sh) stand in for the load, proxy and downstream machines, and run-local.sh's
# fallback runs each scenario across them (--netns). While the load runs, `ss` inside each namespace
# records the established TCP connections (the downstream binds 0.0.0.0, so its listen address differs
# from the address the others target); the test then requires that
#   - every scenario completed with requests, 0 bad responses and 0 socket errors,
#   - the load's connections went from the load host to the proxy host (to the downstream host for
#     direct), and each proxy's upstream connections from the proxy host to the downstream host,
#   - no established connection in any of the three namespaces used a loopback address,
#   - a run with downstreamAddress unset stopped before starting any job, naming the variable,
# and that nothing is left afterwards (namespaces, bridge, processes). Everything it makes is removed
# on every exit path (end, failure, Ctrl-C, SIGTERM).
#
# usage: crank/multihost-test.sh [SCENARIO...]      (default: direct llrp-llhttp nginx haproxy)
# Environment: MULTIHOST_DIR (artifacts/crank/multihost), MULTIHOST_DURATION (3 s measured, after 1 s
#              of warm-up), MULTIHOST_CONNECTIONS (16), HOSTS_PREFIX / HOSTS_SUBNET (crank/hosts.sh).
# Exit status: 0 passed, 1 failed, 77 skipped because this machine cannot make network namespaces
# (not root, no iproute2, or the kernel refuses; the reason is printed).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
hosts="$root/crank/hosts.sh"
dir="${MULTIHOST_DIR:-$root/artifacts/crank/multihost}"
duration="${MULTIHOST_DURATION:-3}"
connections="${MULTIHOST_CONNECTIONS:-16}"
scenarios=("$@")
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(direct llrp-llhttp nginx haproxy)
proxy_port=8080 downstream_port=8081

log() { printf '[multihost %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
failures=0
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
pass() { log "ok:   $*"; }

command -v ss > /dev/null || { log "SKIP: 'ss' (iproute2) is not installed"; exit 77; }
command -v jq > /dev/null || { log "SKIP: 'jq' is not installed"; exit 77; }

# The servers the scenarios run and the load tool, installed as crank/run-local.sh installs them (its own install is
# off below: the run is inside network namespaces, where no package source is reachable).
need=()
command -v wrk > /dev/null || need+=(wrk)
for s in "${scenarios[@]}"; do
  case "$s" in
    nginx) [ -x /usr/sbin/nginx ] || need+=(nginx-light) ;;
    haproxy) [ -x /usr/sbin/haproxy ] || need+=(haproxy) ;;
  esac
done
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; then
    log "installing ${need[*]} (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
  else
    log "SKIP: ${need[*]} not installed, and this is not root with apt-get to install them"
    exit 77
  fi
fi

declare -A ns=() address=()
while read -r role name addr; do ns[$role]="$name"; address[$role]="$addr"; done < <("$hosts" describe)

sampler_pid="" runner_pid="" made_hosts=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -z "$sampler_pid" ] || { kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; }
  # run-local.sh stops every process it started when it gets SIGTERM.
  [ -z "$runner_pid" ] || { kill -TERM "$runner_pid" 2>/dev/null || true; wait "$runner_pid" 2>/dev/null || true; }
  if [ "$made_hosts" = 1 ]; then "$hosts" down || rc=1; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

set +e
"$hosts" up
rc=$?
set -e
if [ "$rc" = 77 ]; then log "SKIP: this machine cannot make network namespaces (reason above)"; exit 77; fi
[ "$rc" = 0 ] || { log "FAIL: crank/hosts.sh up exited with $rc"; exit 1; }
made_hosts=1
rm -rf "$dir"
mkdir -p "$dir"

netns_arg="load=${ns[load]},application=${ns[proxy]},downstream=${ns[downstream]}"

# 1. downstreamAddress forgotten: run-local.sh must stop before any job, naming the variable.
log "run without downstreamAddress (must stop before any job)"
set +e
"$root/crank/run-local.sh" --netns "$netns_arg" --variable "serverAddress=${address[proxy]}" \
  --no-install --no-report --rounds 1 --warmup 1 --duration 1 --json-dir "$dir/unset" llrp-llhttp > "$dir/unset.log" 2>&1
rc=$?
set -e
sed 's/^/  | /' "$dir/unset.log"
if [ "$rc" = 0 ]; then fail "the run without downstreamAddress succeeded"
elif ! grep -q "downstreamAddress is not set" "$dir/unset.log"; then fail "the run without downstreamAddress did not name it (exit $rc)"
elif [ -n "$(ip netns pids "${ns[downstream]}")$(ip netns pids "${ns[proxy]}")$(ip netns pids "${ns[load]}")" ] \
     || compgen -G "$dir/unset/logs/*.log" > /dev/null; then fail "the run without downstreamAddress started something"
else pass "without downstreamAddress: exit $rc before any job, the message names downstreamAddress"; fi

# 2. The scenarios across the three hosts, with ss sampling every namespace meanwhile.
sample() {
  local role
  while true; do
    for role in load proxy downstream; do
      ip netns exec "${ns[$role]}" ss -Htnp state established 2>/dev/null | sed "s/^/$role /" || true
    done
    sleep 0.25
  done
}
sample > "$dir/ss.log" &
sampler_pid=$!

log "run-local.sh across ${ns[load]} -> ${ns[proxy]} -> ${ns[downstream]}: ${scenarios[*]}"
set +e
"$root/crank/run-local.sh" --netns "$netns_arg" \
  --variable "serverAddress=${address[proxy]}" --variable "downstreamAddress=${address[downstream]}" \
  --variable downstreamListenAddress=0.0.0.0 \
  --proxy-port "$proxy_port" --downstream-port "$downstream_port" --no-install --no-report \
  --rounds 1 --warmup 1 --warmup-max 0 --steady-retries 0 --duration "$duration" --connections "$connections" --json-dir "$dir/run" \
  "${scenarios[@]}" > "$dir/run.log" 2>&1 &
runner_pid=$!
wait "$runner_pid"
rc=$?
runner_pid=""
set -e
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""
sed 's/^/  | /' "$dir/run.log"
[ "$rc" = 0 ] || fail "run-local.sh exited with $rc (see $dir/run/logs)"

for s in "${scenarios[@]}"; do
  f="$dir/run/$s.r1.json"
  if [ ! -f "$f" ]; then fail "$s: no result"; continue; fi
  read -r requests bad sock < <(jq -r '.jobResults.jobs.load.results
    | "\(.["wrk/requests"] // 0) \(.["wrk/errors/badresponses"] // -1) \(.["wrk/errors/socketerrors"] // -1)"' "$f")
  if [ "$requests" -gt 0 ] && [ "$bad" = 0 ] && [ "$sock" = 0 ]; then pass "$s: $requests requests, 0 bad responses, 0 socket errors"
  else fail "$s: requests=$requests bad=$bad socket_errors=$sock"; fi
done

# ss lines: ROLE Recv-Q Send-Q LOCAL PEER users:(("name",pid=N,fd=N),...)
# evidence ROLE PROCESS LOCAL_PATTERN PEER_PATTERN DESCRIPTION
evidence() {
  local role="$1" process="$2" local_re="$3" peer_re="$4" what="$5" n example
  n="$(awk -v r="$role" -v p="\"$process\"" -v l="$local_re" -v q="$peer_re" \
    '$1 == r && $4 ~ l && $5 ~ q && index($0, p) { n++ } END { print n + 0 }' "$dir/ss.log")"
  example="$(awk -v r="$role" -v p="\"$process\"" -v l="$local_re" -v q="$peer_re" \
    '$1 == r && $4 ~ l && $5 ~ q && index($0, p) { print; exit }' "$dir/ss.log")"
  if [ "$n" -gt 0 ]; then pass "$what: $n connection samples, e.g. [$example]"
  else fail "$what: no such connection seen by ss"; fi
}
L="${address[load]//./\\.}" P="${address[proxy]//./\\.}" D="${address[downstream]//./\\.}"
for s in "${scenarios[@]}"; do
  case "$s" in
    direct)
      evidence load wrk "^$L:" "^$D:$downstream_port\$" "direct: wrk on the load host -> downstream host"
      evidence downstream Downstream "^$D:$downstream_port\$" "^$L:" "direct: Downstream accepted from the load host" ;;
    llrp-*|nginx|haproxy)
      case "$s" in llrp-*) process=LLRP ;; *) process="$s" ;; esac
      evidence proxy "$process" "^$P:$proxy_port\$" "^$L:" "$s: $process accepted from the load host"
      evidence proxy "$process" "^$P:" "^$D:$downstream_port\$" "$s: $process -> downstream host" ;;
  esac
done
evidence load wrk "^$L:" "^$P:$proxy_port\$" "proxied scenarios: wrk on the load host -> proxy host"
evidence downstream Downstream "^$D:$downstream_port\$" "^$P:" "proxied scenarios: Downstream accepted from the proxy host"
loopback="$(awk '$4 ~ /^(127\.|\[::1\]|\[::ffff:127\.)/ || $5 ~ /^(127\.|\[::1\]|\[::ffff:127\.)/' "$dir/ss.log" | head -n 3)"
if [ -z "$loopback" ]; then pass "no established connection over loopback in any namespace ($(wc -l < "$dir/ss.log") samples)"
else fail "connections over loopback: $loopback"; fi

# 3. Tear down now (the trap would too) and check that nothing is left.
"$hosts" down
made_hosts=0
left="$(ip netns list | awk '{ print $1 }' | grep -E "^${ns[load]%-load}-" || true)"
if [ -n "$left" ] || ip link show "${ns[load]%-load}-br" > /dev/null 2>&1; then fail "left behind: ${left:-bridge}"
else pass "torn down: no ${ns[load]%-load}-* namespace, no bridge"; fi

if [ "$failures" -gt 0 ]; then log "$failures check(s) failed"; exit 1; fi
log "all checks passed"
