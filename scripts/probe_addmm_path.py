#!/usr/bin/env python3
"""Why does one fp32 addmm run 2.15x faster under max-autotune than without, when both pick cuBLAS?

Blind set 24's PPO GEMM (addmm 256x3136x512 fp32, TF32 off, weight transposed) ran 0.068 ms
compiled without max-autotune and with our handler (cuBLAS only), and 0.032 ms under default
max-autotune, whose pick was also `extern_addmm`. Set 22b's addmm 499x512x3072 fp32 went the other
way (0.046 against 0.051 ms). This compiles each GEMM under three settings (none; max-autotune
with ATen choices only, so that `addmm` and `bias_addmm` are the whole list; full max-autotune with
one ptxas) and times, by CUDA-graph replay alternated as inductor_eval.py does:

- each compiled graph, with the extern call Inductor wrote (its output code is saved);
- eager variants of the same product: torch.addmm with the 1-D bias (cuBLASLt's bias epilogue),
  with the bias expanded to 2-D (stride 0), with a contiguous 2-D copy of it, and mm then add.

Prints one table per GEMM; writes each setting's output code and a JSON of the times to --out.
Usage: probe_addmm_path.py --out DIR [--rounds 40]
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inductor_harness as H  # noqa: E402  (the warm process: CUDA-graph capture, warmed clocks, alternation)

GEMMS = [  # (label, m, k, n, dtype, tf32)
    ("ppo 256x3136x512 fp32", 256, 3136, 512, "float32", False),
    ("set22b 499x512x3072 fp32", 499, 512, 3072, "float32", False),
    ("ppo 256x3136x512 fp32+tf32", 256, 3136, 512, "float32", True),
    ("panns 32x2048x527 bf16", 32, 2048, 527, "bfloat16", False),
]
SETTINGS = {
    "none": {},
    "aten_only": {"max_autotune_gemm": True, "max_autotune_gemm_backends": "ATEN"},
    "max_autotune_ptxas": None,  # inductor_eval's own setting (full list, one ptxas)
}


def extern_lines(code):
    return [ln.strip() for ln in code.splitlines() if re.search(r"extern_kernels\.|addmm|\bmm\(", ln)
            and not ln.strip().startswith("#")]


def probe(ind, label, m, k, n, dtype, tf32, out_dir):
    torch = ind.torch
    from torch._inductor.utils import run_and_get_code

    torch.backends.cuda.matmul.allow_tf32 = tf32
    dt = getattr(torch, dtype)
    x = torch.randn(m, k, device="cuda", dtype=dt)
    w = torch.randn(n, k, device="cuda", dtype=dt)
    b = torch.randn(n, device="cuda", dtype=dt)
    wt = w.t()
    calls = 20
    eager = {
        "eager addmm(b 1-D)": lambda: torch.addmm(b, x, wt),
        "eager addmm(b expanded 2-D)": lambda: torch.addmm(b.expand(m, n), x, wt),
        "eager addmm(b contiguous 2-D)": (lambda c: lambda: torch.addmm(c, x, wt))(b.expand(m, n).contiguous()),
        "eager mm + add": lambda: torch.mm(x, wt) + b,
    }
    graphs, report = {}, {"gemm": label, "code": {}, "picked": {}}
    for name, fn in eager.items():
        graphs[name] = ind.capture(fn, calls)
    for s, opts in SETTINGS.items():
        ind.fresh()
        rec = {}
        with ind.setting(s if opts is None else "none", rec) as default_opts:
            compiled = torch.compile(lambda c, p, q: torch.addmm(c, p, q), dynamic=False, fullgraph=True,
                                     options=default_opts if opts is None else opts)
            _, codes = run_and_get_code(compiled, b, x, wt)
            graphs[f"compiled {s}"] = ind.capture(lambda: compiled(b, x, wt), calls)
        safe = re.sub(r"[^A-Za-z0-9]+", "_", label)
        with open(os.path.join(out_dir, f"{safe}.{s}.py"), "w") as f:
            f.write("\n\n".join(codes))
        report["code"][s] = [ln for c in codes for ln in extern_lines(c)]
        report["picked"][s] = rec.get("picked", {}).get("none" if opts is not None else s)
    ind.fresh()
    report["run_ms"] = ind.alternate({k: g.replay for k, g in graphs.items()}, calls)
    return report


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=40)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ind = H.Inductor({}, a.rounds)
    import torch

    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"preferred blas {torch.backends.cuda.preferred_blas_library()}")
    reports = []
    for gemm in GEMMS:
        r = probe(ind, *gemm, a.out)
        reports.append(r)
        print(f"\n## {r['gemm']}\n\n| variant | ms |\n|---|---|")
        for k, v in r["run_ms"].items():
            print(f"| {k} | {v:.4f} |")
        for s, lines in r["code"].items():
            print(f"{s}: picked {r['picked'][s]}; " + " ; ".join(lines))
    with open(os.path.join(a.out, "probe_addmm_path.json"), "w") as f:
        json.dump(reports, f, indent=1)


if __name__ == "__main__":
    main()
