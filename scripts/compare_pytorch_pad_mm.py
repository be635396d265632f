#!/usr/bin/env python3
"""Re-time a sample of ah-collect's pad_mm inputs with PyTorch's own benchmarker.

For each sampled input of an ah-collect log (and its FILE.medians.txt sidecar) this builds the
same tensors in PyTorch (shapes, transposes, dtype, TF32 setting), the same `orig` function
(`aten.mm`) and the same `pad` function as Inductor's `_should_pad` builds them (PyTorch's own
`pad_mat1` / `pad_mat2` / `pad_mm`, with the `write_pad` zeroing for prepadded operands), and
times both:

- min labelling:    PyTorch's `InductorBenchmarker.benchmark_gpu` (L2 flush, min of runs),
                    median over --reps calls, vs our logged rows (median over repetitions);
- median labelling: `triton.testing.do_bench(..., return_mode="median")` (the benchmarker of the
                    2024 datasets) vs our medians sidecar (median over repetitions).

Prints, per labelling, the median |ratio - 1| of our time to PyTorch's for `orig` and `pad`, and
how often both pick the same winner where PyTorch's two choices differ by more than 10 %.
With `--pad-copy compiled` (the default) `pad` is Inductor's compiled code for the same function,
replayed from a CUDA graph, as ah-collect times it since it copies a transposed operand with a
tiled kernel; `--pad-copy eager` is `_should_pad`'s eager function, for logs collected with
AH_PAD_COPY=vector16 (distribution version 1 of --shapes pytorch).
Usage: compare_pytorch_pad_mm.py LOG [--samples 120] [--reps 3] [--json OUT.json]
       [--no-median]        min labelling only (full-range kernels: halves the time)
       [--time-limit S]     stop re-timing after S seconds and report what was re-timed
       [--resume JSON]      keep the rows of an earlier --json of the same sample and re-time
                            only the inputs it lacks (a run cut by --time-limit, resumed)
       [--rescore JSON]     no GPU: PyTorch's times of an earlier --json against LOG's times of
                            the same inputs (a re-collection of the same seed by another build)
"""
import argparse
import json
import random
import statistics
import sys
import time
from collections import OrderedDict

import sidecar  # scripts/: a log's medians sidecar, plain or .gz

try:
    import torch
except ImportError:  # --rescore needs neither torch nor a GPU
    torch = None


def read_log(path):
    """A log's feature names and rows by input and choice; `path` (the log or its medians
    sidecar) is read from `path.gz` when only that exists (`sidecar.open_text`)."""
    with sidecar.open_text(path) as f:
        lines = f.read().splitlines()
    header = lines[1].split(",")
    groups = OrderedDict()
    for line in lines[2:]:
        parts = line.split(",")
        if len(parts) != len(header):
            continue
        key = tuple(parts[:-2])
        groups.setdefault(key, {}).setdefault(parts[-2], []).append(float(parts[-1]))
    return header[:-2], groups


def label(times):
    return statistics.median(times)


def compiled_pad_mm(mp, kp, np_, pre1, pre2):
    """Inductor's own code for `_should_pad`'s pad function (pad_mm's pad_mat1 / pad_mat2 / mm /
    slice, written out: dynamo does not trace into torch._inductor), so the padding copies are
    the Triton kernels a compiled program runs: a transposed operand is copied by a tiled
    kernel, where eager `constant_pad_nd` gathers it through its strides, several times slower."""
    import torch.nn.functional as F

    def pad_mm(x, y):
        if not pre1 and (mp or kp):
            x = F.pad(x, (0, kp, 0, mp))
        if not pre2 and (kp or np_):
            y = F.pad(y, (0, np_, 0, kp))
        r = torch.mm(x, y)
        if mp:
            r = r[:-mp, :]
        if np_:
            r = r[:, :-np_]
        return r

    # One compiled function per input: without a reset dynamo counts every input (new shapes,
    # new TF32 state) as a recompilation of the same code and stops at its recompile limit.
    torch._dynamo.reset()
    return torch.compile(pad_mm, dynamic=False, fullgraph=True)


