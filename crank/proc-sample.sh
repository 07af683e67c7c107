#!/usr/bin/env bash
# run-local.sh's WRK_JOB_HOOK: wrk-job.sh calls it right before ("measure-start") and right after
# ("measure-end") the measured wrk run. For every process in SAMPLE_PIDS ("name=pid name=pid ...") it
# appends one line to SAMPLE_OUT at both edges and, in between, one "tick" line per second from a
# background sampler (crank's agent samples its processes once a second too):
#   <phase> <name> <epoch ns> <utime ticks> <stime ticks> <VmRSS kB> <VmHWM kB> <threads> <wchar B> <rchar B> <port B>
# phase: measure-start | tick | measure-end. utime/stime are fields 14/15 of /proc/PID/stat (all threads,
# clock ticks); wchar/rchar are /proc/PID/io's counters (0 when unreadable; they miss socket sends and
# receives that bypass read/write, as .NET's do). <port B> is the sum of bytes_received over the
# established TCP connections on SAMPLE_PORT (ss -ti): the request bytes the server under load has
# received on wrk's keep-alive connections. With a fixed request it grows in proportion to the requests
# sent, which lets the runner split the window's requests between its two halves; it is 0 once wrk
# has closed its connections (at measure-end).
# A process's child processes count with it (CPU ticks, VmRSS, VmHWM, threads): nginx with more than one worker runs
# them under its master (crank/nginx-job.sh), and the master alone does no forwarding. The other servers have none.
set -euo pipefail
phase="${1:?phase}"
: "${SAMPLE_PIDS:?}" "${SAMPLE_OUT:?}"
# The sampling period: crank's agent measures its jobs once a second.
period_s=1

sample() {
  local phase="$1" now entry name pid stat rss hwm threads wchar rchar key value port_bytes=0
  now="$(date +%s%N)"
  if [ -n "${SAMPLE_PORT:-}" ]; then
    # SAMPLE_NETNS: the network namespace the server listens in, when it is not this one (run-local.sh --netns).
    local in_ns=()
    [ -z "${SAMPLE_NETNS:-}" ] || in_ns=(ip netns exec "$SAMPLE_NETNS")
    # No connection yet (grep finds nothing) is 0 bytes, not a failure.
    port_bytes="$({ "${in_ns[@]}" ss -tinH state established "( sport = :$SAMPLE_PORT )" 2>/dev/null || true; } \
      | { grep -o 'bytes_received:[0-9]*' || true; } | awk -F: '{ s += $2 } END { print s + 0 }')"
  fi
  for entry in $SAMPLE_PIDS; do
    name="${entry%%=*}" pid="${entry#*=}"
    stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || { echo "$phase $name $now gone" >> "$SAMPLE_OUT"; continue; }
    # Field 2 (comm) may contain spaces: split after its closing parenthesis. f[0] is field 3.
    read -r -a f <<< "${stat##*) }"
    rss=0 hwm=0 threads=0 wchar=0 rchar=0
    while read -r key value _; do
      case "$key" in
        VmRSS:) rss="$value" ;;
        VmHWM:) hwm="$value" ;;
        Threads:) threads="$value" ;;
      esac
    done < "/proc/$pid/status"
    if [ -r "/proc/$pid/io" ]; then
      while read -r key value; do
        case "$key" in
          wchar:) wchar="$value" ;;
          rchar:) rchar="$value" ;;
        esac
      done < "/proc/$pid/io" 2>/dev/null || true
    fi
    local utime="${f[11]}" stime="${f[12]}" child cstat ckey cvalue
    for child in $(cat "/proc/$pid/task/$pid/children" 2>/dev/null || true); do
      cstat="$(cat "/proc/$child/stat" 2>/dev/null)" || continue
      read -r -a c <<< "${cstat##*) }"
      utime=$(( utime + c[11] )) stime=$(( stime + c[12] ))
      while read -r ckey cvalue _; do
        case "$ckey" in
          VmRSS:) rss=$(( rss + cvalue )) ;;
          VmHWM:) hwm=$(( hwm + cvalue )) ;;
          Threads:) threads=$(( threads + cvalue )) ;;
        esac
      done < "/proc/$child/status" 2>/dev/null || true
    done
    echo "$phase $name $now $utime $stime $rss $hwm $threads $wchar $rchar ${port_bytes:-0}" >> "$SAMPLE_OUT"
  done
}

case "$phase" in
  measure-start)
    sample measure-start
    # The ticker stops itself when measure-end removes its pid file, or after an hour at most.
    ( for ((i = 0; i < 3600; i++)); do
        sleep "$period_s"
        [ -f "$SAMPLE_OUT.ticker" ] || exit 0
        sample tick
      done ) > /dev/null 2>&1 < /dev/null &
    echo $! > "$SAMPLE_OUT.ticker" ;;
  measure-end)
    if [ -f "$SAMPLE_OUT.ticker" ]; then
      ticker="$(cat "$SAMPLE_OUT.ticker")"; rm -f "$SAMPLE_OUT.ticker"
      kill "$ticker" 2>/dev/null || true
      wait "$ticker" 2>/dev/null || true
    fi
    sample measure-end ;;
  *) echo "proc-sample: unknown phase '$phase' (measure-start|measure-end)" >&2; exit 2 ;;
esac
