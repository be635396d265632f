#!/usr/bin/env python3
"""A pad_mm evaluation set of real-model GEMMs, labelled by compiled truth (one CUDA GPU).

Plan (no torch needed, `--dry-run` stops after it): the `nn.Linear` layers of the models in
crates/ah-bench/catalogue/models.toml (qkv fused or separate, output projection, MLP plain or
gated, LM head hidden -> vocab, classifier hidden -> classes), each as one of the three GEMMs of a
training step, for T tokens and a Linear(in=K, out=N):

    forward       y  = x @ W.t()     m=T, k=K, n=N   mat1 computed in the graph, mat2 = W.t() (a view)
    grad_input    dx = dy @ W        m=T, k=N, n=K   mat1 computed, mat2 = W (parameter)
    grad_weight   dW = dy.t() @ x    m=N, k=T, n=K   mat1 = transposed view of computed dy,
                                                     mat2 = x (saved activation, a graph input)

Token counts are batch x sequence lengths that real runs use: the model's own `seq` list, seq-1
(decoders: shifted labels), dynamic padding to a batch's longest sample, and odd counts seen in
practice (4 x 509, 1 x 1000, 2 x 2047, 3 x 1500, ...). Dtypes bf16/fp16/fp32/fp32+TF32. Only GEMMs
that PyTorch's pad_mm would consider are kept (some dim unaligned for the dtype, all of m, k, n
>= 768: the H100 `pad_mm_precondition`), de-duplicated, spread round-robin over the models.

Measurement (needs torch + CUDA): for each GEMM and choice in (orig, pad), inside
`torch._inductor.config.patch(shape_padding=pad, force_shape_pad=pad)`: dynamo reset, compile the
function with `torch.compile(dynamic=False)`, run it once (capturing Inductor's output code), and
benchmark it in the same block (median of CUDA-graph replays, each after an L2 flush, ms; see
`make_timer` for why not `triton.testing.do_bench`). The feedback is the GPU time
of the whole compiled program (the pointwise producer + padding + mm), i.e. what the pad decision
costs or saves in a real graph, not PyTorch's isolated microbenchmark. `pad_applied` records
whether the pad program really holds a padded buffer.

Outputs: OUT (PyTorch's AutoHeuristic pad_mm log, features from PyTorch's own `get_context`, one
row per choice), OUT.gemms.jsonl (one line per GEMM), OUT.provenance.json. Resumable (`--resume`);
`--time-limit` stops before a GEMM that would pass it.

Usage:
  scripts/real_model_eval.py --dry-run [--count 160] [--seed 2026] [--list]
  scripts/real_model_eval.py --out data/pad_mm_h100_realmodels.txt [--resume] [--time-limit 540]
"""
import argparse
import collections
import datetime
import gc
import hashlib
import json
import os
import random
import re
import statistics
import sys
import time
import tomllib
from dataclasses import asdict, dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOGUE = os.path.join(ROOT, "crates/ah-bench/catalogue/models.toml")
REFERENCE_LOG = os.path.join(ROOT, "data/pad_mm_h100.txt")  # line 1: the H100 metadata line
TRAINING_SEEDS = (0, 1)  # seeds of the training / fresh logs: never reuse them here
MIN_DIM = 768  # PyTorch's H100 pad_mm_precondition: m, k, n >= 768
KINDS = ("forward", "grad_input", "grad_weight")
# (tag, torch dtype name, TF32 allowed, draw weight); fp32 "highest" is TF32 off.
DTYPES = (
    ("bf16", "torch.bfloat16", False, 0.35),
    ("fp16", "torch.float16", False, 0.25),
    ("fp32", "torch.float32", False, 0.20),
    ("tf32", "torch.float32", True, 0.20),
)
BATCHES = (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32)
ODD_RUNS = ((4, 509), (1, 1000), (2, 2047), (16, 384), (3, 1500), (8, 197), (6, 777), (1, 1023))
CLASSIFIER_BATCHES = (768, 1000, 1024, 1500, 2000, 4096)  # pooled: one row per sample
EXIT_BAD_INPUT = 2


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Plan (pure Python)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    name: str  # e.g. "qkv", "k_proj,v_proj" (identical shapes merged), "lm_head"
    in_features: int
    out_features: int


