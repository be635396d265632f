#!/usr/bin/env python3
"""Which of Inductor's two cuBLAS calls for addmm is faster, over a grid and every logged addmm?

Inductor offers addmm two ATen choices: `bias_addmm` (the 1-D bias: cuBLASLt's bias epilogue, the
call Inductor makes without max-autotune) and `addmm` (the bias expanded to 2-D with stride 0:
ATen copies it into the output and runs the GEMM with beta 1). probe_addmm_path.py showed that
each compiled call runs as its eager twin, and that either can be 2x faster than the other. This
times the two eager calls with inductor_harness.py's timer (CUDA-graph replay of about 1 ms of calls,
clocks warmed for 50 ms, the two alternated over --rounds rounds, median) for:

- every addmm GEMM of the held-out GEMM files given (JSON lines with op addmm) and of the
  inductor_mm logs given (their features: m, k, n, dtype, TF32, layout), in that order;
- then a grid (--grid): "standard", fp32 (TF32 off and on), bf16 and fp16, m over 1..65536, (k, n)
  pairs of real layers; "long-k", fp32 (TF32 off and on) and bf16, k over 8k..64k into outputs
  of 64..16384 x 64..1024; "boundary", fp32 (TF32 off and on), k exactly on the handler's bound
  for the expanded call (judged by scripts/bias_rule.py); "per-tile", the same outputs with k at
  1.5 to 8 times the bound (PER_TILE_MULTIPLES); "small-m", m of 16-56 over other widths, k at
  1.5 to 8 times the bound, where EXPANDED_BIAS_MIN_M draws its edge; "half-unaligned", bf16
  and fp16 with k not a multiple of 8 (1023-65535) beside aligned controls, m of 1-1024;
  "half-unaligned-check", the same kind of grid sharing no k, m or n with it, which judged
  `install(half_unaligned_bias=True)` (scripts/bias_rule.py); "half-unaligned-recheck", a third
  sharing none with either, with m on both sides of the rule's smallest m (HALF_UNALIGNED_MIN_M).

Writes one JSON line per GEMM (`m k n dtype tf32 trans_a trans_b source ms_bias ms_expanded`)
to --out and prints a summary per dtype: how often and by how much each call wins.
Usage: probe_addmm_bias.py --out FILE.jsonl [--logs LOG ...] [--gemms FILE.jsonl ...] [--rounds 15]
                           [--grid standard|long-k|boundary|per-tile|small-m|half-unaligned|
                                   half-unaligned-check|half-unaligned-recheck|none]
"""
import argparse
import csv
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inductor_harness as H  # noqa: E402  (the warm process: CUDA-graph capture, warmed clocks, alternation)

GRID_M = [1, 8, 32, 64, 128, 192, 256, 320, 384, 512, 768, 1024, 2048, 4096, 16384, 65536]
GRID_KN = [(768, 768), (768, 3072), (3072, 768), (1024, 4096), (4096, 14336), (5120, 5120),
           (512, 3072), (3136, 512), (48, 32), (263, 512), (2048, 527), (4096, 32000)]
