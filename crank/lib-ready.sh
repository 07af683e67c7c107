#!/usr/bin/env bash
# Sourced by the proxy job scripts. Debian's nginx (master_process off) and HAProxy (-db) print
# nothing when they start listening, while crank waits for a readyStateText (its port probe is not
# reliable, docs/crank-offline.md), so the scripts run this function in the background before they
# exec the server.

# announce_when_listening NAME ADDRESS PORT TIMEOUT_S
# Prints "NAME: ready on ADDRESS:PORT" once a TCP connect succeeds, or a failure line on stderr.
announce_when_listening() {
  local name="$1" address="$2" port="$3" timeout_s="$4" deadline
  deadline=$(( $(date +%s) + timeout_s ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if (exec 3<>"/dev/tcp/$address/$port") 2>/dev/null; then
      echo "$name: ready on $address:$port"
      return 0
    fi
    sleep 0.1
  done
  echo "$name: nothing listening on $address:$port after ${timeout_s}s" >&2
  return 1
}
