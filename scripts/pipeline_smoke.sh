#!/usr/bin/env bash
# Fresh-machine proof (CI): the whole pipeline on the CPU with a small sample count, into a
# temporary folder; checks that every artifact exists and that the regenerated crate builds
# and is used. The committed generated crate is restored afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
backup=$tmp/generated-backup
cp -a generated "$backup"
restore() { rm -rf generated && cp -a "$backup" generated && rm -rf "$tmp"; }
trap restore EXIT

export OUT=$tmp/out NAME=pad_mm DEVICE=cpu SAMPLES=${SAMPLES:-40} USE_SAMPLES=${USE_SAMPLES:-12} SEED=7
export PROFILE=${PROFILE:-dev} HEURISTIC=PadMMCpu
bash scripts/pipeline.sh

missing=0
for f in train.txt train.txt.provenance.json \
         $HEURISTIC.model.json $HEURISTIC.metrics.json $HEURISTIC.report.md $HEURISTIC.dot \
         python/_$HEURISTIC.py use.json; do
  if [ -s "$OUT/$f" ]; then echo "ok       $f"; else echo "MISSING  $f"; missing=1; fi
done
if cmp -s "$OUT/$HEURISTIC.model.json" "generated/ah-heuristics/models/$HEURISTIC.model.json"; then
  echo "ok       generated/ah-heuristics/models/$HEURISTIC.model.json is the model just trained"
else
  echo "MISSING  the new model in generated/ah-heuristics/models/"; missing=1
fi
# The use step ran with the regenerated crate and found the new heuristic for this device.
if grep -q "\"heuristic\": \"$HEURISTIC\"" "$OUT/use.json"; then
  echo "ok       the use step asked $HEURISTIC (regenerated crate built and linked)"
else
  echo "MISSING  $HEURISTIC in the use step's report"; missing=1
fi
grep -q '"inputs"' "$OUT/use.json" || { echo "use.json has no summary"; missing=1; }
if [ "$missing" -ne 0 ]; then
  echo "pipeline smoke test: FAILED"
  exit 1
fi
echo "pipeline smoke test: every artifact present, the generated crate built and ran"
