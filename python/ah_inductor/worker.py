#!/usr/bin/env python3
"""ah-collect's Inductor worker: compiles one GEMM at a time under GEMM max-autotune and reports
what Inductor measured and what it cost.

`ah-collect --name inductor_mm` starts one worker per GPU and talks to it in JSON lines:
the worker first writes ``{"hello": {...}}`` (versions, device, the Inductor settings that change
the choice list), then answers each request line ``{"id": N, "gemm": {...}}`` with one line
``{"id": N, "ok": true, ...}`` or ``{"id": N, "ok": false, "error": "..."}``. Everything else
Inductor or Triton print goes to stderr: the protocol has a file descriptor of its own.

For one GEMM (op mm/addmm/bmm, shapes, dtype, TF32, operand layouts) it measures, in one warm
process with caches disabled (../shared/docs/gpu.md):
- the compile time without max-autotune (cuBLAS, Inductor's default) and with
  ``max_autotune_gemm=True``; their difference is the autotuning time;
- every choice Inductor benchmarked: its benchmark time (what PyTorch's ``mm`` log records), the
  seconds spent generating its code, precompiling it, and benchmarking it;
- compiled truth of both compiled programs (the max-autotune one runs Inductor's pick, the
  default one cuBLAS): each captured in a CUDA graph right after its compile, replayed
  alternately after warming the clocks, median per call.

``AH_INDUCTOR_PTXAS=align`` in the environment makes the worker key its own Triton cache on the
ptxas Inductor's compile workers run (`ptxas.py`), as the generated handler's ``install()`` does:
compile-time prices are then those a user of the handler pays, without the second, serial compile
of every template that PyTorch 2.11 with Triton 3.6 makes otherwise. The default, ``as-is``,
measures max-autotune as PyTorch leaves it. The hello's settings name which (``ah_ptxas``), so a
log says which world its prices come from.

``--engine fake`` answers without PyTorch (deterministic made-up numbers) so that the protocol
and ah-collect's driver are tested on machines without a GPU.
"""

import argparse
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
import traceback

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ah_inductor.naming import caller_name, ktc_name  # noqa: E402
from ah_inductor.ptxas import ptxas_align  # noqa: E402

PROTOCOL = 1
OPS = ("mm", "addmm", "bmm")
DTYPES = ("bfloat16", "float16", "float32")
# Inductor settings that change which choices max-autotune generates (recorded in the hello).
CHOICE_SETTINGS = (
    "max_autotune_gemm_backends",
    "max_autotune_gemm_search_space",
    "max_autotune_prune_choices_based_on_shared_mem",
    "autotune_in_subproc",
    "autotune_fallback_to_aten",
    "triton.enable_persistent_tma_matmul",
    "triton.decompose_k_threshold",
    "compile_threads",
)


# How the worker keys Triton's cache: "as-is" (as PyTorch leaves it) or "align" (`ptxas.py`).
PTXAS_MODES = ("as-is", "align")


def ptxas_mode(environ=os.environ):
    """The ``AH_INDUCTOR_PTXAS`` setting; raises ValueError for anything but `PTXAS_MODES`."""
    mode = environ.get("AH_INDUCTOR_PTXAS", "as-is")
    if mode not in PTXAS_MODES:
        raise ValueError(f"AH_INDUCTOR_PTXAS={mode!r}: expected one of {', '.join(PTXAS_MODES)}")
    return mode


class BadRequest(ValueError):
    """A request that is not a GEMM this worker measures."""


