#!/usr/bin/env python3
"""Does max-autotune pick better when its benchmark leaves out CPU overhead?

Inductor times each GEMM choice with CUDA events around one Python call (after an L2 flush), so
a call whose CPU side outlasts its kernel is timed by its CPU side: ATen's cuBLAS call, with the
dispatcher in front of it, reads 2-7x slow on GEMMs of a few microseconds (docs/inductor.md),
and max-autotune then picks a Triton config that runs slower in the compiled graph. Inductor
hands every feedback saver a thunk that benchmarks the choices again with the profiler
(`do_bench_using_profiling`: kernel time from profiler events, no CPU overhead), and selects
from the timings dict after its feedback savers ran.

For each GEMM of --gemms (JSON lines as inductor_eval.py reads them) this compiles three
settings in one warm process (inductor_eval's: caches disabled, a fresh Triton cache folder per
setting) and measures their compiled truth (CUDA-graph replay, alternated, median):

- `none`: cuBLAS, no autotuning;
- `max_autotune`: default GEMM max-autotune;
- `max_autotune_profiled`: the same, with a feedback saver, first in line, that replaces each
  benchmarked choice's time by its profiled time (in place: Inductor then selects from it);
  with `--retime graph`, by its time in a CUDA graph of an L2 flush and one call, less the
  flush alone (no CPU overhead, which reads ATen's cuBLAS call at about 25 us on the H100
  machine's CPU however short its kernel: scripts/probe_extern_kernels.py).

It records both benchmarks of every choice (`bench_ms`, `profiled_ms`), each setting's pick and
compile seconds, and prints how often each pick is over the faster of the other two by more than
3 %. Writes one JSON line per GEMM to --out (rewritten after each GEMM).

Usage: probe_profiled_bench.py --gemms FILE.jsonl --out FILE.jsonl [--budget-s 500] [--rounds 9]
                               [--retime profiled|graph]
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import inductor_eval as E  # noqa: E402  (the GEMM's function, a probe's loop over GEMMs)
import inductor_gemms as G  # noqa: E402  (GEMM files, a GEMM in words, its features)
import inductor_harness as H  # noqa: E402  (the warm process: CUDA-graph capture, warmed clocks, alternation)
from inductor_results import SLOW_FLAG, geomean  # noqa: E402 - the bound has one owner
from ah_inductor.retime import graph_timings  # noqa: E402  (the handler runtime's CUDA-graph timer)

SETTINGS = ("none", "max_autotune", "max_autotune_profiled")


class Profiled:
    """The feedback saver: while `on`, replaces each finite benchmark by the profiled one."""

    def __init__(self):
        self.on, self.bench, self.profiled = False, {}, {}

    def __call__(self, timings, name, input_nodes, choices, profiled_bench, *rest):
        if not self.on:
            return
        from ah_inductor.naming import caller_name

        again = profiled_bench()
        self.bench = {caller_name(c): t for c, t in timings.items() if math.isfinite(t)}
        self.profiled = {caller_name(c): t for c, t in again.items() if math.isfinite(t)}
        for c, t in again.items():
            if c in timings and math.isfinite(t) and math.isfinite(timings[c]):
                timings[c] = t


class Graphed(Profiled):
    """The feedback saver of `--retime graph`: times each Triton and cuBLAS choice by CUDA-graph
    replay of an L2 flush and one call, less the flush replayed alone (no CPU overhead, the
    flush kept; `ah_inductor.retime.graph_timings`, which the handler's install(retime=True)
    runs); other choices keep Inductor's time. Unlike the handler's saver, it re-times every
    GEMM, whatever its size."""

    def __call__(self, timings, name, input_nodes, choices, profiled_bench, *rest):
        if not self.on:
            return
        from ah_inductor.naming import caller_name

        self.bench = {caller_name(c): t for c, t in timings.items() if math.isfinite(t)}
        again = graph_timings([c for c in timings if math.isfinite(timings[c])], input_nodes)
        self.profiled = {caller_name(c): t for c, t in again.items()}
        timings.update(again)


def install(ind, retime="profiled"):
    """A re-timing saver placed before inductor_eval's own (which then records the pick that
    Inductor makes from the replaced timings)."""
    from torch._inductor import select_algorithm as sa

    saver = Graphed() if retime == "graph" else Profiled()
    sa.get_algorithm_selector_cache().feedback_saver_fns.insert(0, saver)
    return saver


def measure(ind, saver, gm):
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
    fn, args = E.gemm_fn(torch, gm)
    rec, graphs, calls = {"gemm": gm, "compile_s": {}, "picked": {}}, {}, None
    for s in SETTINGS:
        ind.fresh()
        saver.on = s == "max_autotune_profiled"
        with ind.setting("max_autotune" if s != "none" else "none", {}) as options:
            t0 = time.perf_counter()
            compiled = torch.compile(fn, dynamic=False, fullgraph=True, options=options)
            compiled(*args)
            torch.cuda.synchronize()
            rec["compile_s"][s] = time.perf_counter() - t0
            rec["picked"][s] = ind.picks()
            if s == "max_autotune":
                rec["bench_ms"] = ind.timings[0] if len(ind.timings) == 1 else None
            if calls is None:
                calls = max(1, min(20, round(2.0 / max(ind.probe_ms(lambda: compiled(*args)), 1e-3))))
            graphs[s] = ind.capture(lambda: compiled(*args), calls)
        saver.on = False
    rec["profiled_bench_ms"], rec["profiled_ms"] = saver.bench, saver.profiled
    rec["retimed"] = len(saver.profiled)
    ind.fresh()
    rec["run_ms"] = ind.alternate({s: g.replay for s, g in graphs.items()}, calls)
    return rec


def summary(recs):
    over = {s: 0 for s in SETTINGS[1:]}
    for r in recs:
        best = min(r["run_ms"]["none"], r["run_ms"]["max_autotune"])
        for s in over:
            over[s] += r["run_ms"][s] > SLOW_FLAG * best
    lines = [f"{len(recs)} GEMMs; over 3 % of the faster of cuBLAS and max-autotune's pick:"]
    lines += [f"  {s}: {n}" for s, n in over.items()]
    both = [r for r in recs if "max_autotune_profiled" in r["run_ms"]]
    if both:
        gm = geomean([r["run_ms"]["max_autotune_profiled"] / r["run_ms"]["max_autotune"] for r in both])
        extra = sum(r["compile_s"]["max_autotune_profiled"] - r["compile_s"]["max_autotune"] for r in both)
        lines.append(f"  profiled / default run time (gmean) {gm:.3f}; compile seconds added {extra:.1f}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gemms", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=500.0, help="start no GEMM after this many seconds")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--retime", choices=("profiled", "graph"), default="profiled",
                   help="how the third setting times the choices again (default: profiled)")
    a = p.parse_args(argv)
    try:
        gemms = G.read_gemms(a.gemms)
    except (OSError, G.GemmFileError) as e:
        print(f"probe_profiled_bench: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    ind = H.Inductor({}, a.rounds)
    saver = install(ind, a.retime)
    recs = E.probe_gemms("probe_profiled_bench", ind, gemms, lambda gm: measure(ind, saver, gm),
                         a.out, a.budget_s, t0, "run_ms")
    print(summary([r for r in recs if "run_ms" in r]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