def as_graph(fn):
    """`fn` captured in a CUDA graph: one launch per call, so a compiled wrapper's Python
    overhead does not leak into the GPU time of small kernels."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def operands(f):
    """The two operands of a logged input, with its shapes, strides and dtype, and PyTorch's TF32
    setting as the input was timed."""
    m, k, n = int(f["m"]), int(f["k"]), int(f["n"])
    dtype = getattr(torch, f["mat1_dtype"].split(".")[1])
    tl = (int(f["mat1_stride_0"]), int(f["mat1_stride_1"])) == (1, m) and (m, k) != (1, 1) and not (
        int(f["mat1_stride_1"]) == 1 and int(f["mat1_stride_0"]) == k
    )
    tr = (int(f["mat2_stride_0"]), int(f["mat2_stride_1"])) == (1, k) and not (
        int(f["mat2_stride_1"]) == 1 and int(f["mat2_stride_0"]) == n
    )
    if f["using_tf32"] in ("True", "False"):
        torch.backends.cuda.matmul.allow_tf32 = f["using_tf32"] == "True"
    else:
        torch.backends.cuda.matmul.allow_tf32 = True
    a = torch.randn(k, m, dtype=dtype, device="cuda").t() if tl else torch.randn(m, k, dtype=dtype, device="cuda")
    b = torch.randn(n, k, dtype=dtype, device="cuda").t() if tr else torch.randn(k, n, dtype=dtype, device="cuda")
    assert tuple(a.stride()) == (int(f["mat1_stride_0"]), int(f["mat1_stride_1"])), (a.stride(), f)
    assert tuple(b.stride()) == (int(f["mat2_stride_0"]), int(f["mat2_stride_1"])), (b.stride(), f)
    return a, b


def make_fns(f, pad_copy="compiled"):
    from torch._inductor.fx_passes import pad_mm as P

    a, b = operands(f)
    mp, kp, np_ = int(f["m_padded_length"]), int(f["k_padded_length"]), int(f["n_padded_length"])
    pre1, pre2 = f["prepadded_mat1"] == "True", f["prepadded_mat2"] == "True"

    def orig():
        torch.ops.aten.mm(a, b)

    mat1_pad, mat2_pad, fns = a, b, []
    if pre1 and (mp or kp):
        mat1_pad = P.pad_mat1(mat1_pad, m_padded_length=mp, k_padded_length=kp)

        def write_pad1():
            mat1_pad[-mp:, -kp:].fill_(0)

        fns.append(write_pad1)
    if pre2 and (kp or np_):
        mat2_pad = P.pad_mat2(mat2_pad, k_padded_length=kp, n_padded_length=np_)

        def write_pad2():
            mat2_pad[-kp:, -np_:].fill_(0)

        fns.append(write_pad2)
    if pad_copy == "compiled":
        import torch._inductor.config as ic

        cpad = compiled_pad_mm(mp, kp, np_, pre1, pre2)
        with ic.patch(shape_padding=False):  # compiled here; its mm is aligned: never re-decided
            fns.append(as_graph(lambda: cpad(mat1_pad, mat2_pad)))
    else:
        fns.append(
            lambda: P.pad_mm(mat1_pad, mat2_pad, mp, kp, np_, mat1_pre_padded=pre1, mat2_pre_padded=pre2)
        )

    def pad():
        for fn in fns:
            fn()

    return orig, pad


def stats(rows, kind):
    out = {}
    for c in ("orig", "pad"):
        rs = [
            r[c][f"ours_{kind}"] / r[c][f"pt_{kind}"]
            for r in rows
            if r[c][f"ours_{kind}"] is not None and r[c][f"pt_{kind}"] is not None
        ]
        out[f"{c}_median_abs_ratio_minus_1"] = statistics.median(abs(x - 1) for x in rs) if rs else None
        out[f"{c}_median_ratio"] = statistics.median(rs) if rs else None
    rows_k = [r for r in rows if r["orig"][f"pt_{kind}"] is not None]
    decisive = [
        r
        for r in rows_k
        if r["orig"][f"ours_{kind}"] is not None
        and max(r["orig"][f"pt_{kind}"], r["pad"][f"pt_{kind}"]) > 1.1 * min(r["orig"][f"pt_{kind}"], r["pad"][f"pt_{kind}"])
    ]
    same = sum(
        (r["orig"][f"ours_{kind}"] < r["pad"][f"ours_{kind}"]) == (r["orig"][f"pt_{kind}"] < r["pad"][f"pt_{kind}"])
        for r in decisive
    )
    out["decisive_inputs"] = len(decisive)
    out["same_winner_on_decisive"] = same
    out["same_winner_pct"] = 100.0 * same / len(decisive) if decisive else None
    allsame = sum(
        (r["orig"][f"ours_{kind}"] < r["pad"][f"ours_{kind}"]) == (r["orig"][f"pt_{kind}"] < r["pad"][f"pt_{kind}"])
        for r in rows_k
        if r["orig"][f"ours_{kind}"] is not None
    )
    out["same_winner_all_inputs"] = allsame
    return out


def rescore(args, names, ours, ours_med):
    """The rows of an earlier --json, our times replaced by the log's."""
    with open(args.rescore) as fh:
        before = json.load(fh)
    rows = []
    for r in before["rows"]:
        key = tuple(r["features"][n] for n in names)
        if key not in ours:
            continue
        for c in ("orig", "pad"):
            r[c]["ours_min"] = label(ours[key][c])
            r[c]["ours_median"] = label(ours_med[key][c]) if key in ours_med else None
        rows.append(r)
    print(f"rescored: {len(rows)} of the {len(before['rows'])} inputs of {args.rescore} are in {args.log}")
    meta = {k: before[k] for k in ("reps", "torch", "device", "min_benchmarker", "pad_copy", "seconds")}
    return rows, dict(meta, rescored_from=args.rescore)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--samples", type=int, default=120)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json")
    ap.add_argument("--no-median", action="store_true", help="skip the median labelling (do_bench)")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; 0 = none")
    ap.add_argument("--resume", help="an earlier --json whose rows are kept")
    ap.add_argument("--rescore", help="an earlier --json whose PyTorch times are compared (no GPU)")
    ap.add_argument("--pad-copy", choices=("compiled", "eager"), default="compiled",
                    help="how pad copies an operand: Inductor's compiled kernels (as ah-collect's "
                         "default, AH_PAD_COPY unset) or eager constant_pad_nd (AH_PAD_COPY=vector16)")
    args = ap.parse_args()
    names, ours = read_log(args.log)
    try:
        _, ours_med = read_log(args.log + ".medians.txt")
    except FileNotFoundError:
        ours_med = {}
    if args.rescore:
        rows, meta = rescore(args, names, ours, ours_med)
    else:
        rows, meta = retime(args, names, ours, ours_med)
    result = dict(log=args.log, inputs=len(rows), **meta)
    result.update(min_labelling=stats(rows, "min"), median_labelling=stats(rows, "median"))
    report(result)
    if args.json:
        result["rows"] = rows
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


