#!/usr/bin/env bash
# Load job of the "ramp" comparison: an open-loop load at rising request rates until the proxy saturates, the shape
# of the published nginx vs Pingora comparison (a slowly rising load; p99 latency, throughput, availability and the
# proxy's CPU and memory against time). Used by benchmarks.yml (scenarios ramp-*) and by crank/comparisons.sh.
#
# Each step runs h2load (Debian's nghttp2-client) over HTTP/1.1 at a fixed rate for a fixed time:
#   h2load --h1 -t 1 -c CONNECTIONS --rps RATE/CONNECTIONS -D STEP_S --log-file STEP.log URL
# and reports, per step: the offered rate, the rate of requests h2load really sent (an HTTP/1.1 connection carries one
# request at a time, so a proxy slower than CONNECTIONS / RATE seconds per request holds requests back and the sent
# rate falls below the offered one: raise -c), the achieved rate of 2xx responses, p50 and p99 of the response times
# in h2load's per-request log, the availability (2xx responses / requests that ended; the rest failed, errored, timed
# out or answered non-2xx), and the proxy's CPU (percent of one core over the step) and resident memory at the step's end.
#
# The proxy process is --proxy-pid, else the process listening on --proxy-port on this machine (ss -ltnp: the local
# crank profile and crank/comparisons.sh run everything on one machine); on another machine CPU and memory are left
# out (crank's agent still records the application's own CPU and memory over time).
#
# It prints crank's statistics block: per step (aggregate "All", one value per step, in step order) ramp/offered,
# ramp/sent, ramp/rps, ramp/latency/50, ramp/latency/99 (ms), ramp/availability (%), ramp/cpu (%), ramp/memory (MB);
# and ramp/rps/max, the highest achieved rate (also http/rps/max).
#
# usage: ramp-job.sh [--start R] [--step R] [--steps N] [-d STEP_S] [-w WARMUP_S] [-c CONNECTIONS]
#                    [--proxy-pid PID | --proxy-port PORT] URL
#        ramp-job.sh --parse-step H2LOAD_OUTPUT LOG_FILE OFFERED_RATE STEP_S   (tests: crank/tests/parsers-test.sh)
# Defaults: --start 4000 --step 4000 --steps 8 -d 10 (8 steps x 10 s: 4k to 32k requests/s), -w 10 (unmeasured, at the
# first rate, so the .NET proxies run tiered-up code), -c 100. Where the range comes from (this repository's 2-core
# box, load, proxy and origin on it): the first ramp (analysis/results/20261123-1128-comparisons-trial, 2k to 16k) saturated
# only HAProxy (8.5k-11k achieved); llrp-llhttp and nginx achieved all 16k. A short probe (3 s steps, 8k to 32k) then
# saturated all three between 10.4k and 17.5k achieved. 32k is about twice the highest rate any of them achieved, so
# every proxy saturates within the ramp with room for a quieter box, and 4k steps keep 3-4 steps below saturation.
# Bounds: at most 30 steps of at most 120 s each, so a ramp always ends within an hour.
# Exit code: 0, 2 bad usage, 3 an h2load report cannot be parsed, or h2load's own exit code.
set -euo pipefail
# shellcheck source=lib-statistics.sh disable=SC1091
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib-statistics.sh"

max_steps=30 max_step_s=120

die() { echo "ramp-job: $*" >&2; exit 2; }

