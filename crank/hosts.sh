#!/usr/bin/env bash
# Three simulated hosts on this machine for multi-machine benchmark runs: the network namespaces
# <prefix>-load, <prefix>-proxy and <prefix>-downstream, each with one veth interface on a bridge
# <prefix>-br and an address in a private /24 that is not routed anywhere. There is no default
# route and the bridge has no address, so the three reach each other and nothing else (not even this
# machine's own namespace). Each also has its own loopback, which the multi-host test uses to prove
# that no benchmark traffic takes it.
#
# usage: crank/hosts.sh up | down | status | describe
#   up        create the namespaces, the bridge and the addresses (fails if any of them exists)
#   down      stop every process left in the namespaces, delete them and the bridge (idempotent)
#   status    what exists, with addresses and the processes in each namespace
#   describe  one line per host, "ROLE NAMESPACE ADDRESS", for scripts
# Environment: HOSTS_PREFIX (llrpmm; at most 10 characters: interface names are limited to 15),
#              HOSTS_SUBNET (10.203.15: the hosts get .1 load, .2 proxy, .3 downstream, /24).
# Exit status: 0 done, 1 failed, 2 bad usage, 77 this machine cannot make network namespaces (not
# root, no `ip`, or the kernel refuses): the reason is printed.
set -euo pipefail

prefix="${HOSTS_PREFIX:-llrpmm}"
subnet="${HOSTS_SUBNET:-10.203.15}"
roles=(load proxy downstream)
declare -A octet=([load]=1 [proxy]=2 [downstream]=3)
bridge="$prefix-br"

die() { echo "hosts: $*" >&2; exit 1; }
skip() { echo "hosts: SKIP: $*" >&2; exit 77; }

[[ "$prefix" =~ ^[a-z][a-z0-9-]{0,9}$ ]] || { echo "hosts: HOSTS_PREFIX must be 1-10 of [a-z0-9-], got '$prefix'" >&2; exit 2; }
[[ "$subnet" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || { echo "hosts: HOSTS_SUBNET must be the first three octets, e.g. 10.203.15" >&2; exit 2; }

ns_of() { echo "$prefix-$1"; }
address_of() { echo "$subnet.${octet[$1]}"; }
ns_exists() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qx "$1"; }

# Prints why namespaces cannot be made here and exits 77; returns when they can.
require_namespaces() {
  [ "$(id -u)" = 0 ] || skip "network namespaces need root (running as uid $(id -u))"
  command -v ip > /dev/null || skip "the 'ip' command (iproute2) is not installed"
  local probe="$prefix-probe" err
  if ! err="$(ip netns add "$probe" 2>&1)"; then
    skip "the kernel refuses a network namespace: ${err:-ip netns add failed}"
  fi
  ip netns del "$probe"
}

up() {
  require_namespaces
  local role ns
  for role in "${roles[@]}"; do ! ns_exists "$(ns_of "$role")" || die "namespace $(ns_of "$role") exists already (crank/hosts.sh down first)"; done
  ! ip link show "$bridge" > /dev/null 2>&1 || die "bridge $bridge exists already (crank/hosts.sh down first)"
  # Half a setup is worse than none.
  trap 'echo "hosts: setup failed; removing what was made" >&2; down > /dev/null 2>&1' ERR
  ip link add "$bridge" type bridge
  ip link set "$bridge" up
  for role in "${roles[@]}"; do
    ns="$(ns_of "$role")"
    ip netns add "$ns"
    # Root side <prefix>-<initial>, moved side renamed eth0 inside the namespace.
    ip link add "$prefix-${role:0:1}" type veth peer name "$prefix-${role:0:1}p"
    ip link set "$prefix-${role:0:1}p" netns "$ns"
    ip -n "$ns" link set "$prefix-${role:0:1}p" name eth0
    ip link set "$prefix-${role:0:1}" master "$bridge" up
    ip -n "$ns" addr add "$(address_of "$role")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  trap - ERR
  for role in "${roles[@]}"; do echo "hosts: $role = namespace $(ns_of "$role"), $(address_of "$role")"; done
  echo "hosts: up on bridge $bridge, $subnet.0/24, no default route"
}

down() {
  local role ns pids i
  for role in "${roles[@]}"; do
    ns="$(ns_of "$role")"
    ns_exists "$ns" || continue
    # Whatever still runs in the namespace was started there for a run: stop it, SIGKILL after 5 s.
    pids="$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
    if [ -n "${pids// /}" ]; then
      echo "hosts: stopping processes left in $ns: $pids"
      # shellcheck disable=SC2086  # a list of PIDs
      kill -TERM $pids 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        [ -n "$(ip netns pids "$ns" 2>/dev/null)" ] || break
        sleep 0.1
      done
      pids="$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
      # shellcheck disable=SC2086
      [ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
    fi
    ip netns del "$ns"
  done
  # Deleting a namespace deletes its veth end and with it the root end; the bridge goes last.
  for role in "${roles[@]}"; do ip link del "$prefix-${role:0:1}" 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  echo "hosts: down (no $prefix-* namespace, no bridge $bridge)"
}

status() {
  local role ns any=0 pid
  for role in "${roles[@]}"; do
    ns="$(ns_of "$role")"
    if ns_exists "$ns"; then
      any=1
      echo "$role: $ns $(ip -n "$ns" -4 -o addr show dev eth0 2>/dev/null | awk '{ print $4 }')"
      for pid in $(ip netns pids "$ns" 2>/dev/null); do echo "  pid $pid $(cat "/proc/$pid/comm" 2>/dev/null)"; done
    else
      echo "$role: $ns absent"
    fi
  done
  if ip link show "$bridge" > /dev/null 2>&1; then echo "bridge: $bridge"; any=1; else echo "bridge: $bridge absent"; fi
  [ "$any" = 1 ] || echo "hosts: down"
}

case "${1:-}" in
  up) up ;;
  down) [ "$(id -u)" = 0 ] || skip "network namespaces need root (running as uid $(id -u))"; down ;;
  status) status ;;
  describe) for role in "${roles[@]}"; do echo "$role $(ns_of "$role") $(address_of "$role")"; done ;;
  *) sed -n '2,19p' "$0" >&2; exit 2 ;;
esac
