#!/usr/bin/env python3
"""Per-call time of the generated PyTorch artifact for PadMMA100, next to the generated Rust code.

Runs the artifact that `ah-codegen` makes from generated/ah-heuristics/models/PadMMA100.model.json
against the torch stub of crates/ah-codegen/tests/python_stub (no torch needed), on the same
contexts as the criterion bench (`cargo bench -p ah-heuristics`: every 42nd row of
../shared/data/pytorch/pad_mm_a100.txt, 256 contexts), and prints a table with the Rust numbers
criterion saved under target/criterion (run `cargo bench -p ah-heuristics` first for those).

Two Python numbers: `get_decision` alone (PyTorch computes the augment operations before asking the
heuristic), and augment operations (PyTorch's pad_mm_operations, as AutoHeuristic.get_choice
applies them) plus `get_decision`: the Rust decision includes the operations.

Usage: python3 scripts/bench_python_artifact.py [--artifact _PadMMA100.py] [--repeat N]
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "crates/ah-codegen/tests/python_stub"))

from torch._inductor.autoheuristic.autoheuristic_utils import AHContext, AHMetadata, AHOperation  # noqa: E402

MODEL = os.path.join(ROOT, "generated/ah-heuristics/models/PadMMA100.model.json")
LOG = os.path.join(ROOT, "../shared/data/pytorch/pad_mm_a100.txt")


def pad_mm_operations():
    """PyTorch's pad_mm augment operations (spec section 4), in order."""
    ops = [
        AHOperation("m*k", lambda d: d["m"] * d["k"]),
        AHOperation("m*n", lambda d: d["m"] * d["n"]),
        AHOperation("k*n", lambda d: d["k"] * d["n"]),
        AHOperation("k/(m*n)", lambda d: d["k"] / (d["m"] * d["n"])),
        AHOperation(
            "bfloat_perf_hit",
            lambda d: d["k"] > d["m"] * 1024 and d["k"] > d["n"] * 1024 and str(d["mat1_dtype"]) == "torch.bfloat16",
            is_categorical=True,
        ),
        AHOperation(
            "arith_intensity",
            lambda d: 0.0
            if d["m"] == 0 or d["k"] == 0 or d["n"] == 0
            else d["m"] * d["k"] * d["n"] / (d["m"] * d["k"] + d["k"] * d["n"] + d["m"] * d["n"]),
        ),
        AHOperation(
            "mat1_innermost_needs_padding",
            lambda d: (d["mat1_stride_0"] == 1 and d["m_padded_length"] != 0)
            or (d["mat1_stride_1"] == 1 and d["k_padded_length"] != 0),
            is_categorical=True,
        ),
        AHOperation(
            "mat2_innermost_needs_padding",
            lambda d: (d["mat2_stride_0"] == 1 and d["k_padded_length"] != 0)
            or (d["mat2_stride_1"] == 1 and d["n_padded_length"] != 0),
            is_categorical=True,
        ),
        AHOperation(
            "num_dims_needs_padding",
            lambda d: sum(1 for x in ("m", "k", "n") if d[f"{x}_padded_length"] != 0),
        ),
    ]
    for dim in ("m", "k", "n"):
        for mult in (2, 4, 8, 16, 32):
            ops.append(AHOperation(f"{dim}_multiple_{mult}", lambda d, dim=dim, mult=mult: d[dim] % mult == 0, True))
    ops.append(AHOperation("mat1_iscontig", lambda d: d["mat1_stride_0"] == d["k"] and d["mat1_stride_1"] == 1, True))
    ops.append(AHOperation("mat2_iscontig", lambda d: d["mat2_stride_0"] == d["n"] and d["mat2_stride_1"] == 1, True))
    return ops


