#!/usr/bin/env bash
# The parameter grid behind the shipped InductorChoices handler, scored by ah-prune's
# cross-validation, and the written selection rule applied to it: fewest cross-validated harmful
# picks among the settings with at least 10x less autotuning than default max-autotune (ties:
# less autotuning). Each setting is cross-validated AH_GRID_REPEATS times (default 3) over other
# splits into folds and scored by the means (`ah-prune --cv-repeats`): with one split, the
# harmful count of a setting moved by up to 11 of 635 GEMMs when the split changed, more than
# separated the best settings. Prints a markdown table, the chosen setting last. Nothing is
# written to the repository (models go to a temporary folder). Settings run in parallel, one
# per core. The axes: AH_GRID_LEAVES (default "3 5 8 12"), AH_GRID_DEPTHS ("3 4 5") and
# AH_GRID_SUPPORTS ("4 6 8"; the best setting of every grid since 397 GEMMs had 6 or 8).
#   bash scripts/inductor_prune_grid.sh [LOG...] [extra ah-prune options, e.g. --first 157]
# LOGs default to the logs of data/: the default mixture, decode and attention (those present).
# Trees here never leave a GEMM
# to the full list (--no-full-list): on 397 GEMMs none of the 48 that may reached the rule's 10x
# (data/inductor_prune_grid_h397.md: the closest spent 777 s against a bound of 702 s), so they
# are scored only with AH_GRID_FULL=1.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=()
while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do
  logs+=("$1")
  shift
done
if [ ${#logs[@]} -eq 0 ]; then
  for f in data/inductor_mm_h100.txt data/inductor_mm_decode_h100.txt data/inductor_mm_attention_h100.txt; do
    [ -f "$f" ] && logs+=("$f")
  done
fi
log="${logs[*]}"
cargo build --release -q -p ah-train
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One setting: "leaf depth support list" where list is "full" (leaves may leave a GEMM to the
# full list) or "capped" (--no-full-list). Prints its score line.
score() {
  local leaf=$1 depth=$2 support=$3 list=$4 out="$tmp/$1-$2-$3-$4"
  local flag=()
  [ "$list" = capped ] && flag=(--no-full-list)
  # shellcheck disable=SC2086 # $log: the logs, split on spaces
  target/release/ah-prune $log --no-codegen --min-leaf "$leaf" --max-depth "$depth" \
    --min-support "$support" "${flag[@]}" --cv-repeats "${AH_GRID_REPEATS:-3}" \
    --output-dir "$out" "${@:5}" >/dev/null 2>&1
  # The cross-validated rows of a report: "autotuning s|run vs MA|run vs best|harmful".
  local report row default
  report=$(ls "$out"/*.report.md)
  row=$(grep -F "| learned (cross-validated) |" "$report" | head -n 1 | awk -F'|' '{gsub(/ /,""); print $4"|"$5"|"$6"|"$7}')
  default=$(grep -F "| default max-autotune (full list) |" "$report" | head -n 1 | awk -F'|' '{gsub(/ /,""); print $4}')
  echo "$leaf|$depth|$support|$list|$row|$default"
}
export -f score
export log tmp
lists=capped
[ "${AH_GRID_FULL:-0}" = 1 ] && lists="full capped"
for list in $lists; do
  for leaf in ${AH_GRID_LEAVES:-3 5 8 12}; do
    for depth in ${AH_GRID_DEPTHS:-3 4 5}; do
      for support in ${AH_GRID_SUPPORTS:-4 6 8}; do
        echo "$leaf $depth $support $list"
      done
    done
  done
done | xargs -P "$(nproc)" -L 1 bash -c 'score "$@" '"${*:+$(printf '%q ' "$@")}" _ >"$tmp/scores"
sort -t'|' -k4,4r -k1,1n -k2,2n -k3,3n "$tmp/scores" >"$tmp/sorted"
echo "| min-leaf | max-depth | min-support | full list | autotuning s | run vs max-autotune | run vs best | harmful |"
echo "|---|---|---|---|---|---|---|---|"
awk -F'|' '{print "| "$1" | "$2" | "$3" | "($4=="full"?"yes":"no")" | "$5" | "$6" | "$7" | "$8" |"}' "$tmp/sorted"
# The rule: autotuning at most a tenth of default's; fewest harmful; then least autotuning.
awk -F'|' '$5 * 10 <= $9' "$tmp/sorted" | sort -t'|' -k8,8n -k5,5g | head -n 1 |
  awk -F'|' '{print "\nchosen by the rule: --min-leaf "$1" --max-depth "$2" --min-support "$3($4=="capped"?" --no-full-list":"")" ("$8" harmful, "$5" s of autotuning)"} END {if (NR == 0) print "\nno setting has 10x less autotuning than default max-autotune"}'
