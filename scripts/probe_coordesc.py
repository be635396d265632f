#!/usr/bin/env python3
"""Where full max-autotune's compile time goes once the handler decides the GEMMs, kernel by
kernel, and what that time buys.

With the handler installed, full max-autotune (mode="max-autotune-no-cudagraphs") decides every
GEMM of the named workloads cuBLAS only; what remains of its compile time is Inductor's
coordinate-descent tuning of its other Triton kernels (88.3 s of 104.7 s for the LLaMA-style
training step; docs/results.md, forty-third session). For each workload, in one warm process
(inductor_eval's: caches disabled, a fresh Triton cache folder per compile):

1. compiles it as `ours_full` with a recorder on Inductor's coordinate-descent tuner
   (`CoordescTuner.autotune`): per kernel tuned, its name, the seconds spent, how many configs
   it timed, and Inductor's own benchmark of the config it started from and of the fastest it
   timed;
2. compiles it again the same way with `coordinate_descent_tuning=False` (`ours_full_no_cd`),
   and with torch.compile's default (`none`, no max-autotune), first;
3. with `--cd-classes`, compiles it once more per kernel class named (`per`, `red`, `poi`,
   `other`), the tuning run for that class's kernels only (`ours_full_cd_CLASS`): which class
   carries what the tuning buys;
4. measures every compile's step by compiled truth (CUDA-graph replay, alternated, median).

It writes per workload the kernel records, compile seconds and step times to --out (rewritten
after each workload) and prints a summary per workload.

Usage: probe_coordesc.py --handler MODULE.py [--workloads llama_train,llama_infer]
                         [--workload-file FILE.py ...] [--cd-classes per,red,poi,other]
                         --out FILE.json [--rounds 9]
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inductor_harness as H  # noqa: E402  (the warm process: CUDA-graph capture, warmed clocks, alternation)
import inductor_workloads as W  # noqa: E402  (the end-to-end workloads)

GAIN = 0.97  # a kernel whose fastest config benchmarks under this share of its start improved
# (label, inductor_eval setting, coordinate_descent_tuning: None leaves the setting's own, the one
# kernel class tuned: None for all)
COMPILES = (("none", "none", None, None), ("ours_full", "ours_full", True, None),
            ("ours_full_no_cd", "ours_full", False, None))
CLASSES = ("per", "red", "poi", "other")  # kernel_class's answers, for --cd-classes


class Recorder:
    """Wraps a coordinate-descent tuner class's `autotune`; while `on`, appends one record per
    call to `kernels`. While `only` names a kernel class (`kernel_class`), kernels of other
    classes are not tuned: they keep the config they start from, and no record is made."""

    def __init__(self, tuner_cls):
        self.on, self.only, self.kernels = False, None, []
        original = tuner_cls.autotune
        recorder = self

        def autotune(tuner, func, baseline_config, baseline_timing=None, *rest, **kw):
            if recorder.only is not None and kernel_class(getattr(tuner, "name", None)) != recorder.only:
                return baseline_config
            times = []

            def timed(config):
                t = func(config)
                times.append(t)
                return t

            t0 = time.perf_counter()
            try:
                return original(tuner, timed, baseline_config, baseline_timing, *rest, **kw)
            finally:
                if recorder.on:
                    recorder.kernels.append(kernel_record(tuner, time.perf_counter() - t0, times,
                                                          baseline_timing))

        tuner_cls.autotune = autotune


def kernel_class(name):
    """A Triton kernel's class from the name Inductor gives it: `per` (persistent reduction),
    `red` (looped reduction), `poi` (pointwise), else `other`."""
    parts = (name or "").split("_")
    return parts[1] if len(parts) > 2 and parts[0] == "triton" and parts[1] in CLASSES[:3] else "other"


def kernel_record(tuner, seconds, times, baseline_ms):
    """One tuned kernel: its name and size hints, the seconds spent, the configs timed, the
    start's benchmark (the first one timed where the caller gave none) and the fastest."""
    finite = [t for t in times if isinstance(t, (int, float)) and math.isfinite(t)]
    start = baseline_ms if baseline_ms is not None else (finite[0] if finite else None)
    best = min(finite + ([start] if start is not None else []), default=None)
    return {"kernel": getattr(tuner, "name", None), "size_hints": str(getattr(tuner, "size_hints", "")),
            "seconds": seconds, "configs": len(times), "start_ms": start, "best_ms": best}


def improved(k):
    """Whether kernel record `k`'s fastest config benchmarked under GAIN of its start."""
    return k["start_ms"] and k["best_ms"] is not None and k["best_ms"] < GAIN * k["start_ms"]


