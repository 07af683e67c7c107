#!/usr/bin/env bash
# CI smoke test of the benchmark pipeline: a few seconds of "direct" and of one proxy scenario
# through run-local.sh (so: publish, start, ready texts, wrk-job.sh, statistics, JSON, stop).
# Fails (exit 1) when a scenario produced no result, zero requests, any bad response or any
# socket error. Measures nothing worth keeping: the numbers are only printed.
#
# Then two short runs of the last scenario, each its own run-local.sh invocation: the fixed-rate load (2 s at
# SMOKE_RATE requests/s, crank/fixedrate-job.sh) and, with the Downstream origin (nginx as the origin answers GET only),
# chunked 10 KiB POST bodies with the browser header set (crank/wrk-request.lua). Then HTTP/2 (crank/h2load-job.sh):
# h2load through nginx over TLS (ALPN h2) and over prior-knowledge h2c, and through llrp-llhttp as well when the
# published LLRP lists --protocols in its --help (the smoke says so in a line when it does not).
#
# usage: crank/smoke.sh [SCENARIO...]     (default: direct llrp-llhttp)
# Environment: SMOKE_DIR (default artifacts/crank/smoke), SMOKE_DURATION (3 s), SMOKE_CONNECTIONS (16),
#   SMOKE_OPTIONS (more run-local.sh options, split at spaces, e.g. "--pin-proxy --origin nginx": run-local.sh's
#   default topology, which the smoke otherwise leaves for --shared),
#   SMOKE_RATE (500 requests/s: far below what any proxy serves here, so the run checks the job, not the proxy),
#   SMOKE_EXTRAS (1; 0 skips the https, fixed-rate, POST and HTTP/2 runs)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${SMOKE_DIR:-$root/artifacts/crank/smoke}"
scenarios=("$@")
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(direct llrp-llhttp)

rm -rf "$dir"
rc=0
# --fallback: the smoke checks the job scripts themselves, also where crank is installed. --warmup-max 0 and
# --steady-retries 0: a fixed 1 s warm-up and no retries, since the smoke checks the harness, not steady state.
# --shared: Downstream as the origin, unpinned, so that the harness's own origin is covered too; SMOKE_OPTIONS
# "--pin-proxy --origin nginx" (.ci/run's second smoke) gives run-local.sh's default topology back.
# shellcheck disable=SC2086  # SMOKE_OPTIONS is split into words on purpose
"$root/crank/run-local.sh" --fallback --shared --no-report --rounds 1 --warmup 1 --warmup-max 0 --steady-retries 0 --duration "${SMOKE_DURATION:-3}" \
  --connections "${SMOKE_CONNECTIONS:-16}" --json-dir "$dir" ${SMOKE_OPTIONS:-} "${scenarios[@]}" || rc=$?

