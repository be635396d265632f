#!/usr/bin/env bash
# Trains the reduction heuristic from the H100 log and generates it into the heuristics crate
# (docs/reduction.md). Needs no GPU:
#
#   cargo build --release -p ah-train -p ah-codegen && bash scripts/reduction_train.sh
#
# The log keeps `inf` for persistent variants that cannot hold the row (cols > 16384). The
# multi-kernel never offers those, so `--inf-unavailable` tells ah-train that picking one is an
# autotune ("not in choices"), not an infinitely slow pick, in its metrics (train, val, test
# and the `fresh` set) and in the cost-aware threshold; the model records it for `ah-use
# replay`. (Without it one out-of-fold pick of an `inf` variant is an infinite loss at its
# confidence and most inputs stay unsure. The flag gives the same model as training on a copy
# with the `inf` rows dropped, which this script did before.)
#
# Autotune cost 0.1 (an unsure first call benchmarks 8 variants, ~45 ms, against kernels of
# 5 us to 1 ms) and at most 2% harmful picks (more than 10% slower than the best).
set -euo pipefail

BIN=${BIN:-target/release}
LOG=${LOG:-data/reduction_h100.txt}
FRESH=${FRESH:-data/reduction_h100_fresh.txt}
OUT=${OUT:-out/reduction}
mkdir -p "$OUT"
"$BIN/ah-train" "$LOG" --heuristic-name ReductionH100 --output-dir "$OUT" \
    --data fresh "$FRESH" --default-choice looped-512 --inf-unavailable \
    --autotune-cost 0.1 --max-harmful 0.02 --no-codegen
"$BIN/ah-codegen" "$OUT/ReductionH100.model.json"
