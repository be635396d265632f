#!/usr/bin/env bash
# The parameter grid behind the shipped InductorChoices handler, scored by ah-prune's
# cross-validation, and the written selection rule applied to it: fewest cross-validated harmful
# picks among the settings with at least 10x less autotuning than default max-autotune (ties:
# less autotuning). Prints a markdown table, the chosen setting last. Nothing is written to the
# repository (models go to a temporary folder).
#   bash scripts/inductor_prune_grid.sh [LOG] [extra ah-prune options, e.g. --first 157]
set -euo pipefail
cd "$(dirname "$0")/.."
log=${1:-data/inductor_mm_h100.txt}
shift || true
cargo build --release -q -p ah-train
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The cross-validated rows of a report: "rule|autotuning s|run vs MA|run vs best|harmful".
row() { grep -F "| $2 |" "$1" | head -n 1 | awk -F'|' '{gsub(/ /,""); print $4"|"$5"|"$6"|"$7}'; }
echo "| min-leaf | max-depth | min-support | autotuning s | run vs max-autotune | run vs best | harmful |"
echo "|---|---|---|---|---|---|---|"
for leaf in 3 5 8 12; do
  for depth in 3 4; do
    for support in 1 3 4 5 6 8; do
      out="$tmp/$leaf-$depth-$support"
      target/release/ah-prune "$log" --no-codegen --min-leaf "$leaf" --max-depth "$depth" \
        --min-support "$support" --output-dir "$out" "$@" >/dev/null 2>&1
      report=$(ls "$out"/*.report.md)
      IFS='|' read -r s ma best harm <<<"$(row "$report" "learned (cross-validated)")"
      IFS='|' read -r s_default _ <<<"$(row "$report" "default max-autotune (full list)")"
      echo "| $leaf | $depth | $support | $s | $ma | $best | $harm |"
      echo "$leaf $depth $support $s $harm $s_default" >>"$tmp/scores"
    done
  done
done
# The rule: autotuning at most a tenth of default's; fewest harmful; then least autotuning.
awk '$4 * 10 <= $6' "$tmp/scores" | sort -k5,5n -k4,4g | head -n 1 |
  awk '{print "\nchosen by the rule: --min-leaf "$1" --max-depth "$2" --min-support "$3" ("$5" harmful, "$4" s of autotuning)"}'
