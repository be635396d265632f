#!/usr/bin/env python3
"""Writes the pooled held-out GEMMs of one kind as a --gemms file for scripts/inductor_eval.py:
the GEMMs a recheck measures again, chosen by a rule written before their new data.

    python3 scripts/pool_gemms.py --files-from data/holdout_pool.txt --only long-contractions \
        --handler generated/python/inductor_mmh100_choices.py --searched --below-ms 0.2 > F.jsonl

`--only NAME` is holdout_pool.py's subset; `--handler H --searched` keeps the GEMMs that H
leaves a search to (any decision but `extern`, on the features the run recorded); `--below-ms
T` those whose cuBLAS compiled run time was under T ms (where the re-timing applies, for
instance). Each GEMM once (the first run of it in the list's order), as its set wrote it.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_pool import SUBSETS, listed_files  # noqa: E402 - the pool and its kinds have one owner
from holdout_records import PoolError, records  # noqa: E402
from holdout_replay import handler_module  # noqa: E402

SHAPE = ("op", "batch", "m", "k", "n", "dtype", "tf32", "trans_a", "trans_b")


def searched_by(decide):
    """Whether a record's recorded features get a decision other than `extern` from `decide`."""
    def test(r):
        features = (r.get("ours_decisions") or [None])[0]
        return features is not None and decide(features)[0] != "extern"
    return test


def chosen(recs, only, below_ms=None, searched=None):
    """The gemm dicts of `recs` that pass every given test, each shape once, in order."""
    seen, out = set(), []
    for r in recs:
        g = r["gemm"]
        key = tuple(g.get(k) for k in SHAPE)
        if key in seen or (only and not only(g)) or (searched and not searched(r)):
            continue
        if below_ms is not None and not r["run_ms"]["none"] < below_ms:
            continue
        seen.add(key)
        out.append({k: v for k, v in g.items() if k != "line"})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files-from", required=True, help="a list of result files (data/holdout_pool.txt)")
    p.add_argument("--only", choices=sorted(SUBSETS), help="holdout_pool.py's kind of GEMM")
    p.add_argument("--handler", help="a generated handler module, for --searched")
    p.add_argument("--searched", action="store_true", help="only GEMMs the handler does not decide cuBLAS only")
    p.add_argument("--below-ms", type=float, help="only GEMMs whose cuBLAS run was under this many ms")
    a = p.parse_args(argv)
    if a.searched and not a.handler:
        p.error("--searched needs --handler")
    try:
        recs = records(listed_files(a.files_from))
        searched = searched_by(handler_module(a.handler).decide) if a.searched else None
    except PoolError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for g in chosen(recs, SUBSETS.get(a.only), a.below_ms, searched):
        print(json.dumps(g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
