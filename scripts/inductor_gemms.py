#!/usr/bin/env python3
"""The GEMMs scripts/inductor_eval.py measures, before any torch: the built-in held-out list, a
`--gemms` file read and checked line by line, a GEMM in words, and the features a handler decides
on for it. No torch.
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ah_inductor.choices import is_contiguous  # noqa: E402  (the handler's own; imports no torch)


def g(model, what, op, m, k, n, dtype, tf32=False, ta=False, tb=False, batch=1):
    """A planned GEMM, as a `--gemms` line holds it (named "MODEL WHAT")."""
    return {"name": f"{model} {what}", "op": op, "batch": batch, "m": m, "k": k, "n": n,
            "dtype": dtype, "tf32": tf32, "trans_a": ta, "trans_b": tb}


def holdout_gemms():
    """Held-out real-model GEMMs (architectures of holdout.toml). Forward x @ W.t() is (m=tokens,
    k=in, n=out, trans_b); input gradient dy @ W is (tokens, out, in); weight gradient dy.t() @ x
    is (out, tokens, in, trans_a). Decode m = batch of sequences (1..256)."""
    bf, fp, f32 = "bfloat16", "float16", "float32"
    return [
        g("qwen2.5-0.5b", "mlp up fwd, 8x512", "mm", 4096, 896, 4864, bf, tb=True),
        g("qwen2.5-1.5b", "gate decode m=1", "mm", 1, 1536, 8960, bf, tb=True),
        g("qwen2.5-1.5b", "down decode m=16", "mm", 16, 8960, 1536, bf, tb=True),
        g("llama-3.2-1b", "down grad_input, 4x1024", "mm", 4096, 2048, 8192, bf),
        g("llama-3.2-1b", "q grad_weight, 4x1024", "mm", 2048, 4096, 2048, bf, ta=True),
        g("llama-3.2-3b", "o fwd prefill 1x2048", "mm", 2048, 3072, 3072, fp, tb=True),
        g("tinyllama-1.1b", "lm head fwd, 1x2048", "mm", 2048, 2048, 32000, bf, tb=True),
        g("gemma-2-2b", "q decode m=1", "mm", 1, 2304, 2048, bf, tb=True),
        g("gemma-2-2b", "gate decode m=64", "mm", 64, 2304, 9216, bf, tb=True),
        g("gemma-7b", "down grad_input, 8x1024", "mm", 8192, 3072, 24576, bf),
        g("phi-4", "qkv fwd, 1x2048", "mm", 2048, 5120, 7680, bf, tb=True),
        g("phi-4", "gate_up decode m=128", "mm", 128, 5120, 35840, bf, tb=True),
        g("starcoder2-3b", "c_fc fwd (bias), 2x2048", "addmm", 4096, 3072, 12288, fp, tb=True),
        g("starcoder2-3b", "c_proj grad_weight, 2x2048", "mm", 3072, 4096, 12288, fp, ta=True),
        g("whisper-medium", "fc1 fwd (bias), enc 4x1500", "addmm", 6000, 1024, 4096, fp, tb=True),
        g("whisper-medium", "fc2 decode (bias) m=8", "addmm", 8, 4096, 1024, fp, tb=True),
        g("mbart-large-50", "fc1 fwd (bias) TF32, 2x1024", "addmm", 2048, 1024, 4096, f32, tf32=True, tb=True),
        g("mbart-large-50", "q fwd fp32, 1x512", "mm", 512, 1024, 1024, f32, tb=True),
        g("modernbert-base", "Wqkv fwd, 8x512", "mm", 4096, 768, 2304, bf, tb=True),
        g("modernbert-large", "Wi fwd TF32, 2x1024", "mm", 2048, 1024, 5248, f32, tf32=True, tb=True),
        g("flan-t5-xl", "wi decode fp32 m=32", "mm", 32, 2048, 5120, f32, tb=True),
        g("dinov2-giant", "w_out grad_weight, 32x257", "mm", 1536, 8224, 4096, fp, ta=True),
        g("llama-3.2-1b", "attn q@k.t, 8x32 heads, seq 1024", "bmm", 1024, 64, 1024, bf, tb=True, batch=256),
        g("llama-3.2-1b", "attn p@v, 8x32 heads, seq 1024", "bmm", 1024, 1024, 64, bf, batch=256),
        g("qwen2.5-1.5b", "attn decode q@k.t, 4x12 heads, ctx 2048", "bmm", 1, 128, 2048, bf, tb=True, batch=48),
    ]


DTYPES = ("float16", "bfloat16", "float32")


class GemmFileError(ValueError):
    """A line of a GEMM file (`--gemms`) that is not a GEMM; the message names file and line."""


def read_gemms(path, source=None, lines=None):
    """The GEMMs of a JSON-lines file (lines `{"op","m","k","n","dtype",...}`), with their
    defaults; a bad line raises GemmFileError naming the file and the line. `source` (the
    path as shown) adds `"source": "FILE:LINE"` to each GEMM. `lines`, a list of (first, last),
    1-based and inclusive, reads only those lines (`--lines`)."""
    out = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip() or (lines and not any(a <= i <= b for a, b in lines)):
                continue
            where = f"{source or path}:{i}"
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                raise GemmFileError(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(d, dict):
                raise GemmFileError(f"{where}: not a JSON object")
            check_gemm_fields(d, where)
            d.setdefault("name", f"line {i}")
            d["line"] = i
            d.setdefault("batch", 1)
            for key in ("tf32", "trans_a", "trans_b"):
                d[key] = bool(d.get(key, False))
            if source:
                d["source"] = where
            out.append(d)
    return out


def check_gemm_fields(d, where):
    """Raises GemmFileError when `d` lacks a field or holds one that no GEMM has."""
    for key in ("op", "m", "k", "n", "dtype"):
        if key not in d:
            raise GemmFileError(f"{where}: no {key!r}")
    for key in ("m", "k", "n", "batch"):
        v = d.get(key, 1)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise GemmFileError(f"{where}: {key!r} is {v!r}, not a positive integer")
    if d["dtype"] not in DTYPES:
        raise GemmFileError(f"{where}: dtype {d['dtype']!r} is not one of {', '.join(DTYPES)}")
    if not isinstance(d["op"], str):
        raise GemmFileError(f"{where}: op {d['op']!r} is not a string")


def handler_features(gm):
    """The features the handler computes for `gm` (choices.features on Inductor's nodes), from the
    GEMM's description: operands laid out as gemm_fn makes them."""
    m, k, n = gm["m"], gm["k"], gm["n"]
    s1 = (1, m) if gm["trans_a"] else (k, 1)
    s2 = (1, k) if gm["trans_b"] else (n, 1)
    dtype = f"torch.{gm['dtype']}"
    contig = lambda r, c, s: is_contiguous(r, c, *s)  # noqa: E731
    return {"m": m, "k": k, "n": n, "batch": gm["batch"], "op": gm["op"],
            "mat1_dtype": dtype, "mat2_dtype": dtype, "mat1_stride_0": s1[0], "mat1_stride_1": s1[1],
            "mat2_stride_0": s2[0], "mat2_stride_1": s2[1], "mat1_iscontig": contig(m, k, s1),
            "mat2_iscontig": contig(k, n, s2),
            "using_tf32": bool(gm["tf32"]) if gm["dtype"] == "float32" else "not_float_32"}


def pad_mm_alignment(dtype):
    """The alignment Inductor's pad_mm pass pads a GEMM's sides to, in elements
    (torch/_inductor/fx_passes/pad_mm.py, `get_alignment_size_dtype`): 8 in half precision, 4 in
    fp32."""
    return 8 if dtype in ("float16", "bfloat16") else 4


def padded_by_pad_mm(gm):
    """The GEMM the handler sees when Inductor's pad_mm pass pads `gm` first, or None when every
    side is aligned already. pad_mm pads only where its benchmark or heuristic says padding pays,
    so this is what may happen, not what will: m, k and n rounded up to the alignment, and each
    operand it pads materialised row-major (its transpose flag off). Checked against every pool
    record Inductor padded (python/tests/test_eval_preview.py)."""
    a = pad_mm_alignment(gm["dtype"])
    m, k, n = (-(-gm[d] // a) * a for d in ("m", "k", "n"))
    if (m, k, n) == (gm["m"], gm["k"], gm["n"]):
        return None
    mat1 = (m, k) != (gm["m"], gm["k"])
    mat2 = (k, n) != (gm["k"], gm["n"])
    return dict(gm, m=m, k=k, n=n, trans_a=gm["trans_a"] and not mat1,
                trans_b=gm["trans_b"] and not mat2)


def describe(gm):
    t = ("T" if gm["trans_a"] else "N") + ("T" if gm["trans_b"] else "N")
    b = f"{gm['batch']}x" if gm["op"] == "bmm" else ""
    tf = "+tf32" if gm["dtype"] == "float32" and gm["tf32"] else ""
    return f"{gm['op']} {b}{gm['m']}x{gm['k']}x{gm['n']} {gm['dtype']}{tf} {t}"
