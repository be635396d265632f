#!/usr/bin/env python3
"""What does the handler's re-timing do when Inductor's autotuning cache is warm?

`install()` re-times the choices of small GEMMs by CUDA graph (python/ah_inductor/retime.py), as
a feedback saver. Inductor calls its feedback savers after `lookup()`, which returns the timings
from its autotuning cache when they are there and writes new ones to it before the savers run.
So, as the source reads: the cache holds Inductor's own timings, never the re-timed ones, and a
GEMM served from it is re-timed again, where Inductor precompiled nothing (it skips the
precompile when every timing is cached), so the re-timing loads each Triton choice itself.
This measures it, for the case the FX graph cache misses (a changed graph around known GEMMs;
a graph cache hit lowers nothing, and its key names the handler, `-retime` included).

For the GEMMs of --gemms (JSON lines as inductor_eval.py reads them), each phase is one fresh
process compiling them one after another with Inductor's caches on:

- `fill`: a fresh cache folder, the handler installed with retime=False (a user's earlier run);
- `warm_retime`, `warm_plain`: the same folder, the FX graph and AOTAutograd caches off, so that
  every GEMM is lowered again and its timings come from the autotuning cache; retime on / off;
- `cold_retime`: a fresh folder, retime on: what the re-timing picks with nothing cached.

Per phase and GEMM it records the compile seconds, the seconds Inductor reports benchmarking and
precompiling (none when its cache served the timings), how many lowerings the re-timer re-timed, and the pick (the choice with the least time after every
feedback saver ran). Prints a table; writes one JSON line per phase and GEMM to --out.

Usage: probe_retime_cache.py --handler MODULE.py --gemms FILE.jsonl [--lines 1-5] --out FILE.jsonl
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import inductor_eval as E  # noqa: E402  (the GEMM's function and operands, --lines)
import inductor_gemms as G  # noqa: E402  (GEMM files, a GEMM in words, its features)
import inductor_harness as H  # noqa: E402  (where a compile's seconds go)
from inductor_handlers import load_handler  # noqa: E402

PHASES = (("fill", False, "warm", False), ("warm_retime", True, "warm", True),
          ("warm_plain", False, "warm", True), ("cold_retime", True, "cold", False))
# (name, retime, cache folder: `fill` fills "warm" first, FX graph cache off)


class Picks:
    """The last feedback saver: the least-time choice of each GEMM lowering, as Inductor selects."""

    def __init__(self):
        self.picks = []

    def __call__(self, timings, name, *rest):
        from ah_inductor.naming import caller_name

        finite = {c: t for c, t in timings.items() if math.isfinite(t)}
        if finite:
            self.picks.append(caller_name(min(finite, key=finite.get)))


def run_phase(a):
    """One phase in this process; prints one JSON line per GEMM."""
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as config
    from torch._inductor import select_algorithm

    if a.no_graph_cache:
        config.fx_graph_cache = False
        functorch_config.enable_autograd_cache = False
    handler = load_handler(a.handler)
    handler.install(retime=a.retime)
    timer, picks = H.PhaseTimer(), Picks()
    select_algorithm.get_algorithm_selector_cache().feedback_saver_fns.append(picks)
    retimer = handler._default_runtime()._retimer
    for gm in G.read_gemms(a.gemms, lines=E.line_ranges(a.lines) if a.lines else None):
        torch._dynamo.reset()
        torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
        fn, args = E.gemm_fn(torch, gm)
        timer.seconds.clear()
        before = (len(picks.picks), retimer.retimed if retimer else 0)
        t0 = time.perf_counter()
        torch.compile(fn, dynamic=False, fullgraph=True, options={"max_autotune_gemm": True})(*args)
        torch.cuda.synchronize()
        print(json.dumps({"phase": a.phase, "line": gm["line"], "gemm": G.describe(gm),
                          "compile_s": time.perf_counter() - t0,
                          "bench_s": timer.seconds.get("gemm_benchmark", 0.0),
                          "precompile_s": timer.seconds.get("gemm_precompile", 0.0),
                          "picks": picks.picks[before[0]:],
                          "retimed": (retimer.retimed if retimer else 0) - before[1]}), flush=True)


def drive(a):
    """Runs the phases as fresh processes over two cache folders; returns the records."""
    recs = []
    with tempfile.TemporaryDirectory(prefix="ah-retime-cache-") as root:
        for name, retime, cache, no_graph in PHASES:
            folder = os.path.join(root, cache)
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(folder, "inductor"),
                       TRITON_CACHE_DIR=os.path.join(folder, "triton"))
            cmd = [sys.executable, os.path.abspath(__file__), "--phase", name, "--handler", a.handler,
                   "--gemms", a.gemms, "--out", a.out] + (["--lines", a.lines] if a.lines else [])
            cmd += ["--retime"] * retime + ["--no-graph-cache"] * no_graph
            print(f"probe_retime_cache: phase {name}", file=sys.stderr, flush=True)
            out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
            recs += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return recs


def table(recs):
    """One row per GEMM: each phase's compile seconds, benchmarks and re-timings, and its pick."""
    lines = {}
    for r in recs:
        lines.setdefault(r["line"], {})[r["phase"]] = r
    names = [p[0] for p in PHASES]
    out = ["| line | GEMM | " + " | ".join(f"{p} s (bench s, retimed)" for p in names)
           + " | " + " | ".join(f"pick {p}" for p in names) + " |",
           "|" + "---|" * (2 + 2 * len(names))]
    for line, by in sorted(lines.items()):
        cells = [f"{by[p]['compile_s']:.2f} ({by[p]['bench_s']:.2f}, {by[p]['retimed']})" if p in by else "-"
                 for p in names]
        picked = [", ".join(by[p]["picks"]) or "-" if p in by else "-" for p in names]
        gemm = next(iter(by.values()))["gemm"]
        out.append(f"| {line} | {gemm} | " + " | ".join(cells) + " | " + " | ".join(picked) + " |")
    sums = {p: sum(by[p]["compile_s"] for by in lines.values() if p in by) for p in names}
    out.append("\ncompile seconds summed: " + ", ".join(f"{p} {s:.1f}" for p, s in sums.items()))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--handler", required=True)
    p.add_argument("--gemms", required=True)
    p.add_argument("--lines", help="only these lines of --gemms, e.g. 1-5,9")
    p.add_argument("--out", required=True)
    p.add_argument("--phase", choices=[ph[0] for ph in PHASES], help=argparse.SUPPRESS)
    p.add_argument("--retime", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-graph-cache", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.phase:
        run_phase(a)
        return 0
    try:
        G.read_gemms(a.gemms, lines=E.line_ranges(a.lines) if a.lines else None)
    except (OSError, G.GemmFileError, ValueError) as e:
        print(f"probe_retime_cache: {e}", file=sys.stderr)
        return 2
    recs = drive(a)
    with open(a.out, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    print(table(recs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
