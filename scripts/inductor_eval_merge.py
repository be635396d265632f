#!/usr/bin/env python3
"""Merges runs of scripts/inductor_eval.py that measured different settings of the same GEMMs.

One device call cannot hold every setting of every held-out GEMM (default max-autotune alone
spends ~460 s autotuning them), so a run may measure some settings and an earlier run the
others. Each run measures `none` (no max-autotune) too; a setting taken from another run is
scaled by that run's `none` to the newest run's:

    run(setting) ~ run_other(setting) * none_newest / none_other

Compile-time overheads (autotuning s = compile s minus compile s of `none`) are taken from the
run that measured the setting, unscaled. The newest run that has a setting wins. Prints a
markdown table: per GEMM, autotuning seconds and run time relative to the faster of default
max-autotune's pick and cuBLAS; then totals.

Usage: scripts/inductor_eval_merge.py NEWEST.json [OLDER.json ...] > merged.md
"""

import json
import math
import sys

SLOW = 1.03


def records(paths):
    """GEMM name -> list of that GEMM's records, newest run first."""
    out = {}
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["gemms"]:
                if "none" in r.get("run_ms", {}):
                    out.setdefault(r["gemm"]["name"], []).append(r)
    return out


def merged(recs):
    """(autotuning s, run ms in the newest run's scale, source index) per setting."""
    base = recs[0]["run_ms"]["none"]
    out = {}
    for i, r in enumerate(recs):
        scale = base / r["run_ms"]["none"]
        for s, ms in r["run_ms"].items():
            if s not in out and ms is not None:
                out[s] = (r["autotune_s"].get(s, 0.0), ms * scale, i)
    return out


def main(paths):
    by_name = records(paths)
    settings = ["none", "ours", "mm_ranking", "max_autotune"]
    rows, logs, sums, slow = [], {s: [] for s in settings}, {s: 0.0 for s in settings}, {s: [] for s in settings}
    for name, recs in by_name.items():
        m = merged(recs)
        if "max_autotune" not in m:
            continue
        best = min(m["none"][1], m["max_autotune"][1])
        cells = []
        for s in settings:
            if s not in m:
                cells.append("- | -")
                continue
            a, ms, src = m[s]
            rel = ms / best
            logs[s].append(math.log(ms / m["max_autotune"][1]))
            sums[s] += max(a, 0.0)
            if rel > SLOW:
                slow[s].append(name)
            full = s == "ours" and recs[src].get("ours_stats", {}).get("default", 0) > 0
            mark = ("" if src == 0 else "*") + ("†" if full else "")
            cells.append(f"{max(a, 0.0):.2f} | {rel:.3f}{mark}")
        gm = recs[0]["gemm"]
        rows.append(f"| {name} ({gm['op']} {gm['m']}x{gm['k']}x{gm['n']} {gm['dtype']}) | " + " | ".join(cells) + " |")
    head = " | ".join(f"{s} autotuning s | {s} run / best" for s in settings)
    print(f"| GEMM | {head} |")
    print("|---|" + "---|" * (2 * len(settings)))
    print("\n".join(rows))
    print("\n`*`: from an older run, scaled by the two runs' `none`. best: the faster of cuBLAS (`none`) and default max-autotune's pick. "
          "`†`: ours left the GEMM to Inductor's full list, so it ran default max-autotune in its own run; "
          "a gap to max_autotune there is max-autotune's run-to-run choice.\n")
    print("| setting | GEMMs | autotuning s (sum) | run time / max-autotune's (geomean) | more than 3 % slower than best |")
    print("|---|---|---|---|---|")
    for s in settings:
        n = len(logs[s])
        g = math.exp(sum(logs[s]) / n) if n else float("nan")
        print(f"| {s} | {n} | {sums[s]:.1f} | {g:.4f} | {len(slow[s])}: {', '.join(slow[s]) or '-'} |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