# parse_step OUTPUT LOG OFFERED STEP_S: prints "offered sent rps p50 p99 availability ok done" for one step.
# "done" counts every request that ended in the step, with a response or a failure (h2load's "done"); the requests
# still in flight when the step's time is up ("started" - "done") are in neither count.
# Lines used (h2load 1.52):
#   requests: 20000 total, 20000 started, 20000 done, 19998 succeeded, 2 failed, 2 errored, 0 timeout
#   status codes: 19998 2xx, 0 3xx, 0 4xx, 0 5xx
# and the log's third column (microseconds until the end of the response; status -1 = failed stream, not timed).
parse_step() {
  local output="$1" log_file="$2" offered="$3" step_s="$4" counts latencies
  counts="$(awk '$1 == "requests:" { done = $6; seen = 1 }
                 $1 == "status" && $2 == "codes:" { ok = $3 }
                 END { if (!seen) exit 1; print done + 0, ok + 0 }' "$output")" || return 1
  # Percentiles by rank (nearest-rank method) over the requests that got a response.
  latencies="$(awk -F '\t' '$2 > 0 { print $3 }' "$log_file" | sort -n | awk '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print "nan nan"; exit }
      i50 = int(NR * 0.50 + 0.999999); i99 = int(NR * 0.99 + 0.999999)
      printf "%.3f %.3f\n", v[i50] / 1000, v[i99] / 1000
    }')"
  awk -v counts="$counts" -v lat="$latencies" -v offered="$offered" -v s="$step_s" 'BEGIN {
    split(counts, c, " "); split(lat, l, " ")
    done = c[1]; ok = c[2]
    avail = done > 0 ? ok * 100 / done : 0
    printf "%s %.1f %.1f %s %s %.3f %d %d\n", offered, done / s, ok / s, l[1], l[2], avail, ok, done
  }'
}

if [ "${1:-}" = --parse-step ]; then
  [ $# -eq 5 ] && [ -f "$2" ] && [ -f "$3" ] || die "--parse-step needs H2LOAD_OUTPUT LOG_FILE OFFERED_RATE STEP_S"
  parse_step "$2" "$3" "$4" "$5" || { echo "ramp-job: could not parse the h2load report $2" >&2; exit 3; }
  exit 0
fi

start=4000 step=4000 steps=8 step_s=10 warmup=10 connections=100 proxy_pid="" proxy_port="" url=""
while [ $# -gt 0 ]; do
  case "$1" in
    --start) start="${2:?}"; shift 2 ;;
    --step) step="${2:?}"; shift 2 ;;
    --steps) steps="${2:?}"; shift 2 ;;
    -d|--duration) step_s="${2:?}"; shift 2 ;;
    -w|--warmup) warmup="${2:?}"; shift 2 ;;
    -c|--connections) connections="${2:?}"; shift 2 ;;
    --proxy-pid) proxy_pid="${2:?}"; shift 2 ;;
    --proxy-port) proxy_port="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$url" ] || die "more than one URL ($url, $1)"; url="$1"; shift ;;
  esac
