#!/usr/bin/env python3
"""Which timing of `decompose_k`'s splits tells their compiled truth?

On long contractions (k at least 32 times the larger output side) Inductor offers splits of k
(`decompose_k`: a batched product over parts of k and the sum of the parts) beside cuBLAS and
Triton. Three timings have picked among them, and each missed on blind GEMMs: Inductor's own
benchmark (default max-autotune; the handler's `spare_splits`, since removed), the handler's
re-timing that times cuBLAS by CUDA graph and leaves a split Inductor's time (shipped), and
the re-timing of splits too (`retime_splits`, since removed: a split on GNS's 128 x 78213 x
128 picked in the search ran 1.14x cuBLAS in the compiled graph). Those runs measured the
compiled truth of the pick only, so they cannot say which timing was wrong.

For each GEMM of --gemms (JSON lines as inductor_eval.py reads them), in one warm process
(inductor_eval's: caches disabled, a fresh Triton cache folder per compile):

1. compiles it under default max-autotune, with a feedback saver that records Inductor's
   benchmark of every choice (`bench_ms`) and the re-timing's CUDA-graph time of every cuBLAS,
   Triton and split choice (`graph_ms`, `ah_inductor.retime.graph_timings`: each call after
   an L2 flush) and the same without the flush (`warm_ms`: operands warm, as the compiled
   graph replays), and replaces nothing (Inductor picks as by default);
2. compiles it again once per contender, with every other choice of the GEMM's lowering
   dropped (a preprocessing function; the split's own inner `bmm` is left alone): cuBLAS, every
   split, and the Triton configs the re-timing put first, flushed and warm;
3. measures the compiled truth of each (`truth_ms`: CUDA-graph replay, alternated, median);
   a contender that fails to compile is named under `failed` and left out.

It prints, per timing (and per timing with each split charged 3 %: a split put first only where
it beats cuBLAS by more), on how many GEMMs the contender it puts first is more than 3 % slower
in truth than the truly fastest contender, and than the bound (the faster of cuBLAS and default
max-autotune's pick: the contender Inductor's benchmark puts first, and the default compile),
and writes one JSON line per GEMM to --out (rewritten after each GEMM).

Usage: probe_splits.py --gemms FILE.jsonl [--lines A-B] --out FILE.jsonl [--budget-s 480]
                       [--rounds 9]
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import inductor_eval as E  # noqa: E402  (the GEMM's function, --lines, a probe's loop over GEMMs)
import inductor_gemms as G  # noqa: E402  (GEMM files, a GEMM in words, its features)
import inductor_harness as H  # noqa: E402  (the warm process: CUDA-graph capture, warmed clocks, alternation)
from inductor_results import SLOW_FLAG  # noqa: E402 - the bound has one owner

TIMINGS = ("bench_ms", "graph_ms", "warm_ms")  # the timings judged against truth_ms
CHARGE = 1.03  # a split's time multiplied so, in the charged reading of a timing


class Recorder:
    """The feedback saver: while `on`, records both timings of the GEMM's benchmarked lowering
    (the first one that offers a split, else the first) and changes nothing."""

    def __init__(self):
        self.on = False
        self.reset()

    def reset(self):
        self.bench, self.graph, self.warm, self.split = None, None, None, False

    def __call__(self, timings, name, input_nodes, choices, *rest):
        if not self.on:
            return
        split = has_split(timings)
        if self.bench is not None and (self.split or not split):
            return
        from ah_inductor.naming import caller_name

        finite = [c for c, t in timings.items() if math.isfinite(t)]
        self.bench, self.split = {caller_name(c): timings[c] for c in finite}, split
        self.graph = named_timings(finite, input_nodes, flush=True)
        self.warm = named_timings(finite, input_nodes, flush=False)


def named_timings(choices, input_nodes, flush):
    """{name: ms} of the re-timing's CUDA-graph timings (`retime.graph_timings`), with or
    without the flush; empty where it fails (never raised into Inductor)."""
    from ah_inductor.naming import caller_name
    from ah_inductor.retime import graph_timings

    try:
        again = graph_timings(choices, input_nodes, flush=flush)
    except Exception:  # noqa: BLE001 - no timing then
        again = {}
    return {caller_name(c): t for c, t in again.items()}


def has_split(timings):
    from ah_inductor.retime import split_test

    is_split = split_test()
    return any(is_split(c) for c in timings)


class Only:
    """The preprocessing function: while `name` is set, a lowering that offers a choice of that
    name keeps only it; other lowerings (the split's inner `bmm`) are left whole."""

    def __init__(self):
        self.name = None

    def __call__(self, choices):
        if self.name is None:
            return choices
        from ah_inductor.naming import caller_name

        kept = [c for c in choices if caller_name(c) == self.name]
        return kept or choices


def install(cache, recorder, only):
    """Puts the filter first among the selector cache's preprocessing functions, before
    inductor_eval's own, which records the list each lowering is left with (so that a forced
    compile reads as that one choice, its pick), and the recorder first among its feedback
    savers."""
    cache.preprocessing_fns.insert(0, only)
    cache.feedback_saver_fns.insert(0, recorder)


def forced(name, picks):
    """Raises unless the compile picked `name` (a filter that matched nothing leaves the list
    whole, and Inductor's pick would then be measured under the contender's name). `picks`
    holds the split's inner `bmm` lowerings too."""
    if name not in picks:
        raise RuntimeError(f"not forced: the compile picked {sorted(picks)}")


def contenders(bench, graph, warm=None):
    """What step 2 compiles: cuBLAS, every split, the Triton config `graph` (else `bench`) put
    first and the one `warm` put first where it differs; each by name, in that order."""
    names = list(bench)
    extern = [n for n in names if n.startswith("extern_")]
    splits = sorted((n for n in names if "decompose_k" in n), key=split_of)
    triton = [n for n in names if n not in extern and n not in splits]
    firsts = []
    for times in (graph or bench, warm):
        first = min(triton, key=lambda n: times.get(n, bench[n]), default=None) if times else None
        if first and first not in firsts:
            firsts.append(first)
    return extern + splits + firsts


def split_of(name):
    """The k split a split choice's name carries (`..._decompose_k_..._ksplit=8` -> 8); 0 for
    any other choice (a Triton config's name ends in `GROUP-M=8` too)."""
    tail = name.rsplit("=", 1)[-1]
    return int(tail) if "decompose_k" in name and tail.isdigit() else 0


def compile_graph(ind, gm, options, calls=None):
    """A fresh compile of the GEMM under `options`, captured as a CUDA graph of `calls` calls."""
    torch = ind.torch
    fn, args = E.gemm_fn(torch, gm)
    ind.fresh()
    compiled = torch.compile(fn, dynamic=False, fullgraph=True, options=options)
    compiled(*args)
    torch.cuda.synchronize()
    if calls is None:
        calls = max(1, min(20, round(2.0 / max(ind.probe_ms(lambda: compiled(*args)), 1e-3))))
    return ind.capture(lambda: compiled(*args), calls), calls


def measure(ind, recorder, only, gm):
    ind.torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
    recorder.on = True
    recorder.reset()
    with ind.setting("max_autotune", {}) as options:
        graphs, calls = {}, None
        graphs["max_autotune"], calls = compile_graph(ind, gm, options)
        picked = ind.picks()
    recorder.on = False
    if recorder.bench is None:
        raise RuntimeError("no GEMM lowering was benchmarked")
    rec = {"gemm": gm, "picked": picked, "bench_ms": recorder.bench, "graph_ms": recorder.graph,
           "warm_ms": recorder.warm}
    try:
        for name in contenders(recorder.bench, recorder.graph, recorder.warm):
            only.name = name
            try:
                with ind.setting("max_autotune", {}) as options:
                    graph, _ = compile_graph(ind, gm, options, calls)
                    forced(name, ind.picks())
                graphs[name] = graph
            except Exception as e:  # noqa: BLE001 - a contender that fails is named, the rest run
                rec.setdefault("failed", {})[name] = f"{type(e).__name__}: {str(e)[:200]}"
                ind.fresh()
    finally:
        only.name = None
    ind.fresh()
    truth = ind.alternate({n: g.replay for n, g in graphs.items()}, calls)
    rec["max_autotune_ms"] = truth.pop("max_autotune")
    rec["truth_ms"] = truth
    return rec


def first(rec, timing, charge=1.0):
    """The contender `timing` puts first (one it did not time never is), each split's time
    multiplied by `charge`."""
    times = {n: rec[timing].get(n, math.inf) * (charge if split_of(n) else 1.0)
             for n in rec["truth_ms"]}
    return min(times, key=times.get)


def bound(rec):
    """The faster in truth of cuBLAS and default max-autotune's pick (the contender Inductor's
    benchmark puts first, and the default compile itself)."""
    truth = rec["truth_ms"]
    picks = [truth[first(rec, "bench_ms")], rec["max_autotune_ms"]]
    return min(picks + [truth[n] for n in truth if n.startswith("extern_")])


def misses(recs, timing, charge=1.0):
    """GEMMs where the contender `timing` puts first runs more than 3 % slower than the truly
    fastest contender, the worst such ratio, and GEMMs where it runs more than 3 % over the
    bound."""
    count, worst, over = 0, 1.0, 0
    for r in recs:
        truth = r["truth_ms"]
        ms = truth[first(r, timing, charge)]
        ratio = ms / min(truth.values())
        count += ratio > SLOW_FLAG
        worst = max(worst, ratio)
        over += ms > SLOW_FLAG * bound(r)
    return count, worst, over


def summary(recs):
    lines = [f"{len(recs)} GEMMs; the contender each timing puts first, over 3 % behind the truly "
             "fastest / over the bound:"]
    for timing in TIMINGS:
        if not all(timing in r for r in recs):
            continue
        for charge, tag in ((1.0, ""), (CHARGE, ", splits charged 3 %")):
            n, worst, over = misses(recs, timing, charge)
            lines.append(f"  {timing}{tag}: {n} (worst {worst:.3f}x) / {over}")
    over = sum(r["max_autotune_ms"] > SLOW_FLAG * min(r["truth_ms"].values()) for r in recs)
    lines.append(f"  default max-autotune's pick: {over}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gemms", required=True)
    p.add_argument("--lines", metavar="A-B[,C,...]", type=E.line_ranges,
                   help="only these lines of --gemms (1-based, inclusive)")
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=480.0, help="start no GEMM after this many seconds")
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args(argv)
    try:
        gemms = G.read_gemms(a.gemms, lines=a.lines)
    except (OSError, ValueError) as e:
        print(f"probe_splits: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    ind = H.Inductor({}, a.rounds)
    recorder, only = Recorder(), Only()
    from torch._inductor import select_algorithm as sa

    install(sa.get_algorithm_selector_cache(), recorder, only)
    recs = E.probe_gemms("probe_splits", ind, gemms, lambda gm: measure(ind, recorder, only, gm),
                         a.out, a.budget_s, t0, "truth_ms")
    print(summary([r for r in recs if r.get("truth_ms")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
