#!/usr/bin/env python3
"""Evaluation by compiled truth of a learned Inductor GEMM handler against max-autotune.

Usage (one CUDA GPU, PyTorch with Inductor and Triton):
  python3 scripts/inductor_eval.py --handler generated/inductor_mm_h100.py --out out/eval.json \
      [--gemms FILE.jsonl] [--workloads gemms,llama_train,llama_infer,encoder_train] \
      [--settings none,ours,max_autotune,mm_ranking] [--budget-s 1500] [--rounds 9]
  python3 scripts/inductor_eval.py --handler H.py --out out/eval.json --workload-file my_model.py
                                                     # your own model end to end (load_workload_file)
  python3 scripts/inductor_eval.py --handler H.py --candidate C.py --settings none,ours,candidate,...
                                                     # two handlers side by side in one process
  python3 scripts/inductor_eval.py --handler H.py --gemms SET.jsonl --lines 1-14 --out A.json ...
                                                     # a set in parts (each part one device call)
  python3 scripts/inductor_eval.py --dry-run        # the planned GEMMs, no torch needed
  python3 scripts/inductor_eval.py --dry-run --handler H.py [--gemms F] [--workloads W]
                                                     # what the handler decides for each, no torch
  python3 scripts/inductor_eval.py --merge A.json B.json ... [--out AB.json]
                                                     # the GEMMs of several result files as one
                                                     # table (and one file), no torch (see merge)

Settings (one warm process, caches disabled, a fresh Triton cache folder for every compile, so
that no setting finds kernels another compiled; start-up paid first):
  none          torch.compile's default (no max-autotune: cuBLAS)
  max_autotune  options={"max_autotune_gemm": True}
  max_autotune_ptxas  max_autotune with this process's Triton on the ptxas of Inductor's compile
                workers (python/ah_inductor/ptxas.py; the handler's install() does the same):
                how much of ours is that alone
  max_autotune_retime  max_autotune_ptxas with the choices of small GEMMs timed again by CUDA
                graph before Inductor picks (python/ah_inductor/retime.py, as the handler's
                install(retime=True) does): the re-timing alone, on every GEMM's full list
  mm_ranking    max_autotune_gemm plus PyTorch's shipped `_MMRankingH100` (autoheuristic_use="mm";
                only `tuned_mm` consults it, so it is run for op mm only)
  ours          max_autotune_gemm with the handler module's install() (stats() recorded)
  full_max_autotune  mode="max-autotune-no-cudagraphs": GEMM templates, coordinate-descent and
                pointwise autotuning (torch.compile's "max-autotune" without its CUDA graphs)
  ours_full     full_max_autotune with the handler installed
  candidate     max_autotune_gemm with a second handler (--candidate) installed: a new handler
                judged beside the shipped one on the same GEMMs, in the same process

Per GEMM (default: held-out real-model GEMMs from crates/ah-bench/catalogue/holdout.toml;
`--gemms` lines: {"op":"mm","batch":1,"m":..,"k":..,"n":..,"dtype":"bfloat16","tf32":false,
"trans_a":false,"trans_b":true}): each setting compiles fresh (dynamo reset) and its first call is
timed (compile time; autotuning time = compile time minus none's); the compiled function is
captured in a CUDA graph at once; after all settings, the graphs are replayed alternately after
warming the clocks, median per call (run time). Inductor's pick and choice count come from its
feedback saver and a choice preprocessing hook.

End to end: a 2-layer LLaMA-style decoder (hidden 2048, SwiGLU 5632, 16 heads of 128, RMSNorm,
bias-free linears, bf16, SDPA; no RoPE or embeddings: GEMMs and attention are what matter here):
`llama_train` one forward+backward on 8 x 1024 tokens; `llama_infer` prefill 4 x 512 tokens then
32 decode steps with a static KV cache. Compile time = first call(s) until every graph (forward and
backward; prefill and decode) is compiled; step time = median of alternated CUDA-graph replays
(eager calls right after the compile if capture fails, flagged). GEMM lowerings seen per setting
show that the handler reached every graph, the backward one included. `encoder_train`: a model of
another family, where the GEMMs are addmm and bmm: a 2-layer BERT-base-style encoder (hidden 768,
12 heads of 64, GELU MLP 3072, LayerNorm, linears with bias, attention as explicit matmul and
softmax) with its MLM head onto BERT's 30522-word vocabulary (a width cuBLAS handles poorly),
fp16, one forward+backward on 8 x 512 tokens.

Work is ordered by --workloads (GEMMs first by default; --gemms alone measures only its GEMMs),
settings by --settings (none always first: it is the baseline). The JSON is rewritten after
every item; --budget-s skips what would start after the budget, and the end says which
`--lines` of the --gemms file measure what it skipped. The markdown table is printed at the end.
"""

import argparse
import contextlib
import functools
import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ah_inductor.choices import is_contiguous  # noqa: E402  (the handler's own; imports no torch)
from ah_inductor.ptxas import forget_ptxas_version, ptxas_align, ptxas_restore  # noqa: E402
from ah_inductor.retime import retime_install, retime_uninstall  # noqa: E402  (imports no torch)

SETTINGS = ("none", "ours", "max_autotune", "max_autotune_ptxas", "max_autotune_retime", "mm_ranking",
            "full_max_autotune", "ours_full", "candidate")
ALIGNED = ("max_autotune_ptxas", "max_autotune_retime")  # settings with ptxas aligned, no handler
WORKLOADS = ("gemms", "llama_train", "llama_infer", "encoder_train")
# Full max-autotune is mode="max-autotune-no-cudagraphs" (templates, coordinate-descent tuning,
# pointwise autotuning): its options come from Inductor itself (`list_mode_options`), because
# torch.compile takes a mode or options, not both. CUDA graphs are ours to capture.
FULL = "max-autotune-no-cudagraphs"
OPTIONS = {
    "none": {},
    "max_autotune": {"max_autotune_gemm": True},
    "max_autotune_ptxas": {"max_autotune_gemm": True},
    "max_autotune_retime": {"max_autotune_gemm": True},
    "mm_ranking": {"max_autotune_gemm": True, "autoheuristic_use": "mm"},
    "ours": {"max_autotune_gemm": True},
    "full_max_autotune": FULL,
    "ours_full": FULL,
    "candidate": {"max_autotune_gemm": True},
}
# The settings with a handler installed, and which: --handler's ("ours") or --candidate's.
HANDLED = {"ours": "ours", "ours_full": "ours", "candidate": "candidate"}
ROLES = tuple(dict.fromkeys(HANDLED.values()))  # the handlers a run installs: ours, candidate
OURS = ("ours", "ours_full")  # the settings with --handler installed
LEARNED = ("ours", "candidate")  # the GEMM settings flagged against the bound, one per handler
DEFAULT_SETTINGS = ("none", "ours", "max_autotune", "mm_ranking")
SLOW_FLAG = 1.03  # a GEMM of ours more than 3 % slower than the faster of max-autotune and cuBLAS

# -- the planned GEMMs (no torch) ---------------------------------------------------------------


def g(model, what, op, m, k, n, dtype, tf32=False, ta=False, tb=False, batch=1):
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


def bench_record(setting, timings):
    """What a GEMM record keeps of Inductor's benchmark (`bench_ms`: choice name -> ms, rounded
    to 0.1 ns): default max-autotune's full list, when the setting benchmarked exactly one
    lowering, so that `holdout_pool.py` can replay a kept list as the trainer scores one. None
    otherwise (other settings; workloads, whose lowerings are many)."""
    if setting != "max_autotune":
        return None
    return one_lowering(timings)


