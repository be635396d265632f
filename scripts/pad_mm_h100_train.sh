#!/usr/bin/env bash
# The H100 pad_mm training mix (issue 12), data/pad_mm_h100_mix.txt with its provenance sidecar,
# built without a GPU from committed logs, in this order:
#   4300 real-model inputs   data/pad_mm_h100_real.txt         (--shapes real, seed 5, 1300,
#                            data/pad_mm_h100_real_seed11.txt   and seed 11, 3000; version 5)
#   1200 full-range inputs   data/pad_mm_h100_fullrange.txt    (--shapes pytorch, dims <= 65536,
#                                                               seed 3, version 4, --num-reps 1)
#    600 mid-size inputs     the first 600 of data/pad_mm_h100_mid.txt (--shapes pytorch,
#                                                               dims <= 8192, seed 0, version 4)
# Equal inputs (the real-model sampler draws some GEMMs more than once) are one input to the
# trainer, as to PyTorch's: 4034 distinct real-model inputs, 5834 in all (69 % real models,
# 21 % full range). The full-range log excludes every fresh full-range log (seeds 4, 6, 7, 12).
# Table 1, the selection setting: each leaf-confidence score (--confidence wilson | loss) and
# cost of an unsure input (--autotune-cost 0.01 | 0.02 | 0.05), scored on the mix's own test
# split (never used by the trainer's selection) and replayed on the validation sets. The rule:
# the setting that decides most of the test split among those with no pick more than 10 % slower
# there that meet issue 12's goals on every validation set (first listed wins a tie). The
# validation sets only choose; the test sets are replayed after the choice (table 2).
# The first rule (until this mix) looked at the test split alone; on this mix it picked
# wilson, 0.05, which misses the full-range oracle share on seed 4 (docs/real-models.md).
# Since issue 24 a setting must also be as good as the shipped model on every validation set
# (its "unchanged or better": % of the oracle with autotune, two decimals, and no more picks
# more than 10 % slower). Added after seeing that with the category guard the issue 12 goals
# alone pick wilson, 0.05 again: it meets them, but trades the real-model sets' oracle share
# (validation 99.95 -> 99.85 and 99.74 %) for decisions (docs/real-models.md).
# Table 2: a candidate of every guard policy with that setting, replayed on the validation and
# test sets (real models with compiled truth: the catalogue's architectures and 15 held-out
# ones, two seeds each; fresh full range, seeds 4, 6, 7, 12 and 13; fresh dims <= 8192).
# Every candidate has the category guard (issue 24, item 4; docs/training.md): a deciding leaf
# is unsure for a category of a guarded feature that none of its training rows had. Guarded:
# every categorical feature of the log and its operations but mat2_dtype (always mat1_dtype's:
# aten.mm takes one dtype) and the 15 divisibility bits {m,k,n}_multiple_{2..32}. Guarding those
# too decides the same on every validation set with 89 inserted splits instead of 26.
# Table 2 also lists `logged` without the category guard (the model shipped before it).
# Both tables go to stdout.
# The shipped PadMMH100 is `ah-train data/pad_mm_h100_mix.txt --heuristic-name PadMMH100
# --output-dir out/h100 --rust-crate generated/ah-heuristics -q --guard logged
# --category-guard CATEGORY_GUARD` with the setting the rule picks (docs/real-models.md).
# Usage: bash scripts/pad_mm_h100_train.sh [OUT_DIR]   (default out/h100mix)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/h100mix}
B=${BIN:-target/release}
[ -x "$B/ah-train" ] || cargo build --release --locked -q
mkdir -p "$OUT"
MIX=data/pad_mm_h100_mix.txt
CATEGORY_GUARD=mat1_dtype,prepadded_mat1,prepadded_mat2,using_tf32,bfloat_perf_hit
CATEGORY_GUARD+=,mat1_innermost_needs_padding,mat2_innermost_needs_padding,mat1_iscontig,mat2_iscontig
# The mix's medians sidecar is committed gzip-compressed (`gzip -9 -n`, reproducible; readers
# take it as it is): the merge below writes it plain, and is refused beside an old .gz.
rm -f "$MIX" "$MIX.medians.txt" "$MIX.medians.txt.gz"
MID_INPUTS=600
MID="$OUT/pad_mm_h100_mid.first$MID_INPUTS.txt"
# The first MID_INPUTS inputs (runs of rows with equal features) of the mid-size log and of its
# medians sidecar (plain or .gz: scripts/sidecar.py).
python3 - data/pad_mm_h100_mid.txt "$MID" "$MID_INPUTS" <<'PY'
import sys
sys.path.insert(0, "scripts")
import sidecar
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for suffix in ("", ".medians.txt"):
    lines = sidecar.open_text(src + suffix).read().splitlines(keepends=True)
    out, last, inputs = lines[:2], None, 0
    for line in lines[2:]:
        key = line.rsplit(",", 2)[0]
        if key != last:
            inputs, last = inputs + 1, key
        if inputs > n:
            break
        out.append(line)
    open(dst + suffix, "w").write("".join(out))