def check_gemm(g):
    """Validates a request's GEMM; returns it with defaults filled."""
    if not isinstance(g, dict):
        raise BadRequest("gemm must be an object")
    op = g.get("op", "mm")
    if op not in OPS:
        raise BadRequest(f"op {op!r} is not one of {', '.join(OPS)}")
    dtype = g.get("dtype")
    if dtype not in DTYPES:
        raise BadRequest(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    out = {"op": op, "dtype": dtype}
    for key in ("m", "k", "n", "batch"):
        v = g.get(key, 1)
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1 << 24:
            raise BadRequest(f"{key} must be an integer in 1..2^24, got {v!r}")
        out[key] = v
    if op != "bmm" and out["batch"] != 1:
        raise BadRequest(f"batch must be 1 for {op}")
    for key in ("tf32", "trans_a", "trans_b"):
        out[key] = bool(g.get(key, False))
    return out


def median(values):
    return statistics.median(values) if values else math.nan


def serve(engine, lines, out):
    """Answers every request line of `lines` on `out` (a text stream)."""
    out.write(json.dumps({"hello": engine.hello()}) + "\n")
    out.flush()
    for line in lines:
        line = line.strip()
        if not line:
            continue
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            if req.get("op") == "quit":
                break
            answer = engine.measure(check_gemm(req.get("gemm")))
            answer.update({"id": rid, "ok": True})
        except Exception as e:  # noqa: BLE001 - every failure is reported, the worker goes on
            traceback.print_exc(file=sys.stderr)
            answer = {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"[:2000]}
            answer["fatal"] = engine.broken()
        out.write(json.dumps(answer, allow_nan=False, default=_finite) + "\n")
        out.flush()
        if answer.get("fatal"):
            break


def _finite(x):
    raise TypeError(f"not JSON: {x!r}")


class FakeEngine:
    """Deterministic answers without PyTorch, for the protocol's tests."""

    def hello(self):
        return {
            "protocol": PROTOCOL,
            "engine": "fake",
            "torch": "fake",
            "triton": "fake",
            "cuda": "fake",
            "device_name": "fake GPU",
            "capability": [9, 0],
            "settings": {"ah_ptxas": ptxas_mode()},
        }

    def broken(self):
        return False

    def measure(self, g):
        if g["m"] == 13 and g["k"] == 13:
            raise RuntimeError("the fake engine fails on 13x13 inputs")
        flops = 2.0 * g["batch"] * g["m"] * g["k"] * g["n"]
        base = 0.005 + flops / 4e11
        extern = f"extern_{g['op']}"
        names = [extern] + [
            f"triton_{g['op']}_BLOCK-M={bm}_BLOCK-K=64_BLOCK-N=128_numstages=3_numwarps=4"
            for bm in (64, 128)
        ]
        # The second Triton config wins on inputs whose m is a multiple of 3.
        times = [base, base * 1.2, base * (0.9 if g["m"] % 3 == 0 else 1.3)]
        choices = [
            {
                "name": n,
                "bench_ms": t,
                "gen_s": 0.0 if i == 0 else 0.05,
                "precompile_s": 0.0 if i == 0 else 0.4,
                "bench_s": 0.02 + t * 0.01,
            }
            for i, (n, t) in enumerate(zip(names, times))
        ]
        winner = min(choices, key=lambda c: c["bench_ms"])["name"]
        truth_winner = min(times) * (1.0 if winner == extern else 1.05)
        return {
            "choices": choices,
            "winner": winner,
            "compile_s": {"default": 0.2, "max_autotune": 1.5},
            "autotune_phases_s": {"benchmark": 0.1, "precompile": 0.8},
            "truth_ms": {"default": base, "max_autotune": truth_winner},
            "truth_calls": 20,
            "seen": {"op": g["op"], "m": g["m"], "k": g["k"], "n": g["n"], "batch": g["batch"]},
            "autotune_calls": 1,
        }


class Recorder:
    """What Inductor does during one max-autotune compile: patched into Inductor once."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.gen_s = {}
        self.bench_s = {}
        self.calls = []
        self.phases = []
        self.seen = []

    def install(self):
        from torch._inductor import select_algorithm as sa
        from torch._inductor.choices import InductorChoices
        from torch._inductor.kernel_template_choice import KernelTemplateChoice

        rec = self
        lazy = KernelTemplateChoice.choice

        def timed_choice(ktc):
            if hasattr(ktc, "_choice"):
                return lazy.fget(ktc)
            t0 = time.perf_counter()
            c = lazy.fget(ktc)
            rec.gen_s[ktc_name(ktc)] = rec.gen_s.get(ktc_name(ktc), 0.0) + time.perf_counter() - t0
            return c

        KernelTemplateChoice.choice = property(timed_choice)

        bench = sa.AlgorithmSelectorCache.benchmark_choice.__func__

        def timed_bench(cls, choice, autotune_args):
            t0 = time.perf_counter()
            try:
                return bench(cls, choice, autotune_args)
            finally:
                rec.bench_s[id(choice)] = time.perf_counter() - t0

        sa.AlgorithmSelectorCache.benchmark_choice = classmethod(timed_bench)

        log_results = sa.AlgorithmSelectorCache.log_results

        def phases(name, input_nodes, timings, elapse, precompile_elapse, *a, **kw):
            rec.phases.append({"benchmark": elapse, "precompile": precompile_elapse})
            return log_results(name, input_nodes, timings, elapse, precompile_elapse, *a, **kw)

        sa.AlgorithmSelectorCache.log_results = staticmethod(phases)

        finalize = InductorChoices._finalize_template_configs

        def seen(handler, template_choices, kernel_inputs, templates, op_name, *a, **kw):
            rec.seen.append(seen_features(kernel_inputs, op_name))
            return finalize(handler, template_choices, kernel_inputs, templates, op_name, *a, **kw)

        InductorChoices._finalize_template_configs = seen

        def feedback(timings, name, input_nodes, choices, profiled, precompile_times=None):
            pre = precompile_times or {}
            rec.calls.append(
                [
                    {
                        "name": caller_name(c),
                        "bench_ms": float(t),
                        "precompile_s": float(pre.get(c, 0.0)),
                        "bench_s": rec.bench_s.get(id(c), 0.0),
                    }
                    for c, t in timings.items()
                ]
            )

        sa.add_feedback_saver(feedback)


def seen_features(kernel_inputs, op_name):
    """The GEMM as Inductor's choices handler sees it (what a shipped handler decides on)."""
    try:
        m, n, k = kernel_inputs.mnk_hinted()
        strides = kernel_inputs.strides_hinted()
        dtypes = kernel_inputs.dtypes()
        return {
            "op": op_name,
            "m": int(m),
            "k": int(k),
            "n": int(n),
            "batch": int(kernel_inputs.batch_hinted()),
            "strides": [[int(s) for s in st] for st in strides],
            "dtypes": [str(d) for d in dtypes],
        }
    except Exception as e:  # noqa: BLE001 - recorded, not fatal
        return {"op": op_name, "error": str(e)}


class TorchEngine:
    """The real measurements (needs PyTorch with Inductor, Triton and a CUDA GPU)."""

    def __init__(self, truth_rounds=9, graph_ms=2.0):
        cache = tempfile.mkdtemp(prefix="ah-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
        import torch
        import torch._inductor.config as inductor_config

        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA device is visible to PyTorch")
        self.torch = torch
        self.config = inductor_config
        self.truth_rounds = truth_rounds
        self.graph_ms = graph_ms
        inductor_config.force_disable_caches = True
        self.ptxas = ptxas_mode()
        if self.ptxas == "align" and ptxas_align() is None:
            raise RuntimeError("AH_INDUCTOR_PTXAS=align, but this PyTorch bundles no ptxas to align on")
        self.recorder = Recorder()
        self.recorder.install()
        self._start_up()

    def _start_up(self):
        """Pays the process's one-time compile start-up on an unrelated graph."""
        torch = self.torch
        x = torch.randn(64, 64, device="cuda")
        torch.compile(lambda a: (a * 2).sin() + 1)(x)
        torch.compile(lambda a, b: a @ b, options={"max_autotune_gemm": True})(x, x)
        torch._dynamo.reset()
        torch.cuda.synchronize()

    def hello(self):
        import triton

        torch = self.torch
        props = torch.cuda.get_device_properties(0)
        settings = {}
        for key in CHOICE_SETTINGS:
            obj = self.config
            try:
                for part in key.split("."):
                    obj = getattr(obj, part)
                settings[key] = obj if isinstance(obj, (int, float, str, bool)) else repr(obj)
            except AttributeError:
                settings[key] = None
        settings["ah_ptxas"] = self.ptxas
        return {
            "protocol": PROTOCOL,
            "engine": "torch",
            "torch": torch.__version__,
            "triton": triton.__version__,
            "cuda": torch.version.cuda,
            "device_name": props.name,
            "capability": list(torch.cuda.get_device_capability(0)),
            "settings": settings,
        }

    def broken(self):
        try:
            self.torch.zeros(1, device="cuda").add_(1)
            self.torch.cuda.synchronize()
            return False
        except Exception:  # noqa: BLE001 - a CUDA context that fails this is lost
            return True

    def inputs(self, g):
        torch = self.torch
        dtype = getattr(torch, g["dtype"])
        m, k, n, b = g["m"], g["k"], g["n"], g["batch"]

        def operand(rows, cols, transposed):
            shape = (cols, rows) if transposed else (rows, cols)
            if g["op"] == "bmm":
                shape = (b, *shape)
            t = torch.randn(shape, device="cuda", dtype=dtype)
            return t.transpose(-2, -1) if transposed else t

        a = operand(m, k, g["trans_a"])
        w = operand(k, n, g["trans_b"])
        if g["op"] == "mm":
            return (a, w), _mm
        if g["op"] == "bmm":
            return (a, w), _bmm
        bias = torch.randn(n, device="cuda", dtype=dtype)
        return (bias, a, w), _addmm

    def compile_timed(self, fn, args, options):
        """Compiles `fn` fresh (after a reset); returns (compile seconds, compiled function)."""
        torch = self.torch
        torch._dynamo.reset()
        compiled = torch.compile(fn, dynamic=False, fullgraph=True, options=options)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        compiled(*args)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        return seconds, compiled

    def capture(self, compiled, args, calls):
        torch = self.torch
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                compiled(*args)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                compiled(*args)
        torch.cuda.synchronize()
        return graph

    def truth(self, graphs, calls):
        """Median ms per call of each graph: clocks warmed, graphs alternated."""
        torch = self.torch
        deadline = time.perf_counter() + 0.2
        while time.perf_counter() < deadline:
            for g in graphs.values():
                g.replay()
            torch.cuda.synchronize()
        times = {name: [] for name in graphs}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        names = list(graphs)
        for r in range(self.truth_rounds):
            for name in names if r % 2 == 0 else reversed(names):
                start.record()
                graphs[name].replay()
                end.record()
                end.synchronize()
                times[name].append(start.elapsed_time(end) / calls)
        return {name: median(t) for name, t in times.items()}

    def measure(self, g):
        torch = self.torch
        torch.backends.cuda.matmul.allow_tf32 = g["tf32"]
        args, fn = self.inputs(g)
        rec = self.recorder
        try:
            default_s, default_fn = self.compile_timed(fn, args, {})
            # The default compile's graph must be captured before the next reset.
            probe = self._probe_ms(default_fn, args)
            calls = max(1, min(20, round(self.graph_ms / max(probe, 1e-3))))
            graphs = {"default": self.capture(default_fn, args, calls)}
            rec.reset()
            ma_s, ma_fn = self.compile_timed(fn, args, {"max_autotune_gemm": True})
            graphs["max_autotune"] = self.capture(ma_fn, args, calls)
            truth = self.truth(graphs, calls)
        finally:
            torch._dynamo.reset()
        return self.assemble(g, rec, default_s, ma_s, truth, calls)

    def _probe_ms(self, compiled, args):
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        compiled(*args)
        start.record()
        compiled(*args)
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    @staticmethod
    def assemble(g, rec, default_s, ma_s, truth, calls):
        if rec.calls:
            # One GEMM compiles to one autotuned call; if there were more, keep the largest.
            choices = max(rec.calls, key=len)
        else:
            # Inductor had one choice (e.g. fp32 without TF32: no Triton template) and
            # benchmarked nothing: log cuBLAS with its compiled truth.
            choices = [{"name": f"extern_{g['op']}", "bench_ms": truth["default"],
                        "precompile_s": 0.0, "bench_s": 0.0}]
        names = set()
        for c in choices:
            c["gen_s"] = rec.gen_s.get(c["name"], 0.0)
            if c["name"] in names:
                raise RuntimeError(f"two choices share the name {c['name']}")
            names.add(c["name"])
            if not math.isfinite(c["bench_ms"]):
                c["bench_ms"] = None
        finite = [c for c in choices if c["bench_ms"] is not None]
        winner = min(finite, key=lambda c: c["bench_ms"])["name"] if finite else None
        seen = next((s for s in rec.seen if s.get("op") in OPS), rec.seen[0] if rec.seen else {})
        return {
            "choices": choices,
            "winner": winner,
            "compile_s": {"default": default_s, "max_autotune": ma_s},
            "autotune_phases_s": rec.phases[-1] if rec.phases else None,
            "truth_ms": truth,
            "truth_calls": calls,
            "seen": seen,
            "autotune_calls": len(rec.calls),
        }


def _mm(a, b):
    import torch

    return torch.mm(a, b)


def _bmm(a, b):
    import torch

    return torch.bmm(a, b)


def _addmm(bias, a, b):
    import torch

    return torch.addmm(bias, a, b)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", choices=("torch", "fake"), default="torch")
    args = p.parse_args(argv)
    # The driver ends the worker (a quit line, or end of input): a Ctrl-C or SIGINT meant for
    # the collection must not kill the GEMM in flight, which the collection still logs.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The protocol gets its own descriptor; anything printed to stdout goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    try:
        ptxas_mode()
        engine = TorchEngine() if args.engine == "torch" else FakeEngine()
    except Exception as e:  # noqa: BLE001 - reported to the driver as the hello
        proto.write(json.dumps({"hello_error": f"{type(e).__name__}: {e}"}) + "\n")
        proto.flush()
        return 3
    serve(engine, sys.stdin, proto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
