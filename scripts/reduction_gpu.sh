#!/usr/bin/env bash
# The reduction work on the GPU machine, in one call each (docs/reduction.md):
#
#   bash scripts/reduction_gpu.sh collect   GPU test of every kernel variant, the training log
#                                           (seed 0, distinct inputs), the fresh log (seed 1,
#                                           distinct, none of the training log's), the pick cache
#                                           across processes and after a source edit
#   bash scripts/reduction_gpu.sh measure   first-call decisions (benchmark vs heuristic) and
#                                           the heuristic scored on the fresh shapes
#
# Runs from the repository root with the binaries in .gpu/ (built here, no Rust there):
#   cargo build --release -p ah-collect --bin ah-collect -p ah-cases --example reduction_multi_kernel
#   cargo test --release -p ah-bench --features cuda --test reduction_gpu --no-run
#   mkdir -p .gpu && cp target/release/ah-collect target/release/examples/reduction_multi_kernel .gpu/
#   cp "$(ls -t target/release/deps/reduction_gpu-* | grep -v '\.d$' | head -1)" .gpu/reduction_gpu
# and through the device tool: command `OUT=$OUT bash scripts/reduction_gpu.sh collect`,
# carry [".gpu"]. Writes logs under $OUT (default out/reduction_gpu).
set -uo pipefail

MODE=${1:?usage: reduction_gpu.sh collect|measure}
OUT=${OUT:-out/reduction_gpu}
G=${GPU_BIN:-.gpu}
SAMPLES=${SAMPLES:-2200}
FRESH_SAMPLES=${FRESH_SAMPLES:-400}
TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-330}
FRESH_TIMEOUT=${FRESH_TIMEOUT:-90}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
LOG="$OUT/gpu_log.txt"

say() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }
run() { "$@" 2>&1 | tee -a "$LOG"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv 2>&1 | tee -a "$LOG"

case "$MODE" in
collect)
    say "GPU test: every reduction variant against the CPU reference"
    if ! run "$G/reduction_gpu" --nocapture --test-threads 1; then
        say "GPU test FAILED: stopping before the collection"
        exit 1
    fi
    say "training log: $SAMPLES distinct inputs, seed 0 (timeout ${TRAIN_TIMEOUT}s; re-run resumes)"
    SECONDS=0
    run timeout "$TRAIN_TIMEOUT" "$G/ah-collect" --name reduction --device cuda \
        --out "$OUT/reduction_h100.txt" --num-samples "$SAMPLES" --num-reps 1 --seed 0 --distinct
    say "training log done in ${SECONDS}s: $(($(wc -l <"$OUT/reduction_h100.txt") - 2)) rows"
    say "fresh log: $FRESH_SAMPLES distinct inputs, seed 1, none of the training log's"
    SECONDS=0
    run timeout "$FRESH_TIMEOUT" "$G/ah-collect" --name reduction --device cuda \
        --out "$OUT/reduction_h100_fresh.txt" --num-samples "$FRESH_SAMPLES" --num-reps 1 --seed 1 \
        --distinct --exclude "$OUT/reduction_h100.txt"
    say "fresh log done in ${SECONDS}s: $(($(wc -l <"$OUT/reduction_h100_fresh.txt") - 2)) rows"
    CACHE=/tmp/reduction_picks.json
    rm -f "$CACHE"
    say "pick cache, process 1 (empty cache: benchmarks, stores)"
    run "$G/reduction_multi_kernel" cache --shapes "$OUT/reduction_h100_fresh.txt" --cache "$CACHE" --limit 30
    say "pick cache, process 2 (same kernels: reuses every pick)"
    run "$G/reduction_multi_kernel" cache --shapes "$OUT/reduction_h100_fresh.txt" --cache "$CACHE" --limit 30
    say "pick cache, process 3 (kernel source edited: new hashes, benchmarks again)"
    run "$G/reduction_multi_kernel" cache --shapes "$OUT/reduction_h100_fresh.txt" --cache "$CACHE" --limit 30 --edit-source
    say "pick cache, process 4 (original source again: still cached)"
    run "$G/reduction_multi_kernel" cache --shapes "$OUT/reduction_h100_fresh.txt" --cache "$CACHE" --limit 30
    say "first calls on 40 fresh shapes (benchmark vs the heuristic this build links, if any)"
    run "$G/reduction_multi_kernel" measure --shapes "$OUT/reduction_h100_fresh.txt" --limit 40
    ;;
measure)
    SHAPES=${SHAPES:-data/reduction_h100_fresh.txt}
    say "first-call decisions on $SHAPES"
    TRAIN=${TRAIN:-data/reduction_h100.txt}
    run "$G/reduction_multi_kernel" measure --shapes "$SHAPES" --exclude "$TRAIN" --limit "${LIMIT:-400}" --out "$OUT/measure.jsonl"
    say "heuristic scored on the logged times of $SHAPES (no GPU work)"
    run "$G/reduction_multi_kernel" eval --shapes "$SHAPES" --exclude "$TRAIN"
    CACHE=/tmp/reduction_picks.json
    rm -f "$CACHE"
    say "pick cache across processes, use mode off"
    run "$G/reduction_multi_kernel" cache --shapes "$SHAPES" --cache "$CACHE" --limit 20
    run "$G/reduction_multi_kernel" cache --shapes "$SHAPES" --cache "$CACHE" --limit 20
    run "$G/reduction_multi_kernel" cache --shapes "$SHAPES" --cache "$CACHE" --limit 20 --edit-source
    ;;
*)
    echo "usage: reduction_gpu.sh collect|measure" >&2
    exit 2
    ;;
esac
say "done"
