#!/usr/bin/env bash
# Interleaved A/B/C of llrp-llhttp: the same run-local.sh command from three checkouts, 3 rounds.
set -u
out="$1"; shift
mkdir -p "$out"
for r in 1 2 3; do
  for pair in "$@"; do
    label="${pair%%=*}"; root="${pair#*=}"
    ( cd "$root" && timeout 300 crank/run-local.sh --fallback --no-install --no-report --rounds 1 --warmup 20 --duration 10 \
        --proxy-port 18080 --downstream-port 18081 --json-dir "$out/$label/r$r" llrp-llhttp ) > "$out/$label.r$r.log" 2>&1
    echo "$label r$r rc=$? $(grep -E 'llrp-llhttp.r1: [0-9]+ rps' "$out/$label.r$r.log" | sed 's/.*llrp-llhttp.r1: //' | cut -c1-140)"
  done
done
