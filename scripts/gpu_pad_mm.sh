#!/usr/bin/env bash
# pad_mm on the lent GPU, in one call (see docs/collection.md). Run from the repository root on
# the GPU machine, with the binaries in .gpu/ (make gpu-build, or the commands in the doc):
#   bash .gpu/gpu_pad_mm.sh smoke   # loader check, correctness check, GPU tests, 40-input collection, 8-input comparison
#   bash .gpu/gpu_pad_mm.sh full    # the 2000-input H100 collection (resumes) + comparison with PyTorch
# Everything goes under $OUT (default: out/gpu).
set -uo pipefail
MODE=${1:-smoke}
OUT=${OUT:-out/gpu}
SAMPLES=${SAMPLES:-2000}
MAXDIM=${MAXDIM:-8192}
LIMIT=${LIMIT:-420}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
G=.gpu
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader || true
if [ "$MODE" = smoke ]; then
  ldd $G/ah-collect | grep -E "cuda|cublas|nvrtc" || true
  $G/ah-collect --list
  $G/ah-collect check 2>&1 | tee "$OUT/check.txt" | tail -8
  for t in $G/test-pad_mm_gpu*; do [ -x "$t" ] || continue; AH_COLLECT_BIN=$G/ah-collect "$t" --test-threads 1 2>&1 | tail -4; done
  [ -f "$G/pad_mm_smoke.txt" ] && cp "$G"/pad_mm_smoke.txt* "$OUT"/ 2>/dev/null
  $G/ah-collect --name pad_mm --device cuda --num-samples 40 --max-dim "$MAXDIM" --shapes pytorch --seed 1 --out "$OUT/pad_mm_smoke.txt" 2>&1 | tail -3
  python3 $G/compare_pytorch_pad_mm.py "$OUT/pad_mm_smoke.txt" --samples 8 --reps 1 2>&1 | tail -8
else
  # Resume a partial log carried in .gpu/ (a previous call's $OUT).
  if [ -f "$G/pad_mm_h100.txt" ]; then cp "$G"/pad_mm_h100.txt* "$OUT"/; fi
  timeout -s INT "$LIMIT" $G/ah-collect --name pad_mm --device cuda --num-samples "$SAMPLES" --num-reps 3 \
    --max-dim "$MAXDIM" --shapes pytorch --seed 0 --out "$OUT/pad_mm_h100.txt" 2>&1 | tail -6
  echo "collection exit: ${PIPESTATUS[0]}"
  if [ "${CMP:-120}" != 0 ]; then
    python3 $G/compare_pytorch_pad_mm.py "$OUT/pad_mm_h100.txt" --samples ${CMP:-120} --reps 3 \
      --json "$OUT/compare_pytorch.json" 2>&1 | tail -14
  fi
fi
