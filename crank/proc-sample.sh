#!/usr/bin/env bash
# run-local.sh's WRK_JOB_HOOK: wrk-job.sh calls it right before ("measure-start") and right after
# ("measure-end") the measured wrk run. For every process in SAMPLE_PIDS ("name=pid name=pid ...")
# it appends one line to SAMPLE_OUT:
#   <phase> <name> <epoch ns> <utime ticks> <stime ticks> <VmRSS kB> <VmHWM kB> <threads>
# utime/stime are fields 14/15 of /proc/PID/stat (all threads of the process, in clock ticks).
set -euo pipefail
phase="${1:?phase}"
: "${SAMPLE_PIDS:?}" "${SAMPLE_OUT:?}"
now="$(date +%s%N)"
for entry in $SAMPLE_PIDS; do
  name="${entry%%=*}" pid="${entry#*=}"
  stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || { echo "$phase $name $now gone" >> "$SAMPLE_OUT"; continue; }
  # Field 2 (comm) may contain spaces: split after its closing parenthesis. f[0] is field 3.
  read -r -a f <<< "${stat##*) }"
  rss=0 hwm=0 threads=0
  while read -r key value _; do
    case "$key" in
      VmRSS:) rss="$value" ;;
      VmHWM:) hwm="$value" ;;
      Threads:) threads="$value" ;;
    esac
  done < "/proc/$pid/status"
  echo "$phase $name $now ${f[11]} ${f[12]} $rss $hwm $threads" >> "$SAMPLE_OUT"
done
