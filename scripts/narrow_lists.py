#!/usr/bin/env python3
"""Could a short fixed list of Triton configs replace a handler's cuBLAS-only decisions on GEMMs
with a narrow side? A screen on the pooled held-out records, without a GPU.

Takes the pooled GEMMs that recorded default max-autotune's benchmark of every choice
(`bench_ms`), replays the handler's tree (`decide`) on each, and keeps those it decides cuBLAS
only with a narrowest side (the smallest of m, k and n) of at most --max-side. (Since the
forty-fifth session `install()` searches the linears to a narrow output among them,
`narrow_search`; this screen, which led to it, asks about the tree's decisions.) On those, a GEMM *needs* a
template when no ATen choice benchmarked within 3 % of the fastest choice, and a list *covers* it
when one of its configs did. Split into two halves (--repeats times, seeded), a list of K configs
is chosen greedily on one half (each next config the one that covers most of the half's GEMMs
still uncovered) and scored on the other; the table gives, per K, the mean over splits of how
many needing GEMMs the list covers, and how many GEMMs over the bound in compiled truth (cuBLAS
more than 3 % slower than the faster of cuBLAS and max-autotune's pick) would have max-autotune's
pick or a config benchmarked within 3 % of the fastest in the list.

Config names are Inductor's as it offers them to each GEMM (block sizes clamped to the shape), so
a list names configs as a handler's `keep` list does.

Usage: narrow_lists.py --files-from LIST --handler MODULE.py [--max-side 100] [--repeats 5]
                       [--sizes 1,2,4,6,8]
"""
import argparse
import collections
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_pool import listed_files  # noqa: E402 - the list file has one reader
from holdout_records import PoolError, features_of, records  # noqa: E402
from holdout_replay import handler_decide  # noqa: E402
from inductor_results import SLOW_FLAG, best_ms  # noqa: E402 - the bound has one owner

NEAR = 1.03  # within this of the fastest benchmark: near


def is_aten(name):
    return name.startswith("extern_") or name.startswith("aten")


def near(bench, name):
    return name in bench and bench[name] <= NEAR * min(bench.values())


def needs(bench):
    """No ATen choice benchmarked near the fastest."""
    return not any(near(bench, n) for n in bench if is_aten(n))


def covered(bench, names):
    return any(near(bench, n) for n in names)


def narrow_cublas_only(recs, decide, max_side):
    """The records `decide` gives cuBLAS only with a narrowest side of at most `max_side`, that
    recorded a benchmark of every choice."""
    out = []
    for r in recs:
        if not r.get("bench_ms"):
            continue
        f = features_of(r)
        if min(f["m"], f["k"], f["n"]) <= max_side and decide(f)[0] == "extern":
            out.append(r)
    return out


def greedy_list(recs, size):
    """Up to `size` Triton config names, each the one near the fastest on most of `recs`' needing
    GEMMs the list so far leaves uncovered."""
    chosen = []
    for _ in range(size):
        votes = collections.Counter(n for r in recs if needs(r["bench_ms"]) and not covered(r["bench_ms"], chosen)
                                    for n in r["bench_ms"] if not is_aten(n) and near(r["bench_ms"], n))
        if not votes:
            break
        chosen.append(min(votes, key=lambda n: (-votes[n], n)))
    return chosen


def over_bound(r):
    return r["run_ms"]["none"] > SLOW_FLAG * best_ms(r)


def rescued(r, names):
    picked = list(r["picked"].get("max_autotune", {}))
    return any(p in names for p in picked) or covered(r["bench_ms"], names)


def screen(recs, sizes, repeats, seed=0):
    """Per list size: (needing GEMMs covered, needing GEMMs, over the bound rescued, over the
    bound), each the mean over `repeats` random halvings, both halves scored."""
    rng = random.Random(seed)
    out = {}
    halvings = []
    for _ in range(repeats):
        order = list(range(len(recs)))
        rng.shuffle(order)
        half = len(order) // 2
        halvings.append(([recs[i] for i in order[:half]], [recs[i] for i in order[half:]]))
    for size in sizes:
        sums = [0, 0, 0, 0]
        for a, b in halvings:
            for train, test in ((a, b), (b, a)):
                names = greedy_list(train, size)
                for r in test:
                    need, over = needs(r["bench_ms"]), over_bound(r)
                    sums[0] += need and covered(r["bench_ms"], names)
                    sums[1] += need
                    sums[2] += over and rescued(r, names)
                    sums[3] += over
        out[size] = tuple(s / repeats for s in sums)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files-from", required=True)
    p.add_argument("--handler", required=True)
    p.add_argument("--max-side", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--sizes", default="1,2,4,6,8")
    a = p.parse_args(argv)
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
        if not sizes or min(sizes) < 1 or a.repeats < 1:
            raise ValueError
    except ValueError:
        print(f"narrow_lists: --sizes takes positive integers and --repeats at least 1; got "
              f"{a.sizes!r} and {a.repeats}", file=sys.stderr)
        return 2
    try:
        recs = narrow_cublas_only(records(listed_files(a.files_from)), handler_decide(a.handler), a.max_side)
    except (PoolError, OSError) as e:
        print(f"narrow_lists: {e}", file=sys.stderr)
        return 2
    print(f"{len(recs)} GEMMs decided cuBLAS only with a narrowest side of at most {a.max_side}; "
          f"{sum(needs(r['bench_ms']) for r in recs)} need a template by the benchmark, "
          f"{sum(over_bound(r) for r in recs)} over the bound in compiled truth.")
    print("\n| configs in the list | needing GEMMs covered (held-out half) | over the bound rescued |")
    print("|---|---|---|")
    for size, (cov, need, res, over) in screen(recs, sizes, a.repeats).items():
        print(f"| {size} | {cov:.1f} of {need:.0f} | {res:.1f} of {over:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
