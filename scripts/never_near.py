#!/usr/bin/env python3
"""Template configs that never come near the best, by dtype: what a full list could leave out.

    python3 scripts/never_near.py                      # the inductor_mm logs in data/, then
                                                       # the pooled blind sets as a check
    python3 scripts/never_near.py --bound 1.03 --min-seen 20 LOG.extras.jsonl ...

For each dtype class (bf16, fp16, fp32 with TF32, strict fp32) it reads every logged GEMM's
choices (`LOG.extras.jsonl`: Inductor's benchmark of each choice, `bench_ms`, and what
precompiling it cost, `precompile_s`) and lists the Triton configs that were offered on at least
`--min-seen` GEMMs and never benchmarked within `--bound` of the GEMM's best choice. Inductor
picks by that benchmark, so leaving such a config out changes no pick the logs saw. The
precompile phase runs the configs in parallel, so its wall is set by the slowest one: the table
gives the median and the sum over GEMMs of the slowest config's precompile seconds, with and
without the never-near configs.

The check: the same configs against default max-autotune's recorded benchmark (`bench_ms`) on
the GEMMs of the pooled blind sets (`data/holdout_pool.txt`), which no log holds: how many of
those GEMMs had a never-near config within the bound. Reads files only (no torch, no GPU).
"""

import argparse
import collections
import json
import math
import os
import statistics
import sys

import sidecar  # scripts/: the plain sidecar, else its .gz

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def dtype_class(gemm):
    """`strict fp32`, `fp32 TF32`, or the dtype's name."""
    if gemm["dtype"] == "float32":
        return "fp32 TF32" if gemm.get("tf32") else "strict fp32"
    return gemm["dtype"]


def config_of(name):
    """The config part of a Triton choice's name (`triton_mm_BLOCK-M=...` -> `BLOCK-M=...`),
    the same for mm, addmm and bmm; None for a choice that is no Triton template."""
    parts = name.split("_", 2)
    return parts[2] if name.startswith("triton") and len(parts) == 3 else None


def finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


def read_extras(paths):
    """(dtype class, choices) of every logged GEMM; each path is an extras sidecar's plain name,
    read from the file or its `.gz` (`sidecar.open_text`). A line that is not JSON names the file
    read and the line, and ends the run; so does a sidecar that is missing or there twice."""
    out = []
    for path in paths:
        try:
            f = sidecar.open_text(path)
        except (OSError, sidecar.SidecarError) as e:
            sys.exit(f"never_near: {e}")
        with f:
            for no, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"never_near: {f.name}:{no}: not JSON ({e.msg}); is it an extras sidecar?")
                if rec.get("gemm") and rec.get("choices"):
                    out.append((dtype_class(rec["gemm"]), rec["choices"]))
    return out


def never_near(records, bound, min_seen):
    """Per dtype class: {config: precompile seconds each time it was offered} for the configs
    offered on `min_seen` GEMMs or more and never within `bound` of the best, and the GEMMs'
    choices."""
    by_class = collections.defaultdict(list)
    for cls, choices in records:
        by_class[cls].append(choices)
    result = {}
    for cls, gemms in sorted(by_class.items()):
        seen, near = collections.Counter(), collections.Counter()
        for choices in gemms:
            times = [c["bench_ms"] for c in choices if finite(c.get("bench_ms"))]
            best = min(times) if times else math.inf
            for c in choices:
                cfg = config_of(c["name"])
                if cfg is None:
                    continue
                seen[cfg] += 1
                near[cfg] += finite(c.get("bench_ms")) and c["bench_ms"] <= bound * best
        dropped = {cfg for cfg in seen if seen[cfg] >= min_seen and near[cfg] == 0}
        result[cls] = (dropped, gemms)
    return result


def walls(gemms, dropped):
    """Per GEMM, the slowest offered config's precompile seconds with and without `dropped`."""
    out = []
    for choices in gemms:
        pre = [(config_of(c["name"]), c.get("precompile_s", 0.0)) for c in choices]
        pre = [(cfg, s) for cfg, s in pre if cfg is not None]
        if pre:
            kept = [s for cfg, s in pre if cfg not in dropped]
            out.append((max(s for _, s in pre), max(kept, default=0.0)))
    return out


def blind_check(pool_list, dropped_by_class, bound):
    """Per dtype class, GEMMs with a recorded benchmark over the result files `pool_list` names,
    and the (file, choice) where a never-near config came within `bound` of the best."""
    seen, hits = collections.Counter(), collections.defaultdict(list)
    with open(pool_list) as f:
        names = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    for name in names:
        with open(os.path.join(os.path.dirname(pool_list), name)) as f:
            for r in json.load(f).get("gemms", []):
                bench = {n: v for n, v in (r.get("bench_ms") or {}).items() if finite(v)}
                cls = dtype_class(r["gemm"])
                if not bench:
                    continue
                seen[cls] += 1
                best = min(bench.values())
                dropped = dropped_by_class.get(cls, set())
                hits[cls] += [(name, n) for n, v in bench.items() if config_of(n) in dropped and v <= bound * best]
    return seen, hits


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("extras", nargs="*",
                   help="LOG.extras.jsonl files, each read from LOG.extras.jsonl.gz when only that exists "
                        "(default: data/inductor_mm_*h100.txt's)")
    p.add_argument("--bound", type=float, default=1.03, help="near = within this factor of the best (1.03)")
    p.add_argument("--min-seen", type=int, default=20, help="GEMMs a config must be offered on (20)")
    p.add_argument("--pool", default=os.path.join(DATA, "holdout_pool.txt"),
                   help="the blind sets to check against (data/holdout_pool.txt); '' skips it")
    return p.parse_args(argv)


def main(argv):
    a = parse(argv)
    paths = a.extras or sidecar.find(os.path.join(DATA, "inductor_mm_*h100.txt.extras.jsonl"))
    if not paths:
        sys.exit("never_near: no extras sidecars given or found in data/")
    result = never_near(read_extras(paths), a.bound, a.min_seen)
    print(f"{len(paths)} logs; never within {a.bound}x of the best on {a.min_seen} or more GEMMs:\n")
    print("| dtype | GEMMs | configs dropped | slowest precompile, median s | summed s |")
    print("|---|---|---|---|---|")
    for cls, (dropped, gemms) in result.items():
        w = walls(gemms, dropped)
        med = f"{statistics.median(x for x, _ in w):.2f} -> {statistics.median(y for _, y in w):.2f}"
        print(f"| {cls} | {len(gemms)} | {len(dropped)} | {med} | "
              f"{sum(x for x, _ in w):.0f} -> {sum(y for _, y in w):.0f} |")
    if a.pool:
        seen, hits = blind_check(a.pool, {c: d for c, (d, _) in result.items()}, a.bound)
        print(f"\nBlind check ({os.path.basename(a.pool)}): GEMMs with default max-autotune's recorded "
              f"benchmark, and those where a dropped config came within {a.bound}x of the best:\n")
        print("| dtype | GEMMs | a dropped config near the best |")
        print("|---|---|---|")
        for cls in sorted(seen):
            print(f"| {cls} | {seen[cls]} | {len(hits[cls])} |")
        for cls in sorted(hits):
            for name, choice in hits[cls]:
                print(f"  {cls}: {name}: {choice}")


if __name__ == "__main__":
    main(sys.argv[1:])
