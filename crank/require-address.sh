#!/usr/bin/env bash
# Checks the address variables of benchmarks.yml before a job starts, so that a forgotten or wrong
# address stops a run with a message naming the variable instead of measuring the wrong thing.
# run-local.sh calls it before it starts each job; the job scripts (nginx, HAProxy, wrk) call it on
# their own inputs. Under crank the `multimachine` profile applies the same rules in its endpoints.
#
# usage: require-address.sh [--remote] [--target NAME=VALUE]... [--listen NAME=VALUE]...
#   --target NAME=VALUE  an address other machines (or the load) connect to: must be set, must not be
#                        a wildcard (0.0.0.0); with --remote it must not be a loopback address either
#                        (another machine cannot reach this one's 127.0.0.1).
#   --listen NAME=VALUE  an address a server binds to: empty means "the target address", 0.0.0.0 binds
#                        every interface.
# An address is an IPv4 address or a host name. Exit status: 0 when every address passes, 2 otherwise
# (one line per problem on stderr, naming the variable).
set -euo pipefail

remote=0
problems=0
checks=()

problem() { echo "require-address: $*" >&2; problems=$((problems + 1)); }

# check KIND NAME VALUE
check() {
  local kind="$1" name="$2" value="$3"
  if [ -z "$value" ]; then
    if [ "$kind" = target ]; then
      problem "$name is not set: give the address the other machines reach this server at (--variable $name=<IPv4 address or host name>)"
    fi
    return 0
  fi
  if [[ "$value" == *:* ]]; then
    problem "$name=$value: IPv6 literals are not supported by the job scripts; use an IPv4 address or a host name"
    return 0
  fi
  if ! [[ "$value" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]]; then
    problem "$name='$value' is neither an IPv4 address nor a host name"
    return 0
  fi
  if [ "$kind" = target ]; then
    case "$value" in
      0.0.0.0) problem "$name=0.0.0.0 is a wildcard, nothing can connect to it: set $name to the server's reachable address (binding every interface is the listen address's job)" ;;
      127.*|localhost|localhost.*)
        [ "$remote" = 0 ] || problem "$name=$value is a loopback address, which another machine cannot reach: set it to the address the other machines use" ;;
    esac
  fi
}

[ $# -gt 0 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --remote) remote=1; shift ;;
    --target|--listen)
      [[ "${2:-}" == *=* ]] || { echo "require-address: $1 needs NAME=VALUE" >&2; exit 2; }
      # Remember the checks: --remote may come after them.
      checks+=("${1#--}" "${2%%=*}" "${2#*=}"); shift 2 ;;
    *) echo "require-address: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for ((i = 0; i < ${#checks[@]}; i += 3)); do check "${checks[i]}" "${checks[i + 1]}" "${checks[i + 2]}"; done
[ "$problems" -eq 0 ] || exit 2