PY
SOURCES=(data/pad_mm_h100_real.txt data/pad_mm_h100_real_seed11.txt data/pad_mm_h100_fullrange.txt "$MID")
"$B/ah-collect" merge "${SOURCES[@]}" -o "$MIX" -q
rm -f "$MIX.lock" "$MID.lock"
gzip -9 -n "$MIX.medians.txt"
python3 - "$MIX" "$MID_INPUTS" "${SOURCES[@]}" <<'PY'
import hashlib, json, sys
mix, mid_inputs = sys.argv[1], sys.argv[2]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
parts = [(p, "all") for p in sys.argv[3:-1]]
parts.append(("data/pad_mm_h100_mid.txt", f"the first {mid_inputs} inputs"))
prov = {
    "log": mix.split("/")[-1],
    "made_by": "scripts/pad_mm_h100_train.sh (ah-collect merge of the sources, in this order)",
    "sources": [{"log": p, "rows": rows, "sha256": sha(p)} for p, rows in parts],
    "sha256": sha(mix),
}
with open(mix + ".provenance.json", "w") as f:
    json.dump(prov, f, indent=2)
    f.write("\n")
PY
# Validation sets (held out from training, used to choose the setting) and test sets (held out,
# replayed only after the choice; data/pad_mm_h100_<set>.txt).
VALIDATION=(realmodels realmodels_holdout fullrange_fresh fullrange_seed6)
TEST=(realmodels_seed2027 realmodels_holdout_seed8 fullrange_seed7_reps1 fullrange_seed12 fullrange_seed13
  mid_fresh)
# The model shipped now, replayed on the validation sets: issue 24's goal "unchanged or
# better" is measured against it.
SHIPPED=generated/ah-heuristics/models/PadMMH100.model.json
mkdir -p "$OUT/shipped"
for set in "${VALIDATION[@]}"; do
  "$B/ah-use" replay -q --model "$SHIPPED" "data/pad_mm_h100_$set.txt" --json "$OUT/shipped/$set.json"
done
printf '| confidence | autotune cost | test split: decided | wrong | > 10 %% slower | %% of oracle, autotune | validation: goals met | validation: as good as shipped |\n|---|---|---|---|---|---|---|---|\n'
: > "$OUT/settings.tsv"
for conf in wilson loss; do
  for cost in 0.01 0.02 0.05; do
    d="$OUT/setting-$conf-$cost"
    "$B/ah-train" "$MIX" --heuristic-name PadMMH100Candidate --output-dir "$d" --no-codegen -q \
      --guard logged --category-guard "$CATEGORY_GUARD" --confidence "$conf" --autotune-cost "$cost"
    for set in "${VALIDATION[@]}"; do
      "$B/ah-use" replay -q --model "$d/PadMMH100Candidate.model.json" "data/pad_mm_h100_$set.txt" \
        --json "$d/$set.json"
    done
    python3 - "$conf" "$cost" "$d" "$OUT/settings.tsv" "$OUT/shipped" "${VALIDATION[@]}" <<'PY'
import json, sys
conf, cost, d, tsv, shipped, *sets = sys.argv[1:]
m = json.load(open(f"{d}/PadMMH100Candidate.metrics.json"))["test"]