GRID_DTYPES = [("float32", False), ("float32", True), ("bfloat16", False), ("float16", False)]
# The long-k grid: contractions of 8k-64k over outputs of a few to a few hundred tiles, where the
# first grid has no GEMM (a long reduction into a small output is where split-K pays).
LONG_K_M = [64, 256, 1024, 4096, 16384]
LONG_K_K = [8192, 16384, 32768, 65536]
LONG_K_N = [64, 128, 256, 512, 1024]
LONG_K_DTYPES = [("float32", False), ("float32", True), ("bfloat16", False)]
# The boundary grid: fp32 GEMMs whose k sits exactly on the handler's bound for the expanded call
# (`expanded_bias_call`: k > K_PER_TILE x tiles), where `>=` and `>` differ (scripts/bias_rule.py).
BOUNDARY_M = [16, 32, 64, 128, 192, 256, 384, 512, 1024, 2048]
BOUNDARY_N = [32, 101, 256, 512, 768, 1000, 1024, 2048]
# The per-tile grid: the boundary grid's outputs with k at these multiples of the bound, where a
# higher bound would hand GEMMs back to the 1-D call (`bias_rule.py` scans the same multiples).
PER_TILE_MULTIPLES = (1.5, 2, 3, 4, 6, 8)
# The small-m grid: short outputs (m of 16-56, the edge EXPANDED_BIAS_MIN_M draws) over widths the
# other grids lack, k above the bound (`bias_rule.py` scans the same edge: MIN_M_CANDIDATES).
SMALL_M = [16, 20, 24, 28, 32, 40, 48, 56]
SMALL_M_N = [64, 128, 384, 640, 1536, 4096]
SMALL_M_MULTIPLES = (1.5, 2, 4, 8)
# The half-unaligned grid: bf16 and fp16 over contractions that are not a multiple of 8, where
# blind set 74's cryoDRGN addmm (8 x 51433 x 1024 fp16) ran its 1-D call 1.33x the expanded one,
# each beside an aligned control (registered in docs/results.md for the sixty-first session).
HALF_UNALIGNED_M = [1, 8, 16, 32, 64, 128, 256, 1024]
HALF_UNALIGNED_K = [1023, 4097, 8191, 16385, 51433, 65535]
HALF_ALIGNED_K = [1024, 4096, 16384, 51432]
HALF_UNALIGNED_N = [256, 1024, 4096]
HALF_DTYPES = [("bfloat16", False), ("float16", False)]
# The half-unaligned check grid: registered in docs/results.md (sixty-first session) with the rule
# it judges, before its data, sharing no k, m or n with the grid above, which the rule was read from.
CHECK_M = [4, 48, 96, 512]
CHECK_UNALIGNED_K = [2049, 6143, 12289, 24577, 40961]
CHECK_ALIGNED_K = [2048, 6144, 24576]
CHECK_N = [512, 2048, 8192]
# The recheck grid: registered in docs/results.md (sixty-first session) before its data, after the
# check grid failed the rule without a smallest m; it shares no k, m or n with the two grids above,
# and puts m on both sides of HALF_UNALIGNED_MIN_M (32) and k on both sides of its smallest k.
RECHECK_M = [2, 12, 24, 40, 80, 192, 384, 2048]
RECHECK_UNALIGNED_K = [3071, 4099, 10241, 20483, 32771, 49157]
RECHECK_ALIGNED_K = [3072, 10240, 32768]
RECHECK_N = [384, 1536, 6144]
# name -> (m, unaligned k, aligned k, n) of the three half-precision grids above.
HALF_GRIDS = {
    "half-unaligned": (HALF_UNALIGNED_M, HALF_UNALIGNED_K, HALF_ALIGNED_K, HALF_UNALIGNED_N),
    "half-unaligned-check": (CHECK_M, CHECK_UNALIGNED_K, CHECK_ALIGNED_K, CHECK_N),
    "half-unaligned-recheck": (RECHECK_M, RECHECK_UNALIGNED_K, RECHECK_ALIGNED_K, RECHECK_N),
}


def grid_rows(source, dtypes, ms, kns):
    for dtype, tf32 in dtypes:
        for m in ms:
            for k, n in kns:
                if m * max(k, n) <= 2**28 and 2 * m * k * n <= 4e10:
                    yield {"m": m, "k": k, "n": n, "dtype": dtype, "tf32": tf32,
                           "trans_a": False, "trans_b": True, "source": source}


def boundary_rows(multiples=(1,), source="grid-boundary", ms=BOUNDARY_M, ns=BOUNDARY_N):
    """fp32 GEMMs (TF32 on and off) of `ms` x `ns` with k at `multiples` of the bound (exactly on
    it by default), where the handler's rule can pick the expanded call at all."""
    from ah_inductor.choices import (EXPANDED_BIAS_K_PER_TILE, EXPANDED_BIAS_MAX_TILES_TF32,
                                     EXPANDED_BIAS_MIN_M, output_tiles)
    for tf32 in (True, False):
        for m in ms:
            for n in ns:
                tiles = output_tiles(m, n)
                if m < EXPANDED_BIAS_MIN_M or (tf32 and tiles > EXPANDED_BIAS_MAX_TILES_TF32):
                    continue
                for multiple in multiples:
                    k = round(multiple * EXPANDED_BIAS_K_PER_TILE[tf32] * tiles)
                    if m * max(k, n) <= 2**28:
                        yield {"m": m, "k": k, "n": n, "dtype": "float32", "tf32": tf32,
                               "trans_a": False, "trans_b": True, "source": source}


def grid(name):
    """The GEMMs of grid `name`: "standard", "long-k", "boundary", "per-tile", "small-m",
    "half-unaligned", "half-unaligned-check", "half-unaligned-recheck" or "none"."""
    if name == "standard":
        return grid_rows("grid", GRID_DTYPES, GRID_M, GRID_KN)
    if name == "long-k":
        kns = [(k, n) for k in LONG_K_K for n in LONG_K_N]
        return grid_rows("grid-long-k", LONG_K_DTYPES, LONG_K_M, kns)
    if name == "boundary":
        return boundary_rows()
    if name == "per-tile":
        return boundary_rows(PER_TILE_MULTIPLES, "grid-per-tile")
    if name == "small-m":
        return boundary_rows(SMALL_M_MULTIPLES, "grid-small-m", SMALL_M, SMALL_M_N)
    if name in HALF_GRIDS:
        ms, unaligned, aligned, ns = HALF_GRIDS[name]
        return grid_rows(f"grid-{name}", HALF_DTYPES, ms, [(k, n) for k in unaligned + aligned for n in ns])
    return iter(())