@dataclass
class Gemm:
    id: str
    model: str
    family: str
    layer: str
    kind: str
    tokens: str  # "BxS" (or "B" pooled)
    m: int
    k: int
    n: int
    dtype: str  # torch.float16 ...
    tf32: bool
    mat1_layout: str  # computed | computed_t
    mat2_layout: str  # param | param_t | saved


def model_layers(model):
    """The catalogue header's derivation of a model's nn.Linear layers."""
    h, heads, kv, hd = model["hidden"], model["heads"], model["kv_heads"], model["head_dim"]
    layers = []
    if model["qkv"] == "fused":
        layers.append(Layer("qkv", h, (heads + 2 * kv) * hd))
    elif model["qkv"] == "separate":
        layers.append(Layer("q_proj", h, heads * hd))
        layers.append(Layer("k_proj,v_proj", h, kv * hd))
    else:
        raise ValueError(f"{model['name']}: qkv must be fused or separate, not {model['qkv']!r}")
    layers.append(Layer("o_proj", heads * hd, h))
    inter = model["intermediate"]
    if model["mlp"] == "plain":
        layers.append(Layer("up_proj", h, inter))
    elif model["mlp"] == "gated":
        layers.append(Layer("gate_proj,up_proj", h, inter))
    else:
        raise ValueError(f"{model['name']}: mlp must be plain or gated, not {model['mlp']!r}")
    layers.append(Layer("down_proj", inter, h))
    if model["vocab"] > 0:
        layers.append(Layer("lm_head", h, model["vocab"]))
    if model["classes"] > 0:
        layers.append(Layer("classifier", h, model["classes"]))
    return layers


def gemm_shape(kind, tokens, layer):
    """(m, k, n, mat1 layout, mat2 layout) of one GEMM of Linear(in=K, out=N) on T tokens."""
    t, k_in, n_out = tokens, layer.in_features, layer.out_features
    if kind == "forward":
        return t, k_in, n_out, "computed", "param_t"
    if kind == "grad_input":
        return t, n_out, k_in, "computed", "param"
    return n_out, t, k_in, "computed_t", "saved"


