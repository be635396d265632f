#!/usr/bin/env bash
# mm (cuBLASLt algorithm selection) on the lent GPU, in one call. Run from the repository root
# on the GPU machine with the binaries in .gpu/mm/ (see docs/cublaslt-mm-ranking.md):
#   bash .gpu/mm/gpu_cublaslt_mm.sh smoke   # loader check, GPU tests, a 24-input timing sample
#   bash .gpu/mm/gpu_cublaslt_mm.sh full    # GPU tests, the training collection and the evaluation collection
# Everything goes under $OUT (default: out/gpu_mm).
set -uo pipefail
MODE=${1:-smoke}
OUT=${OUT:-out/gpu_mm}
G=${G:-.gpu/mm}
BUDGET=${BUDGET:-5}
TRAIN=${TRAIN:-1500}
EVAL=${EVAL:-400}
TRAIN_LIMIT=${TRAIN_LIMIT:-300}
EVAL_LIMIT=${EVAL_LIMIT:-100}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader || true
ls /usr/local/cuda/lib64/libcublasLt.so* 2>/dev/null | head -3
AH_COLLECT_BIN=$G/ah-collect $G/test-mm_gpu --test-threads 1 --nocapture 2>&1 | tail -6
if [ "$MODE" = smoke ]; then
  /usr/bin/time -f "smoke collection: %e s" $G/ah-collect --name cublaslt_mm --device cuda --num-samples 24 --num-reps 1 \
    --budget-ms "$BUDGET" --seed 99 --out "$OUT/mm_smoke.txt" 2>&1 | tail -4
  awk -F, 'NR>2 {n[$1","$2","$3","$4","$6","$8]++} END {for (k in n) c[n[k]]++; for (x in c) print x" choices: "c[x]" inputs"}' "$OUT/mm_smoke.txt" | sort -n
else
  timeout -s INT "$TRAIN_LIMIT" $G/ah-collect --name cublaslt_mm --device cuda --num-samples "$TRAIN" --num-reps 1 \
    --budget-ms "$BUDGET" --seed 0 --out "$OUT/mm_h100.txt" 2>&1 | tail -4
  echo "train collection exit: ${PIPESTATUS[0]}"
  timeout -s INT "$EVAL_LIMIT" $G/ah-collect --name cublaslt_mm --device cuda --num-samples "$EVAL" --num-reps 1 \
    --budget-ms "$BUDGET" --seed 1 --out "$OUT/mm_h100_eval.txt" 2>&1 | tail -4
  echo "eval collection exit: ${PIPESTATUS[0]}"
fi
ls -la "$OUT"