done
[ -n "$url" ] || die "missing URL"
step_s="${step_s%s}" warmup="${warmup%s}"
for v in "$start" "$step" "$steps" "$step_s" "$warmup" "$connections" ${proxy_pid:+"$proxy_pid"} ${proxy_port:+"$proxy_port"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$steps" -ge 1 ] && [ "$steps" -le "$max_steps" ] || die "--steps must be 1 to $max_steps"
[ "$step_s" -ge 1 ] && [ "$step_s" -le "$max_step_s" ] || die "-d must be 1 to $max_step_s seconds"
[ "$start" -ge 1 ] && [ "$connections" -ge 1 ] || die "--start and -c must be >= 1"

H2LOAD="${H2LOAD:-$(command -v h2load || true)}"
[ -n "$H2LOAD" ] && [ -x "$H2LOAD" ] || die "h2load not found (apt-get install -y nghttp2-client)"

if [ -z "$proxy_pid" ] && [ -n "$proxy_port" ] && command -v ss > /dev/null; then
  proxy_pid="$(ss -ltnpH "( sport = :$proxy_port )" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)"
fi
[ -z "$proxy_pid" ] || [ -r "/proc/$proxy_pid/stat" ] || { echo "ramp-job: no process $proxy_pid; CPU and memory left out" >&2; proxy_pid=""; }
echo "ramp-job: $("$H2LOAD" --version | head -n 1); proxy process: ${proxy_pid:-unknown (CPU and memory left out)}"
tck="$(getconf CLK_TCK)"
# cpu_ticks PID: user + system time of every thread, in clock ticks (fields 14 and 15 of /proc/PID/stat).
cpu_ticks() { local s; s="$(cat "/proc/$1/stat" 2>/dev/null)" || { echo 0; return; }; s="${s##*) }"; read -r -a f <<< "$s"; echo $(( f[11] + f[12] )); }
rss_mb() { awk '$1 == "VmRSS:" { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }

work="$(mktemp -d "${TMPDIR:-/tmp}/ramp-job.XXXXXX")"
h2_pid=""
trap 'rm -rf "$work"; [ -z "$h2_pid" ] || kill "$h2_pid" 2> /dev/null || true' EXIT

# per_client RATE: h2load's --rps is per connection.
per_client() { awk -v r="$1" -v c="$connections" 'BEGIN { printf "%.3f", r / c }'; }
if [ "$warmup" -gt 0 ]; then
  echo "ramp-job: warm-up: $H2LOAD --h1 -t 1 -c $connections --rps $(per_client "$start") -D $warmup $url"
  "$H2LOAD" --h1 -t 1 -c "$connections" --rps "$(per_client "$start")" -D "$warmup" "$url" 2>&1 | sed 's/^/  warm-up| /' || true
fi

rows=()
for ((i = 0; i < steps; i++)); do
  rate=$(( start + i * step ))
  out="$work/step$i.out" log_file="$work/step$i.log"
  echo "ramp-job: step $((i + 1))/$steps: $rate requests/s offered: $H2LOAD --h1 -t 1 -c $connections --rps $(per_client "$rate") -D $step_s --log-file step.log $url"
  t0="$(date +%s%N)"; c0=0; [ -z "$proxy_pid" ] || c0="$(cpu_ticks "$proxy_pid")"
  # A step is bounded by h2load's own -D and, should it hang, by timeout.
  timeout --kill-after=5 $(( step_s + 30 )) "$H2LOAD" --h1 -t 1 -c "$connections" --rps "$(per_client "$rate")" \
    -D "$step_s" --log-file "$log_file" "$url" > "$out" 2>&1 &
  h2_pid=$!
  echo "##ChildProcessId:$h2_pid" >&2
  set +e; wait "$h2_pid"; rc=$?; set -e
  h2_pid=""
  t1="$(date +%s%N)"; cpu="nan" mem="nan"
  if [ -n "$proxy_pid" ]; then
    c1="$(cpu_ticks "$proxy_pid")"
    cpu="$(awk -v d="$(( c1 - c0 ))" -v t="$tck" -v ns="$(( t1 - t0 ))" 'BEGIN { printf "%.1f", d / t / (ns / 1e9) * 100 }')"
    mem="$(rss_mb "$proxy_pid")"
  fi
  sed 's/^/  step| /' "$out"
  [ "$rc" -eq 0 ] || { echo "ramp-job: h2load exited with $rc at $rate requests/s" >&2; exit "$rc"; }
  row="$(parse_step "$out" "$log_file" "$rate" "$step_s")" || { echo "ramp-job: could not parse the h2load report above" >&2; exit 3; }
  rows+=("$row $cpu $mem")
  read -r _ sent rps p50 p99 avail _ <<< "$row"
  echo "ramp-job: step $((i + 1)): offered $rate/s, sent $sent/s, achieved $rps/s, p50 $p50 ms, p99 $p99 ms, availability $avail %, proxy CPU $cpu %, memory $mem MB"
done

# One measurement per step and name, in step order ("All" keeps them as a list); "nan" (no figure) is left out.
# statistics_block (lib-statistics.sh) writes the JSON from one tab-separated line per measurement.
printf '%s\n' "${rows[@]}" | awk -v OFS='\t' '
  BEGIN {
    split("ramp/offered ramp/sent ramp/rps ramp/latency/50 ramp/latency/99 ramp/availability _ _ ramp/cpu ramp/memory", names, " ")
    split("Offered rate (req/s)|Sent rate (req/s)|Achieved rate, 2xx (req/s)|Latency 50th (ms)|Latency 99th (ms)|Availability (%)|||Proxy CPU (% of a core)|Proxy memory (MB)", desc, "|")
  }
  { for (k = 1; k <= 10; k++) if (names[k] != "_" && $k != "nan") print names[k], "All", "All", desc[k] ", per step", desc[k] ", one value per step", "n2", $k
    if ($3 > max) max = $3 }
  END { print "ramp/rps/max;http/rps/max", "Max", "Max", "Highest achieved rate (req/s)", "Highest achieved rate of 2xx responses over the steps", "n0", max + 0 }' \
  | statistics_block ramp