def meets(name):
    """Issue 12's goals: real models decided >= 80 %, no pick > 10 % slower, >= 90 % / 99.5 %
    of the oracle; a fresh full-range log decided >= 70 %, <= 1 % such picks, >= 99.5 %."""
    v = json.load(open(f"{d}/{name}.json"))["metrics"]
    if name.startswith("realmodels"):
        return (v["decided_share"] >= 0.80 and v["harmful_wrong"] == 0
                and v["pct_of_oracle"] >= 90 and v["pct_of_oracle_autotune"] >= 99.5)
    return (v["decided_share"] >= 0.70 and v["harmful_wrong"] <= 0.01 * v["total"]
            and v["pct_of_oracle_autotune"] >= 99.5)

def as_good(name):
    """Issue 24's goal: no worse than the shipped model, in % of the oracle with autotune (as
    the tables print it, two decimals) and in picks more than 10 % slower."""
    v = json.load(open(f"{d}/{name}.json"))["metrics"]
    b = json.load(open(f"{shipped}/{name}.json"))["metrics"]
    return (round(v["pct_of_oracle_autotune"], 2) >= round(b["pct_of_oracle_autotune"], 2)
            and v["harmful_wrong"] <= b["harmful_wrong"])

met = [s for s in sets if meets(s)]
good = [s for s in sets if as_good(s)]
print(f"| {conf} | {cost} | {100 * m['decided_share']:.1f} % | {int(m['wrong'])} | "
      f"{int(m['harmful_wrong'])} | {m['pct_of_oracle_autotune']:.2f} | {len(met)} of {len(sets)} | "
      f"{len(good)} of {len(sets)} |")
with open(tsv, "a") as f:
    f.write(f"{conf}\t{cost}\t{m['decided_share']}\t{int(m['harmful_wrong'])}\t"
            f"{len(met) == len(sets) and len(good) == len(sets)}\n")
PY
  done
done
# The rule: the most decided on the test split among the settings with no harmful pick there
# that meet every goal on every validation set and are as good as the shipped model there;
# without one, among those with no harmful pick
# (first listed wins a tie).
read -r CONF COST < <(python3 - "$OUT/settings.tsv" <<'PY'
import sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().splitlines()]
safe = [r for r in rows if int(r[3]) == 0] or rows
ok = [r for r in safe if r[4] == "True"] or safe
best = max(ok, key=lambda r: float(r[2]))
print(best[0], best[1])
PY
)
SETTING=(--confidence "$CONF" --autotune-cost "$COST")
printf '\nthe rule picks: %s\n\n' "${SETTING[*]}"
printf '| policy | set | decided | wrong | > 10 %% slower | %% of oracle | %% of oracle, autotune |\n|---|---|---|---|---|---|---|\n'
for policy in box tested logged tested:2 logged:2 none logged-no-category-guard; do
  d="$OUT/guard-${policy/:/_}"
  case "$policy" in
    none) g=(--no-range-guard --category-guard "$CATEGORY_GUARD") ;;
    logged-no-category-guard) g=(--guard logged) ;;
    *) g=(--guard "$policy" --category-guard "$CATEGORY_GUARD") ;;
  esac
  "$B/ah-train" "$MIX" --heuristic-name PadMMH100Candidate --output-dir "$d" --no-codegen -q "${g[@]}" \
    "${SETTING[@]}"
  for set in "${VALIDATION[@]}" "${TEST[@]}"; do
    "$B/ah-use" replay --model "$d/PadMMH100Candidate.model.json" "data/pad_mm_h100_$set.txt" --json "$d/$set.json" >/dev/null 2>&1
    python3 - "$policy" "$set" "$d/$set.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[3]))["metrics"]
print(f"| {sys.argv[1]} | {sys.argv[2]} | {100 * m['decided_share']:.1f} % | {int(m['wrong'])} | "
      f"{int(m['harmful_wrong'])} | {m['pct_of_oracle']:.2f} | {m['pct_of_oracle_autotune']:.2f} |")
PY
  done
done
