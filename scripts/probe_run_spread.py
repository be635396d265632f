#!/usr/bin/env python3
"""How does one long GEMM's time move from run to run, and what makes its first run slow?

ah-collect measures a call of 20 ms or more by its first (warm-up) run alone. This times the
`orig` GEMM (`aten.mm`, the same cuBLAS kernel ah-collect launches) of logged inputs in three
situations, each as a series of runs with an L2 flush before every run (CUDA events):

- cold:   after the GPU sat idle for --idle seconds (a collection waits on the CPU between
          inputs and repetitions);
- after:  right after a different long kernel (the previous choice's benchmark);
- steady: right after the same call, 5 times (PyTorch's estimation runs).

Prints each series in ms, its first run over its minimum, and PyTorch's
`InductorBenchmarker.benchmark_gpu` for reference. Then, for each rest in --rests (ms): a burst
of --burst-ms of heavy fp16 GEMMs, the GPU left idle for the rest, one timed run; printed as the
run over PyTorch's time, twice per rest.
Usage: probe_run_spread.py LOG [--include M,K,N ...] [--runs 6] [--idle 1.0]
       [--rests 0,5,20,50,100,200] [--burst-ms 100]
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_pytorch_pad_mm as C  # noqa: E402


def series(fn, runs, flush):
    out = []
    for _ in range(runs):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--include", action="append", default=[], metavar="M,K,N")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--idle", type=float, default=1.0)
    ap.add_argument("--rests", default="0,5,20,50,100,200")
    ap.add_argument("--burst-ms", type=float, default=100.0)
    args = ap.parse_args()

    from torch._inductor.runtime import benchmarking

    bench = benchmarking.InductorBenchmarker()
    flush = torch.empty(50 << 20 >> 2, dtype=torch.int32, device="cuda")
    names, logged = C.read_log(args.log)
    other = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    for key in logged:
        if ",".join(key[:3]) not in args.include:
            continue
        f = dict(zip(names, key))
        a, b = C.operands(f)

        def fn():
            torch.ops.aten.mm(a, b)

        fn()
        torch.cuda.synchronize()
        time.sleep(args.idle)
        cold = series(fn, args.runs, flush)
        for _ in range(20):
            torch.mm(other, other)
        after = series(fn, args.runs, flush)
        series(fn, 5, flush)
        steady = series(fn, args.runs, flush)
        ref = bench.benchmark_gpu(fn)
        print(f"{f['m']}x{f['k']}x{f['n']} {f['mat1_dtype'][6:]} tf32={f['using_tf32']}  "
              f"PyTorch {ref:.3f} ms  logged orig {logged[key]['orig']}")
        for name, s in (("cold", cold), ("after", after), ("steady", steady)):
            print(f"  {name:7} first/min {s[0] / min(s):.3f}  min/PyTorch {min(s) / ref:.3f}  "
                  + " ".join(f"{x:.2f}" for x in s), flush=True)
        burst = max(1, round(args.burst_ms / 1.6))  # one 8192^3 fp16 GEMM: about 1.6 ms
        line = []
        for rest in (float(r) for r in args.rests.split(",")):
            got = []
            for _ in range(2):
                for _ in range(burst):
                    torch.mm(other, other)
                torch.cuda.synchronize()
                time.sleep(rest / 1000)
                got.append(series(fn, 1, flush)[0] / ref)
            line.append(f"{rest:g}ms " + "/".join(f"{g:.3f}" for g in got))
        print("  rest    " + "  ".join(line), flush=True)
        del a, b


if __name__ == "__main__":
    main()
