#!/usr/bin/env bash
# Functional check of LLRP's HTTP/2 front end under real load: h2load through every variant (--client llhttp,
# httpclient, httpclient-httpcontext, yarp), each over TLS with ALPN h2 and over prior-knowledge h2c, to the
# Downstream origin on loopback. Every run must end with every request done and answered 2xx, no failed, errored or
# timed-out request, and h2load saying it negotiated h2. Where the answer's size is known (the origin's fixed body,
# /?s=N, and /echo, which returns the request body verbatim), the DATA bytes h2load received must be exactly
# requests x size, so a truncated or duplicated body fails the run too. LLRP's own count on shutdown must agree: every
# request served, none rejected or failed.
#
# Per variant and mode: GETs of the origin's default 10-byte body, then 1 KiB and 64 KiB responses, then POSTs of a
# 64 KiB body (h2load -d) to /echo. Bounded: a fixed request count per run and a timeout per h2load call; this checks
# function, not speed (the numbers are not recorded).
#
# usage: crank/tests/h2load-variants-test.sh [CLIENT...]     (default: every variant)
# Environment: H2V_DIR (default <repo>/artifacts/h2load-variants: logs), H2V_REQUESTS (2000 GETs per run),
#   H2V_NO_PUBLISH=1 (use the apps artifacts/publish already holds)
# Exit status: 0 when every run passed, 1 when any failed, 2 when the check could not run.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${H2V_DIR:-$root/artifacts/h2load-variants}"
requests="${H2V_REQUESTS:-2000}"
clients=("$@")
[ "${#clients[@]}" -gt 0 ] || clients=(llhttp httpclient httpclient-httpcontext yarp)

# h2load's shape: 4 connections, 10 streams in flight on each (concurrency without reaching the proxy's limit of 100
# streams per connection), one thread (the machine's other core serves the proxy and the origin).
h2load_shape=(-c 4 -m 10 -t 1)
# The larger bodies move 64 KiB per request: fewer requests keep each run to a second or two.
large_requests=200
large_size=$((64 * 1024))
# Seconds one h2load call may take (a few seconds when it works; a stall fails the run instead of hanging the check).
h2load_timeout=30
# Seconds a server may take to print its ready text ("Application started."): a cold .NET start on a loaded machine.
ready_timeout=30

warn() { echo "h2load-variants: $*" >&2; }
# shellcheck source=crank/lib-process.sh
source "$root/crank/lib-process.sh"
trap stop_started_groups EXIT

if ! command -v h2load > /dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    echo "h2load-variants: installing nghttp2-client (h2load)"
    apt-get update -qq > /dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nghttp2-client > /dev/null
  fi
  command -v h2load > /dev/null || { warn "h2load not found (apt-get install -y nghttp2-client)"; exit 2; }
fi

rm -rf "$dir"
mkdir -p "$dir/logs"
[ "${H2V_NO_PUBLISH:-0}" = 1 ] || "$root/crank/publish.sh" llrp downstream
llrp="$("$root/crank/publish.sh" --exe llrp)"
downstream="$("$root/crank/publish.sh" --exe downstream)"
"$root/crank/tls-cert.sh" "$dir/tls" > /dev/null

# free_port FROM: the first port from FROM on that nothing on 127.0.0.1 accepts connections on.
free_port() {
  local p="$1"
  while port_busy "$p"; do p=$((p + 1)); done
  echo "$p"
}

origin_port="$(free_port 18500)"
start_group "$dir/logs/downstream.log" "$dir" "$downstream" --urls "http://127.0.0.1:$origin_port"
origin_pid="$STARTED_PID"
wait_ready "$origin_pid" "$dir/logs/downstream.log" "Application started." || exit 2

# The 64 KiB request body of the POST runs: a repeating pattern, so a misplaced piece would change the bytes.
body="$dir/body-64k"
head -c "$large_size" < <(yes 'h2load-variants 0123456789abcdef') > "$body"

