#!/usr/bin/env bash
# The use step and an independent evaluation on the lent GPU, in one call. Run from the
# repository root on the GPU machine with release binaries in .gpu/use/ (see docs/results.md):
#   bash .gpu/use/gpu_use.sh
# 1. a fresh pad_mm log (seed 1, never used for training) for replaying PadMMH100 here;
# 2. ah-use run twice on real cuBLAS kernels: the heuristic decides, the unsure inputs are
#    autotuned and cached, the second run takes them from the cache.
set -uo pipefail
OUT=${OUT:-out/gpu}
G=${G:-.gpu/use}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
time $G/ah-collect --name pad_mm --device cuda --num-samples "${FRESH:-300}" --num-reps 3 --max-dim 8192 --shapes pytorch \
  --seed 1 --out "$OUT/pad_mm_h100_fresh.txt" 2>&1 | tail -2
for run in 1 2; do
  AUTOHEURISTIC_USE=pad_mm $G/ah-use run --name pad_mm --device cuda --num-samples "${USE:-200}" --seed 21 \
    --max-dim 8192 --reps 3 --cache "$OUT/pick-cache.json" --json "$OUT/use_h100_run$run.json" | sed -n '/^use step:/,$p'
done
