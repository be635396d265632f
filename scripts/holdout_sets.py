#!/usr/bin/env python3
"""One row per held-out set: how each set scored on issue 26's goals, as its own report did.

A set is the result files whose names share a set name (`inductor_eval_h100_holdout60a_...` and
`..._holdout60b_...` are set `holdout60`); its files are merged as `inductor_eval.py --merge`
merges them (a GEMM measured in two files takes each setting from the later one), and the row
is the merged result's summary: GEMMs measured; over the bound (more than 3 % slower than the
faster of cuBLAS and default max-autotune's pick) for ours (the handler shipped when the set
ran), default max-autotune and cuBLAS only; autotuning seconds of ours and max-autotune on the
GEMMs that measured both, and how many times less ours spent; ours' run time over max-autotune's
picks (geometric mean). `scripts/holdout_pool.py` pools the same files GEMM by GEMM instead.
With more than one set, a last row scores the handlers each set measured as ours all together
(the sets' merged GEMMs pooled; candidate rows stay out of it): the pool's numbers in one table.
Where a set measured PyTorch's `_MMRankingH100` (setting `mm_ranking`, on its `mm` GEMMs only),
a second table scores the handler, the ranking and default max-autotune on those GEMMs alone,
set by set and (with more than one such set) all of them together.

usage: python3 scripts/holdout_sets.py --files-from data/holdout_pool.txt
       python3 scripts/holdout_sets.py RESULT.json [RESULT.json ...]
Reads result files only (no torch, no GPU). Exit 2, naming the file, on one it cannot read.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_pool import listed_files  # noqa: E402 - one owner of the list file's format
from holdout_records import PoolError  # noqa: E402
from inductor_results import SLOW_FLAG, MergeError, best_ms, geomean, merge, spent_any  # noqa: E402 - one owner

PREFIX = re.compile(r"^inductor_eval_[a-z0-9]+_")
SET_NAME = re.compile(r"[a-z_]+?\d+")


def set_name(path):
    """The set a result file belongs to: its name without the runner's prefix, up to the set's
    number (`holdout60a_h2191oa.json` -> `holdout60`, `smallbmm_blind1b_h2191.json` ->
    `smallbmm_blind1`); a name with no number is a set of its own."""
    stem = PREFIX.sub("", os.path.basename(path)).removesuffix(".json")
    found = SET_NAME.match(stem)
    return found.group(0) if found else stem


def grouped(paths):
    """{set name: its files in the order given}, sets in order of first appearance."""
    sets = {}
    for path in paths:
        sets.setdefault(set_name(path), []).append(path)
    return sets


def role_row(name, gemms, role):
    """One table row: the set's GEMMs that measured `role` (ours, or a candidate handler measured
    beside it), cuBLAS only and default max-autotune. Autotuning is summed as measured (compile
    time over cuBLAS only's, a few hundredths of a second below zero where a decision cost
    nothing), the issue's definition: the settings' total compile times apart."""
    both = [r for r in gemms if {role, "none", "max_autotune"} <= set(r.get("run_ms", {}))]
    over = [sum(r["run_ms"][s] / best_ms(r) > SLOW_FLAG for r in both)
            for s in (role, "max_autotune", "none")]
    spent = [r["autotune_s"] for r in both if {role, "max_autotune"} <= set(r.get("autotune_s", {}))]
    ours, ma = sum(a[role] for a in spent), sum(a["max_autotune"] for a in spent)
    run = geomean([r["run_ms"][role] / r["run_ms"]["max_autotune"] for r in both])
    cells = [name, str(len(both)), *map(str, over), f"{ours:.1f}", f"{ma:.1f}",
             f"{ma / ours:.1f}x" if spent_any(ours, len(spent)) else "-", f"{run:.3f}" if run else "-"]
    return "| " + " | ".join(cells) + " |"


RANKED = ("ours", "mm_ranking", "max_autotune")


def ranking_row(name, gemms):
    """One row of the `_MMRankingH100` table: the set's GEMMs that measured the handler, the
    ranking, default max-autotune and cuBLAS only; for each of the three, GEMMs over the bound,
    autotuning seconds, and (handler and ranking) run time over max-autotune's picks."""
    rows = [r for r in gemms if {*RANKED, "none"} <= set(r.get("run_ms", {}))
            and set(RANKED) <= set(r.get("autotune_s", {}))]
    over = [sum(r["run_ms"][s] / best_ms(r) > SLOW_FLAG for r in rows) for s in RANKED]
    spent = [sum(r["autotune_s"][s] for r in rows) for s in RANKED]
    run = [geomean([r["run_ms"][s] / r["run_ms"]["max_autotune"] for r in rows]) for s in RANKED[:2]]
    cells = [name, str(len(rows)), *map(str, over), *(f"{x:.1f}" for x in spent),
             *(f"{x:.3f}" if x else "-" for x in run)]
    return "| " + " | ".join(cells) + " |"


def table(paths):
    """The Markdown table of every set among `paths`: a row for the handler each set measured
    as ours, and one more for a candidate handler where the set measured one; with more than one
    set, a row for all of them (ours only); then, where a set measured `_MMRankingH100`, its
    table."""
    lines = ["| set | GEMMs | over: handler | over: max-autotune | over: cuBLAS only "
             "| autotuning s: handler | autotuning s: max-autotune | less | run / max-autotune |",
             "|---|---|---|---|---|---|---|---|---|"]
    ranked, pooled, every = [], [], []
    sets = grouped(paths)
    for name, files in sets.items():
        gemms = merge(files)["gemms"]
        every += gemms
        for role, label in (("ours", name), ("candidate", f"{name} (candidate)")):
            if any(role in r.get("run_ms", {}) for r in gemms):
                lines.append(role_row(label, gemms, role))
        if any("mm_ranking" in r.get("run_ms", {}) for r in gemms):
            ranked.append(ranking_row(name, gemms))
            pooled += gemms
    if len(sets) > 1:
        lines.append(role_row(f"all {len(sets)} sets", every, "ours"))
    if len(ranked) > 1:
        ranked.append(ranking_row(f"all {len(ranked)} sets", pooled))
    if ranked:
        lines += ["", "On the GEMMs each set measured with PyTorch's `_MMRankingH100` (its `mm`):", "",
                  "| set | GEMMs | over: handler | over: `_MMRankingH100` | over: max-autotune "
                  "| autotuning s: handler | autotuning s: `_MMRankingH100` | autotuning s: max-autotune "
                  "| run / max-autotune: handler | run / max-autotune: `_MMRankingH100` |",
                  "|---|---|---|---|---|---|---|---|---|---|", *ranked]
    return "\n".join(lines)


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    try:
        if argv[:1] == ["--files-from"]:
            if len(argv) != 2:
                raise PoolError("--files-from takes one list file and nothing else")
            argv = listed_files(argv[1])
        if not argv:
            raise PoolError("name the result files, or a list of them with --files-from (see --help)")
        print(table(argv))
    except (PoolError, MergeError) as e:
        print(f"holdout_sets: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