def summary(name, rec):
    kernels = rec["kernels"]
    spent = sum(k["seconds"] for k in kernels)
    gained = [k for k in kernels if improved(k)]
    saved_ms = sum(k["start_ms"] - k["best_ms"] for k in gained)
    step = rec.get("step_ms", {})
    both = "ours_full" in step and "ours_full_no_cd" in step
    ratio = step["ours_full"] / step["ours_full_no_cd"] if both else float("nan")
    by_class = "".join(f"; {label}: {ms / step['ours_full_no_cd']:.4f}" for label, ms in step.items()
                       if label.startswith("ours_full_cd_") and "ours_full_no_cd" in step)
    return (f"{name}: {len(kernels)} kernels tuned in {spent:.1f} s; {len(gained)} improved their own "
            f"benchmark by more than {100 * (1 - GAIN):.0f} % ({sum(k['seconds'] for k in gained):.1f} s, "
            f"{saved_ms:.4f} ms saved per call of each once); the other {len(kernels) - len(gained)} took "
            f"{spent - sum(k['seconds'] for k in gained):.1f} s. Compile {rec['compile_s']}; step with / "
            f"without coordinate descent {ratio:.4f}{by_class} ({step})")


def compiles(classes):
    """(label, setting, coordinate descent on, the one kernel class it tunes or None) of each
    compile: COMPILES, then one with the tuning of one class only per class of `classes`."""
    return list(COMPILES) + [(f"ours_full_cd_{k}", "ours_full", True, k) for k in classes]


def measure(ind, recorder, workload, classes=()):
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    build, make = W.E2E[workload]
    model = build(torch)
    rec, replays, alive = {"compile_s": {}}, {}, []
    for label, setting, cd, only in compiles(classes):
        ind.fresh()
        recorder.on, recorder.only = bool(cd), only
        with ind.setting(setting, rec.setdefault("settings", {}).setdefault(label, {})) as options:
            opts = options if cd is None else dict(options, coordinate_descent_tuning=cd)
            first, step = make(torch, model, opts)
            rec["compile_s"][label] = ind.timed_first_call(first)
            graph = ind.capture(step, 1)
        recorder.on, recorder.only = False, None
        alive.append((graph, first, step))
        replays[label] = graph.replay
        if cd:
            rec.setdefault("kernels_by_compile", {})[label] = list(recorder.kernels)
        recorder.kernels.clear()
    rec["kernels"] = rec["kernels_by_compile"]["ours_full"]
    ind.fresh()
    rec["step_ms"] = ind.alternate(replays, 1)
    return rec


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--handler", required=True)
    p.add_argument("--workloads", default="llama_train,llama_infer",
                   help="inductor_eval's built-in workloads, comma-separated ('' for none)")
    p.add_argument("--workload-file", action="append", default=[], metavar="FILE.py",
                   help="a workload file as inductor_eval.py --workload-file takes it (repeatable)")
    p.add_argument("--cd-classes", default="", metavar="CLASS[,CLASS]",
                   help="also compile once per class with only that class's kernels tuned "
                        f"({', '.join(CLASSES)})")
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args(argv)
    classes = [c for c in a.cd_classes.split(",") if c]
    if any(c not in CLASSES for c in classes):
        print(f"probe_coordesc: --cd-classes takes {', '.join(CLASSES)}; got {a.cd_classes!r}",
              file=sys.stderr)
        return 2
    workloads = [w for w in a.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in W.E2E]
    if unknown:
        print(f"probe_coordesc: unknown workloads {unknown}; known: {sorted(W.E2E)}", file=sys.stderr)
        return 2
    try:
        workloads += [W.load_workload_file(f) for f in a.workload_file]
    except W.WorkloadFileError as e:
        print(f"probe_coordesc: {e}", file=sys.stderr)
        return 2
    if not workloads:
        print("probe_coordesc: no workload to measure", file=sys.stderr)
        return 2
    ind = H.Inductor({"ours": a.handler}, a.rounds)
    from torch._inductor.runtime.coordinate_descent_tuner import CoordescTuner

    recorder = Recorder(CoordescTuner)
    data = {"meta": ind.meta(), "workloads": {}}
    for w in workloads:
        data["workloads"][w] = measure(ind, recorder, w, classes)
        with open(a.out + ".tmp", "w") as f:
            json.dump(data, f, indent=1, default=str)
        os.replace(a.out + ".tmp", a.out)
        print(summary(w, data["workloads"][w]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
