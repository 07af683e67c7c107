#!/usr/bin/env bash
# Stands in for nginx or HAProxy (by the name it is called as) when the server jobs' recorded runs are made or
# checked (README.md): it logs each call's arguments to $STAND_IN_OUT/calls and, where the job would start the
# server, saves the configuration, the body files and the server's environment there, then exits with STAND_IN_EXIT
# (default 0), or with STAND_IN_SERVE set stays up (60 s at most) until SIGTERM, SIGINT or SIGUSR1, which it logs to
# $STAND_IN_OUT/signals (it creates $STAND_IN_OUT/serving once it handles them) before it exits 0 (with STAND_IN_DIE set, before it ends itself with that signal). The configuration check (nginx -t, haproxy -c) exits with
# STAND_IN_CHECK_EXIT (default 0).
set -euo pipefail
out="${STAND_IN_OUT:?}" name="$(basename "$0")"
echo "$*" >> "$out/calls"
case " $* " in
  " -t "*|" -c "*)
    [ "$name $1" = "nginx -t" ] || [ "$name $1" = "haproxy -c" ] || { echo "stand-in: unexpected call $name $*" >&2; exit 99; }
    [ "${STAND_IN_CHECK_EXIT:-0}" = 0 ] || echo "$name: [emerg] stand-in check failed" >&2; exit "${STAND_IN_CHECK_EXIT:-0}" ;;
  *" -v "*)
    if [ "$name" = nginx ]; then echo "nginx version: nginx/1.22.1" >&2
    else printf 'HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/\nStatus: long-term supported branch\n'; fi
    exit 0 ;;
esac
echo "$$" > "$out/pid"
config="" prefix=""
while [ $# -gt 0 ]; do
  case "$1" in -c|-f) config="$2"; shift 2 ;; -p) prefix="$2"; shift 2 ;; *) shift ;; esac
done
cp "$config" "$out/config"
env | grep -E '^(LISTEN|DOWNSTREAM|HAPROXY)_' | LC_ALL=C sort > "$out/env" || true
if [ -n "$prefix" ] && [ -d "$prefix/bodies" ]; then
  for f in "$prefix"/bodies/*; do echo "$(basename "$f") $(wc -c < "$f") $(tr -d x < "$f" | wc -c)"; done | LC_ALL=C sort > "$out/bodies"
fi
if [ -n "${STAND_IN_SERVE:-}" ]; then
  for sig in TERM INT USR1; do
    # shellcheck disable=SC2064
    trap "echo $sig >> \"\$out/signals\"; [ -z \"\${STAND_IN_DIE:-}\" ] || { trap - $sig; kill -$sig \$\$; }; exit 0" "$sig"
  done
  : > "$out/serving"
  for ((i = 0; i < 600; i++)); do sleep 0.1; done
fi
exit "${STAND_IN_EXIT:-0}"
