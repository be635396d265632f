#!/usr/bin/env python3
"""One warm process for compiled truth, as scripts/inductor_eval.py and the probe scripts measure:
torch imported with its caches disabled and Inductor's choices observed (`Inductor`), each setting
compiled fresh with its handler installed or not (`Inductor.setting`), the compiled call captured
in a CUDA graph and replayed alternated after warming the clocks (`Inductor.alternate`), and
where a compile's seconds went (`PhaseTimer`). What a GEMM record keeps of a compile
(`bench_record`, `seen_record`, `picks_by_shape`) needs no torch; the rest imports it when used.
"""

import contextlib
import math
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from ah_inductor.ptxas import forget_ptxas_version, ptxas_align, ptxas_restore  # noqa: E402
from ah_inductor.retime import retime_install, retime_uninstall  # noqa: E402  (imports no torch)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_handlers import SWITCHES, load_handler  # noqa: E402
from inductor_operands import l2_bytes  # noqa: E402
from inductor_settings import ALIGNED, HANDLED, OPTIONS  # noqa: E402


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


# -- the warm process -----------------------------------------------------------------------------

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
    ah-collect's worker reads it); kernel tuning and the generation of Triton templates (each
    config of a searched list is rendered to source before it is precompiled: what a handler's
    compile over cuBLAS only's spends outside Inductor's two GEMM phases) are time inside the
    entry points below, which may nest (a coordinate-descent step benchmarks), so the phases need
    not add up. An entry point this PyTorch lacks is left out and named in `missing`."""

    POINTS = (
        ("template_generation", "torch._inductor.select_algorithm", "TritonTemplate", "generate"),
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
                "capability": list(torch.cuda.get_device_capability(0)), "l2_bytes": l2_bytes(torch),
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
