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
from ah_inductor.ptxas import forget_ptxas_version, ptxas_align, ptxas_restore  # noqa: E402
from ah_inductor.retime import retime_install, retime_uninstall  # noqa: E402  (imports no torch)

# This script's own modules, each one idea, none importing torch: the settings, the GEMMs before
# any torch, the end-to-end workloads, the result file and its report.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_gemms import GemmFileError, describe, handler_features, holdout_gemms, read_gemms  # noqa: E402
from inductor_results import MergeError, Results, flag_ours, json_default, merge, table, write_merged  # noqa: E402
from inductor_settings import (  # noqa: E402
    ALIGNED, DEFAULT_SETTINGS, HANDLED, OPTIONS, OURS, ROLES, SETTINGS, WORKLOADS)
from inductor_workloads import E2E, WorkloadFileError, load_workload_file, workload_gemms  # noqa: E402


# -- what a GEMM record keeps of a compile (no torch) -------------------------------------------


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


# -- the dry run, and what the probe scripts share (no torch) -----------------------------------


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
                f.write(json.dumps(r, default=json_default) + "\n")
        print(f"[{i}/{len(gemms)}] {describe(gm)} {recs[-1].get(shown) or recs[-1].get('error')}",
              file=sys.stderr, flush=True)
    return recs


# -- measuring -------------------------------------------------------------------------------------


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


# -- end to end --------------------------------------------------------------------------------------


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
