#!/usr/bin/env python3
"""Writes the pooled held-out GEMMs as an `inductor_mm` log that ah-prune trains on.

Every blind set that scripts/inductor_eval.py measured recorded, per GEMM, what a collection
records: default max-autotune's benchmark of every choice (`bench_ms`), the compile seconds with
and without max-autotune (`compile_s`), and the compiled truth of cuBLAS and of max-autotune's
pick (`run_ms`: `none`, `max_autotune`), with the features the handler decided on
(`ours_decisions`). They are real models' GEMMs, where the collection logs draw from mixtures.
This script turns them into a log in PyTorch's `mm` format with the extras sidecar ah-prune
reads (`LOG.extras.jsonl.gz`), one GEMM per distinct feature row, in the list's order.

What the result files lack is each choice's own compile seconds (`gen_s`, `precompile_s`),
which ah-prune's `--prices one-ptxas` model prices a kept list from. They are imputed: each
choice's median over the extras of the logs named by --costs-from (the shipped handler's
training logs), the median of the op's Triton choices for a name none of them saw, and 0 for
ATen calls. ah-prune scales a GEMM's choice prices to its measured autotuning seconds either
way, so only their shares are imputed.

A record is left out (and counted on stderr) when it lacks any of those fields, when
`ours_decisions` holds no lowering of the GEMM's op, or when its feature row was written already.

Usage: pool_log.py --files-from LIST --costs-from LOG [--costs-from LOG ...] --out LOG.txt
"""

import argparse
import gzip
import hashlib
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from holdout_pool import listed_files  # noqa: E402 - the pool's list has one reader
from holdout_records import PoolError  # noqa: E402
import sidecar  # noqa: E402 - the scripts' one reader of sidecars

METADATA = {"shared_memory": 232448, "device_capa": [9, 0], "name": "inductor_mm",
            "numerical_features": ["m", "k", "n", "batch", "mat1_stride_0", "mat1_stride_1",
                                   "mat2_stride_0", "mat2_stride_1"],
            "categorical_features": ["op", "mat1_dtype", "mat2_dtype", "mat1_iscontig",
                                     "mat2_iscontig", "using_tf32"]}
FEATURES = ("m", "k", "n", "batch", "op", "mat1_dtype", "mat2_dtype", "mat1_stride_0",
            "mat1_stride_1", "mat2_stride_0", "mat2_stride_1", "mat1_iscontig", "mat2_iscontig",
            "using_tf32")


def feature_row(decision):
    """The log's feature columns of one handler decision, as the collection writes them."""
    return ",".join(str(decision[k]) for k in FEATURES)


def lowering(rec):
    """The decision of the GEMM's own lowering among `ours_decisions` (a split's inner `bmm`
    is another), or None."""
    g = rec["gemm"]
    same_op = [d for d in rec.get("ours_decisions") or [] if d.get("op") == g["op"]]
    size = (g["m"], g["k"], g["n"], g["batch"])
    exact = [d for d in same_op if (d["m"], d["k"], d["n"], d["batch"]) == size]
    if exact:
        return exact[0]
    return same_op[0] if len(same_op) == 1 else None


def usable(rec):
    """Whether `rec` has what a log's GEMM needs; the reason when not."""
    run, comp = rec.get("run_ms") or {}, rec.get("compile_s") or {}
    if not rec.get("bench_ms"):
        return "no benchmark of its choices (before the nineteenth session)"
    if not all(isinstance(run.get(k), (int, float)) and run[k] > 0 for k in ("none", "max_autotune")):
        return "no compiled truth of cuBLAS and max-autotune's pick"
    if not all(k in comp for k in ("none", "max_autotune")):
        return "no compile seconds with and without max-autotune"
    if lowering(rec) is None:
        return "no handler features of its lowering"
    return None


def choice_costs(paths):
    """{choice name: (median gen_s, median precompile_s)} over the extras of logs `paths`, and
    {op: the same over the op's Triton choices}."""
    seen, by_op = {}, {}
    for path in paths:
        for x in extras_records(path):
            for c in x.get("choices", []):
                parts = (c.get("gen_s", 0.0), c.get("precompile_s", 0.0))
                seen.setdefault(c["name"], []).append(parts)
                if c["name"].startswith("triton_"):
                    by_op.setdefault(c["name"].split("_")[1], []).append(parts)

    def med(xs):
        return tuple(statistics.median(p[i] for p in xs) for i in range(2))

    return {n: med(xs) for n, xs in seen.items()}, {op: med(xs) for op, xs in by_op.items()}


