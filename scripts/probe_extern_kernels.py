#!/usr/bin/env python3
"""Which GPU kernels does max-autotune's benchmark of the cuBLAS choice run?

Inside default GEMM max-autotune, the profiled benchmark of ATen's cuBLAS call reads about twice
what the same call's profiled time reads alone (data/profiled_bench_h100.jsonl against
data/extern_bench_h100.jsonl): the GPU does more, or other, work. For each GEMM of --gemms
(--lines) this lists, from the profiler, the CUDA kernels of (1) the eager call alone, ten times,
and (2) one max-autotune compile of the GEMM, without Triton's kernels and the L2 flushes, with
their count and mean microseconds; the inputs Inductor made to benchmark with (size, stride,
dtype, storage offset, address mod 256); and the CPU microseconds one call takes to submit (50
calls without a synchronize, wall time over 50), for the eager call and for every callable
max-autotune's benchmarker timed. Prints a report; no file.

Usage: probe_extern_kernels.py --gemms FILE.jsonl --lines A-B[,C-D]
"""
import argparse
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inductor_eval as E  # noqa: E402  (the GEMM's function and operands, --lines)
import inductor_gemms as G  # noqa: E402  (GEMM files, a GEMM in words, its features)


def cuda_kernels(prof):
    """{kernel name: [count, total us]} of a profile, Triton kernels and fills left out."""
    out = collections.defaultdict(lambda: [0, 0.0])
    for ev in prof.events():
        if getattr(ev, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        name = ev.name
        if name.startswith("triton") or "elementwise_kernel" in name or "fill" in name.lower():
            continue
        out[name][0] += 1
        out[name][1] += ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
    return out


def report(title, kernels):
    print(f"  {title}:")
    for name, (n, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:8]:
        print(f"    {n:5d} x {us / n:8.2f} us  {name[:150]}")


def example_values():
    """Records the inputs Inductor makes to benchmark with."""
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    seen, original = [], AlgorithmSelectorCache.benchmark_example_value

    def wrapped(node, *args, **kwargs):
        t = original(node, *args, **kwargs)
        seen.append((tuple(t.shape), tuple(t.stride()), str(t.dtype).replace("torch.", ""),
                     t.storage_offset(), t.data_ptr() % 256))
        return t

    AlgorithmSelectorCache.benchmark_example_value = staticmethod(wrapped)
    return seen


def submit_us(call, n=50):
    """CPU microseconds per call of `call`, submitted `n` times without a synchronize."""
    import time

    call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def submit_times():
    """Records, for every callable Inductor's benchmarker times, its CPU submit time."""
    from torch._inductor.runtime import benchmarking

    seen, original = [], benchmarking.InductorBenchmarker.benchmark_gpu

    def wrapped(self, _callable, *args, **kwargs):
        name = getattr(_callable, "__qualname__", type(_callable).__name__)
        seen.append((name, round(submit_us(_callable), 1)))
        return original(self, _callable, *args, **kwargs)

    benchmarking.InductorBenchmarker.benchmark_gpu = wrapped
    return seen


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gemms", required=True)
    p.add_argument("--lines", type=E.line_ranges, required=True)
    a = p.parse_args(argv)
    import torch._inductor.config as config

    config.force_disable_caches = True
    seen, submits = example_values(), submit_times()
    from torch.profiler import ProfilerActivity, profile

    for gm in G.read_gemms(a.gemms, lines=a.lines):
        print(G.describe(gm))
        torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
        fn, args = E.gemm_fn(torch, gm)
        out = fn(*args)
        print("  eager operands:", [(tuple(t.shape), tuple(t.stride()), t.data_ptr() % 256) for t in args])
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                fn(*args, out=out)
            torch.cuda.synchronize()
        report("eager call, 10 times", cuda_kernels(prof))
        print(f"  eager call submits in {submit_us(lambda: fn(*args, out=out)):.1f} us")
        torch._dynamo.reset()
        seen.clear()
        submits.clear()
        compiled = torch.compile(fn, dynamic=False, fullgraph=True, options={"max_autotune_gemm": True})
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            compiled(*args)
            torch.cuda.synchronize()
        report("one max-autotune compile", cuda_kernels(prof))
        print("  benchmark inputs:", sorted(set(seen)))
        print("  benchmarked callables, CPU us per submit:", submits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
