#!/usr/bin/env bash
# Trains the reduction heuristic from the H100 log and generates it into the heuristics crate
# (docs/reduction.md). Needs no GPU:
#
#   cargo build --release -p ah-train -p ah-codegen && bash scripts/reduction_train.sh
#
# The log keeps `inf` for persistent variants that cannot hold the row (cols > 16384). The
# multi-kernel never offers those, so training sees only the variants that can run: the `inf`
# rows are dropped into out/reduction/reduction_h100_finite.txt (deterministic, metadata and
# header kept). With them, ah-train's cost-aware threshold leaves most inputs unsure: one
# out-of-fold pick of an `inf` variant is an infinite loss at its confidence.
#
# Autotune cost 0.1 (an unsure first call benchmarks 8 variants, ~45 ms, against kernels of
# 5 us to 1 ms) and at most 2% harmful picks (more than 10% slower than the best).
set -euo pipefail

BIN=${BIN:-target/release}
LOG=${LOG:-data/reduction_h100.txt}
FRESH=${FRESH:-data/reduction_h100_fresh.txt}
OUT=${OUT:-out/reduction}
mkdir -p "$OUT"
FINITE="$OUT/reduction_h100_finite.txt"
grep -v ',inf$' "$LOG" >"$FINITE"
grep -v ',inf$' "$FRESH" >"$OUT/reduction_h100_fresh_finite.txt"
"$BIN/ah-train" "$FINITE" --heuristic-name ReductionH100 --output-dir "$OUT" \
    --data fresh "$OUT/reduction_h100_fresh_finite.txt" --default-choice looped-512 \
    --autotune-cost 0.1 --max-harmful 0.02 --no-codegen
"$BIN/ah-codegen" "$OUT/ReductionH100.model.json"