def padded_length(x, align):
    """PyTorch's get_padded_length (a dim of 1 counts as aligned)."""
    if align == 0 or x % align == 0 or x == 1:
        return 0
    return (x // align + 1) * align - x


def align_size(dtype):
    return 4 if dtype == "torch.float32" else 8


def pad_mm_considers(m, k, n, dtype):
    a = align_size(dtype)
    unaligned = any(padded_length(x, a) for x in (m, k, n))
    return unaligned and min(m, k, n) >= MIN_DIM


def draw_seq(rng, model):
    """One sequence length a real run of this model uses."""
    seqs, fam = model["seq"], model["family"]
    if fam == "vision":
        return rng.choice(seqs)
    r = rng.random()
    if r < 0.45:
        return rng.choice(seqs)
    if r < 0.60 and fam == "decoder":
        return rng.choice(seqs) - 1  # logits/labels shifted by one token
    if r < 0.85:  # dynamic padding to the batch's longest sample
        return rng.randint(max(64, min(seqs) // 2), max(seqs))
    odd = [s for _, s in ODD_RUNS if s <= max(seqs)]
    return rng.choice(odd) if odd else rng.choice(seqs)


def draw_tokens(rng, model, layer, max_tokens):
    """(T, "BxS") within [MIN_DIM, max_tokens], or None."""
    if layer.name == "classifier":
        b = rng.choice(CLASSIFIER_BATCHES)
        return (b, str(b)) if b <= max_tokens else None
    if rng.random() < 0.15:
        fits = [(b, s) for b, s in ODD_RUNS if s <= max(model["seq"])]
        if model["family"] == "vision":
            fits = [(b, s) for b, s in fits if s in model["seq"]]
        if fits:
            b, s = rng.choice(fits)
            t = b * s
            return (t, f"{b}x{s}") if MIN_DIM <= t <= max_tokens else None
    s = draw_seq(rng, model)
    ok = [b for b in BATCHES if MIN_DIM <= b * s <= max_tokens]
    if not ok:
        return None
    b = rng.choice(ok)
    return b * s, f"{b}x{s}"


def draw_dtype(rng):
    r, acc = rng.random(), 0.0
    for tag, name, tf32, w in DTYPES:
        acc += w
        if r < acc:
            return tag, name, tf32
    return DTYPES[-1][:3]


def gemm_id(m, k, n, tag, kind):
    return f"{m}x{k}x{n}-{tag}-{kind}"


def draw_gemm(rng, model, layers, max_tokens):
    layer = rng.choice(layers)
    kind = rng.choice(KINDS)
    drawn = draw_tokens(rng, model, layer, max_tokens)
    if drawn is None:
        return None
    t, tokens = drawn
    tag, dtype, tf32 = draw_dtype(rng)
    m, k, n, l1, l2 = gemm_shape(kind, t, layer)
    if not pad_mm_considers(m, k, n, dtype):
        return None
    return Gemm(gemm_id(m, k, n, tag, kind), model["name"], model["family"], layer.name, kind,
                tokens, m, k, n, dtype, tf32, l1, l2)


def plan(models, count, seed, max_tokens, attempts=400):
    """`count` distinct GEMMs, round-robin over the models in a seeded order."""
    rng = random.Random(seed)
    order = list(models)
    rng.shuffle(order)
    layers = {m["name"]: model_layers(m) for m in order}
    seen, out, active = set(), [], list(order)
    while len(out) < count and active:
        for model in list(active):
            if len(out) >= count:
                break
            for _ in range(attempts):
                g = draw_gemm(rng, model, layers[model["name"]], max_tokens)
                if g is not None and g.id not in seen:
                    seen.add(g.id)
                    out.append(g)
                    break
            else:
                active.remove(model)  # this model has no more distinct considered GEMMs to give
    return out


def load_catalogue(path):
    try:
        with open(path, "rb") as f:
            models = tomllib.load(f)["model"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as e:
        log(f"error: cannot read the catalogue {path}: {e}")
        sys.exit(EXIT_BAD_INPUT)
    for m in models:
        try:
            model_layers(m)
        except (KeyError, ValueError) as e:
            log(f"error: {path}: model {m.get('name', '?')}: {e}; fix the catalogue entry")
            sys.exit(EXIT_BAD_INPUT)
    return models


def summary(gemms):
    def table(title, key):
        c = collections.Counter(key(g) for g in gemms)
        rows = ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{title} ({len(c)}): {rows}"

    tag = lambda g: "tf32" if g.tf32 else {"torch.bfloat16": "bf16", "torch.float16": "fp16"}.get(g.dtype, "fp32")
    lines = [
        f"{len(gemms)} GEMMs",
        table("models", lambda g: g.model),
        table("families", lambda g: g.family),
        table("kinds", lambda g: g.kind),
        table("dtypes", tag),
        table("layers", lambda g: g.layer),
        table("unaligned dims", lambda g: "".join(
            d for d, x in zip("mkn", (g.m, g.k, g.n)) if padded_length(x, align_size(g.dtype)))),
    ]
    heads = sorted({(g.model, g.n if g.kind == "forward" else g.m if g.kind == "grad_weight" else g.k)
                    for g in gemms if g.layer == "lm_head"})
    lines.append(f"LM heads (model, vocab): {', '.join(f'{m} {v}' for m, v in heads)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Measurement (torch + CUDA)
# ---------------------------------------------------------------------------------------------
# Expected cost per GEMM on an H100: two compiles (dynamo trace, AOT, Inductor lowering, 1-3 small
# Triton pointwise/pad kernels: ~1.5-4 s each, the first of a process ~10-20 s for the worker pool
# and CUDA init) plus two do_bench calls (~0.15 s each) and tensor setup: ~4-8 s per GEMM, so 160
# GEMMs take ~11-21 min, i.e. two or three 10-minute device calls with --resume.


def configure_torch(torch):
    """Inductor options that cut compile time or cache mix-ups without touching pad_mm's decision."""
    ic = torch._inductor.config
    for name, value in (
        ("fx_graph_cache", False),  # keyed on the config too, but never risk orig/pad mix-ups
        ("fx_graph_remote_cache", False),
        ("autotune_local_cache", False),
        ("max_autotune", False),
        ("max_autotune_gemm", False),
        ("coordinate_descent_tuning", False),
        ("benchmark_kernel", False),
        ("freezing", False),
    ):
        if hasattr(ic, name):
            setattr(ic, name, value)
    if hasattr(ic, "triton") and hasattr(ic.triton, "cudagraphs"):
        ic.triton.cudagraphs = False
    try:
        import torch._functorch.config as fc

        if hasattr(fc, "enable_autograd_cache"):
            fc.enable_autograd_cache = False  # AOTAutograd's cache, same reasoning
    except ImportError:
        pass
    torch._dynamo.config.automatic_dynamic_shapes = False


def case_program(torch, kind):
    """The compiled function of a GEMM kind: mat1 computed in the graph, the rest plain inputs.

    forward      y  = act(x) @ W.t()   inputs x (T, K), W (N, K)
    grad_input   dx = dy @ W           inputs dy (T, N), W (N, K)
    grad_weight  dW = dy.t() @ x       inputs dy (T, N), x (T, K) (the saved activation)
    """
    if kind == "forward":
        return lambda a, w: torch.mm(a + 1, w.t())
    if kind == "grad_input":
        return lambda dy, w: torch.mm(dy + 1, w)
    return lambda dy, x: torch.mm((dy + 1).t(), x)


def case_inputs(torch, g, device):
    """The program's inputs, shaped so that its mm is (m x k) @ (k x n)."""
    dt = getattr(torch, g.dtype.split(".")[1])
    shapes = {
        "forward": ((g.m, g.k), (g.n, g.k)),
        "grad_input": ((g.m, g.k), (g.k, g.n)),
        "grad_weight": ((g.k, g.m), (g.k, g.n)),
    }[g.kind]
    return tuple(torch.randn(*s, dtype=dt, device=device) for s in shapes)


def case_operands(torch, g):
    """mat1, mat2 as pad_mm sees them (meta tensors), and whether each is computed in the graph."""
    a, b = case_inputs(torch, g, "meta")
    mat1 = {"forward": a + 1, "grad_input": a + 1, "grad_weight": (a + 1).t()}[g.kind]
    mat2 = b.t() if g.kind == "forward" else b
    return mat1, mat2, (True, False)


def pytorch_context(torch, g, mat1, mat2, computed):
    """PyTorch's own pad_mm context (the TF32 flag must already be set)."""
    from torch._inductor.fx_passes import pad_mm as P

    # should_exclude_padding_time: computed in the graph (not a placeholder) and contiguous
    pre1 = computed[0] and mat1.is_contiguous()
    pre2 = computed[1] and mat2.is_contiguous()
    a1, a2 = P.get_alignment_size(mat1), P.get_alignment_size(mat2)
    mp = P.get_padded_length(mat1.shape[0], a1)
    kp = P.get_padded_length(mat1.shape[1], a1)
    np_ = P.get_padded_length(mat2.shape[1], a2)
    ctx = P.get_context(mat1, mat2, pre1, pre2, mp, kp, np_)
    return ctx, (mp, kp, np_)


def metadata_line(torch, ctx):
    """AutoHeuristic's serialize_metadata for pad_mm on this device, through PyTorch's code."""
    import types

    from torch._inductor.autoheuristic.autoheuristic import AutoHeuristic
    from torch._inductor.autoheuristic.autoheuristic_utils import AHMetadata
    from torch._inductor.utils import get_gpu_shared_memory

    md = AHMetadata(get_gpu_shared_memory(), torch.cuda.get_device_capability(), ["orig", "pad"], "pad_mm")
    try:
        return AutoHeuristic.serialize_metadata(types.SimpleNamespace(metadata=md, context=ctx))
    except AttributeError:  # another layout of AutoHeuristic: its serialize_metadata, by hand
        d = md.to_dict()
        d["numerical_features"], d["categorical_features"] = ctx.get_numerical_and_categorical_features()
        return json.dumps(d)


def precondition_ok(torch, ctx):
    from torch._inductor.autoheuristic.autoheuristic_utils import AHMetadata, pad_mm_precondition
    from torch._inductor.utils import get_gpu_shared_memory

    md = AHMetadata(get_gpu_shared_memory(), torch.cuda.get_device_capability(), ["orig", "pad"], "pad_mm")
    return pad_mm_precondition(md, ctx)


TUPLE_RE = re.compile(r"\((\d+), (\d+)\)")


def pad_applied(codes_orig, codes_pad, g, pads):
    """True when the pad program holds a buffer/view of a padded size the orig program lacks."""
    if not codes_orig or not codes_pad:
        return None
    orig, pad = "\n".join(codes_orig), "\n".join(codes_pad)
    if orig == pad:
        return False
    padded = {x + p for x, p in zip((g.m, g.k, g.n), pads) if p}
    new = set(TUPLE_RE.findall(pad)) - set(TUPLE_RE.findall(orig))
    return any(int(a) in padded or int(b) in padded for a, b in new)


def make_timer(torch, warmup_ms, rep_ms, kind):
    """(timer, name): `timer(f)` is the median time of `f()` in ms.

    `cudagraph` (default): `f` is captured once in a CUDA graph and each timed call replays it
    after an L2 flush, so the time is what the GPU spends on the program. `do_bench` times the
    Python call itself: on GEMMs of tens of microseconds the compiled wrapper's launch overhead
    (guards, several kernel launches) exceeds the GPU time, the GPU waits on the CPU, and two
    runs of the same GEMM disagreed by up to 6x on the H100 (docs/real-models.md)."""
    if kind == "cudagraph":
        return (lambda f: graph_time(torch, f, warmup_ms, rep_ms)), \
            "CUDA-graph replay median (L2 flushed before each replay)"
    try:
        import triton.testing

        def timer(f):
            return float(triton.testing.do_bench(f, warmup=warmup_ms, rep=rep_ms, return_mode="median"))

        return timer, "triton.testing.do_bench median"
    except ImportError:
        from torch._inductor.runtime.benchmarking import benchmarker

        return (lambda f: float(benchmarker.benchmark_gpu(f))), "InductorBenchmarker.benchmark_gpu"


def graph_time(torch, f, warmup_ms, rep_ms):
    """Median ms of replays of `f` captured in a CUDA graph, each after a 256 MiB L2 flush."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # capture needs the lazy work (allocations, autotuning) done
        for _ in range(2):
            f()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        f()
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")

    def timed(n):
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for start, end in events:
            flush.zero_()
            start.record()
            graph.replay()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in events]

    estimate = statistics.median(timed(5))
    timed(max(1, min(100, int(warmup_ms / max(estimate, 1e-3)))))
    n = max(10, min(1000, int(rep_ms / max(estimate, 1e-3))))
    ms = statistics.median(timed(n))
    del graph
    return ms


def measure_choice(torch, fn, inputs, choice, timer):
    """(ms, compile s, output codes, error) of one choice; everything inside one config patch."""
    from torch._inductor.utils import run_and_get_code

    pad = choice == "pad"
    torch._dynamo.reset()
    try:
        with torch._inductor.config.patch(shape_padding=pad, force_shape_pad=pad):
            compiled = torch.compile(fn, dynamic=False, fullgraph=True)
            t0 = time.perf_counter()
            _, codes = run_and_get_code(compiled, *inputs)  # resets dynamo, compiles, runs once
            torch.cuda.synchronize()
            compile_s = round(time.perf_counter() - t0, 2)
            ms = timer(lambda: compiled(*inputs))  # same patch block: no recompilation
            return ms, compile_s, codes, None
    except Exception as e:  # OOM, compile errors: log inf and go on
        return float("inf"), None, [], error_text(e)
    finally:
        torch._dynamo.reset()


def error_text(e):
    first = str(e).splitlines()[0][:200] if str(e) else ""
    return f"{type(e).__name__}: {first}"


def measure_gemm(torch, g, timer):
    """One GEMM: (context, record dict)."""
    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = g.tf32
    inputs = None
    try:
        ctx, pads = pytorch_context(torch, g, *case_operands(torch, g))
        try:
            inputs = case_inputs(torch, g, "cuda")
        except Exception as e:  # OOM while building the inputs: still logged, with inf
            res = {c: (float("inf"), None, [], error_text(e)) for c in ("orig", "pad")}
        else:
            fn = case_program(torch, g.kind)
            res = {c: measure_choice(torch, fn, inputs, c, timer) for c in ("orig", "pad")}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32
        inputs = None
        gc.collect()
        torch.cuda.empty_cache()
    rec = asdict(g)
    finite = lambda x: x if x != float("inf") else None  # JSON has no inf: null + the error
    rec.update(
        orig_ms=finite(res["orig"][0]), pad_ms=finite(res["pad"][0]),
        pad_applied=pad_applied(res["orig"][2], res["pad"][2], g, pads),
        orig_compile_s=res["orig"][1], pad_compile_s=res["pad"][1],
        orig_error=res["orig"][3], pad_error=res["pad"][3],
        padded_lengths=list(pads), precondition=precondition_ok(torch, ctx),
    )
    return ctx, rec


def meta_context(torch, g):
    """The context of a GEMM without touching the GPU (for the metadata line and header)."""
    prev_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = g.tf32
    try:
        return pytorch_context(torch, g, *case_operands(torch, g))[0]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev_tf32


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def repair_tail(path):
    """Cut a torn last line (a run killed mid-write), as ah-log's Log::repair_torn_tail."""
    if not os.path.exists(path):
        return
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            f.truncate(cut)
            log(f"note: {path}: cut a torn last line ({len(data) - cut} bytes)")


def read_done(jsonl):
    done = []
    if os.path.exists(jsonl):
        with open(jsonl) as f:
            done = [json.loads(line) for line in f if line.strip()]
    return done


def align_log_to_done(out, n_done):
    """Rows are written before the GEMM's jsonl line: drop rows of a GEMM without one."""
    if not os.path.exists(out):
        return
    with open(out) as f:
        lines = f.readlines()
    keep = 2 + 2 * n_done
    if len(lines) > keep:
        with open(out, "w") as f:
            f.writelines(lines[:keep])
        log(f"note: {out}: dropped {len(lines) - keep} rows of a GEMM that has no {out}.gemms.jsonl line")


def open_log(out, meta, header, resume):
    if os.path.exists(out) and os.path.getsize(out) > 0:
        if not resume:
            log(f"error: {out} exists; pass --resume to append to it or choose another --out")
            sys.exit(EXIT_BAD_INPUT)
        with open(out) as f:
            first = f.readline().strip()
        if first != meta:
            log(f"error: {out} was written with other metadata:\n  {first}\nthis device writes:\n  {meta}")
            sys.exit(EXIT_BAD_INPUT)
        return open(out, "a")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    f = open(out, "w")
    f.write(meta + "\n" + header + "\n")
    f.flush()
    return f


def versions(torch):
    v = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        import triton

        v["triton"] = triton.__version__
    except ImportError:
        v["triton"] = None
    return v


def write_provenance(path, args, torch, meta, timer_name, n_planned):
    prov = {}
    if os.path.exists(path):
        with open(path) as f:
            prov = json.load(f)
    with open(args.catalogue, "rb") as f:
        cat_sha = hashlib.sha256(f.read()).hexdigest()
    prov.update(
        script="scripts/real_model_eval.py",
        log=os.path.basename(args.out),
        seed=args.seed, count=args.count, planned=n_planned, max_tokens=args.max_tokens,
        catalogue=os.path.relpath(os.path.abspath(args.catalogue), ROOT), catalogue_sha256=cat_sha,
        metadata_line=meta,
        label=f"feedback = {timer_name} (ms) of the whole torch.compile'd program "
              "(producer + [padding] + mm), choice orig: shape_padding=False, "
              "pad: shape_padding=True + force_shape_pad=True",
    )
    prov.setdefault("sessions", []).append({
        "argv": sys.argv,
        # Paths inside the repository are recorded relative to it, never as this machine's paths.
        "args": {k: os.path.relpath(v, ROOT) if isinstance(v, str) and v.startswith(ROOT + os.sep) else v
                 for k, v in vars(args).items()},
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device_name": torch.cuda.get_device_name(), "capability": list(torch.cuda.get_device_capability()),
        "versions": versions(torch), "timer": timer_name,
    })
    with open(path, "w") as f:
        json.dump(prov, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="data/pad_mm_h100_realmodels.txt")
    p.add_argument("--count", type=int, default=160)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--max-tokens", type=int, default=16384, help="largest T (memory and time)")
    p.add_argument("--catalogue", default=CATALOGUE)
    p.add_argument("--dry-run", action="store_true", help="print the plan, no torch needed")
    p.add_argument("--list", action="store_true", help="with --dry-run: one line per GEMM")
    p.add_argument("--resume", action="store_true", help="skip GEMMs in OUT.gemms.jsonl, append")
    p.add_argument("--time-limit", type=float, default=0, help="seconds; 0 = none")
    p.add_argument("--warmup-ms", type=int, default=25)
    p.add_argument("--rep-ms", type=int, default=100)
    p.add_argument("--timer", choices=("cudagraph", "do_bench"), default="cudagraph",
                   help="how a compiled program is timed (see make_timer)")
    p.add_argument("--allow-other-metadata", action="store_true",
                   help="do not require the metadata line of data/pad_mm_h100.txt (another GPU)")
    a = p.parse_args()
    if a.seed in TRAINING_SEEDS:
        p.error(f"--seed {a.seed} is a training-log seed; use another (default 2026)")
    if a.count < 1 or a.max_tokens < MIN_DIM:
        p.error(f"--count must be >= 1 and --max-tokens >= {MIN_DIM}")
    return a


def check_same_timer(prov_path, timer_name, resume):
    """A resumed set keeps one timer: refuse to mix labels of two timing methods."""
    if not resume or not os.path.exists(prov_path):
        return
    with open(prov_path) as f:
        sessions = json.load(f).get("sessions", [])
    used = {s.get("timer") for s in sessions} - {None}
    if used and used != {timer_name}:
        log(f"error: {prov_path}: earlier sessions timed with {sorted(used)}, this one with "
            f"'{timer_name}'; resume with the same --timer or write to another --out")
        sys.exit(EXIT_BAD_INPUT)


def check_metadata(meta, allow_other):
    try:
        with open(REFERENCE_LOG) as f:
            ref = f.readline().strip()
    except OSError:
        log(f"warning: {REFERENCE_LOG} not found; metadata line not compared")
        return
    if meta != ref and not allow_other:
        log(f"error: PyTorch's metadata line differs from line 1 of data/pad_mm_h100.txt:\n  {meta}\n  {ref}\n"
            "(another GPU? pass --allow-other-metadata)")
        sys.exit(EXIT_BAD_INPUT)


def run(args, gemms):
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", "/tmp/real_model_eval_inductor_cache")
    import torch
    import torch._dynamo
    import torch._inductor.config
    import torch._inductor.utils

    if not torch.cuda.is_available():
        log("error: no CUDA device; use --dry-run here")
        sys.exit(EXIT_BAD_INPUT)
    import warnings

    warnings.filterwarnings("ignore", message=".*allow_tf32.*")
    configure_torch(torch)
    start = time.monotonic()
    jsonl, prov = args.out + ".gemms.jsonl", args.out + ".provenance.json"
    for path in (args.out, jsonl):
        repair_tail(path)
    if not args.resume and os.path.exists(jsonl) and os.path.getsize(jsonl) > 0:
        log(f"error: {jsonl} exists; pass --resume or choose another --out")
        sys.exit(EXIT_BAD_INPUT)
    done = read_done(jsonl) if args.resume else []
    align_log_to_done(args.out, len(done))
    done_ids = {d["id"] for d in done}
    todo = [g for g in gemms if g.id not in done_ids]
    timer, timer_name = make_timer(torch, args.warmup_ms, args.rep_ms, args.timer)
    check_same_timer(prov, timer_name, args.resume)
    if not todo:
        report(done, len(gemms))
        return
    ctx0 = meta_context(torch, todo[0])
    meta = metadata_line(torch, ctx0)
    check_metadata(meta, args.allow_other_metadata)
    log_f = open_log(args.out, meta, ctx0.get_feature_names_csv() + ",choice,feedback", args.resume)
    jsonl_f = open(jsonl, "a")
    write_provenance(prov, args, torch, meta, timer_name, len(gemms))
    times = []
    try:
        for i, g in enumerate(todo, 1):
            est = max(15.0, 1.3 * max(times[-5:])) if times else 30.0
            if args.time_limit and time.monotonic() - start + est > args.time_limit:
                log(f"time limit: stopping before GEMM {len(done_ids) + i}/{len(gemms)}; rerun with --resume")
                break
            t0 = time.monotonic()
            ctx, rec = measure_gemm(torch, g, timer)
            values = ctx.get_feature_values_csv()
            ms = {c: float("inf") if rec[f"{c}_ms"] is None else rec[f"{c}_ms"] for c in ("orig", "pad")}
            log_f.write(f"{values},orig,{ms['orig']}\n{values},pad,{ms['pad']}\n")
            log_f.flush()
            times.append(time.monotonic() - t0)
            rec["seconds"] = round(times[-1], 2)
            jsonl_f.write(json.dumps(rec) + "\n")
            jsonl_f.flush()
            progress(i, len(todo), g, rec, times, start)
    finally:
        log_f.close()
        jsonl_f.close()
    report(read_done(jsonl), len(gemms))


def progress(i, n, g, rec, times, start):
    rate = i / max(1e-9, time.monotonic() - start) * 60
    eta = statistics.mean(times[-10:]) * (n - i)
    flag = {True: "padded", False: "NOT padded", None: "no code"}[rec["pad_applied"]]
    err = f" errors: {rec['orig_error']} | {rec['pad_error']}" if rec["orig_error"] or rec["pad_error"] else ""
    log(f"[{i}/{n}] {g.model} {g.layer} {g.kind} {g.m}x{g.k}x{g.n} {g.dtype}{' tf32' if g.tf32 else ''}: "
        f"orig {fmt_ms(rec['orig_ms'])}, pad {fmt_ms(rec['pad_ms'])} ({flag}), {times[-1]:.1f} s; "
        f"{rate:.1f} GEMMs/min, ETA {eta / 60:.1f} min{err}")


def fmt_ms(x):
    return "inf" if x is None else f"{x:.4f} ms"


def report(done, planned):
    not_padded = sum(1 for d in done if d["pad_applied"] is False)
    unknown = sum(1 for d in done if d["pad_applied"] is None)
    failed = sum(1 for d in done if d["orig_error"] or d["pad_error"])
    faster = sum(1 for d in done if d["pad_ms"] is not None and (d["orig_ms"] is None or d["pad_ms"] < d["orig_ms"]))
    log(f"done {len(done)}/{planned} GEMMs; pad faster on {faster}; pad_applied false on {not_padded}, "
        f"unknown on {unknown}; {failed} with a failed choice (inf)")


def main():
    args = parse_args()
    models = load_catalogue(args.catalogue)
    gemms = plan(models, args.count, args.seed, args.max_tokens)
    if args.dry_run:
        print(summary(gemms))
        if args.list:
            for g in gemms:
                print(f"{g.id}\t{g.model}\t{g.layer}\t{g.tokens}\t{g.mat1_layout},{g.mat2_layout}")
        jsonl = args.out + ".gemms.jsonl"
        if os.path.exists(jsonl):
            ids = {d["id"] for d in read_done(jsonl)}
            print(f"{sum(g.id in ids for g in gemms)} of them already in {jsonl}")
        return
    if len(gemms) < args.count:
        log(f"note: the catalogue gives only {len(gemms)} distinct considered GEMMs")
    run(args, gemms)


if __name__ == "__main__":
    main()
