#!/usr/bin/env bash
# The house's rules, checked on the source tree: every #include "<folder>/..." crosses only the
# edges allowed below (dependencies point down), and no .cpp/.h is over 500 lines. Prints the
# include graph between folders (edge: number of includes) and every breach; exits 1 on a breach.
# Run by CTest as layout_rules; `scripts/check_layout.sh` by hand prints the graph.
set -euo pipefail
cd "$(dirname "$0")/.."

# room -> the rooms it may include (besides itself)
declare -A allowed=(
  [core]=""
  [comm]="core"
  [allreduce]="comm core"
  [paramserver]="comm core"
  [engines]="launch/blueprint comm core"  # the blueprint: what every engine trains (it needs only comm and core)
  [launch/monitor]="core"
  [launch/blueprint]="comm core"  # comm: the transport catalogue
  [launch/cluster]="core"
  [launch/report]="launch/monitor comm core"
  [launch/sweep]="launch/blueprint launch/report launch/monitor launch/cluster paramserver comm core"
  [launch/predict]="launch/report comm core"
  [launch/bench]="launch/blueprint launch/report launch/monitor launch/cluster allreduce paramserver comm core"  # cluster: doctor reads a rank's host cores
  [launch]="launch/blueprint launch/report launch/sweep launch/bench launch/monitor launch/cluster launch/predict engines allreduce paramserver comm core"
)

room_of() {  # sets `room`: the room a path (or an include target) belongs to (no subshell: a fork per include took 30 s)
  case "$1" in
    launch/*/*) room="${1%/*}" ;;
    launch/*) room=launch ;;
    *) room="${1%%/*}" ;;
  esac
}

breaches=0
declare -A edges=()
while IFS= read -r file; do
  room_of "$file"
  from=$room
  [[ -v "allowed[$from]" ]] || continue
  while IFS= read -r target; do
    room_of "$target"
    to=$room
    [[ "$to" == "$from" || ! -v "allowed[$to]" ]] && continue
    edges["$from -> $to"]=$(( ${edges["$from -> $to"]:-0} + 1 ))
    if [[ " ${allowed[$from]} " != *" $to "* ]]; then
      echo "BREACH: $file includes $target ($from may include: ${allowed[$from]:-nothing})"
      breaches=$((breaches + 1))
    fi
  done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "$file")
done < <(git ls-files -co --exclude-standard '*.cpp' '*.h' '*.cu' '*.cuh' | grep -E '^(core|comm|allreduce|paramserver|engines|launch)/')

echo "include graph between folders (includes per edge):"
for edge in "${!edges[@]}"; do echo "  $edge: ${edges[$edge]}"; done | sort

while read -r lines file; do
  [[ $file == total ]] && continue
  if (( lines > 500 )); then
    echo "BREACH: $file has $lines lines (at most 500)"
    breaches=$((breaches + 1))
  fi
done < <(git ls-files -z -co --exclude-standard '*.cpp' '*.h' '*.cu' '*.cuh' | xargs -0 wc -l)

if (( breaches > 0 )); then
  echo "$breaches breach(es) of the layout rules"
  exit 1
fi
echo "layout rules hold"
