#!/usr/bin/env bash
# A/B of the deadline sweep's thread: before = /tmp/prof/llrp (56f202d), after = /tmp/prof/llrp-after (7e7ad4d).
# Three rounds, order before/after, after/before, before/after; two cells: HTTP/1.1 wrk 64 c 10 B, HTTP/2 TLS h2load 4 x 16 1 KiB.
set -euo pipefail
out="$1"; cd /work/main
export DS_DIR=/tmp/prof/ds WARMUP_S=12 PERF_S=10 PIN=proxy ORIGIN=nginx PROXY_PORT=58180 DS_PORT=58181
run() { # cell build round
  local cell="$1" build="$2" r="$3" dir
  case "$build" in before) dir=/tmp/prof/llrp ;; after) dir=/tmp/prof/llrp-after ;; esac
  case "$cell" in
    h1) env LLRP_DIR="$dir" LOAD=wrk SCHEME=http CONNECTIONS=64 URL_PATH=/ timeout 150 analysis/profiles/session.sh count llhttp "$out" "h1-$build.r$r" ;;
    h2) env LLRP_DIR="$dir" LOAD=h2load SCHEME=https CONNECTIONS=4 STREAMS=16 URL_PATH='/?s=1024' timeout 150 analysis/profiles/session.sh count llhttp "$out" "h2-$build.r$r" ;;
  esac
}
for cell in h1 h2; do
  run $cell before 1; run $cell after 1
  run $cell after 2; run $cell before 2
  run $cell before 3; run $cell after 3
done
