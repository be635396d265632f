#!/usr/bin/env python3
"""Where Inductor's `decompose_k` wins in inductor_mm logs, and which split wins.

Usage: python3 scripts/decompose_k_wins.py LOG [LOG ...] [--margin 1.02]

A GEMM is a win when a `subgraph_decompose_k_ksplit=S` choice has the log's fastest benchmark
time and beats the fastest `extern_*` choice by more than `--margin`. Per win it prints the
GEMM, the winning split and its chunk (`k // S`), its lead over cuBLAS, and every offered split
with its chunk and its time over the winner's. It answers whether one rule over the chunk size
could name the winning split (docs/results.md, seventeenth session). Reads only the logs (the
rows' last two fields are the choice and its time; the leading fields are the GEMM's features,
`m,k,n,...` as `ah-collect --name inductor_mm` writes them).
"""

import argparse
import sys
from collections import OrderedDict

PREFIX = "subgraph_decompose_k_ksplit="


def gemms(lines):
    """(features, [(choice, time)]) per GEMM of a log's lines, in log order (the first two
    lines are the metadata and the header)."""
    out = OrderedDict()
    for number, line in enumerate(lines[2:], start=3):
        fields = line.rstrip("\n").split(",")
        try:
            time = float(fields[-1])
            if len(fields) < 8:
                raise ValueError(f"{len(fields)} fields")
        except ValueError as e:
            raise ValueError(f"line {number}: not an inductor_mm row ({e}); give a log of "
                             "`ah-collect --name inductor_mm`") from None
        out.setdefault(tuple(fields[:-2]), []).append((fields[-2], time))
    return list(out.items())


def win(features, choices, margin):
    """The win of one GEMM as a dict, or None when no split wins by `margin` over cuBLAS."""
    splits = [(int(c[len(PREFIX):]), t) for c, t in choices if c.startswith(PREFIX)]
    extern = [t for c, t in choices if c.startswith("extern")]
    if not splits or not extern:
        return None
    k = int(features[1])
    split, best = min(splits, key=lambda s: s[1])
    if best > min(t for _, t in choices) or min(extern) / best <= margin:
        return None
    return {
        "gemm": "x".join(features[:3]) + " " + features[5],
        "split": split,
        "chunk": k // split,
        "over_cublas": min(extern) / best,
        "splits": sorted((s, k // s, t / best) for s, t in splits),
    }


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("logs", nargs="+")
    p.add_argument("--margin", type=float, default=1.02, help="least lead over cuBLAS (default 1.02)")
    a = p.parse_args(argv)
    for path in a.logs:
        try:
            with open(path) as f:
                rows = gemms(f.readlines())
        except (OSError, ValueError) as e:
            print(f"decompose_k_wins: {path}: {e}", file=sys.stderr)
            return 2
        offered = sum(any(c.startswith(PREFIX) for c, _ in ch) for _, ch in rows)
        wins = [w for w in (win(f, ch, a.margin) for f, ch in rows) if w]
        print(f"{path}: {len(rows)} GEMMs, {offered} offer decompose_k, {len(wins)} won by it")
        for w in wins:
            splits = ", ".join(f"{s} ({c}): {r:.2f}" for s, c, r in w["splits"])
            print(f"  {w['gemm']}: split {w['split']} (chunk {w['chunk']}), "
                  f"{w['over_cublas']:.2f}x over cuBLAS; splits (chunk): time / winner's: {splits}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
