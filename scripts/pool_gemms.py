#!/usr/bin/env python3
"""Writes the pooled held-out GEMMs of one kind as a --gemms file for scripts/inductor_eval.py:
the GEMMs a recheck measures again, chosen by a rule written before their new data.

    python3 scripts/pool_gemms.py --files-from data/holdout_pool.txt --only long-contractions \
        --handler generated/python/inductor_mmh100_choices.py --searched --below-ms 0.2 > F.jsonl

    python3 scripts/pool_gemms.py --files-from data/holdout_pool_h200.txt \
        --handler generated/python/inductor_mmh100_choices.py --cublas-only --cublas-over > F.jsonl

`--only NAME` is holdout_pool.py's subset; `--handler H --searched` keeps the GEMMs that H
leaves a search to (any decision but `extern` as its install() applies it, on the features the
run recorded), `--handler H --cublas-only` those it decides `extern`; `--cublas-over` those
whose cuBLAS compiled run time was over the bound in that run (more than SLOW_FLAG times the
faster of cuBLAS and default max-autotune's pick); `--below-ms T` those whose cuBLAS compiled
run time was under T ms (where the re-timing applies, for instance). Each GEMM once (the first
run of it in the list's order), as its set wrote it.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_pool import SUBSETS, listed_files  # noqa: E402 - the pool and its kinds have one owner
from holdout_records import PoolError, records  # noqa: E402
from holdout_replay import handler_module  # noqa: E402
from inductor_handlers import installed_decide  # noqa: E402 - decisions as install() applies them
from inductor_results import SLOW_FLAG, best_ms  # noqa: E402 - the bound has one owner

SHAPE = ("op", "batch", "m", "k", "n", "dtype", "tf32", "trans_a", "trans_b")


def searched_by(decide, searched=True):
    """Whether a record's recorded features get a decision other than `extern` from `decide`
    (with `searched`; without, whether they get `extern`)."""
    def test(r):
        features = (r.get("ours_decisions") or [None])[0]
        return features is not None and (decide(features)[0] != "extern") == searched
    return test


def cublas_over(r):
    """Whether cuBLAS's compiled run time in record `r` was over the bound (SLOW_FLAG)."""
    best = best_ms(r)
    return "none" in r["run_ms"] and best is not None and r["run_ms"]["none"] > SLOW_FLAG * best


def chosen(recs, only, below_ms=None, searched=None, over=False):
    """The gemm dicts of `recs` that pass every given test, each shape once, in order."""
    seen, out = set(), []
    for r in recs:
        g = r["gemm"]
        key = tuple(g.get(k) for k in SHAPE)
        if key in seen or (only and not only(g)) or (searched and not searched(r)):
            continue
        if below_ms is not None and not r["run_ms"]["none"] < below_ms:
            continue
        if over and not cublas_over(r):
            continue
        seen.add(key)
        out.append({k: v for k, v in g.items() if k != "line"})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files-from", required=True, help="a list of result files (data/holdout_pool.txt)")
    p.add_argument("--only", choices=sorted(SUBSETS), help="holdout_pool.py's kind of GEMM")
    p.add_argument("--handler", help="a generated handler module, for --searched or --cublas-only")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--searched", action="store_true", help="only GEMMs the handler does not decide cuBLAS only")
    which.add_argument("--cublas-only", action="store_true", help="only GEMMs the handler decides cuBLAS only")
    p.add_argument("--cublas-over", action="store_true",
                   help="only GEMMs whose cuBLAS run was over the bound (3 %%) in the run recorded")
    p.add_argument("--below-ms", type=float, help="only GEMMs whose cuBLAS run was under this many ms")
    a = p.parse_args(argv)
    if (a.searched or a.cublas_only) and not a.handler:
        p.error("--searched and --cublas-only need --handler")
    try:
        recs = records(listed_files(a.files_from))
        searched = None
        if a.searched or a.cublas_only:
            searched = searched_by(installed_decide(handler_module(a.handler)), a.searched)
    except PoolError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for g in chosen(recs, SUBSETS.get(a.only), a.below_ms, searched, a.cublas_over):
        print(json.dumps(g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
