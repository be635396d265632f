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
if grep -q "$HEURISTIC" generated/ah-heuristics/src/lib.rs; then
  echo "ok       generated/ah-heuristics registers $HEURISTIC"
else
  echo "MISSING  $HEURISTIC in generated/ah-heuristics/src/lib.rs"; missing=1
fi
grep -q '"inputs"' "$OUT/use.json" || { echo "use.json has no summary"; missing=1; }
if [ "$missing" -ne 0 ]; then
  echo "pipeline smoke test: FAILED"
  exit 1
fi
echo "pipeline smoke test: every artifact present, the generated crate built and ran"
