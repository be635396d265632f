#!/usr/bin/env bash
# Fresh-machine proof (CI): the whole pipeline on the CPU with a small sample count, into a
# temporary folder; checks that every artifact exists, that the generated module compiled and
# the use step ran the model just trained, and that no tracked file changed
# (`git status --porcelain` is the same before and after).
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status_before=$(git status --porcelain 2>/dev/null || echo "no git")

export OUT=$tmp/out NAME=pad_mm DEVICE=cpu SAMPLES=${SAMPLES:-40} USE_SAMPLES=${USE_SAMPLES:-12} SEED=7
export PROFILE=${PROFILE:-dev} HEURISTIC=PadMMCpu
bash scripts/pipeline.sh

missing=0
for f in train.txt train.txt.provenance.json \
         $HEURISTIC.model.json $HEURISTIC.metrics.json $HEURISTIC.report.md $HEURISTIC.dot \
         _$HEURISTIC.py rust/src/pad_mm_cpu.rs rust/src/lib.rs rust/models/$HEURISTIC.model.json use.json; do
  if [ -s "$OUT/$f" ]; then echo "ok       $f"; else echo "MISSING  $f"; missing=1; fi
done
if cmp -s "$OUT/$HEURISTIC.model.json" "$OUT/rust/models/$HEURISTIC.model.json"; then
  echo "ok       rust/models/$HEURISTIC.model.json is the model just trained"
else
  echo "MISSING  the new model in $OUT/rust/models/"; missing=1
fi
# The use step ran the model just trained.
if grep -q "\"heuristic\": \"$HEURISTIC\"" "$OUT/use.json"; then
  echo "ok       the use step asked $HEURISTIC"
else
  echo "MISSING  $HEURISTIC in the use step's report"; missing=1
fi
grep -q '"inputs"' "$OUT/use.json" || { echo "use.json has no summary"; missing=1; }
status_after=$(git status --porcelain 2>/dev/null || echo "no git")
if [ "$status_before" = "$status_after" ]; then
  echo "ok       git status --porcelain is unchanged: no tracked file was touched"
else
  echo "CHANGED  the pipeline changed the checkout:"
  diff <(echo "$status_before") <(echo "$status_after") || true
  missing=1
fi
if [ "$missing" -ne 0 ]; then
  echo "pipeline smoke test: FAILED"
  exit 1
fi
echo "pipeline smoke test: every artifact present, the generated module built, the use step ran, the checkout untouched"
