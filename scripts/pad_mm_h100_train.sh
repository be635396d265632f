#!/usr/bin/env bash
# The H100 pad_mm training mix (issue 12) and a candidate PadMMH100 trained on it, without a GPU:
#   1300 real-model inputs   data/pad_mm_h100_real.txt       (--shapes real, seed 5)
#    600 full-range inputs   data/pad_mm_h100_fullrange.txt  (--shapes pytorch, dims <= 65536, seed 3, 2 reps)
#   1100 earlier inputs      the first 1100 of data/pad_mm_h100.txt (dims <= 8192, seed 0)
# Then every guard policy is trained and replayed on the three held-out logs (real models with
# compiled truth, fresh full range, fresh dims <= 8192); the table goes to stdout.
# Usage: bash scripts/pad_mm_h100_train.sh [OUT_DIR]   (default out/h100mix)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/h100mix}
B=${BIN:-target/release}
[ -x "$B/ah-train" ] || cargo build --release --locked -q
mkdir -p "$OUT"
head -n $((2 + 1100 * 6)) data/pad_mm_h100.txt >"$OUT/old1100.txt"
rm -f "$OUT/pad_mm_h100_mix.txt"
"$B/ah-collect" merge data/pad_mm_h100_real.txt data/pad_mm_h100_fullrange.txt "$OUT/old1100.txt" \
  -o "$OUT/pad_mm_h100_mix.txt"
printf '| policy | set | decided | wrong | > 10 %% slower | %% of oracle | %% of oracle, autotune |\n|---|---|---|---|---|---|---|\n'
for policy in box tested logged tested:2 logged:2 none; do
  d="$OUT/guard-${policy/:/_}"
  if [ "$policy" = none ]; then g=(--no-range-guard); else g=(--guard "$policy"); fi
  "$B/ah-train" "$OUT/pad_mm_h100_mix.txt" --heuristic-name PadMMH100Candidate --output-dir "$d" --no-codegen -q "${g[@]}"
  for set in realmodels fullrange_fresh fresh; do
    "$B/ah-use" replay --model "$d/PadMMH100Candidate.model.json" "data/pad_mm_h100_$set.txt" --json "$d/$set.json" >/dev/null 2>&1
    python3 - "$policy" "$set" "$d/$set.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[3]))["metrics"]
print(f"| {sys.argv[1]} | {sys.argv[2]} | {100 * m['decided_share']:.1f} % | {int(m['wrong'])} | "
      f"{int(m['harmful_wrong'])} | {m['pct_of_oracle']:.2f} | {m['pct_of_oracle_autotune']:.2f} |")
PY
  done
done
