#!/usr/bin/env python3
"""Why is our `orig` GEMM slower than PyTorch's `aten.mm` on some pad_mm inputs?

For logged inputs of ah-collect pad_mm logs this times, with PyTorch's `InductorBenchmarker`
(L2 flush, min of runs), the same GEMM called five ways, and names the kernel each one launches
(torch.profiler sees every kernel of the process, ctypes-launched ones included):

- torch:        `aten.mm` as PyTorch 2.11 runs it by default;
- torch_lt:     `aten.mm` with `torch.backends.cuda.preferred_blas_library("cublaslt")`;
- ours:         `cublasGemmEx` as ah-collect's CUDA backend calls it (a fresh handle of the
                system libcublas, no workspace set, fp32 accumulation, GEMM_DEFAULT_TENSOR_OP);
- ours_ws:      the same handle given a 32 MiB workspace with `cublasSetWorkspace`, as PyTorch
                gives its handles on Hopper;
- torchlib:     the ours call through the libcublas PyTorch itself loaded (its wheel's version).

Usage: probe_orig_blas.py LOG [LOG ...] [--per-log 12] [--seed 0] [--include M,K,N ...]
       [--json OUT.json]
Rows are printed as ms and as the ratio to `torch`; a final table gives the median ratios.
"""
import argparse
import ctypes
import json
import os
import random
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_pytorch_pad_mm as C  # noqa: E402

CUDA_R = {torch.float16: 2, torch.bfloat16: 14, torch.float32: 0}
COMPUTE_32F, GEMM_DEFAULT_TENSOR_OP = 68, 99
DEFAULT_MATH, TF32_TENSOR_OP_MATH = 0, 3
WORKSPACE = 32 << 20


def loaded_cublas():
    """Path of the libcublas PyTorch loaded (after one matmul)."""
    torch.mm(torch.ones(8, 8, device="cuda"), torch.ones(8, 8, device="cuda"))
    torch.cuda.synchronize()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "libcublas.so" in path and "Lt" not in path:
                return path
    raise SystemExit("probe: PyTorch loaded no libcublas")


class Blas:
    """One cuBLAS handle of one library, bound to PyTorch's current stream."""

    def __init__(self, path, workspace):
        self.lib = ctypes.CDLL(path)
        self.handle = ctypes.c_void_p()
        assert self.lib.cublasCreate_v2(ctypes.byref(self.handle)) == 0
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        assert self.lib.cublasSetStream_v2(self.handle, stream) == 0
        self.ws = None
        if workspace:
            self.ws = torch.empty(workspace, dtype=torch.uint8, device="cuda")
            ptr = ctypes.c_void_p(self.ws.data_ptr())
            assert self.lib.cublasSetWorkspace_v2(self.handle, ptr, ctypes.c_size_t(workspace)) == 0
        ver = ctypes.c_int()
        self.lib.cublasGetVersion_v2(self.handle, ctypes.byref(ver))
        self.version = ver.value

    def mm_fn(self, a, b, tf32):
        """A closure enqueueing C = A B exactly as `CudaBackend::gemm` does."""
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, dtype=a.dtype, device="cuda")
        ta = a.stride(0) == 1 and a.stride(1) != 1
        tb = b.stride(0) == 1 and b.stride(1) != 1
        lda = a.stride(1) if ta else a.stride(0)
        ldb = b.stride(1) if tb else b.stride(0)
        dt = CUDA_R[a.dtype]
        math = TF32_TENSOR_OP_MATH if a.dtype == torch.float32 and tf32 else DEFAULT_MATH
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        lib, h = self.lib, self.handle
        args = (
            h, int(tb), int(ta), n, m, k, ctypes.byref(one),
            ctypes.c_void_p(b.data_ptr()), dt, ldb,
            ctypes.c_void_p(a.data_ptr()), dt, lda,
            ctypes.byref(zero), ctypes.c_void_p(c.data_ptr()), dt, n,
            COMPUTE_32F, GEMM_DEFAULT_TENSOR_OP,
        )

        def run():
            lib.cublasSetMathMode(h, math)
            status = lib.cublasGemmEx(*args)
            if status != 0:
                raise RuntimeError(f"cublasGemmEx status {status}")

        run._keep = (c, a, b)
        return run


def kernel_name(fn):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type.name == "CUDA"]
    return names[-1][:70] if names else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--per-log", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--include", action="append", default=[], metavar="M,K,N",
                    help="also probe this logged input (repeatable)")
    ap.add_argument("--json")
    args = ap.parse_args()

    from torch._inductor.runtime import benchmarking

    bench = benchmarking.InductorBenchmarker()
    torch_lib = loaded_cublas()
    # By path: by soname alone dlopen would hand back the library PyTorch already loaded.
    sys_lib = "/usr/local/cuda/lib64/libcublas.so.13"
    ours, ours_ws, torchlib = Blas(sys_lib, 0), Blas(sys_lib, WORKSPACE), Blas(torch_lib, 0)
    print(f"torch {torch.__version__}; PyTorch's libcublas {torch_lib} (version {torchlib.version}); "
          f"ours {sys_lib} (version {ours.version})", flush=True)

    default_blas = torch.backends.cuda.preferred_blas_library()
    rows = []
    for log in args.logs:
        names, logged = C.read_log(log)
        keys = [key for key, v in logged.items() if "orig" in v]
        random.Random(args.seed).shuffle(keys)
        wanted = [key for key in keys if ",".join(key[:3]) in args.include]
        for key in wanted + [key for key in keys[: args.per_log] if key not in wanted]:
            f = dict(zip(names, key))
            a, b = C.operands(f)
            tf32 = torch.backends.cuda.matmul.allow_tf32
            fns = {"torch": lambda: torch.ops.aten.mm(a, b)}
            fns["torch_lt"] = fns["torch"]  # timed with cuBLASLt preferred, below
            fns["ours"] = ours.mm_fn(a, b, tf32)
            fns["ours_ws"] = ours_ws.mm_fn(a, b, tf32)
            fns["torchlib"] = torchlib.mm_fn(a, b, tf32)
            r = {"features": f, "logged_orig": statistics.median(logged[key]["orig"])}
            for name, fn in fns.items():
                if name == "torch_lt":
                    torch.backends.cuda.preferred_blas_library("cublaslt")
                r[name] = bench.benchmark_gpu(fn)
                r[name + "_kernel"] = kernel_name(fn)
                torch.backends.cuda.preferred_blas_library(default_blas)
            rows.append(r)
            shape = f"{f['m']}x{f['k']}x{f['n']} {f['mat1_dtype'][6:]} tf32={f['using_tf32']}"
            ratios = " ".join(f"{n}={r[n] / r['torch']:.3f}" for n in fns if n != "torch")
            print(f"{shape:45} torch {r['torch']:9.3f} ms  logged/torch {r['logged_orig'] / r['torch']:.3f}  {ratios}",
                  flush=True)
            for n in fns:
                print(f"    {n:9} {r[n + '_kernel']}")
            del a, b, fns

    print("\nmedian ratio to torch (|ratio - 1|):")
    for n in ("logged_orig", "torch_lt", "ours", "ours_ws", "torchlib"):
        rs = [r[n] / r["torch"] for r in rows]
        print(f"  {n:12} {statistics.median(rs):.3f}  ({statistics.median(abs(x - 1) for x in rs):.3f})"
              f"  worst {max(rs):.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