def retime(args, names, ours, ours_med):
    """Re-times the sample with PyTorch's benchmarkers: the rows, and what the result records."""
    import triton.testing
    from torch._inductor.runtime import benchmarking

    bench_cls = getattr(benchmarking, "InductorBenchmarker", None)
    bench = bench_cls() if bench_cls is not None else benchmarking.benchmarker
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name()}, min benchmarker {type(bench).__name__}")

    keys = [key for key, v in ours.items() if set(v) >= {"orig", "pad"}]
    random.Random(args.seed).shuffle(keys)
    keys = keys[: args.samples]
    rows, seconds_before = [], 0.0
    if args.resume:
        with open(args.resume) as fh:
            before = json.load(fh)
        rows, seconds_before = before["rows"], before["seconds"]
        done = {tuple(r["features"][n] for n in names) for r in rows}
        keys = [key for key in keys if key not in done]
        print(f"resumed: {len(rows)} inputs re-timed before, {len(keys)} to go", flush=True)
    t0 = time.time()
    with torch.no_grad():
        for i, key in enumerate(keys):
            if args.time_limit and time.time() - t0 > args.time_limit:
                print(f"  time limit: {i} of {len(keys)} inputs re-timed", flush=True)
                break
            f = dict(zip(names, key))
            orig, pad = make_fns(f, args.pad_copy)
            r = {"features": f}
            for name, fn in (("orig", orig), ("pad", pad)):
                pt_min = statistics.median(bench.benchmark_gpu(fn) for _ in range(args.reps))
                pt_med = None if args.no_median else triton.testing.do_bench(fn, warmup=5, return_mode="median")
                r[name] = {
                    "ours_min": label(ours[key][name]),
                    "ours_median": label(ours_med[key][name]) if key in ours_med else None,
                    "pt_min": pt_min,
                    "pt_median": pt_med,
                }
            rows.append(r)
            del orig, pad
            if (i + 1) % 20 == 0:
                print(f"  {i + 1}/{len(keys)} inputs re-timed, {time.time() - t0:.0f} s", flush=True)
            torch.cuda.empty_cache()

    return rows, {
        "reps": args.reps,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "min_benchmarker": type(bench).__name__,
        "pad_copy": args.pad_copy,
        "seconds": seconds_before + time.time() - t0,
    }


def report(result):
    print(json.dumps({k: v for k, v in result.items()}, indent=1))
    print("labelling  choice  median|ratio-1|  median ratio   same winner on decisive (>10%)")
    for kind in ("min", "median"):
        s = result[f"{kind}_labelling"]
        for c in ("orig", "pad"):
            v = s[f"{c}_median_abs_ratio_minus_1"]
            mr = s[f"{c}_median_ratio"]
            print(
                f"{kind:9}  {c:6}  {100 * v if v is not None else float('nan'):14.1f}%  {mr if mr else float('nan'):12.3f}   "
                f"{s['same_winner_on_decisive']}/{s['decisive_inputs']}"
            )

if __name__ == "__main__":
    sys.exit(main())
