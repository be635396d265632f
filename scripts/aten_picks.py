#!/usr/bin/env python3
"""Which of addmm's two cuBLAS calls did the searches pick, and was it the bias rule's?

Where a handler leaves an addmm to Inductor's search (`default`, `drop`), both ATen calls stay in
the list: the 1-D bias (`extern_bias_addmm`, cuBLASLt's epilogue, what Inductor runs without
max-autotune) and the bias expanded to 2-D (`extern_addmm`). Where it decides cuBLAS only or keeps
a list, the handler keeps one, the bias rule's (`one_aten`, `expanded_bias_call` in
python/ah_inductor/choices.py); `install(one_aten_search=True)` keeps that one in the searches
too. This lists the searched addmm of the given result files whose pick was the other call, with
what the rule's call would have run: `none`'s time where the rule keeps the 1-D call (`none`
ran it), the eager twins' estimate where it keeps the expanded one (`expanded_ms`, where the
addmm probe timed it), each over the bound's best. Reads result files only (no torch, no GPU).
Usage: scripts/aten_picks.py [--files-from LIST] [RESULT.json ...]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from ah_inductor.choices import expanded_bias_call  # noqa: E402 - the rule has one owner
from holdout_pool import listed_files  # noqa: E402 - the list file's format has one owner
from holdout_records import ADDMM_CALLS, PoolError, decided, features_of, records, shape_of  # noqa: E402
from holdout_replay import cublas_ms  # noqa: E402 - how a kept cuBLAS call ran has one owner
from inductor_results import SLOW_FLAG, best_ms  # noqa: E402 - the bound has one owner

SEARCHED = ("full list", "full list trimmed")


def rules_call(r):
    """The ATen call (a name of ADDMM_CALLS: the expanded-bias call, the 1-D one) the bias rule
    keeps for record `r`'s addmm."""
    return ADDMM_CALLS[0] if expanded_bias_call(features_of(r)) else ADDMM_CALLS[1]


def other_picks(recs):
    """(record, picked call, the rule's call, the rule's call's run ms or None) of each searched
    addmm whose `ours` ran one ATen call and not the rule's."""
    out = []
    for r in recs:
        picked = [c for c in (r["picked"].get("ours") or {}) if c in ADDMM_CALLS]
        if r["gemm"]["op"] != "addmm" or decided(r) not in SEARCHED or len(picked) != 1:
            continue
        rule = rules_call(r)
        if picked[0] != rule:
            out.append((r, picked[0], rule, cublas_ms(r, rule)))
    return out


def report(rows):
    lines = ["| file | GEMM | decided | picked | ours | the rule's call |", "|---|---|---|---|---|---|"]
    over = {"ours": 0, "rule": 0}
    for r, picked, rule, ms in rows:
        best = best_ms(r)
        ours = r["run_ms"]["ours"] / best
        mine = None if ms is None else ms / best
        over["ours"] += ours > SLOW_FLAG
        over["rule"] += mine is not None and mine > SLOW_FLAG
        cell = "-" if mine is None else f"{mine:.3f}x ({rule})"
        lines.append(f"| {os.path.basename(r['source'])} | {shape_of(r['gemm'])} | {decided(r)} | {picked} | "
                     f"{ours:.3f}x | {cell} |")
    head = (f"{len(rows)} searched addmm picked the call the bias rule does not keep; over the "
            f"{(SLOW_FLAG - 1) * 100:.0f} % bound: as they ran {over['ours']}, with the rule's call "
            f"{over['rule']} (of those it can be estimated for).")
    return head + "\n\n" + "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["--files-from"] and len(argv) >= 2:
            argv = listed_files(argv[1]) + argv[2:]
        if not argv or any(a.startswith("-") for a in argv):
            print(__doc__.strip().splitlines()[-1], file=sys.stderr)
            return 2
        print(report(other_picks(records(argv))))
    except PoolError as e:
        print(f"aten_picks: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