def seen_record(setting, timings):
    """What a handler's search selected from (`seen_ms[setting]`: choice name -> ms), for a
    setting with a handler installed that benchmarked exactly one lowering: Inductor's times
    after the re-timing replaced some, so a pick that lost in the compiled graph shows which
    time misled it. None otherwise."""
    if setting not in HANDLED:
        return None
    return one_lowering(timings)


def shape_key(nodes):
    """A lowering's inputs as text, e.g. "2048x5632, 5632x2048" (addmm's bias first): what
    `picks_by_shape` groups lowerings by. A size Inductor holds symbolically is written as it
    prints; an input whose size cannot be read as "?"."""
    def sizes(node):
        try:
            return "x".join(str(d) for d in node.get_size())
        except Exception:  # noqa: BLE001 - a diagnostic: a node without sizes must not stop a compile
            return "?"
    return ", ".join(sizes(n) for n in nodes)


def picks_by_shape(lowerings, shapes, winners, winner_shapes):
    """Inductor's picks grouped by their lowering's inputs (`picked_by_shape[setting]`: shape_key
    -> {choice name: count}): the benchmarked lowerings' winners and the single-choice lowerings'
    one choice. Two compiles of one workload compare shape by shape where `picked`'s totals
    alone cannot say which lowering moved."""
    out = {}
    singles = [(shape, names[0]) for shape, names in zip(shapes, lowerings) if len(names) == 1]
    for shape, name in list(zip(winner_shapes, winners)) + singles:
        counts = out.setdefault(shape, {})
        counts[name] = counts.get(name, 0) + 1
    return {shape: dict(sorted(counts.items())) for shape, counts in sorted(out.items())}


def one_lowering(timings):
    """The timings of the one benchmarked lowering, rounded to 0.1 ns; None unless exactly one."""
    if len(timings) != 1:
        return None
    return {name: round(ms, 7) for name, ms in sorted(timings[0].items())}


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


def llama_gemms(workload, hidden=2048, inter=5632, heads=16, head_dim=128):
    """The GEMMs of the end-to-end workloads' bias-free linears (what --dry-run --handler decides;
    the attention runs in SDPA, not as bmm). Training: 8 x 1024 tokens, forward, input gradient
    and weight gradient; inference: prefill 4 x 512 tokens and decode m = 4."""
    bf, qkv = "bfloat16", heads * head_dim
    linears = [("q/k/v", hidden, qkv), ("o", qkv, hidden), ("gate/up", hidden, inter), ("down", inter, hidden)]
    out = []
    for what, i, o in linears:
        if workload == "llama_train":
            t = 8 * 1024
            out += [g("llama", f"{what} fwd", "mm", t, i, o, bf, tb=True),
                    g("llama", f"{what} grad_input", "mm", t, o, i, bf),
                    g("llama", f"{what} grad_weight", "mm", o, t, i, bf, ta=True)]
        else:
            out += [g("llama", f"{what} prefill 4x512", "mm", 4 * 512, i, o, bf, tb=True),
                    g("llama", f"{what} decode m=4", "mm", 4, i, o, bf, tb=True)]
    return out


def encoder_gemms(tokens=8 * 512, seq=512, hidden=768, heads=12, inter=3072, vocab=30522):
    """The GEMMs of `encoder_train` as its code lays them out (Inductor may see a transposed view
    materialised): each linear's forward addmm, input-gradient and weight-gradient mm; each
    attention matmul's forward and backward bmm."""
    fp, hd, bh = "float16", hidden // heads, tokens // seq * heads
    out = []
    for what, i, o in [("q/k/v", hidden, hidden), ("o", hidden, hidden), ("ffn up", hidden, inter),
                       ("ffn down", inter, hidden), ("mlm transform", hidden, hidden), ("mlm decoder", hidden, vocab)]:
        out += [g("encoder", f"{what} fwd", "addmm", tokens, i, o, fp, tb=True),
                g("encoder", f"{what} grad_input", "mm", tokens, o, i, fp),
                g("encoder", f"{what} grad_weight", "mm", o, tokens, i, fp, ta=True)]
    att = lambda what, m, k, n, **t: g("encoder", what, "bmm", m, k, n, fp, batch=bh, **t)  # noqa: E731
    out += [att("scores q@k.t", seq, hd, seq, tb=True), att("context p@v", seq, seq, hd),
            att("grad p = dctx@v.t", seq, hd, seq, tb=True), att("grad v = p.t@dctx", seq, seq, hd, ta=True),
            att("grad q = ds@k", seq, seq, hd), att("grad k = ds.t@q", seq, seq, hd, ta=True)]
    return out


def workload_gemms(workload):
    """The GEMMs an end-to-end workload's code makes (what --dry-run --handler decides)."""
    return encoder_gemms() if workload == "encoder_train" else llama_gemms(workload)


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


