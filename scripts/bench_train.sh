#!/usr/bin/env bash
# ah-train vs the Python reference of PyTorch's trainer on pad_mm_a100 (full 36-model grid),
# run side by side on this machine. Prints a markdown table: wall time of the whole process
# (best of N runs), speed-up, and the best model's validation metrics of both.
#
# The first row is ah-train as a user runs it: `--upstream` with nothing else (report, plots and
# the Python artifact written), the median of RUNS whole processes against the reference's median.
# Needs ../shared (the log and the reference) and the reference's venv in .venv-ref
# (`make ref-venv`). Usage: scripts/bench_train.sh [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
LOG=../shared/data/pytorch/pad_mm_a100.txt
REF=../shared/reference/ah_ref_train.py
PY=.venv-ref/bin/python
if [ ! -f "$LOG" ]; then
    echo "skipping: $LOG not found" >&2
    exit 0
fi
cargo build --release -q -p ah-train
BIN=target/release/ah-train
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# best wall time (seconds) of RUNS runs of a command
best_of() {
    local best="" t
    for _ in $(seq "$RUNS"); do
        local s e
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        e=$(date +%s.%N)
        t=$(python3 -c "print(f'{$e - $s:.3f}')")
        if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $t < $best else 1)"; then best=$t; fi
    done
    echo "$best"
}

# median wall time (seconds) of RUNS runs of a command
median_of() {
    local times=() s e
    for _ in $(seq "$RUNS"); do
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        e=$(date +%s.%N)
        times+=("$(python3 -c "print($e - $s)")")
    done
    python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "${times[@]}"
}

user=$(median_of "$BIN" "$LOG" --heuristic-name PadMMA100 --upstream --output-dir "$TMP/user")
ours=$(best_of "$BIN" "$LOG" --heuristic-name PadMMA100 --upstream --no-codegen -q --output-dir "$TMP/up")
ours1=$(best_of "$BIN" "$LOG" --heuristic-name PadMMA100 --upstream --no-codegen -q --threads 1 --output-dir "$TMP/up1")
cost=$(best_of "$BIN" "$LOG" --heuristic-name PadMMA100 --no-codegen -q --output-dir "$TMP/ca")
if [ -x "$PY" ] && [ -f "$REF" ]; then
    ref=$(best_of "$PY" "$REF" "$LOG" --json-out "$TMP/ref.json")
    refmed=$(median_of "$PY" "$REF" "$LOG" --json-out "$TMP/ref.json")
else
    echo "note: no reference venv (.venv-ref) or $REF; run \`make ref-venv\`" >&2
    ref=""
    refmed=""
fi

# Phase timings (in-process, excluding start-up and output writing): best of RUNS for ours,
# one run of the reference (its phases vary little).
for _ in $(seq "$RUNS"); do
    "$BIN" "$LOG" --heuristic-name PadMMA100 --upstream --no-codegen -q --timings --output-dir "$TMP/t" 2>>"$TMP/ours.timings" >/dev/null
done
if [ -n "$ref" ]; then "$PY" "$REF" "$LOG" >"$TMP/ref.timings" 2>/dev/null; fi

python3 - "$TMP" "$ours" "$ours1" "$cost" "$ref" "$(nproc)" "$user" "$refmed" <<'PY'
import json, sys
tmp, ours, ours1, cost, ref, cores, user, refmed = sys.argv[1:]
def val(path):
    m = json.load(open(path))["val"]
    return f"{m['correct']:.0f} / {m['wrong']:.0f} / {m['unsure']:.0f} of {m['total']:.0f}"
def model(path):
    t = json.load(open(path))["training"]
    return f"{t['criterion']}, depth {t['max_depth']}, msl {t['min_samples_leaf']:g}"
print(f"pad_mm_a100, full grid, {cores} cores\n")
print("| as a user runs it (median of runs) | wall time (s) | speed-up vs reference |")
print("|---|---|---|")
if refmed:
    print(f"| Python reference, whole process | {refmed} | 1.0x |")
sp = f"{float(refmed) / float(user):.1f}x" if refmed else "-"
print(f"| `ah-train LOG --upstream` (report, plots, Python artifact) | {user} | {sp} |\n")
print("Best of runs:\n")
print("| trainer | wall time (s) | speed-up vs reference | best model | val correct / wrong / unsure |")
print("|---|---|---|---|---|")
rows = []
if ref:
    r = json.load(open(f"{tmp}/ref.json"))
    b = r["best"]
    v = b["results"]["val"]
    rows.append(("Python reference (pandas + scikit-learn), whole process", ref,
                 f"{b['criterion']}, depth {b['max_depth']}, msl {b['min_samples_leaf']:g}",
                 f"{v['correct']} / {v['wrong']} / {v['unsure']} of {v['total']}"))
rows.append(("ah-train --upstream (release)", ours, model(f"{tmp}/up/PadMMA100.model.json"), val(f"{tmp}/up/PadMMA100.metrics.json")))
rows.append(("ah-train --upstream --threads 1", ours1, model(f"{tmp}/up1/PadMMA100.model.json"), val(f"{tmp}/up1/PadMMA100.metrics.json")))
rows.append(("ah-train (default: 5-fold CV, 72 candidates)", cost, model(f"{tmp}/ca/PadMMA100.model.json") + " (refit on train+val)", val(f"{tmp}/ca/PadMMA100.metrics.json") + " (in-sample)"))
for name, t, m, v in rows:
    sp = f"{float(ref) / float(t):.1f}x" if ref else "-"
    print(f"| {name} | {t} | {sp} | {m} | {v} |")
# Phases: the reference prints "# timing (s): total=.. load+median+winner+features=.. split+matrices=..
# fit=.. unsafe+safe_proba+val_eval=.. other_set_evals=..", ah-train "timings: prepare Xs, grid Ys, final Zs".
import re
ours_t = {}
for chunk in open(f"{tmp}/ours.timings").read().split("timings:")[1:]:
    for k, v in re.findall(r"(\w+) ([0-9.]+)s", chunk.splitlines()[0]):
        ours_t[k] = min(float(v), ours_t.get(k, float("inf")))
if ref:
    line = [l for l in open(f"{tmp}/ref.timings") if l.startswith("# timing")][0]
    r = {k: float(v) for k, v in re.findall(r"([\w+]+)=([0-9.]+)", line)}
    r_prep = r["load+median+winner+features"] + r["split+matrices"]
    r_grid = r["fit"] + r["unsafe+safe_proba+val_eval"] + r["other_set_evals"]
    o_prep, o_grid = float(ours_t["prepare"]), float(ours_t["grid"]) + float(ours_t["final"])
    print("\n| phase (in-process) | reference (s) | ah-train --upstream (s) | speed-up |\n|---|---|---|---|")
    print(f"| log to table and split | {r_prep:.3f} | {o_prep:.3f} | {r_prep / o_prep:.1f}x |")
    print(f"| 36-model grid: fit, thresholds, every set evaluated, best chosen | {r_grid:.3f} | {o_grid:.3f} | {r_grid / o_grid:.1f}x |")
PY
