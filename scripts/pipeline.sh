#!/usr/bin/env bash
# The main job: collect -> train -> codegen -> build -> use, end to end.
# Knobs (environment, usually set through make): NAME SAMPLES DEVICE SEED DATA OUT HEURISTIC GENERATED.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=${NAME:-pad_mm}
SAMPLES=${SAMPLES:-200}
DEVICE=${DEVICE:-auto}
SEED=${SEED:-0}
DATA=${DATA:-}
OUT=${OUT:-out/$NAME}
GENERATED=${GENERATED:-generated/ah-heuristics}
CARGO=${CARGO:-cargo}
BIN=target/release

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "build (release)"
$CARGO build --release --workspace --locked

mkdir -p "$OUT"
if [ -n "$DATA" ]; then
  LOG=$DATA
  step "collect: skipped, training on $LOG"
else
  LOG=$OUT/train.txt
  step "collect: $NAME, $SAMPLES inputs, device $DEVICE, seed $SEED -> $LOG"
  $BIN/ah-collect --name "$NAME" --device "$DEVICE" --num-samples "$SAMPLES" --seed "$SEED" --out "$LOG"
fi

# The heuristic's name says what it decides and where it was trained: PadMM + the device of the log.
if [ -z "${HEURISTIC:-}" ]; then
  HEURISTIC=$($BIN/ah-train suggest-name "$LOG")
fi

step "train: $LOG -> $OUT/$HEURISTIC.* and the generated crate $GENERATED"
$BIN/ah-train "$LOG" --heuristic-name "$HEURISTIC" --output-dir "$OUT" --rust "$GENERATED" --python "$OUT/python"

step "build the generated heuristics and the use step"
$CARGO build --release --locked -p ah-use

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
