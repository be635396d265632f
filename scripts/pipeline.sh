#!/usr/bin/env bash
# The main job: collect -> train -> codegen -> build -> use, end to end.
# Knobs (environment, usually set through make): NAME SAMPLES DEVICE SEED DATA OUT HEURISTIC GENERATED.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=${NAME:-pad_mm}
SAMPLES=${SAMPLES:-400}
DEVICE=${DEVICE:-auto}
SEED=${SEED:-0}
DATA=${DATA:-}
OUT=${OUT:-out/$NAME}
GENERATED=${GENERATED:-generated/ah-heuristics}
CARGO=${CARGO:-cargo}
# PROFILE=dev reuses a test build (CI); the default is an optimised release build.
PROFILE=${PROFILE:-release}
if [ "$PROFILE" = release ]; then BIN=target/release; else BIN=target/debug; fi

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

step "train: $LOG -> $OUT/$HEURISTIC.* and the generated crate $GENERATED"
$BIN/ah-train "$LOG" --heuristic-name "$HEURISTIC" --output-dir "$OUT" --rust-crate "$GENERATED"
$BIN/ah-codegen "$OUT/$HEURISTIC.model.json" --no-rust --python "$OUT/python"

step "build the generated heuristics and the use step"
$CARGO build --profile "$PROFILE" --locked -p ah-use --features cuda

step "use: AUTOHEURISTIC_USE=$NAME on a fresh workload (seed $((SEED + 1)))"
AUTOHEURISTIC_USE=$NAME $BIN/ah-use run --name "$NAME" --device "$DEVICE" \
  --num-samples "${USE_SAMPLES:-40}" --seed "$((SEED + 1))" --cache "$OUT/pick-cache.json" \
  --json "$OUT/use.json"

step "done"
cat >&2 <<MSG
  log            $LOG
  model          $OUT/$HEURISTIC.model.json
  metrics        $OUT/$HEURISTIC.metrics.json
  report         $OUT/$HEURISTIC.report.md
  tree           $OUT/$HEURISTIC.dot
  python         $OUT/python/_$HEURISTIC.py
  rust           $GENERATED/src/
  use summary    $OUT/use.json
MSG
