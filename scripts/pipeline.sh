#!/usr/bin/env bash
# The main job: collect -> train -> codegen -> build -> use, end to end. Everything it makes goes
# under $OUT (default out/NAME): the log, the model, its report, the PyTorch artifact, a Rust
# crate holding the generated module, and the use step's report. Tracked files are never
# touched: shipping the heuristic into generated/ah-heuristics is its own step (make ship,
# scripts/ship.sh), printed at the end.
# Knobs (environment, usually set through make): NAME SAMPLES DEVICE SEED DATA OUT HEURISTIC.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=${NAME:-pad_mm}
SAMPLES=${SAMPLES:-400}
DEVICE=${DEVICE:-auto}
SEED=${SEED:-0}
DATA=${DATA:-}
OUT=${OUT:-out/$NAME}
CARGO=${CARGO:-cargo}
# PROFILE=dev reuses a test build (CI: `cargo build` then compiles nothing, since the workspace
# Cargo.toml gives it the tests' features); the default is an optimised release build.
PROFILE=${PROFILE:-release}
TARGET=${CARGO_TARGET_DIR:-target}
if [ "$PROFILE" = release ]; then BIN=$TARGET/release; else BIN=$TARGET/debug; fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "build ($PROFILE)"
$CARGO build --profile "$PROFILE" --workspace --locked

mkdir -p "$OUT"
if [ -n "$DATA" ]; then
  LOG=$DATA
  step "collect: skipped, training on $LOG"
else
  LOG=$OUT/train.txt
  step "collect: $NAME, $SAMPLES inputs, device $DEVICE, seed $SEED -> $LOG"
  # Three repetitions (PyTorch's count): timings on a shared CPU spread more than on a GPU, where
  # ah-collect's default of two was measured to be enough (docs/collection.md).
  $BIN/ah-collect --name "$NAME" --device "$DEVICE" --num-samples "$SAMPLES" --num-reps 3 --seed "$SEED" \
    --out "$LOG"
fi

# The heuristic's name says what it decides and where it was trained: PadMM + the device of the
# log (from its metadata line: A100, H100, Cpu for PyTorch's non-CUDA identity, else Local).
if [ -z "${HEURISTIC:-}" ]; then
  case "$NAME" in
    pad_mm) base=PadMM ;; mm) base=MMRanking ;; mixed_mm) base=MixedMM ;;
    *) base=$(echo "$NAME" | sed -E 's/(^|_)([a-z])/\U\2/g') ;;
  esac
  head1=$(if [[ "$LOG" == *.gz ]]; then zcat "$LOG" | head -n 1; else head -n 1 "$LOG"; fi)
  case "$head1" in
    *'"shared_memory": 166912'*) dev=A100 ;;
    *'"shared_memory": 232448'*) dev=H100 ;;
    *'"shared_memory": 0,'*) dev=Cpu ;;
    *) dev=Local ;;
  esac
  HEURISTIC=$base$dev
fi

# A crate of its own for the generated module (its own workspace, depending on this checkout's
# ah-core), so that the module is compiled here without touching generated/ah-heuristics.
CRATE=$OUT/rust
ROOT=$(pwd)
mkdir -p "$CRATE"
cat > "$CRATE/Cargo.toml" <<TOML
# Written by scripts/pipeline.sh: the pipeline's generated heuristic, outside the shipped crate.
[package]
name = "ah-heuristics-pipeline"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
ah-core = { path = "$ROOT/crates/ah-core" }

[workspace]
TOML
cp Cargo.lock "$CRATE/Cargo.lock"

step "train: $LOG -> $OUT/$HEURISTIC.* (with the PyTorch artifact) and the Rust module in $CRATE"
$BIN/ah-train "$LOG" --heuristic-name "$HEURISTIC" --output-dir "$OUT" --rust-crate "$CRATE"

step "build the generated module ($CRATE) and the use step"
$CARGO build --profile "$PROFILE" --manifest-path "$CRATE/Cargo.toml" --target-dir "$TARGET" --quiet
# The workspace's feature set plus ah-use's `cuda` (not `-p ah-use`, whose own smaller feature
# set would rebuild its dependencies: 37 s against 6 s after a test build).
$CARGO build --profile "$PROFILE" --locked --workspace --features ah-use/cuda

step "use: $HEURISTIC (the model just trained) on a fresh workload (seed $((SEED + 1)))"
AUTOHEURISTIC_USE=$NAME $BIN/ah-use run --name "$NAME" --device "$DEVICE" --model "$OUT/$HEURISTIC.model.json" \
  --num-samples "${USE_SAMPLES:-40}" --seed "$((SEED + 1))" --cache "$OUT/pick-cache.json" \
  --json "$OUT/use.json"

step "done"
cat >&2 <<MSG
  log            $LOG
  model          $OUT/$HEURISTIC.model.json
  metrics        $OUT/$HEURISTIC.metrics.json
  report         $OUT/$HEURISTIC.report.md
  tree           $OUT/$HEURISTIC.dot
  python         $OUT/_$HEURISTIC.py
  rust           $CRATE/src/
  use summary    $OUT/use.json
  nothing tracked was changed; to ship this heuristic into generated/ah-heuristics:
                 make ship MODEL=$OUT/$HEURISTIC.model.json
MSG
