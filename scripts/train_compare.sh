#!/usr/bin/env bash
# PyTorch's selection rule (--upstream) against ah-train's default (cross-validated,
# cost-aware) on the shared logs, side by side, as markdown tables (docs/training.md).
# Part 1: each shared log, metrics on its test set (never used for fitting or selection).
# Part 2: small logs: 600 inputs of pad_mm_a100 drawn with seeds 1..N (python's random), the
# other 9,099 inputs given with --data as an independent evaluation set.
# Usage: scripts/train_compare.sh [N_SEEDS]   (default 10). Needs ../shared.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS="${1:-10}"
DATA=../shared/data/pytorch
[ -d "$DATA" ] || { echo "skipping: $DATA not found" >&2; exit 0; }
cargo build --release -q -p ah-train
BIN=$PWD/target/release/ah-train
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run() { # name log mode extra-args... -> writes $TMP/$name-$mode/H.metrics.json or a NOMODEL marker
    local name=$1 log=$2 mode=$3; shift 3
    local out="$TMP/$name-$mode" flag=""
    [ "$mode" = upstream ] && flag=--upstream
    mkdir -p "$out"
    if ! "$BIN" "$log" --heuristic-name H --output-dir "$out" -q --no-codegen $flag "$@" 2>"$out/err"; then
        touch "$out/NOMODEL"
    fi
}

for log in pad_mm_a100.txt mixed_mm_a100.txt.gz mm_a100_random.txt.gz; do
    name=${log%%.*}
    run "$name" "$DATA/$log" upstream
    run "$name" "$DATA/$log" default
done

python3 - "$DATA/pad_mm_a100.txt" "$TMP" "$SEEDS" <<'PY'
import random, sys
log, tmp, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(log).read().split("\n")
head, rows = lines[:2], [l for l in lines[2:] if l]
groups, order = {}, []
for r in rows:
    k = r.rsplit(",", 2)[0]
    if k not in groups:
        groups[k] = []
        order.append(k)
    groups[k].append(r)
for s in range(1, seeds + 1):
    chosen = set(random.Random(s).sample(order, 600))
    for part, keep in (("small", True), ("rest", False)):
        with open(f"{tmp}/{part}{s}.txt", "w") as f:
            f.write("\n".join(head) + "\n")
            for k in order:
                if (k in chosen) == keep:
                    f.write("".join(r + "\n" for r in groups[k]))
PY
for s in $(seq "$SEEDS"); do
    run "small$s" "$TMP/small$s.txt" upstream --data rest "$TMP/rest$s.txt"
    run "small$s" "$TMP/small$s.txt" default --data rest "$TMP/rest$s.txt"
done

python3 - "$TMP" "$SEEDS" <<'PY'
import json, os, statistics, sys
tmp, seeds = sys.argv[1], int(sys.argv[2])
def load(name, mode, set_):
    d = f"{tmp}/{name}-{mode}"
    if os.path.exists(f"{d}/NOMODEL"):
        return None
    return json.load(open(f"{d}/H.metrics.json"))[set_]
def row(label, mode, m):
    if m is None:
        return f"| {label} | {mode} | no model (\"too many wrong predictions\") | | | | | |"
    t = m["total"]
    return (f"| {label} | {mode} | {m['decided_share']*100:.1f}% | {m['unsure']/t*100:.1f}% | {m['wrong']/t*100:.2f}% | "
            f"{m['harmful_wrong']:.0f} ({m['harmful_wrong']/t*100:.2f}%) | {m['pct_of_oracle']:.2f}% | {m['pct_of_oracle_autotune']:.3f}% |")
hdr = ("| log (set, inputs) | rule | decided | unsure | wrong | harmful wrong (>10% slower) | "
       "pct_of_oracle (unsure = default) | pct_of_oracle_autotune (unsure = autotune) |\n|---|---|---|---|---|---|---|---|")
print("### Shared logs, test set\n")
print(hdr)
for name in ("pad_mm_a100", "mixed_mm_a100", "mm_a100_random"):
    for mode in ("upstream", "default"):
        m = load(name, mode, "test")
        label = f"{name} (test, {m['total']:.0f})" if m else name
        print(row(label, mode, m))
print(f"\n### Small logs: 600 inputs of pad_mm_a100 (seeds 1..{seeds}), evaluated on the other inputs\n")
print(hdr)
agg = {"upstream": [], "default": []}
for s in range(1, seeds + 1):
    for mode in ("upstream", "default"):
        m = load(f"small{s}", mode, "rest")
        agg[mode].append(m)
        print(row(f"seed {s} (rest, {m['total']:.0f})" if m else f"seed {s}", mode, m))
print("\n| rule | models produced | decided >= 25% | harmful <= 1% of inputs | pct_of_oracle_autotune >= 99.5% | all three |\n|---|---|---|---|---|---|")
for mode, ms in agg.items():
    ok = [m for m in ms if m]
    c1 = sum(m["decided_share"] >= 0.25 for m in ok)
    c2 = sum(m["harmful_wrong"] <= 0.01 * m["total"] for m in ok)
    c3 = sum(m["pct_of_oracle_autotune"] >= 99.5 for m in ok)
    c4 = sum(m["decided_share"] >= 0.25 and m["harmful_wrong"] <= 0.01 * m["total"] and m["pct_of_oracle_autotune"] >= 99.5 for m in ok)
    print(f"| {mode} | {len(ok)} of {len(ms)} | {c1} | {c2} | {c3} | {c4} of {len(ms)} |")
PY