failed=0 checked=0
# check NAME FILE DIR: one result; the names every load job shares (http/...).
check() {
  local name="$1" f="$2" requests bad socket rps
  checked=$((checked + 1))
  if [ ! -f "$f" ]; then
    echo "smoke: FAIL $name: no result (see $3/logs)"; failed=$((failed + 1)); return
  fi
  read -r requests bad socket rps < <(jq -r '.jobResults.jobs.load.results
    | "\(.["http/requests"] // 0) \(.["http/requests/badresponses"] // -1) \(.["http/requests/errors"] // -1) \(.["http/rps/mean"] // 0)"' "$f")
  if [ "$requests" = 0 ] || [ "$bad" != 0 ] || [ "$socket" != 0 ]; then
    echo "smoke: FAIL $name: requests=$requests bad=$bad socket_errors=$socket (see $3/logs)"; failed=$((failed + 1))
  else
    echo "smoke: ok   $name: requests=$requests rps=$rps bad=0 socket_errors=0"
  fi
}
for s in "${scenarios[@]}"; do check "$s" "$dir/$s.r1.json" "$dir"; done

if [ "${SMOKE_EXTRAS:-1}" != 0 ]; then
  last="${scenarios[${#scenarios[@]} - 1]}"
  common=(--fallback --shared --no-report --rounds 1 --warmup 1 --warmup-max 0 --steady-retries 0 --duration 2
          --connections "${SMOKE_CONNECTIONS:-16}")
  # TLS on both sides: the run's certificate on the origin and the proxy, https from the load.
  # shellcheck disable=SC2086
  "$root/crank/run-local.sh" "${common[@]}" --json-dir "$dir/tls" ${SMOKE_OPTIONS:-} \
    --server-scheme https --downstream-scheme https "$last" || rc=$?
  check "$last, https to https" "$dir/tls/$last.r1.json" "$dir/tls"
  # The load job's TLS probe recorded what the proxy negotiated (crank/wrk-job.sh, "TLS probe").
  checked=$((checked + 1))
  tls_seen="$(jq -r '.jobResults.jobs.load.results | "\(.["tls/protocol"] // "") \(.["tls/cipher"] // "")"' "$dir/tls/$last.r1.json" 2> /dev/null || true)"
  if [[ "$tls_seen" == TLSv1.[23]\ TLS_* || "$tls_seen" == TLSv1.2\ ECDHE-* ]]; then
    echo "smoke: ok   $last, https to https: negotiated $tls_seen"
  else
    echo "smoke: FAIL $last, https to https: the TLS probe recorded '${tls_seen}' (see $dir/tls/logs)"; failed=$((failed + 1))
  fi
  # shellcheck disable=SC2086
  "$root/crank/run-local.sh" "${common[@]}" --json-dir "$dir/fixedrate" ${SMOKE_OPTIONS:-} \
    --load fixedrate --rate "${SMOKE_RATE:-500}" "$last" || rc=$?
  check "$last, fixed rate" "$dir/fixedrate/$last.r1.json" "$dir/fixedrate"
  case " ${SMOKE_OPTIONS:-} " in
    *" --origin nginx "*) echo "smoke: no POST run: nginx as the origin answers GET and HEAD only" ;;
    *)
      # shellcheck disable=SC2086
      "$root/crank/run-local.sh" "${common[@]}" --json-dir "$dir/post" ${SMOKE_OPTIONS:-} \
        --request-body-size 10240 --request-body-framing chunked --headers browser --response-size 1024 "$last" || rc=$?
      check "$last, chunked POST" "$dir/post/$last.r1.json" "$dir/post" ;;
  esac
  # HTTP/2 to the proxy, HTTP/1.1 to the origin: 2 connections x 10 streams.
  h2_scenarios=(nginx)
  llrp_exe="$("$root/crank/publish.sh" --exe llrp 2> /dev/null || true)"
  if [ -n "$llrp_exe" ] && [ -x "$llrp_exe" ] && "$llrp_exe" --help 2> /dev/null | grep -q -- '--protocols'; then
    h2_scenarios+=(llrp-llhttp)
  else
    echo "smoke: no HTTP/2 run through llrp-llhttp: the published LLRP ($([ -n "$llrp_exe" ] && [ -x "$llrp_exe" ] && echo "$llrp_exe" || echo 'not published')) has no --protocols option"
  fi
  for scheme in https http; do
    # shellcheck disable=SC2086
    "$root/crank/run-local.sh" "${common[@]}" --json-dir "$dir/h2-$scheme" ${SMOKE_OPTIONS:-} \
      --load h2load --connections 2 --streams 10 --server-scheme "$scheme" "${h2_scenarios[@]}" || rc=$?
    for s in "${h2_scenarios[@]}"; do
      check "$s, h2 $([ "$scheme" = https ] && echo 'over TLS (ALPN)' || echo '(h2c)')" "$dir/h2-$scheme/$s.r1.json" "$dir/h2-$scheme"
    done
  done
fi

if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
  echo "smoke: run-local.sh exited with $rc"
  echo "smoke: $(( checked - failed )) runs ok, $failed runs failed"
  exit 1
fi
echo "smoke: $checked runs ok"
