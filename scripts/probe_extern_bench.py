#!/usr/bin/env python3
"""Why does Inductor's benchmark read cuBLAS slow on small GEMMs?

max-autotune times ATen's cuBLAS call at 2-3x its compiled truth on GEMMs of a few to a hundred
microseconds, and the profiled benchmark (no CPU overhead) reads it little faster
(data/profiled_bench_h100.jsonl). This times the eager cuBLAS call of each GEMM of --gemms
(the call Inductor benchmarks: `out=` a preallocated output) five ways, ms per call:

- `graph`: CUDA-graph replay of about 1 ms of calls, clocks warmed (compiled truth's timer);
- `inductor`: Inductor's benchmarker (`benchmark_gpu`: an L2 flush, then one call between two
  CUDA events, the minimum of up to 100);
- `events_warm`: the same event pairs without the flush;
- `profiled`: `do_bench_using_profiling` (kernel time from profiler events, flushing L2);
- `graph_flushed`: CUDA-graph replay with an L2-sized write before each call, less that write
  replayed alone.

Writes one JSON line per GEMM to --out and prints each timer over `graph` (geometric mean).
Usage: probe_extern_bench.py --gemms FILE.jsonl --out FILE.jsonl [--lines A-B]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import inductor_eval as E  # noqa: E402  (the GEMM's function and operands, --lines)
import inductor_gemms as G  # noqa: E402  (GEMM files, a GEMM in words, its features)
from inductor_results import geomean  # noqa: E402 - the bound has one owner
from ah_inductor.retime import graph_ms as retime_graph_ms  # noqa: E402  (the CUDA-graph timer)


def graph_ms(call, before=None):
    """Median ms of one `before(); call()` in a CUDA graph of about 1 ms of them."""
    return retime_graph_ms(lambda: call, before, rounds=9)



def extern_call(gm):
    """The eager cuBLAS call with its output preallocated, as Inductor's extern choice runs."""
    fn, args = E.gemm_fn(torch, gm)
    out = fn(*args)
    return lambda: fn(*args, out=out)


def events_warm_ms(call, iters=100):
    call()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for s, e in pairs:
        s.record()
        call()
        e.record()
    torch.cuda.synchronize()
    return min(s.elapsed_time(e) for s, e in pairs)


def measure(gm):
    from torch._inductor.runtime.benchmarking import benchmarker
    from torch._inductor.utils import do_bench_using_profiling

    torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
    call = extern_call(gm)
    flush = torch.empty(torch.cuda.get_device_properties(0).L2_cache_size // 4, dtype=torch.int, device="cuda")
    zero = flush.zero_
    ms = {"graph": graph_ms(call), "inductor": benchmarker.benchmark_gpu(call),
          "events_warm": events_warm_ms(call), "profiled": do_bench_using_profiling(call)}
    ms["graph_flushed"] = graph_ms(call, before=zero) - graph_ms(zero)
    return {"gemm": gm, "ms": ms}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gemms", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--lines", type=E.line_ranges, default=None)
    a = p.parse_args(argv)
    try:
        gemms = G.read_gemms(a.gemms, lines=a.lines)
    except (OSError, G.GemmFileError) as e:
        print(f"probe_extern_bench: {e}", file=sys.stderr)
        return 2
    recs = []
    for gm in gemms:
        recs.append(measure(gm))
        print(G.describe(gm), {k: round(v * 1000, 1) for k, v in recs[-1]["ms"].items()}, file=sys.stderr, flush=True)
    with open(a.out, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    for key in ("inductor", "events_warm", "profiled", "graph_flushed"):
        ratios = [r["ms"][key] / r["ms"]["graph"] for r in recs if r["ms"][key] > 0]
        print(f"{key} / graph (gmean over {len(ratios)}): {geomean(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
