# Sourced by crank/h2load-job.sh: the adaptive warm-up of a load job, ended by a probe (run-local.sh's
# WRK_JOB_WARM_PROBE, crank/jit-quiet.sh: the proxy's JIT is quiet) rather than by the clock, then the settle cycles.
# crank/wrk-job.sh runs the same procedure with wrk inline; the reasons for each number are given here.
#
# The sourcing script defines two functions that run its load tool:
#   warm_load_background SECONDS   start the load for at most SECONDS in the background, its output on stdout; set
#                                  WARM_LOAD_PID to its PID (stopped with SIGTERM once the probe says warm:
#                                  a background job of a script ignores SIGINT)
#   warm_load SECONDS              run the load for SECONDS in the foreground, output discarded
# and calls adaptive_warmup NAME MIN_S MAX_S. It prints what it did, and sets WARM_SECONDS (seconds of load and pauses
# in all) and WARM_CAPPED (1 when the first run or the settle cycles reached their cap before the probe said warm,
# else empty).

# Settle: under uninterrupted load the runtime's tiering falls behind (its background compiler competes with the load
# for the cores, and promotion waits for a lull), and it catches up in a batch each time the load pauses: a trial on
# the 2-core box saw ~560 methods compiled in the second after the warm-up run ended and ~340 after the next pause,
# i.e. inside a measured window that starts after a pause. So the load pauses and runs again in short cycles until a
# whole cycle compiles no more than the probe's quiet threshold. A 1 s pause is ten times the runtime's 100 ms tiering
# delay (TieredCompilation's call-counting delay); 3 s of load makes a cycle (4 s) longer than the probe's 3 s span, so
# each check covers a whole pause; 6 cycles (24 s) bound it.
SETTLE_PAUSE_S=1 SETTLE_LOAD_S=3 SETTLE_CYCLES=6

# adaptive_warmup NAME MIN_S MAX_S: load for at least MIN_S seconds, then until WRK_JOB_WARM_PROBE exits 0, at most
# MAX_S seconds in all; then the settle cycles.
adaptive_warmup() {
  local name="$1" min="$2" max="$3" start first_state=cap settle_state=cap cycle out
  out="$(mktemp "${TMPDIR:-/tmp}/warm-up.XXXXXX")"
  start=$(date +%s)
  echo "$name: warm-up: at least ${min}s, then until $WRK_JOB_WARM_PROBE says warm, at most ${max}s"
  warm_load_background "$max" > "$out" 2>&1
  sleep "$min"
  # kill -0: the load still runs, i.e. the cap is not reached yet.
  while kill -0 "$WARM_LOAD_PID" 2> /dev/null; do
    if "$WRK_JOB_WARM_PROBE"; then first_state=warm; kill -TERM "$WARM_LOAD_PID" 2> /dev/null || true; break; fi
    sleep 1
  done
  wait "$WARM_LOAD_PID" 2> /dev/null || true
  # Warm-up output is shown but never parsed.
  sed "s/^/  warm-up| /" "$out"; rm -f "$out"
  echo "$name: warm-up: $(( $(date +%s) - start )) s, $first_state"
  local settle_start; settle_start=$(date +%s)
  for ((cycle = 1; cycle <= SETTLE_CYCLES; cycle++)); do
    # The probe compares against its observation from before the pause: a cycle lasts longer than its quiet span.
    "$WRK_JOB_WARM_PROBE" > /dev/null 2>&1 || true
    sleep "$SETTLE_PAUSE_S"
    warm_load "$SETTLE_LOAD_S" > /dev/null 2>&1 || true
    if "$WRK_JOB_WARM_PROBE"; then settle_state=warm; break; fi
  done
  echo "$name: settle: $(( $(date +%s) - settle_start )) s, $(( cycle > SETTLE_CYCLES ? SETTLE_CYCLES : cycle )) cycle(s) of ${SETTLE_PAUSE_S} s pause + ${SETTLE_LOAD_S} s load, $settle_state"
  WARM_SECONDS=$(( $(date +%s) - start ))
  WARM_CAPPED=""
  [ "$first_state" = warm ] && [ "$settle_state" = warm ] || WARM_CAPPED=1
  echo "$name: warm-up: $WARM_SECONDS s in all, $first_state then $settle_state"
}