def from_logs(paths):
    """The addmm GEMMs of inductor_mm logs, once each."""
    for path in paths:
        with open(path) as f:
            f.readline()  # the log's JSON header line
            seen = set()
            for r in csv.DictReader(f):
                if r["op"] != "addmm":
                    continue
                key = tuple(r[c] for c in ("m", "k", "n", "mat1_dtype", "using_tf32", "mat1_stride_0",
                                           "mat2_stride_0"))
                if key in seen:
                    continue
                seen.add(key)
                m, k, n = int(r["m"]), int(r["k"]), int(r["n"])
                yield {"m": m, "k": k, "n": n, "dtype": r["mat1_dtype"].removeprefix("torch."),
                       "tf32": r["using_tf32"] == "True",
                       "trans_a": int(r["mat1_stride_0"]) == 1 and m > 1,
                       "trans_b": int(r["mat2_stride_0"]) == 1 and k > 1, "source": path}


def from_gemms(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                g = json.loads(line)
                if g.get("op") == "addmm":
                    yield {"m": g["m"], "k": g["k"], "n": g["n"], "dtype": g["dtype"],
                           "tf32": bool(g.get("tf32")), "trans_a": bool(g.get("trans_a")),
                           "trans_b": bool(g.get("trans_b")), "source": path}


def operand(rows, cols, transposed, dtype):
    if transposed:
        return torch.randn(cols, rows, device="cuda", dtype=dtype).t()
    return torch.randn(rows, cols, device="cuda", dtype=dtype)


def time_pair(ind, g):
    """Median ms per call of the two calls of GEMM `g`, timed by `ind` (inductor_harness's)."""
    torch.backends.cuda.matmul.allow_tf32 = g["tf32"]
    dt = getattr(torch, g["dtype"])
    a = operand(g["m"], g["k"], g["trans_a"], dt)
    b = operand(g["k"], g["n"], g["trans_b"], dt)
    bias = torch.randn(g["n"], device="cuda", dtype=dt)
    wide = bias.expand(g["m"], g["n"])
    one_d = lambda: torch.addmm(bias, a, b)  # noqa: E731
    calls = max(1, min(20, round(1.0 / max(ind.probe_ms(one_d), 1e-3))))  # about 1 ms of calls
    graphs = {"bias": ind.capture(one_d, calls),
              "expanded": ind.capture(lambda: torch.addmm(wide, a, b), calls)}
    times = ind.alternate({k: gr.replay for k, gr in graphs.items()}, calls, warm_s=0.05)
    return {f"ms_{k}": v for k, v in times.items()}


def summary(rows):
    groups = {}
    for r in rows:
        key = r["dtype"] + ("+tf32" if r["dtype"] == "float32" and r["tf32"] else "")
        groups.setdefault(key, []).append(r["ms_expanded"] / r["ms_bias"])
    print("| dtype | GEMMs | expanded faster by >3 % | bias faster by >3 % | best expanded | best bias |")
    print("|---|---|---|---|---|---|")
    for key, ratios in sorted(groups.items()):
        print(f"| {key} | {len(ratios)} | {sum(x < 0.97 for x in ratios)} | {sum(x > 1.03 for x in ratios)} "
              f"| {min(ratios):.3f} | {max(ratios):.3f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--logs", nargs="*", default=[])
    p.add_argument("--gemms", nargs="*", default=[])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--grid", choices=["standard", "long-k", "boundary", "per-tile", "small-m", *HALF_GRIDS,
                                        "none"], default="standard",
                   help="which grid to time after the held-out GEMMs and logs (default: standard)")
    a = p.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    ind = H.Inductor({}, a.rounds)
    rows, t0 = [], time.perf_counter()
    with open(a.out, "w") as out:
        for g in [*from_gemms(a.gemms), *from_logs(a.logs), *grid(a.grid)]:
            g.update(time_pair(ind, g))
            rows.append(g)
            out.write(json.dumps(g) + "\n")
            if len(rows) % 100 == 0:
                print(f"{len(rows)} GEMMs, {time.perf_counter() - t0:.0f} s", flush=True)
    summary(rows)


if __name__ == "__main__":
    main()
