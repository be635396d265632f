#!/usr/bin/env bash
# Ships a trained heuristic: generates its Rust module into the committed crate
# (generated/ah-heuristics by default) and says which tracked files changed. The pipeline never
# does this by itself (make pipeline leaves the checkout as it was).
#   make ship MODEL=out/pad_mm/PadMMCpu.model.json [GENERATED=generated/ah-heuristics]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-}
GENERATED=${GENERATED:-generated/ah-heuristics}
CARGO=${CARGO:-cargo}
if [ -z "$MODEL" ]; then
  echo "error: give the model to ship: make ship MODEL=out/NAME/HEURISTIC.model.json" >&2
  exit 2
fi
if [ ! -f "$MODEL" ]; then
  echo "error: $MODEL: no such file" >&2
  echo "hint: make pipeline writes out/NAME/HEURISTIC.model.json; ah-train --output-dir DIR writes DIR/HEURISTIC.model.json" >&2
  exit 2
fi
$CARGO run --quiet --locked -p ah-codegen -- "$MODEL" --rust "$GENERATED"
changed=$(git status --porcelain -- "$GENERATED")
if [ -z "$changed" ]; then
  echo "shipped: $GENERATED already holds this model; nothing changed"
else
  echo "shipped $MODEL into $GENERATED; changed:"
  echo "$changed" | sed 's/^/  /'
  echo "rebuild the tools (make build, or cargo build) so that they link it; review and commit the files above"
fi