def extras_records(log):
    """The JSON records of `log`'s extras sidecar (`sidecar.open_text`: plain, else `.gz`); a
    line that is not JSON is a PoolError naming the file read and the line."""
    try:
        f = sidecar.open_text(log + ".extras.jsonl")
    except sidecar.SidecarError as e:
        raise PoolError(str(e)) from None
    with f:
        records = []
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise PoolError(f"{f.name}:{no}: not JSON ({e.msg}); is it an extras sidecar?") from None
        return records


def imputed(name, op, costs):
    """(gen_s, precompile_s) for choice `name` of a lowering of `op`."""
    named, by_op = costs
    if name in named:
        return named[name]
    if name.startswith("extern_"):
        return (0.0, 0.0)
    return by_op.get(op) or by_op.get("mm") or (0.0, 0.0)


def finite_times(rec):
    """(choice name, benchmark ms) of `rec`'s choices that benchmarked (a failed one reads inf,
    which neither the log nor JSON holds)."""
    return [(n, t) for n, t in rec["bench_ms"].items() if math.isfinite(t)]


def extras_line(rec, row, source, costs):
    """The extras sidecar's JSON object for `rec`."""
    op = rec["gemm"]["op"]
    choices = []
    for name, ms in finite_times(rec):
        gen_s, precompile_s = imputed(name, op, costs)
        choices.append({"name": name, "bench_ms": ms, "gen_s": gen_s, "precompile_s": precompile_s,
                        "imputed": ["gen_s", "precompile_s"]})
    picked = list((rec.get("picked") or {}).get("max_autotune") or {})
    return {"features": row, "gemm": rec["gemm"], "source": source, "choices": choices,
            "compile_s": {"default": rec["compile_s"]["none"],
                          "max_autotune": rec["compile_s"]["max_autotune"]},
            "truth_ms": {"default": rec["run_ms"]["none"], "max_autotune": rec["run_ms"]["max_autotune"]},
            "winner": picked[0] if picked else None}


def convert(paths, costs):
    """(log lines, extras lines, {reason: count}) of the records in result files `paths`."""
    rows, extras, left, written = [], [], {}, set()
    for path in paths:
        try:
            with open(path) as f:
                recs = json.load(f).get("gemms", [])
        except (OSError, ValueError) as e:
            raise PoolError(f"{path}: {e}") from None
        for rec in recs:
            why = usable(rec)
            row = None if why else feature_row(lowering(rec))
            if row in written:
                why = "its feature row was written already"
            if why:
                left[why] = left.get(why, 0) + 1
                continue
            written.add(row)
            rows += [f"{row},{n},{t!r}" for n, t in finite_times(rec)]
            extras.append(json.dumps(extras_line(rec, row, os.path.basename(path), costs), sort_keys=True))
    return rows, extras, left


def provenance(args, argv, paths, n):
    digest = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            digest.update(f.read())
    return {"log": os.path.basename(args.out), "gemms": n, "runner": "scripts/pool_log.py",
            "command_line": "python3 scripts/pool_log.py " + " ".join(argv),
            "result_files": [os.path.basename(p) for p in paths], "result_files_sha256": digest.hexdigest(),
            "label": "feedback = default max-autotune's benchmark of each choice as scripts/inductor_eval.py "
                     "recorded it on a held-out set; truth = its compiled truth of cuBLAS (`none`) and of "
                     "max-autotune's pick; each choice's gen_s and precompile_s imputed (module docstring)",
            "costs_from": [os.path.basename(p) for p in args.costs_from]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files-from", required=True, help="the pool's list of result files")
    p.add_argument("--costs-from", action="append", required=True, help="a log whose extras price choices")
    p.add_argument("--out", required=True, help="the log to write (its sidecars beside it)")
    argv = sys.argv[1:] if argv is None else argv
    a = p.parse_args(argv)
    try:
        paths = listed_files(a.files_from)
        costs = choice_costs(a.costs_from)
        rows, extras, left = convert(paths, costs)
        header = [json.dumps(METADATA), ",".join(FEATURES + ("choice", "feedback"))]
        write(a.out, "\n".join(header + rows) + "\n")
        write(a.out + ".extras.jsonl.gz", "\n".join(extras) + "\n", gz=True)
        write(a.out + ".provenance.json",
              json.dumps(provenance(a, argv, paths, len(extras)), indent=2, sort_keys=True) + "\n")
    except (PoolError, OSError, ValueError, KeyError) as e:
        print(f"pool_log: {e}", file=sys.stderr)
        return 2
    print(f"pool_log: {len(extras)} GEMMs written to {a.out}", file=sys.stderr)
    for why, n in sorted(left.items()):
        print(f"pool_log: {n} left out: {why}", file=sys.stderr)
    return 0


def write(path, text, gz=False):
    """Writes `path` whole or not at all (a temporary file renamed into place), making its folder."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    if gz:
        with open(tmp, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
            z.write(text.encode())
    else:
        with open(tmp, "w") as f:
            f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
