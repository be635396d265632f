#!/usr/bin/env bash
# The parameter grid behind the shipped InductorChoices handler, scored by ah-prune's
# cross-validation, and the written selection rule applied to it (the one-standard-error rule
# of CART, Breiman et al. 1984, section 3.4.3): among the settings with at least 10x less
# autotuning than default max-autotune, take the fewest cross-validated harmful picks h; every
# setting within one standard error of it, h + sqrt(h * (1 - h / N)) over N GEMMs (the binomial
# standard error of a count of h in N), is as good as the data can tell, and the rule takes the
# one with the least autotuning (ties: fewer harmful). Until the fifth session of 2026-11-24 the
# rule took the fewest harmful outright: on 635 GEMMs that picked depth-3 trees 2 harmful picks
# ahead of a depth-5 one (a split into folds moved a count by 11), and those trees kept 8 Triton
# configs for the large linears of a training step, where max-autotune itself picks cuBLAS
# (docs/results.md). Each setting is cross-validated AH_GRID_REPEATS times (default 3) over
# other splits into folds and scored by the means (`ah-prune --cv-repeats`). Prints a markdown
# table, the chosen setting last. Nothing is written to the repository (models go to a
# temporary folder). Settings run in parallel, one per core; each prints its score line to
# stderr when it ends (a run cut short still shows what it scored). The axes: AH_GRID_LEAVES
# (default "3 5 8 12"), AH_GRID_DEPTHS ("3 4 5 6"), AH_GRID_SUPPORTS ("4 6 8"; the best setting
# of every grid since 397 GEMMs had 6 or 8), AH_GRID_KEEPS (ah-prune's --max-keep, "8") and
# AH_GRID_PRICES (ah-prune's --harm-price in seconds, "inf": harmful picks first); AH_GRID_LISTS
# ("capped"; "full" lets leaves leave a GEMM to the full list, "full capped" scores both).
#   bash scripts/inductor_prune_grid.sh [LOG...] [extra ah-prune options, e.g. --first 157]
# LOGs default to the logs of data/: the default mixture, decode, attention, tiny and tokens
# (those present), in the order the shipped command names them.
# AH_PRUNE names a built ah-prune to run instead of building one (the lent GPU machine, with 16
# cores, has no cargo: `AH_PRUNE=.gpu/ah-prune bash scripts/inductor_prune_grid.sh`).
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
  for f in data/inductor_mm_h100.txt data/inductor_mm_decode_h100.txt data/inductor_mm_attention_h100.txt \
    data/inductor_mm_tiny_h100.txt data/inductor_mm_tokens_h100.txt; do
    [ -f "$f" ] && logs+=("$f")
  done
fi
log="${logs[*]}"
prune=${AH_PRUNE:-}
if [ -z "$prune" ]; then
  cargo build --release -q -p ah-train
  prune=target/release/ah-prune
fi
[ -x "$prune" ] || { echo "inductor_prune_grid.sh: $prune is not an executable ah-prune" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One setting: "leaf depth support list keep price" where list is "full" (leaves may leave a
# GEMM to the full list) or "capped" (--no-full-list), keep is --max-keep and price
# --harm-price. Prints its score line.
score() {
  local leaf=$1 depth=$2 support=$3 list=$4 keep=$5 price=$6 out="$tmp/$1-$2-$3-$4-$5-$6"
  local flag=()
  [ "$list" = capped ] && flag=(--no-full-list)
  # One thread each: the settings already fill every core (ah-prune grows its trees on all
  # cores by default; rayon reads RAYON_NUM_THREADS, as --threads sets it).
  # shellcheck disable=SC2086 # $log: the logs, split on spaces
  RAYON_NUM_THREADS=1 "$prune" $log --no-codegen --min-leaf "$leaf" --max-depth "$depth" \
    --min-support "$support" "${flag[@]}" --max-keep "$keep" --harm-price "$price" \
    --cv-repeats "${AH_GRID_REPEATS:-3}" --output-dir "$out" "${@:7}" >/dev/null 2>&1
  # The cross-validated rows of a report: "GEMMs|autotuning s|run vs MA|run vs best|harmful".
  local report row default
  report=$(ls "$out"/*.report.md)
  row=$(grep -F "| learned (cross-validated) |" "$report" | head -n 1 | awk -F'|' '{gsub(/ /,""); print $3"|"$4"|"$5"|"$6"|"$7}')
  default=$(grep -F "| default max-autotune (full list) |" "$report" | head -n 1 | awk -F'|' '{gsub(/ /,""); print $4}')
  echo "$leaf|$depth|$support|$list|$row|$default|$keep|$price"
}
export -f score
export log tmp prune
lists=${AH_GRID_LISTS:-capped}
[ "${AH_GRID_FULL:-0}" = 1 ] && lists="full capped"
for list in $lists; do
  for leaf in ${AH_GRID_LEAVES:-3 5 8 12}; do
    for depth in ${AH_GRID_DEPTHS:-3 4 5 6}; do
      for support in ${AH_GRID_SUPPORTS:-4 6 8}; do
        for keep in ${AH_GRID_KEEPS:-8}; do
          for price in ${AH_GRID_PRICES:-inf}; do
            echo "$leaf $depth $support $list $keep $price"
          done
        done
      done
    done
  done
done | xargs -P "$(nproc)" -L 1 bash -c 'score "$@" '"${*:+$(printf '%q ' "$@")}" _ | tee "$tmp/scores" >&2
python3 scripts/inductor_prune_select.py "$tmp/scores"