def preview(gemms, handler, options=None):
    """Prints what the handler decides for each GEMM, without torch or a GPU, as its install()
    applies a decision with `options` (the role's `install_options`; `installed_decide`)."""
    counts = {}
    decide = installed_decide(handler, options)
    for i, gm in enumerate(gemms):
        kind, names = decide(handler_features(gm))
        counts[kind] = counts.get(kind, 0) + 1
        kept = {"keep": f" + {len(names)} Triton configs",
                "drop": f" - {len(names)} Triton configs"}.get(kind, "")
        print(f"{i + 1:3d}  {describe(gm):42s} {gm['name']}  -> {kind}{kept}")
    print("decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def describe(gm):
    t = ("T" if gm["trans_a"] else "N") + ("T" if gm["trans_b"] else "N")
    b = f"{gm['batch']}x" if gm["op"] == "bmm" else ""
    tf = "+tf32" if gm["dtype"] == "float32" and gm["tf32"] else ""
    return f"{gm['op']} {b}{gm['m']}x{gm['k']}x{gm['n']} {gm['dtype']}{tf} {t}"


def probe_gemms(prog, ind, gemms, measure, out_path, budget_s, start, shown):
    """What a probe script runs: `measure(gm)` on each GEMM in order, starting none after
    `budget_s` seconds from `start` (perf_counter); a GEMM that raises is recorded as its error
    (`ind` made fresh) and the rest still run. `out_path` is rewritten as JSON lines after each
    GEMM (written empty first); progress goes to stderr with the record's `shown` field.
    Returns the records."""
    recs = []
    open(out_path, "w").close()
    for i, gm in enumerate(gemms, 1):
        if time.perf_counter() - start > budget_s:
            print(f"{prog}: the budget ran out before line {gm['line']}", file=sys.stderr)
            break
        try:
            recs.append(measure(gm))
        except Exception as e:  # noqa: BLE001 - one GEMM's failure is recorded, the rest still run
            recs.append({"gemm": gm, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            ind.fresh()
        with open(out_path, "w") as f:
            for r in recs:
                f.write(json.dumps(r, default=_json_default) + "\n")
        print(f"[{i}/{len(gemms)}] {describe(gm)} {recs[-1].get(shown) or recs[-1].get('error')}",
              file=sys.stderr, flush=True)
    return recs


def stale_ptxas(torch):
    """Puts this process's Triton back as PyTorch 2.11 leaves it in every process, whatever an
    aligned setting (ours, max_autotune_ptxas) did: the ptxas version it keys its cache on
    memoised from Triton's own ptxas while TRITON_PTXAS_PATH names PyTorch's, so that the
    templates the compile workers precompiled are compiled again here (ah_inductor/ptxas.py)."""
    try:
        import triton.backends.nvidia.compiler as nc

        env = os.environ.pop("TRITON_PTXAS_PATH", None)
        try:
            forget_ptxas_version()
            major, minor = torch.cuda.get_device_capability()
            nc.get_ptxas_version(major * 10 + minor)
        finally:
            if env is not None:
                os.environ["TRITON_PTXAS_PATH"] = env
    except (ImportError, AttributeError):
        pass  # another Triton: its default is what it is


# -- results file ---------------------------------------------------------------------------------


class Results:
    """All numbers, rewritten to `path` after every item (a cut run keeps what it measured)."""

    def __init__(self, path, meta):
        self.path = path
        self.data = {"meta": meta, "gemms": [], "e2e": {}, "skipped": [], "summary": {}}

    def save(self):
        self.data["summary"] = summarize(self.data)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, default=_json_default)
        os.replace(tmp, self.path)


def _json_default(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return str(x)


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summarize(data):
    """Totals: autotuning time per setting, max_autotune/ours ratio, run-time geometric means."""
    gemms = [r for r in data["gemms"] if "run_ms" in r]
    out = {"gemms_measured": len(gemms), "autotune_s": {}, "run_rel_max_autotune_geomean": {}}
    for s in SETTINGS:
        have = [r for r in gemms if s in r.get("autotune_s", {})]
        if have:
            out["autotune_s"][s] = sum(r["autotune_s"][s] for r in have)
            rel = [r["run_ms"][s] / r["run_ms"]["max_autotune"] for r in have
                   if s in r["run_ms"] and "max_autotune" in r["run_ms"]]
            out["run_rel_max_autotune_geomean"][s] = geomean(rel)
    for learned in LEARNED:
        if learned != "ours" and not any(learned in r.get("autotune_s", {}) for r in gemms):
            continue  # "ours" is always summarised (the report's line names it)
        for base in ("max_autotune", "max_autotune_ptxas"):
            both = [r for r in gemms if {learned, base} <= set(r.get("autotune_s", {}))]
            if base == "max_autotune" or both:
                spent = sum(max(r["autotune_s"][learned], 0.0) for r in both)
                ma = sum(r["autotune_s"][base] for r in both)
                out[f"autotune_ratio_{base}_over_{learned}"] = ma / spent if spent > 0 else None
        out[f"{learned}_slower_than_best_by_3pct"] = [r["gemm"]["name"] for r in gemms
                                                       if r.get(f"{learned}_flag")]
    out["slower_than_best_by_3pct"], out["worst_rel_best"] = {}, {}
    for s in SETTINGS:
        rel = [r["run_ms"][s] / best_ms(r) for r in gemms if s in r["run_ms"] and best_ms(r)]
        if rel:
            out["slower_than_best_by_3pct"][s] = sum(x > SLOW_FLAG for x in rel)
            out["worst_rel_best"][s] = max(rel)
    return out


def best_ms(rec):
    """The faster of cuBLAS (none) and max-autotune's pick in compiled truth: the bound."""
    run = rec["run_ms"]
    have = [run[s] for s in ("max_autotune", "none") if s in run]
    return min(have) if have else None


class MergeError(Exception):
    """A result file that cannot be merged (named in the message)."""


def merge(paths):
    """The GEMMs of several result files as one result, in order of first appearance. A GEMM
    (by name) in several files takes each setting's figures from the last file that measured that
    setting: a re-run of some GEMMs with a new handler (all of `none,ours,max_autotune`, so that
    its figures are alternated in one process) replaces those settings, and the rest is kept (a
    setting that failed in an earlier file and ran in a later one is no longer failed)."""
    by_name, order, skipped = {}, [], []
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
            records = data["gemms"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise MergeError(f"{path}: not a result file of inductor_eval.py ({type(e).__name__}: {e})") from e
        for r in records:
            if "run_ms" not in r:
                continue
            name = r["gemm"]["name"]
            if name not in by_name:
                by_name[name] = {"gemm": r["gemm"]}
                order.append(name)
            rec = by_name[name]
            if rec.get("errors"):  # a setting measured again is no longer failed
                rec["errors"] = {s: e for s, e in rec["errors"].items() if s not in r["run_ms"]}
            for key, value in r.items():
                if key != "gemm":
                    old = rec.get(key)
                    both = isinstance(old, dict) and isinstance(value, dict)
                    rec[key] = {**old, **value} if both else value
        skipped += data.get("skipped", [])
    gemms = [by_name[n] for n in order]
    for r in gemms:
        flag_ours(r)
    measured = set(order)
    data = {"meta": {"merged_from": list(paths)}, "gemms": gemms, "e2e": {},
            "skipped": [s for s in dict.fromkeys(skipped) if s not in measured]}
    data["summary"] = summarize(data)
    return data


def write_merged(data, path, inputs):
    """Writes a merged result to `path` (through a temporary file, so that a failed write leaves
    nothing half-written); refuses to replace one of the files it was merged from."""
    if any(os.path.realpath(path) == os.path.realpath(i) for i in inputs):
        raise MergeError(f"{path}: is one of the files being merged; give --out another path")
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, default=_json_default)
        os.replace(tmp, path)
    except OSError as e:
        raise MergeError(f"{path}: cannot write the merged result ({e})") from e


# -- measuring -------------------------------------------------------------------------------------


class PhaseTimer:
    """Seconds spent in Inductor's autotuning, summed over every thread (the backward graph
    compiles in autograd's): where a compile's time goes. GEMM autotuning is what Inductor itself
    reports per GEMM (`AlgorithmSelectorCache.log_results`: benchmarking and precompiling, as
    ah-collect's worker reads it); kernel tuning is time inside the entry points below, which may
    nest (a coordinate-descent step benchmarks), so the phases need not add up. An entry point
    this PyTorch lacks is left out and named in `missing`."""

    POINTS = (
        ("coordinate_descent", "torch._inductor.runtime.triton_heuristics", "CachingAutotuner",
         "coordinate_descent_tuning"),
        ("kernel_configs", "torch._inductor.runtime.triton_heuristics", "CachingAutotuner",
         "benchmark_all_configs"),
    )

    def __init__(self):
        import importlib

        self.seconds, self.missing = {}, []
        for phase, module, cls, method in self.POINTS:
            owner = getattr(importlib.import_module(module), cls, None)
            if owner is None or not hasattr(owner, method):
                self.missing.append(phase)
                continue
            setattr(owner, method, self._timed(phase, getattr(owner, method)))
        self._gemm_phases()

    def _gemm_phases(self):
        from torch._inductor import select_algorithm as sa

        log_results = getattr(sa.AlgorithmSelectorCache, "log_results", None)
        if log_results is None:
            self.missing.append("gemm_benchmark")
            return

        def phases(name, input_nodes, timings, elapse, precompile_elapse, *a, **kw):
            self.add("gemm_benchmark", elapse)
            self.add("gemm_precompile", precompile_elapse)
            return log_results(name, input_nodes, timings, elapse, precompile_elapse, *a, **kw)

        sa.AlgorithmSelectorCache.log_results = staticmethod(phases)

    def add(self, phase, seconds):
        if isinstance(seconds, (int, float)):
            self.seconds[phase] = self.seconds.get(phase, 0.0) + float(seconds)

    def _timed(self, phase, fn):
        import functools

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(phase, time.perf_counter() - t0)

        return timed

    def reset(self):
        self.seconds = {}

    def totals(self):
        return dict(self.seconds, missing=list(self.missing)) if self.missing else dict(self.seconds)


class Inductor:
    """One warm process: torch imported with caches disabled, Inductor's choices observed."""

    def __init__(self, handler_paths, rounds, install=None):
        cache = tempfile.mkdtemp(prefix="ah-inductor-eval-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
        self.cache, self.fresh_count = cache, 0
        import torch
        import torch._inductor.config as config

        if not torch.cuda.is_available():
            raise SystemExit("inductor_eval: PyTorch sees no CUDA device")
        self.torch, self.config, self.rounds = torch, config, rounds
        self.install = dict(install or {})  # role -> its install()'s arguments (install_options)
        config.force_disable_caches = True
        # role ("ours", "candidate") -> handler module; a handler that refuses this GPU or
        # PyTorch is left out (it warns once) and named in self.refused.
        self.handlers, self.refused = {}, []
        for role, path in handler_paths.items():
            handler = load_handler(path)
            if self._installs(handler):
                self.handlers[role] = handler
            else:
                self.refused.append(role)
        self.lowerings = []  # per AlgorithmSelectorCache call: choice names
        self.shapes = []  # per AlgorithmSelectorCache call: its inputs' sizes (shape_key)
        self.winners = []  # per benchmarked call: the fastest choice
        self.winner_shapes = []  # per benchmarked call: its inputs' sizes (shape_key)
        self.timings = []  # per benchmarked call: {choice name: benchmark ms} (finite ones)
        self.phases = PhaseTimer()
        self._observe()
        self._start_up()

    @staticmethod
    def _installs(handler):
        """Whether the handler accepts this GPU and PyTorch (it warns once if not)."""
        ok = handler.install()
        handler.uninstall()
        return ok

    def _observe(self):
        from ah_inductor.naming import caller_name
        from torch._inductor import select_algorithm as sa

        def seen(choices):
            self.lowerings.append([caller_name(c) for c in choices])
            self.shapes.append(shape_key(getattr(choices[0], "input_nodes", ()) if choices else ()))
            return choices

        def feedback(timings, *args, **kwargs):
            finite = {c: t for c, t in timings.items() if math.isfinite(t)}
            if finite:
                self.winners.append(caller_name(min(finite, key=finite.get)))
                self.winner_shapes.append(shape_key(args[1] if len(args) > 1 else kwargs.get("input_nodes", ())))
                self.timings.append({caller_name(c): t for c, t in finite.items()})

        sa.get_algorithm_selector_cache().add_preprocessing_fn(seen)
        sa.add_feedback_saver(feedback)

    def _start_up(self):
        torch = self.torch
        x = torch.randn(64, 64, device="cuda")
        torch.compile(lambda a: (a * 2).sin() + 1)(x)
        torch.compile(lambda a, b: a @ b, options={"max_autotune_gemm": True})(x, x)
        # Inductor compiles in this process until its worker pool is up (seconds into a
        # process), then in the pool: every setting is measured with the pool up, as in the
        # rest of a model's compile.
        from torch._inductor.async_compile import AsyncCompile

        if hasattr(AsyncCompile, "wait_pool_ready"):
            AsyncCompile.wait_pool_ready()
        self.fresh()

    def fresh(self):
        """Forgets every compiled graph and Inductor's in-memory autotuning caches, and points
        Triton at an empty cache folder (Inductor hands its compile workers this process's
        TRITON_CACHE_DIR with every kernel): a template another setting compiled is compiled
        again."""
        self.torch._dynamo.reset()
        self.fresh_count += 1
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self.cache, f"triton-{self.fresh_count}")
        import torch._inductor.utils as iu

        clear = getattr(iu, "clear_caches", None) or getattr(iu, "clear_inductor_caches", None)
        if clear is not None:
            clear()
        self.torch.cuda.synchronize()

    def meta(self):
        import triton

        torch = self.torch
        return {"torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
                "device": torch.cuda.get_device_name(0),
                "capability": list(torch.cuda.get_device_capability(0)),
                "handler": getattr(self.handlers.get("ours"), "HEURISTIC", None),
                "candidate": getattr(self.handlers.get("candidate"), "HEURISTIC", None),
                **{option: {r: o[option] for r, o in sorted(self.install.items()) if option in o}
                   for option, _ in SWITCHES}}

    @contextlib.contextmanager
    def setting(self, name, record):
        """Compiles inside: options for torch.compile; a handler installed for the settings
        of HANDLED."""
        self.lowerings.clear()
        self.shapes.clear()
        self.winners.clear()
        self.winner_shapes.clear()
        self.timings.clear()
        self.phases.reset()
        handler = self.handlers.get(HANDLED.get(name))
        installed = False
        aligned = ptxas_align() if name in ALIGNED else None
        retimer = retime_install() if name == "max_autotune_retime" else None
        if handler is None and aligned is None:
            stale_ptxas(self.torch)
        if handler is not None:
            handler.reset_stats()
            installed = self._install(handler, HANDLED.get(name))
        try:
            yield self.options(name)
        finally:
            ptxas_restore(aligned)
            retime_uninstall(retimer)
            if installed:
                record[f"{name}_stats"] = handler.stats()
                if hasattr(handler, "decisions"):  # handler modules since 2026-11-25 (15th)
                    record[f"{name}_decisions"] = handler.decisions()
                handler.uninstall()
            record.setdefault("phases_s", {})[name] = self.phases.totals()
            record.setdefault("lowerings", {})[name] = len(self.lowerings)
            record.setdefault("autotuned", {})[name] = sum(len(c) > 1 for c in self.lowerings)
            record.setdefault("choices", {})[name] = sum(len(c) for c in self.lowerings)
            record.setdefault("picked", {})[name] = self.picks()
            record.setdefault("picked_by_shape", {})[name] = picks_by_shape(
                self.lowerings, self.shapes, self.winners, self.winner_shapes)
            bench = bench_record(name, self.timings)
            if bench is not None:
                record["bench_ms"] = bench
            seen = seen_record(name, self.timings)
            if seen is not None:
                record.setdefault("seen_ms", {})[name] = seen

    def _install(self, handler, role):
        """Installs a role's handler, with the arguments the flags of SWITCHES gave it
        (`install_options`)."""
        return handler.install(**self.install.get(role, {}))

    def options(self, name):
        """torch.compile's options for setting `name`."""
        opts = OPTIONS[name]
        if isinstance(opts, str):
            from torch._inductor import list_mode_options

            return dict(list_mode_options(opts))
        return opts

    def picks(self):
        """Inductor's pick per GEMM lowering: the fastest benchmarked choice, or the only one."""
        single = [c[0] for c in self.lowerings if len(c) == 1]
        counts = {}
        for name in self.winners + single:
            counts[name] = counts.get(name, 0) + 1
        return counts

    def timed_first_call(self, fn):
        torch = self.torch
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    def capture(self, fn, calls):
        """A CUDA graph of `calls` calls of `fn` (warmed on a side stream first)."""
        torch = self.torch
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        torch.cuda.synchronize()
        return graph

    def warm_clocks(self, replays, seconds=0.3):
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for r in replays.values():
                r()
            self.torch.cuda.synchronize()

    def alternate(self, replays, per_replay, warm_s=0.3):
        """Median ms per call of each replay function: clocks warmed (`warm_s`), order
        alternated."""
        torch = self.torch
        self.warm_clocks(replays, warm_s)
        times = {name: [] for name in replays}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        names = list(replays)
        for r in range(self.rounds):
            for name in names if r % 2 == 0 else reversed(names):
                start.record()
                replays[name]()
                end.record()
                end.synchronize()
                times[name].append(start.elapsed_time(end) / per_replay)
        return {name: statistics.median(t) for name, t in times.items()}

    def probe_ms(self, fn):
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fn()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)


def load_handler(path):
    """Imports the generated handler module, registered in sys.modules (Inductor pickles its
    factory by name)."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    for need in ("install", "uninstall", "stats", "reset_stats", "HEURISTIC"):
        if not hasattr(mod, need):
            raise SystemExit(f"inductor_eval: {path} defines no {need}")
    return mod


# The install() options that change a decision, not only how a search is timed: what a preview
# or a replay without torch must apply (`installed_decide`).
DECIDING = ("narrow_search", "small_bmm_search", "bias_head_search")


def installed_decide(module, options=None):
    """`decide` of handler `module` as its `install(**options)` applies a decision (the module's
    `installed`: since the forty-fifth session a linear to a narrow output that the tree gives
    cuBLAS alone is left to the search by default, since the forty-seventh a `bmm` with a
    small side, and since the forty-ninth a half-precision biased head). Options of DECIDING
    not in `options` keep the module's defaults. A module generated before `installed` existed
    decides as its tree does."""
    decide, installed = module.decide, getattr(module, "installed", None)
    if not callable(installed):
        return decide
    chosen = {k: v for k, v in (options or {}).items() if k in DECIDING}

    @functools.wraps(decide)  # `__wrapped__`: the replay reads the module's rules through it
    def applied(f):
        return installed(*decide(f), f, **chosen)
    return applied


# -- one GEMM --------------------------------------------------------------------------------------


def gemm_fn(torch, gm):
    """(function, args) of the GEMM: operands laid out as described, fresh random data."""
    dtype = getattr(torch, gm["dtype"])

    def operand(rows, cols, transposed):
        shape = (cols, rows) if transposed else (rows, cols)
        if gm["op"] == "bmm":
            shape = (gm["batch"], *shape)
        t = torch.randn(shape, device="cuda", dtype=dtype)
        return t.transpose(-2, -1) if transposed else t

    a, b = operand(gm["m"], gm["k"], gm["trans_a"]), operand(gm["k"], gm["n"], gm["trans_b"])
    if gm["op"] == "bmm":
        return torch.bmm, (a, b)
    if gm["op"] == "addmm":
        return torch.addmm, (torch.randn(gm["n"], device="cuda", dtype=dtype), a, b)
    return torch.mm, (a, b)


def settings_for(gm, settings):
    """mm_ranking only where PyTorch consults it (tuned_mm); none first."""
    out = ["none"] + [s for s in settings if s != "none"]
    return [s for s in out if s != "mm_ranking" or gm["op"] == "mm"]


def measure_gemm(ind, gm, settings, out_of_time):
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
    fn, args = gemm_fn(torch, gm)
    rec = {"gemm": gm, "compile_s": {}}
    graphs, calls = {}, None
    for s in settings_for(gm, settings):
        if out_of_time():
            rec.setdefault("not_run", []).append(s)
            continue
        ind.fresh()
        with ind.setting(s, rec) as options, failure(ind, rec, s):
            compiled = torch.compile(fn, dynamic=False, fullgraph=True, options=options)
            rec["compile_s"][s] = ind.timed_first_call(lambda: compiled(*args))
            if calls is None:
                calls = max(1, min(20, round(2.0 / max(ind.probe_ms(lambda: compiled(*args)), 1e-3))))
            graphs[s] = ind.capture(lambda: compiled(*args), calls)
    ind.fresh()
    if "none" in rec["compile_s"]:
        rec["autotune_s"] = {s: t - rec["compile_s"]["none"] for s, t in rec["compile_s"].items()}
    rec["run_ms"] = ind.alternate({s: gr.replay for s, gr in graphs.items()}, calls)
    rec["graph_calls"] = calls
    flag_ours(rec)
    return rec


@contextlib.contextmanager
def failure(ind, rec, setting):
    """A setting that fails is recorded in rec["errors"]; the other settings still run."""
    try:
        yield
    except Exception as e:  # noqa: BLE001
        rec.setdefault("errors", {})[setting] = f"{type(e).__name__}: {str(e)[:300]}"
        ind.torch.cuda.synchronize()
        ind.fresh()


def flag_ours(rec):
    """Each handler's run time over the bound (best_ms), flagged past SLOW_FLAG."""
    best = best_ms(rec)
    for s in LEARNED:
        if s in rec["run_ms"] and best:
            rec[f"{s}_rel_best"] = rec["run_ms"][s] / best
            rec[f"{s}_flag"] = rec[f"{s}_rel_best"] > SLOW_FLAG


# -- end to end --------------------------------------------------------------------------------------


def llama(torch, layers=2, hidden=2048, inter=5632, heads=16, head_dim=128):
    """A LLaMA-style decoder stack (no embeddings, no RoPE), bf16 on CUDA."""
    nn, F = torch.nn, torch.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.weight

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            lin = lambda i, o: nn.Linear(i, o, bias=False)  # noqa: E731
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.q, self.k, self.v = (lin(hidden, heads * head_dim) for _ in range(3))
            self.o = lin(heads * head_dim, hidden)
            self.gate, self.up, self.down = lin(hidden, inter), lin(hidden, inter), lin(inter, hidden)

        def qkv(self, x):
            b, t, _ = x.shape
            h = self.n1(x)
            return [p(h).view(b, t, heads, head_dim).transpose(1, 2) for p in (self.q, self.k, self.v)]

        def finish(self, x, attn):
            b, _, t, _ = attn.shape
            x = x + self.o(attn.transpose(1, 2).reshape(b, t, heads * head_dim))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

        def forward(self, x):
            q, k, v = self.qkv(x)
            return self.finish(x, F.scaled_dot_product_attention(q, k, v, is_causal=True))

        def prefill(self, x, kc, vc):
            q, k, v = self.qkv(x)
            kc[:, :, : x.shape[1]] = k
            vc[:, :, : x.shape[1]] = v
            return self.finish(x, F.scaled_dot_product_attention(q, k, v, is_causal=True))

        def decode(self, x, pos, kc, vc):
            q, k, v = self.qkv(x)
            kc.index_copy_(2, pos, k)
            vc.index_copy_(2, pos, v)
            mask = (torch.arange(kc.shape[2], device=x.device) <= pos).view(1, 1, 1, -1)
            return self.finish(x, F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

        def prefill(self, x, caches):
            for layer, (kc, vc) in zip(self.layers, caches):
                x = layer.prefill(x, kc, vc)
            return x

        def decode(self, x, pos, caches):
            for layer, (kc, vc) in zip(self.layers, caches):
                x = layer.decode(x, pos, kc, vc)
            return x

    return Decoder().to(device="cuda", dtype=torch.bfloat16)


def train_workload(torch, model, options, shape=(8, 1024, 2048)):
    """(first-call function, step function) of a forward+backward on an input of `shape`
    (batch, tokens, hidden; default the decoder's 8 x 1024 tokens) in the model's dtype."""
    compiled = torch.compile(model, dynamic=False, options=options)
    dtype = next(model.parameters()).dtype
    x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(x).float().square().mean().backward()

    return step, step


def infer_workload(torch, model, options, batch=4, prompt=512, steps=32):
    """(first-call function, workload function): prefill then `steps` decode steps, static cache."""
    prefill = torch.compile(model.prefill, dynamic=False, options=options)
    decode = torch.compile(model.decode, dynamic=False, options=options)
    shape = (batch, 16, prompt + steps, 128)
    caches = [(torch.zeros(shape, device="cuda", dtype=torch.bfloat16),
               torch.zeros(shape, device="cuda", dtype=torch.bfloat16)) for _ in model.layers]
    x = torch.randn(batch, prompt, 2048, device="cuda", dtype=torch.bfloat16)
    tok = torch.randn(batch, 1, 2048, device="cuda", dtype=torch.bfloat16)
    positions = [torch.tensor([prompt + i], device="cuda") for i in range(steps)]

    def first():
        prefill(x, caches)
        decode(tok, positions[0], caches)

    def run():
        with torch.no_grad():
            prefill(x, caches)
            for p in positions:
                decode(tok, p, caches)

    def first_no_grad():
        with torch.no_grad():
            first()

    return first_no_grad, run


def encoder(torch, layers=2, hidden=768, heads=12, inter=3072, vocab=30522):
    """A BERT-base-style encoder stack with its MLM head (no embeddings), fp16 on CUDA: linears
    with bias (addmm), attention as explicit matmuls (bmm) and softmax."""
    nn, F = torch.nn, torch.nn.functional
    hd = hidden // heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
            self.up, self.down = nn.Linear(hidden, inter), nn.Linear(inter, hidden)
            self.n1, self.n2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (p(x).view(b, t, heads, hd).transpose(1, 2) for p in (self.q, self.k, self.v))
            p = torch.softmax(q @ k.transpose(-1, -2) * hd ** -0.5, dim=-1)
            x = self.n1(x + self.o((p @ v).transpose(1, 2).reshape(b, t, hidden)))
            return self.n2(x + self.down(F.gelu(self.up(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.transform, self.norm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.decoder(self.norm(F.gelu(self.transform(x))))

    return Encoder().to(device="cuda", dtype=torch.float16)


def encoder_workload(torch, model, options):
    """(first-call function, step function) of a forward+backward on 8 x 512 tokens."""
    return train_workload(torch, model, options, shape=(8, 512, 768))


E2E = {  # workload: (model, workload)
    "llama_train": (llama, train_workload),
    "llama_infer": (llama, infer_workload),
    "encoder_train": (encoder, encoder_workload),
}


class WorkloadFileError(ValueError):
    """A --workload-file that cannot be used (named in the message)."""


def load_workload_file(path):
    """Registers the end-to-end workload of a Python file under its stem and returns that name.
    The file defines `build(torch)`, which returns the model on CUDA, and `workload(torch, model,
    options)`, which compiles it with `torch.compile(..., options=options)` and returns `(first,
    step)`: `first()` makes the first call(s) until every graph is compiled (timed as compile
    time), `step()` one step (captured in a CUDA graph and replayed for the step time), as the
    built-in workloads do (docs/inductor.md). Loading runs no torch."""
    name = os.path.splitext(os.path.basename(path))[0]
    if name in E2E or name in WORKLOADS or not name.isidentifier():
        raise WorkloadFileError(f"{path}: the workload would be named {name!r}, which is taken or not an "
                                f"identifier; rename the file")
    spec = importlib.util.spec_from_file_location(f"ah_workload_{name}", path)
    if spec is None:
        raise WorkloadFileError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Importable by name, as Dynamo imports the module of a class it traces (the file's model).
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file: any error at import is theirs to see
        del sys.modules[spec.name]
        raise WorkloadFileError(f"{path}: cannot load it ({type(e).__name__}: {e})") from e
    missing = [f for f in ("build", "workload") if not callable(getattr(module, f, None))]
    if missing:
        del sys.modules[spec.name]
        raise WorkloadFileError(f"{path}: defines no {' and no '.join(missing)}(...); see load_workload_file")
    E2E[name] = (module.build, module.workload)
    return name


def measure_e2e(ind, workload, settings, out_of_time, progress=None):
    """Compile time and step time of `workload` under each setting, none first, the steps timed
    alternated at the end. `progress(rec, line)`, when given, gets the record so far and a line
    saying what happened as each setting starts and ends, so that a run cut inside a compile
    (max-autotune's can outlast a device call) keeps the compile times before it and names the
    setting it was in (`rec["compiling"]`)."""
    tell = progress or (lambda rec, line: None)
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    build, make = E2E[workload]
    model = build(torch)
    rec = {"compile_s": {}, "timing": {}}
    replays, eager = {}, {}
    # A captured graph reads its workload's tensors (inputs, KV caches, positions) when it is
    # replayed: they must outlive it, or the replay reads memory given to later settings.
    alive = []
    for s in ["none"] + [x for x in settings if x != "none"]:
        if out_of_time():
            rec.setdefault("not_run", []).append(s)
            continue
        ind.fresh()
        rec["compiling"] = s
        tell(rec, f"{workload}: compiling {s}")
        with ind.setting(s, rec) as options, failure(ind, rec, s):
            first, step = make(torch, model, options)
            rec["compile_s"][s] = ind.timed_first_call(first)
            try:
                graph = ind.capture(step, 1)
                alive.append((graph, first, step))
                replays[s] = graph.replay
                rec["timing"][s] = "cuda_graph"
            except Exception as e:  # noqa: BLE001 - timed by eager calls instead, flagged
                torch.cuda.synchronize()
                rec["timing"][s] = f"eager right after compile ({type(e).__name__}: {str(e)[:200]})"
                eager[s] = ind.alternate({s: step}, 1)[s]
        del rec["compiling"]
        done = f"compiled in {rec['compile_s'][s]:.1f} s" if s in rec["compile_s"] else "failed"
        tell(rec, f"{workload}: {s} {done}")
    ind.fresh()
    rec["step_ms"] = dict(eager, **ind.alternate(replays, 1)) if replays else dict(eager)
    if "none" in rec["compile_s"]:
        rec["autotune_s"] = {s: t - rec["compile_s"]["none"] for s, t in rec["compile_s"].items()}
    return rec


# -- report -------------------------------------------------------------------------------------------


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def table(data, settings):
    """The report: the GEMM table and its totals (when GEMMs were measured), then each workload."""
    cols = ["none"] + [s for s in settings if s != "none"]
    lines = gemm_table(data, cols) if data["gemms"] else []
    for w, r in data["e2e"].items():
        lines += [""] + e2e_table(w, r)
    return "\n".join(lines).lstrip("\n")


def gemm_table(data, cols):
    learned = [s for s in LEARNED if s in cols]  # a run without a handler has no such column
    head = (["GEMM"] + [f"compile s {s}" for s in cols] + [f"run ms {s}" for s in cols]
            + [f"{s} / best" for s in learned] + ["picked (max_autotune)"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in data["gemms"]:
        c, t = r.get("compile_s", {}), r.get("run_ms", {})
        picked = ", ".join(r.get("picked", {}).get("max_autotune", {})) or "-"
        cells = ([f"{r['gemm']['name']} ({describe(r['gemm'])})"] + [fmt(c.get(s), ".2f") for s in cols]
                 + [fmt(t.get(s), ".4f") for s in cols]
                 + [fmt(r.get(f"{s}_rel_best")) + (" **slow**" if r.get(f"{s}_flag") else "") for s in learned]
                 + [picked])
        lines.append("| " + " | ".join(cells) + " |")
    sm = data["summary"]
    lines += ["", "| setting | autotuning s (sum) | run time / max_autotune (geomean) |", "|---|---|---|"]
    for s in cols:
        lines.append(f"| {s} | {fmt(sm['autotune_s'].get(s), '.1f')} | "
                     f"{fmt(sm['run_rel_max_autotune_geomean'].get(s), '.4f')} |")
    lines.append("")
    for s in learned:
        ratios = "; ".join(f"autotuning time {b} / {s}: {fmt(sm[f'autotune_ratio_{b}_over_{s}'], '.1f')}x"
                           for b in ("max_autotune", "max_autotune_ptxas")
                           if f"autotune_ratio_{b}_over_{s}" in sm)
        lines.append(f"{ratios}; "
                     f"{s} > {SLOW_FLAG:.2f}x the best: {sm.get(f'{s}_slower_than_best_by_3pct') or 'none'}")
    slow = sm.get("slower_than_best_by_3pct", {})
    lines.append(f"GEMMs > {SLOW_FLAG:.2f}x the faster of none and max_autotune: "
                 + ", ".join(f"{s} {slow[s]} (worst {sm['worst_rel_best'][s]:.2f}x)" for s in cols if s in slow))
    return lines + failed_lines(data["gemms"])


def failed_lines(gemms):
    """One line per GEMM and setting whose compile failed: a failure is worse than any miss of the
    bound, and the bound's counts leave it out (it has no run time)."""
    return [f"FAILED: {s} on {describe(r['gemm'])} ({r['gemm']['name'][:60]}): {e.splitlines()[0]}"
            for r in gemms for s, e in r.get("errors", {}).items()]


def e2e_table(w, r):
    """One workload: compile and step time per setting, then what failed, what the handler decided
    and where the compile time went."""
    lines = [f"| {w} | compile s | step ms | GEMM lowerings | autotuned | timing |", "|---|---|---|---|---|---|"]
    for s in r["compile_s"]:
        lines.append(f"| {s} | {r['compile_s'][s]:.1f} | {fmt(r.get('step_ms', {}).get(s))} | "
                     f"{r.get('lowerings', {}).get(s)} | {r.get('autotuned', {}).get(s)} | {r['timing'].get(s)} |")
    failed = [f"{w} {s} failed: {e}" for s, e in r.get("errors", {}).items()]
    if "compiling" in r:
        failed.append(f"{w}: the run was cut inside {r['compiling']}'s compile (no step timed)")
    lines += [""] + failed if failed else []
    for s in HANDLED:
        if r.get(f"{s}_stats"):
            lines.append(f"\n{w}: the handler's decisions ({s}) {r[f'{s}_stats']}")
    for s, phases in r.get("phases_s", {}).items():
        if phases:
            lines.append(f"{w} {s}: seconds inside " + ", ".join(
                f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in phases.items()))
    return lines


# -- main ---------------------------------------------------------------------------------------------


def line_range(text):
    """`A-B` (1 <= A <= B) as (A, B); a single line `A` as (A, A)."""
    first, dash, last = text.partition("-")
    if not dash:
        last = first
    if first.isdigit() and last.isdigit() and 1 <= int(first) <= int(last):
        return int(first), int(last)
    raise argparse.ArgumentTypeError(f"{text!r} is not A or A-B with 1 <= A <= B (e.g. 1-14)")


def line_ranges(text):
    """`A-B[,C,D-E...]` as a list of (A, B), for --lines."""
    return [line_range(part) for part in text.split(",")]


def as_ranges(numbers):
    """Line numbers as `A-B[,C,D-E...]`, each run of consecutive numbers one range (a lone line
    as its number)."""
    runs = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(f"{a}-{b}" if a < b else f"{a}" for a, b in runs)


def default_workloads(a):
    """--workloads when not given: all of them; but what the command names instead where it
    names GEMMs (--gemms: only those) or a workload of its own (--workload-file: only that).
    A call meant for a file's GEMMs that also ran the built-in end-to-end models spent its
    device time on them (docs/results.md, fortieth session)."""
    if a.gemms:
        return "gemms"
    return "" if a.workload_file else ",".join(WORKLOADS)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--handler", help="the generated handler module (.py); needed for setting ours")
    p.add_argument("--candidate", metavar="MODULE.py",
                   help="a second handler module, measured as setting candidate beside ours (its file "
                        "name must differ from --handler's: ah-prune --heuristic-name)")
    p.add_argument("--out", help="the JSON results file")
    p.add_argument("--gemms", help="JSON lines of GEMMs (replaces the held-out list)")
    p.add_argument("--lines", metavar="A-B[,C,...]", type=line_ranges,
                   help="only the GEMMs on lines A to B (and C to D ...) of --gemms (1-based, "
                        "inclusive): a set measured in parts, each result file naming the file and "
                        "its lines")
    p.add_argument("--workloads", default=None,
                   help=f"comma-separated, of {', '.join(WORKLOADS)} (default: all of them; only gemms "
                        f"when --gemms is given, none when --workload-file is given, and only gemms "
                        f"when both are)")
    p.add_argument("--workload-file", action="append", default=[], metavar="FILE.py",
                   help="an end-to-end workload of your own, run after --workloads under the file's "
                        "name: it defines build(torch) and workload(torch, model, options) "
                        "(docs/inductor.md); repeatable")
    p.add_argument("--settings", default=",".join(DEFAULT_SETTINGS),
                   help=f"comma-separated, of {', '.join(SETTINGS)}")
    p.add_argument("--budget-s", type=float, default=None, help="start no item after this many seconds")
    p.add_argument("--rounds", type=int, default=9, help="alternated rounds of the run-time median")
    p.add_argument("--merge", nargs="+", metavar="JSON",
                   help="print the GEMMs of these result files as one table (see merge) and stop; "
                        "with --out, also write them there as one result file")
    for option, what in SWITCHES:
        flag = option.replace("_", "-")
        p.add_argument("--" + flag, action="append", default=[], choices=ROLES,
                       help=f"install that role's handler with {option}=True: {what}; repeatable")
        p.add_argument("--no-" + flag, action="append", default=[], choices=ROLES,
                       help=f"install that role's handler with {option}=False; repeatable")
    p.add_argument("--dry-run", action="store_true",
                   help="print the planned GEMMs and stop (no torch); with --handler, what it decides for each")
    a = p.parse_args(argv)
    if a.workloads is None:
        a.workloads = default_workloads(a)
    a.workloads = [w for w in a.workloads.split(",") if w]
    a.settings = [s for s in a.settings.split(",") if s]
    files = {os.path.splitext(os.path.basename(f))[0]: f for f in a.workload_file}
    for w in a.workloads:
        if w in files:
            p.error(f"workload {w!r} is --workload-file {files[w]}'s: it runs after --workloads "
                    f"without being named there; leave it out of --workloads")
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r} (one of {', '.join(WORKLOADS)}; a workload of your own "
                    f"runs by --workload-file FILE.py)")
    for s in a.settings:
        if s not in SETTINGS:
            p.error(f"unknown setting {s!r} (one of {', '.join(SETTINGS)})")
    if not a.dry_run and not a.out and not a.merge:
        p.error("--out is required")
    if not a.dry_run and not a.merge:
        if set(OURS) & set(a.settings) and not a.handler:
            p.error("settings ours and ours_full need --handler")
        if "candidate" in a.settings and not a.candidate:
            p.error("setting candidate needs --candidate")
    if a.lines and not a.gemms:
        p.error("--lines needs --gemms")
    if a.handler and a.candidate and os.path.basename(a.handler) == os.path.basename(a.candidate):
        p.error(f"--handler and --candidate are both named {os.path.basename(a.candidate)}: each handler "
                "is imported under its file name, so give the candidate another (ah-prune --heuristic-name)")
    for option, _ in SWITCHES:
        both = set(getattr(a, option)) & set(getattr(a, "no_" + option))
        if both:
            flag = option.replace("_", "-")
            p.error(f"--{flag} and --no-{flag} both name {', '.join(sorted(both))}")
    return a


# The install() options a role's handler can be given (`--retime ROLE`, `--no-retime ROLE`,
# ...), and what each does when on: one table for the flags, install_options and the result's
# meta. A role whose flags name no option keeps its module's default for it.
SWITCHES = (
    ("retime", "the choices of small GEMMs it leaves to max-autotune are timed again by CUDA graph "
               "(retime.py; the default of handler modules since the twenty-seventh session)"),
    ("warm_splits", "a lowering that offers decompose_k's splits is re-timed whole on warm operands "
                    "(retime.py; the default of handler modules since the forty-first session)"),
    ("warm_no_bias", "every mm and bmm lowering it re-times is re-timed on warm operands, without "
                     "the L2 flush (retime.py; the default of handler modules since the forty-third "
                     "session)"),
    ("narrow_search", "a linear layer to a narrow output (choices.narrow_linear: MoE routers, "
                      "classifier heads, LoRA's lora_A) that it decides cuBLAS only is left to "
                      "max-autotune (the default of handler modules since the forty-fifth session)"),
    ("small_bmm_search", "a bmm with a side of at most 64 (choices.small_side_bmm: decode "
                         "attention, MoE experts over few tokens) that it decides cuBLAS only is "
                         "left to max-autotune (the default of handler modules since the "
                         "forty-seventh session)"),
    ("one_aten_search", "the lists it leaves to max-autotune keep one ATen choice, the one it keeps "
                        "when it decides cuBLAS only (addmm's two cuBLAS calls: the bias rule's, "
                        "choices.one_aten; the default of handler modules since the forty-eighth "
                        "session)"),
    ("bias_head_search", "a half-precision linear with bias over 128-256 rows with k >= 2048 and n <= "
                         "4096 (choices.bias_head: classifier heads at a batch of 128-256) that it "
                         "decides cuBLAS only is left to max-autotune (the default of handler "
                         "modules since the forty-ninth session)"),
)


def install_options(a):
    """role -> the arguments its handler's install() gets: `OPTION=True` from --OPTION ROLE and
    `OPTION=False` from --no-OPTION ROLE, for each of SWITCHES; a role not named keeps its
    module's defaults (older modules lack the later arguments)."""
    options = {}
    for option, _ in SWITCHES:
        for value, roles in ((True, getattr(a, option)), (False, getattr(a, "no_" + option))):
            for role in roles:
                options.setdefault(role, {})[option] = value
    return options


def handler_paths(a):
    """role -> module path of the handlers the settings install."""
    roles = {HANDLED[s] for s in a.settings if s in HANDLED}
    return {role: getattr(a, "handler" if role == "ours" else role) for role in sorted(roles)}


def main(argv=None):
    a = parse(argv)
    try:
        a.workloads += [load_workload_file(f) for f in a.workload_file]
    except WorkloadFileError as e:
        print(f"inductor_eval: {e}", file=sys.stderr)
        return 2
    if a.merge:
        try:
            data = merge(a.merge)
            if a.out:
                write_merged(data, a.out, a.merge)
        except MergeError as e:
            print(f"inductor_eval: {e}", file=sys.stderr)
            return 2
        print(table(data, [s for s in SETTINGS if s in data["summary"]["autotune_s"]]))
        return 0
    try:
        gemms = read_gemms(a.gemms, lines=a.lines) if a.gemms else holdout_gemms()
    except (OSError, GemmFileError) as e:
        print(f"inductor_eval: {e}", file=sys.stderr)
        return 2
    if a.dry_run and (a.handler or a.candidate):
        roles = [(role, p) for role, p in (("ours", a.handler), ("candidate", a.candidate)) if p]
        options = install_options(a)
        for role, path in roles:
            handler = load_handler(path)
            for w in a.workloads:
                print(f"{w} ({os.path.basename(path)}):" if len(roles) > 1 else f"{w}:")
                if w in WORKLOADS:
                    preview(gemms if w == "gemms" else workload_gemms(w), handler, options.get(role))
                else:
                    print("  (a workload file: its GEMMs are known once Inductor compiles it)")
        return 0
    if a.dry_run:
        for i, gm in enumerate(gemms):
            print(f"{i + 1:3d}  {describe(gm):42s} {gm['name']}  settings: {','.join(settings_for(gm, a.settings))}")
        print(f"{len(gemms)} GEMMs; workloads {','.join(a.workloads)}")
        return 0
    t0 = time.perf_counter()
    ind = Inductor(handler_paths(a), a.rounds, install_options(a))
    for role in ind.refused:
        dropped = [s for s in a.settings if HANDLED.get(s) == role]
        print(f"inductor_eval: the {role} handler refused this GPU or PyTorch; setting(s) "
              f"{', '.join(dropped)} dropped", file=sys.stderr)
        a.settings = [s for s in a.settings if s not in dropped]
    results = Results(a.out, dict(ind.meta(), args=vars(a), start_up_s=time.perf_counter() - t0))
    budget_end = None if a.budget_s is None else t0 + a.budget_s

    def out_of_time():
        return budget_end is not None and time.perf_counter() > budget_end

    late = []  # GEMMs the budget left unmeasured
    for w in a.workloads:
        items = gemms if w == "gemms" else [w]
        for item in items:
            label = item["name"] if w == "gemms" else item
            if out_of_time():
                results.data["skipped"].append(label)
                if w == "gemms":
                    late.append(item)
                continue
            print(f"[{time.perf_counter() - t0:7.1f}s] {label}", file=sys.stderr, flush=True)
            try:
                if w == "gemms":
                    results.data["gemms"].append(measure_gemm(ind, item, a.settings, out_of_time))
                else:
                    results.data["e2e"][w] = measure_e2e(ind, w, a.settings, out_of_time,
                                                         e2e_progress(results, w, t0))
            except Exception as e:  # noqa: BLE001 - recorded; the next item still runs
                ind.fresh()
                results.data["skipped"].append(f"{label}: {type(e).__name__}: {str(e)[:300]}")
            results.save()
    results.save()
    print(table(results.data, a.settings))
    if late:
        note = budget_note(late, a.gemms)
        print(f"\n{note}")
        print(f"inductor_eval: {note}", file=sys.stderr)
    return 0


def e2e_progress(results, workload, t0):
    """`measure_e2e`'s progress: the record so far saved as the workload's, the line to stderr
    with the seconds since `t0`."""
    def progress(rec, line):
        results.data["e2e"][workload] = rec
        results.save()
        print(f"[{time.perf_counter() - t0:7.1f}s] {line}", file=sys.stderr, flush=True)
    return progress


def budget_note(late, gemms_path):
    """What the budget left unmeasured, and the --lines that measure it (GEMMs of a --gemms file
    carry their line), as few ranges as hold them."""
    lines = as_ranges(g["line"] for g in late if "line" in g)
    rerun = (f" (lines {lines} of {gemms_path}): measure them with `--lines {lines}`"
             if lines and gemms_path else "")
    return f"The budget ran out before {len(late)} GEMM(s){rerun}."


if __name__ == "__main__":
    sys.exit(main())
