#!/usr/bin/env python3
"""How Inductor lays out a compiled pad_mm program's buffers (GPU machine, one-off probe).

For some inputs of an ah-collect pad_mm log (their real dtypes, transposes and padded lengths,
built as scripts/compare_pytorch_pad_mm.py builds them), prints the buffers Inductor allocates
for its compiled pad function (`empty_strided_cuda` lines of the output code: comprehensive
padding may round row strides up to 128 bytes, the mm's output included) and its kernel calls,
and times, with triton's do_bench (median, ms):
  orig          aten.mm on the operands as logged
  compiled      Inductor's compiled pad function (CUDA graph), as the comparison times it
  mm packed C   the padded operands (Inductor's row strides) times each other, C packed
  mm 128B C     the same into a C whose row stride is rounded up to 128 bytes
Usage: probe_pad_strides.py [--code-dir DIR] LOG M,K,N [M,K,N ...]
       (--code-dir: also writes each input's Inductor output code to DIR/MxKxN.py)
"""
import re
import sys

import torch
import triton.testing
from torch._inductor.fx_passes import pad_mm as P
from torch._inductor.utils import run_and_get_code

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import compare_pytorch_pad_mm as C  # noqa: E402


def inductor_stride(cols, elem):
    """`ir.Layout._pad_strides` for a row of `cols` elements (ah-collect's `PadStride::Inductor`)."""
    align = 128 // elem
    return -(-cols // align) * align if cols > 1024 and cols % align else cols


def padded(x, rows, cols):
    """`x` at the top left of a zero `rows` x `cols` buffer with Inductor's row stride."""
    out = torch.zeros((rows, inductor_stride(cols, x.element_size())), dtype=x.dtype, device=x.device)
    out = out[:, :cols]
    out[: x.shape[0], : x.shape[1]].copy_(x)
    return out


def mm_into(a, b, ldc):
    c = torch.empty((a.shape[0], ldc), dtype=a.dtype, device=a.device)[:, : b.shape[1]]
    return lambda: torch.mm(a, b, out=c)


def main():
    args = sys.argv[1:]
    code_dir = None
    if args[0] == "--code-dir":
        code_dir, args = args[1], args[2:]
    log, wanted = args[0], [tuple(map(int, s.split(","))) for s in args[1:]]
    names, groups = C.read_log(log)
    for key in groups:
        f = dict(zip(names, key))
        m, k, n = int(f["m"]), int(f["k"]), int(f["n"])
        if (m, k, n) not in wanted:
            continue
        a0, b0 = C.operands(f)
        a, b = a0, b0
        mp, kp, np_ = (int(f[x + "_padded_length"]) for x in "mkn")
        pre1, pre2 = f["prepadded_mat1"] == "True", f["prepadded_mat2"] == "True"
        if pre1 and (mp or kp):  # pre-padded operands exist padded, as the comparison builds them
            a = P.pad_mat1(a, m_padded_length=mp, k_padded_length=kp)
        if pre2 and (kp or np_):
            b = P.pad_mat2(b, k_padded_length=kp, n_padded_length=np_)
        cpad = C.compiled_pad_mm(mp, kp, np_, pre1, pre2)
        _, code = run_and_get_code(cpad, a, b)
        code = "\n".join(code)
        if code_dir:
            with open(f"{code_dir}/{m}x{k}x{n}.py", "w") as fh:
                fh.write(code)
        bufs = sorted(set(re.findall(r"empty_strided_cuda\(\([^)]*\), \([^)]*\)", code)))
        calls = sorted(set(re.findall(r"(extern_kernels\.\w+|triton_\w+)\.run\(|(extern_kernels\.\w+)\(", code)))
        ap = a if pre1 or not (mp or kp) else padded(a0, m + mp, k + kp)
        bp = b if pre2 or not (kp or np_) else padded(b0, k + kp, n + np_)
        e = a.element_size()
        res = {
            "orig": triton.testing.do_bench(lambda: torch.mm(a0, b0), return_mode="median"),
            "compiled": triton.testing.do_bench(C.as_graph(lambda: cpad(a, b)), return_mode="median"),
            "mm packed C": triton.testing.do_bench(mm_into(ap, bp, n + np_), return_mode="median"),
            "mm 128B C": triton.testing.do_bench(mm_into(ap, bp, inductor_stride(n + np_, e)), return_mode="median"),
        }
        print(f"{f['mat1_dtype']} m={m} k={k} n={n} pads=({mp},{kp},{np_}) strides a{tuple(a0.stride())} "
              f"b{tuple(b0.stride())} tf32={f['using_tf32']} prepadded=({pre1},{pre2})")
        print("  inductor buffers:", bufs)
        print("  calls:", [c for pair in calls for c in pair if c])
        print("  " + "  ".join(f"{k_}={v:.3f}ms" for k_, v in res.items()), flush=True)


if __name__ == "__main__":
    main()
