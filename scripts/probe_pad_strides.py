#!/usr/bin/env python3
"""Why Inductor's compiled pad_mm can be faster than eager pad_mm (GPU machine, one-off probe).

For a few inputs of an ah-collect pad_mm log, prints the buffers Inductor allocates for its
compiled pad function (`empty_strided_cuda` lines of the output code: comprehensive padding may
round row strides up to 128 bytes) and times, with triton's do_bench (median, ms):
  eager     pad_mm's own eager pad function (contiguous padded copies) + mm
  compiled  Inductor's compiled pad function (scripts/compare_pytorch_pad_mm.py builds it)
  aligned   contiguous padded copies whose row stride is rounded up to 128 bytes, + mm
Usage: probe_pad_strides.py LOG M,K,N [M,K,N ...]
"""
import re
import sys

import torch
import triton.testing
from torch._inductor.utils import run_and_get_code

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import compare_pytorch_pad_mm as C  # noqa: E402


def padded_copy(x, rows, cols, align):
    stride = -(-cols // align) * align
    out = torch.zeros((rows, stride), dtype=x.dtype, device=x.device)[:, :cols]
    out[: x.shape[0], : x.shape[1]].copy_(x)
    return out


def main():
    log, wanted = sys.argv[1], [tuple(map(int, s.split(","))) for s in sys.argv[2:]]
    names, groups = C.read_log(log)
    for key, times in groups.items():
        f = dict(zip(names, key))
        if (int(f["m"]), int(f["k"]), int(f["n"])) not in wanted:
            continue
        orig, pad = C.make_fns(f, pad_copy="eager")
        m, k, n = int(f["m"]), int(f["k"]), int(f["n"])
        mp, kp, np_ = int(f["m_padded_length"]), int(f["k_padded_length"]), int(f["n_padded_length"])
        dtype = getattr(torch, f["mat1_dtype"].split(".")[1])
        a = torch.randn(m, k, dtype=dtype, device="cuda")
        b = torch.randn(k, n, dtype=dtype, device="cuda")
        cpad = C.compiled_pad_mm(mp, kp, np_, False, False)
        _, code = run_and_get_code(cpad, a, b)
        bufs = sorted(set(re.findall(r"empty_strided_cuda\(\([^)]*\), \([^)]*\)", "\n".join(code))))
        a2, b2 = padded_copy(a, m + mp, k + kp, 1), padded_copy(b, k + kp, n + np_, 1)
        a3, b3 = padded_copy(a, m + mp, k + kp, 128 // a.element_size()), padded_copy(b, k + kp, n + np_, 128 // a.element_size())
        res = {
            "orig": triton.testing.do_bench(orig, return_mode="median"),
            "eager": triton.testing.do_bench(pad, return_mode="median"),
            "compiled": triton.testing.do_bench(lambda: cpad(a, b), return_mode="median"),
            "mm contiguous": triton.testing.do_bench(lambda: torch.mm(a2, b2), return_mode="median"),
            "mm 128B rows": triton.testing.do_bench(lambda: torch.mm(a3, b3), return_mode="median"),
        }
        print(f"{f['mat1_dtype']} m={m} k={k} n={n} tf32={f['using_tf32']} logged={times}")
        print("  inductor buffers:", bufs)
        print("  " + "  ".join(f"{k_}={v:.3f}ms" for k_, v in res.items()), flush=True)


if __name__ == "__main__":
    main()
