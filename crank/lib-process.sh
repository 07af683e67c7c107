#!/usr/bin/env bash
# Sourced by analysis/profiles/session.sh and crank/tests/h2load-variants-test.sh: the processes of a run
# without crank (origin, proxy, load job), each started as its own process group so that stopping it stops
# everything it started (wrapper scripts, probes, children), and the statistics blocks of a load job's log.
#
# The sourcing script defines warn MESSAGE (a warning line on stderr) and ready_timeout (seconds wait_ready waits),
# and calls stop_started_groups on every exit path (trap ... EXIT).

GROUPS_STARTED=()   # the process groups started and not yet stopped
STARTED_PID=""      # the group start_group started last
STOP_RC=0           # the exit status stop_group saw

# proc_state PID: the process's state letter (R, S, Z...), nothing when it is gone.
proc_state() { local s; s="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0; s="${s##*) }"; echo "${s%% *}"; }

# stop_group PID [TIMEOUT_S]: SIGTERM to the group, wait up to TIMEOUT_S (10) seconds, then SIGKILL what is left;
# sets STOP_RC.
stop_group() {
  local pid="$1" limit=$(( ${2:-10} * 10 )) i=0 state g kept=()
  STOP_RC=0
  [ -n "$pid" ] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || true
  while [ "$i" -lt "$limit" ]; do
    state="$(proc_state "$pid")"
    if [ -z "$state" ] || [ "$state" = Z ]; then break; fi
    sleep 0.1; i=$((i + 1))
  done
  if [ "$i" -ge "$limit" ]; then warn "process group $pid ignored SIGTERM for ${2:-10}s; killing it"; fi
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || STOP_RC=$?
  for g in "${GROUPS_STARTED[@]}"; do [ "$g" = "$pid" ] || kept+=("$g"); done
  GROUPS_STARTED=("${kept[@]}")
}

# stop_started_groups: stops every group still running (5 s each before SIGKILL).
stop_started_groups() {
  local g
  for g in "${GROUPS_STARTED[@]}"; do stop_group "$g" 5; done
}

# OWN_GROUP CMD...: execs CMD (same PID) as the leader of a new process group in the caller's session.
# Not setsid: a new session is also a new scheduler autogroup wherever kernel.sched_autogroup_enabled is 1 (Debian's
# default), and the scheduler then shares the cores between autogroups first and between their threads second. With
# the load, the proxy and the origin in three autogroups on two cores, each gets about a third of the box, and a
# proxy that runs two busy threads (llhttp's engine loops) waits for its group's turn: measured here, llhttp's p99
# rose from ~3.5 to 69-80 ms and every proxy lost 9-31 % of its RPS (analysis/results/20261126-1525-sessions-ab). crank's
# agent starts its jobs with System.Diagnostics.Process, in the agent's own session, so one session is also what
# crank measures. perl is Essential in Debian (perl-base); util-linux has no tool for setpgid.
OWN_GROUP=(perl -e 'setpgrp(0, 0) or die "setpgrp: $!\n"; exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n"')

# start_group LOG DIR CMD...: runs CMD in DIR as a new process group (OWN_GROUP; with START_OWN_SESSION=1 as a new
# session, setsid, to measure the difference); sets STARTED_PID.
start_group() {
  local log_file="$1" dir="$2" launcher=("${OWN_GROUP[@]}"); shift 2
  [ "${START_OWN_SESSION:-0}" != 1 ] || launcher=(setsid)
  # The subshell's PID becomes CMD's: the launcher and CMD are each exec'd in place.
  ( cd "$dir" && exec "${launcher[@]}" "$@" ) > "$log_file" 2>&1 < /dev/null &
  STARTED_PID=$!
  GROUPS_STARTED+=("$STARTED_PID")
}

# wait_ready PID LOG TEXT: until TEXT appears in LOG (crank's readyStateText), the process dies, or
# ready_timeout seconds pass.
wait_ready() {
  local pid="$1" log_file="$2" text="$3" deadline state
  deadline=$(( $(date +%s) + ready_timeout ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if grep -qF "$text" "$log_file" 2>/dev/null; then return 0; fi
    state="$(proc_state "$pid")"
    if [ -z "$state" ] || [ "$state" = Z ]; then
      warn "process $pid exited before printing '$text'; last lines of $log_file:"
      tail -n 15 "$log_file" >&2 || true
      return 1
    fi
    sleep 0.1
  done
  warn "no '$text' from process $pid within ${ready_timeout}s; last lines of $log_file:"
  tail -n 15 "$log_file" >&2 || true
  return 1
}

# port_busy PORT: true when something accepts connections on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# blocks_of LOG: every #StartJobStatistics ... #EndJobStatistics body in LOG (one JSON value each).
blocks_of() {
  awk '/^#EndJobStatistics/ { inside = 0; print body; body = ""; next }
       inside { body = body $0 "\n" }
       /^#StartJobStatistics/ { inside = 1; body = "" }' "$1"
}