def parse(text):
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def contexts():
    with open(LOG) as f:
        meta = json.loads(f.readline())
        header = f.readline().strip().split(",")[:-2]
        rows = [line.strip().split(",") for line in f if line.strip()]
    cats = set(meta["categorical_features"])
    out = []
    for row in rows[:: 2 * 3 * 7][:256]:
        ctx = AHContext()
        for name, text in zip(header, row):
            ctx.add_feature(name, parse(text), is_categorical=name in cats)
        out.append(ctx)
    return out


def artifact_path(given):
    if given:
        return given
    out = tempfile.mkdtemp()
    exe = os.path.join(ROOT, "target/release/ah-codegen")
    cmd = [exe] if os.path.exists(exe) else ["cargo", "run", "-q", "--release", "-p", "ah-codegen", "--"]
    subprocess.run(cmd + [MODEL, "--no-rust", "--python", out], check=True, cwd=ROOT, stderr=subprocess.DEVNULL)
    return os.path.join(out, "_PadMMA100.py")


def criterion_ns(name):
    path = os.path.join(ROOT, "target/criterion", name, "new/estimates.json")
    try:
        with open(path) as f:
            e = json.load(f)
        return e["mean"]["point_estimate"], e["mean"]["confidence_interval"]
    except (OSError, KeyError, ValueError):
        return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--artifact", help="an existing _PadMMA100.py (default: generate one)")
    ap.add_argument("--repeat", type=int, default=5, help="timing repeats; the best is reported")
    args = ap.parse_args()
    if not os.path.exists(LOG):
        print(f"skipped: {LOG} not found", file=sys.stderr)
        return 0
    path = artifact_path(args.artifact)
    spec = importlib.util.spec_from_file_location("_PadMMA100", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    heuristic = module.PadMMA100()
    choices = ["orig", "pad"]
    ctxs = contexts()
    ops = pad_mm_operations()
    metadata = AHMetadata(166912, (8, 0), choices, "pad_mm")
    assert heuristic.check_precondition(metadata, ctxs[0])

    def fresh(ctx):
        c = AHContext()
        c.features = ctx.features
        c.context_dict = dict(ctx.context_dict)
        return c

    augmented = [fresh(c) for c in ctxs]
    for c in augmented:
        c.apply_operations(ops)

    def decide_only():
        for c in augmented:
            heuristic.get_decision(c, choices)

    def ops_and_decide():
        for c in ctxs:
            d = fresh(c)
            d.apply_operations(ops)
            heuristic.get_decision(d, choices)

    def copy_only():
        for c in ctxs:
            fresh(c)

    n = len(ctxs)
    number = 40
    t_decide = min(timeit.repeat(decide_only, number=number, repeat=args.repeat)) / (number * n) * 1e9
    t_copy = min(timeit.repeat(copy_only, number=number, repeat=args.repeat)) / (number * n) * 1e9
    t_full = min(timeit.repeat(ops_and_decide, number=number, repeat=args.repeat)) / (number * n) * 1e9 - t_copy
    rust, ci = criterion_ns("pad_mma100 generated decide (one context)")
    model, _ = criterion_ns("pad_mma100 in-memory model decide (ModelEvaluator)")
    print(f"One pad_mm decision (PadMMA100, {n} contexts of pad_mm_a100, Python {sys.version.split()[0]})")
    print()
    print("| implementation | ns per decision | vs generated Rust |")
    print("|---|---:|---:|")

    def row(name, ns):
        ratio = f"{ns / rust:.0f}x" if rust else "-"
        print(f"| {name} | {ns:,.1f} | {ratio} |")

    if rust:
        print(f"| generated Rust, augment ops included (criterion mean, CI {ci['lower_bound']:.1f}-{ci['upper_bound']:.1f}) | {rust:,.1f} | 1x |")
    else:
        print("| generated Rust | (run `cargo bench -p ah-heuristics` first) | - |")
    if model:
        row("in-memory model, ModelEvaluator (Rust)", model)
    row("Python artifact, get_decision only (ops precomputed)", t_decide)
    row("Python artifact, augment ops + get_decision", t_full)
    return 0


if __name__ == "__main__":
    sys.exit(main())