failed=0 passed=0
# run NAME LOG PROTOCOL EXPECTED_DATA_BYTES H2LOAD_ARGS...: one h2load run; PROTOCOL is what h2load must say it
# negotiated ("h2" by ALPN, "h2c" in cleartext); EXPECTED_DATA_BYTES empty when not checked.
run() {
  local name="$1" log="$2" want="$3" expected="$4" n="" line requests_line codes_line traffic_line protocol data
  shift 4
  local args=("$@") i
  for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[i]}" = -n ] && n="${args[i + 1]}"; done
  timeout "$h2load_timeout" h2load "${h2load_shape[@]}" "${args[@]}" > "$log" 2>&1 || true
  requests_line="$(grep -E '^requests: ' "$log" || true)"
  codes_line="$(grep -E '^status codes: ' "$log" || true)"
  traffic_line="$(grep -E '^traffic: ' "$log" || true)"
  protocol="$(sed -n 's/^Application protocol: *//p' "$log" | head -n 1)"
  # "requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout"
  local total started done succeeded fail errored timedout ok2xx
  read -r total started done succeeded fail errored timedout < <(
    echo "$requests_line" | sed -E 's/^requests: ([0-9]+) total, ([0-9]+) started, ([0-9]+) done, ([0-9]+) succeeded, ([0-9]+) failed, ([0-9]+) errored, ([0-9]+) timeout.*/\1 \2 \3 \4 \5 \6 \7/;t;s/.*/- - - - - - -/')
  ok2xx="$(echo "$codes_line" | sed -nE 's/^status codes: ([0-9]+) 2xx.*/\1/p')"
  # "traffic: 1.23MB (1289920) total, 61.52KB (62996) headers (space savings 90.12%), 19.53KB (20000) data"
  data="$(echo "$traffic_line" | sed -nE 's/.*\(([0-9]+)\) data.*/\1/p')"
  line="requests=$total 2xx=${ok2xx:--} failed=$fail errored=$errored timeout=$timedout protocol=${protocol:--} data=${data:--}"
  if [ "$total" != "$n" ] || [ "$done" != "$n" ] || [ "$succeeded" != "$n" ] || [ "${ok2xx:-}" != "$n" ] \
    || [ "$fail" != 0 ] || [ "$errored" != 0 ] || [ "$timedout" != 0 ] || [ "$protocol" != "$want" ] \
    || { [ -n "$expected" ] && [ "${data:-}" != "$expected" ]; }; then
    echo "h2load-variants: FAIL $name: $line${expected:+ (expected data=$expected)} (see $log)"
    failed=$((failed + 1))
  else
    echo "h2load-variants: ok   $name: $line"
    passed=$((passed + 1))
  fi
}

# The origin's default body: Downstream answers "/" with 10 bytes (src/Downstream, DefaultSize).
default_size=10
for client in "${clients[@]}"; do
  for mode in tls h2c; do
    port="$(free_port $((origin_port + 1)))"
    if [ "$mode" = tls ]; then
      # https:// defaults to --protocols http1,h2: ALPN must pick h2 for h2load.
      base="https://127.0.0.1:$port"
      extra=(--certificate "$dir/tls/cert.pem" --certificateKey "$dir/tls/key.pem")
      want=h2
    else
      base="http://127.0.0.1:$port"
      extra=(--protocols h2)
      want=h2c
    fi
    log="$dir/logs/llrp-$client-$mode.log"
    start_group "$log" "$dir" "$llrp" --urls "$base" --downstream "http://127.0.0.1:$origin_port" --client "$client" "${extra[@]}"
    proxy_pid="$STARTED_PID"
    if ! wait_ready "$proxy_pid" "$log" "Application started."; then
      echo "h2load-variants: FAIL $client $mode: LLRP did not start (see $log)"
      failed=$((failed + 1))
      stop_group "$proxy_pid" 5
      continue
    fi
    run "$client $mode GET 10 B" "$dir/logs/h2load-$client-$mode-get.log" "$want" $((requests * default_size)) \
      -n "$requests" "$base/"
    run "$client $mode GET 1 KiB" "$dir/logs/h2load-$client-$mode-1k.log" "$want" $((requests * 1024)) \
      -n "$requests" "$base/?s=1024"
    run "$client $mode GET 64 KiB" "$dir/logs/h2load-$client-$mode-64k.log" "$want" $((large_requests * large_size)) \
      -n "$large_requests" "$base/?s=$large_size"
    run "$client $mode POST 64 KiB to /echo" "$dir/logs/h2load-$client-$mode-post.log" "$want" $((large_requests * large_size)) \
      -n "$large_requests" -d "$body" "$base/echo"
    stop_group "$proxy_pid" 10
    # LLRP's own count on shutdown ("LLRP served N requests, rejected R, failed F, ..."): every request h2load sent
    # reached it as an exchange, none was refused or failed on the proxy's side.
    sent=$((2 * requests + 2 * large_requests))
    summary="$(grep -oE 'LLRP served [0-9]+ requests, rejected [0-9]+, failed [0-9]+' "$log" || true)"
    if [ "$summary" = "LLRP served $sent requests, rejected 0, failed 0" ]; then
      echo "h2load-variants: ok   $client $mode: $summary"
      passed=$((passed + 1))
    else
      echo "h2load-variants: FAIL $client $mode: LLRP said '${summary:-nothing}', expected $sent served, 0 rejected, 0 failed (see $log)"
      failed=$((failed + 1))
    fi
  done
done

echo "h2load-variants: $passed passed, $failed failed"
[ "$failed" = 0 ]
