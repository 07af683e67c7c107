#!/usr/bin/env bash
# Sourced by crank/run-local.sh and analysis/ab-options.sh: the order in which one round of an interleaved sitting
# runs its scenarios or configurations.

# round_order ROUND ITEM...: the items in that round's order, one per line: rotated one place per round and reversed
# every other round (4 items: A B C D, A D C B, C D A B, C B A D, ...), so that no item always runs first, last or
# right after the same one. Machine state that one run leaves to the next (and the slow and fast spells of a shared
# host) then falls on every item alike.
round_order() {
  local i=$(( $1 - 1 )) j
  shift
  local n=$# items=("$@")
  local order=("${items[@]:i % n}" "${items[@]:0:i % n}")
  if (( i % 2 )); then for ((j = n - 1; j >= 0; j--)); do echo "${order[j]}"; done; else printf '%s\n' "${order[@]}"; fi
}
