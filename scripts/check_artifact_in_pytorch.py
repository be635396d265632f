#!/usr/bin/env python3
"""Checks a generated PyTorch artifact inside real PyTorch (run once on the GPU machine).

Two steps:
  prep DIR [MODEL [LOG ...]]
             (here, no torch: uses the stub of crates/ah-codegen/tests/python_stub)
             generates the artifact of MODEL (default generated/ah-heuristics/models/PadMMH100.model.json)
             with ah-codegen. A model whose precondition is not the H100/H200 identity (232448, (9, 0))
             is retargeted to it and renamed `<Name>Check`, so that the lent GPU matches it.
             Writes DIR/cases.json: every distinct input of the LOGs (default: the two real-model
             sets and the two fresh full-range sets of data/) with the artifact's decision under the stub (equal to
             the model: tests/python_artifact.rs).
  check DIR  (on the machine with torch) copies the artifact into torch/_inductor/autoheuristic/artifacts/,
             1) asks LearnedHeuristicController on every case (PyTorch's own pad_mm_operations computed
                by AHContext.apply_operations) and counts decisions equal to the expected ones;
             2) with TORCHINDUCTOR_AUTOHEURISTIC_USE=pad_mm, torch.compile's real-model GEMMs
                (LM heads, an MLP) and records what the heuristic answered inside Inductor's pad_mm
                (unsure -> pad_mm benchmarks, counted).
"""
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H100 = {"shared_memory": 232448, "device_capa": [9, 0]}
DEFAULT_MODEL = "generated/ah-heuristics/models/PadMMH100.model.json"
DEFAULT_LOGS = [
    "data/pad_mm_h100_realmodels.txt",
    "data/pad_mm_h100_realmodels_holdout.txt",
    "data/pad_mm_h100_fullrange_fresh.txt",
    "data/pad_mm_h100_fullrange_seed6.txt",
]
# Real-model GEMMs compiled in step 2: tokens x hidden @ hidden x vocabulary (LM heads) and an MLP.
COMPILED = [
    (4095, 768, 50257, "float16"),  # GPT-2 LM head
    (8191, 1024, 30522, "bfloat16"),  # BERT-large MLM head
    (2047, 1280, 51865, "float16"),  # Whisper-large LM head
    (3001, 2560, 10240, "bfloat16"),  # Phi-2 MLP up projection, odd token count
]


def parse(t):
    if t in ("True", "False"):
        return t == "True"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def distinct_cases(log):
    """Every distinct input of a log: [[name, text, is_categorical], ...]."""
    with open(log) as f:
        meta = json.loads(f.readline())
        header = f.readline().strip().split(",")[:-2]
        rows = [line.strip().split(",") for line in f if line.strip()]
    seen, cases = set(), []
    for r in rows:
        key = ",".join(r[: len(header)])
        if key not in seen:
            seen.add(key)
            cases.append([[n, t, n in meta["categorical_features"]] for n, t in zip(header, r)])
    return cases


def prep(out, model_path=DEFAULT_MODEL, *logs):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import bench_python_artifact as b  # the stub comes with it
    from torch._inductor.autoheuristic.autoheuristic_utils import AHContext

    os.makedirs(out, exist_ok=True)
    model = json.load(open(os.path.join(ROOT, model_path)))
    if model["precondition"] != H100:
        model["heuristic_name"] += "Check"
        model["precondition"] = H100
    name = model["heuristic_name"]
    path = os.path.join(out, f"{name}.model.json")
    json.dump(model, open(path, "w"), indent=2)
    exe = os.path.join(ROOT, "target/release/ah-codegen")
    cmd = [exe] if os.path.exists(exe) else ["cargo", "run", "-q", "-p", "ah-codegen", "--"]
    subprocess.run(cmd + [path, "--no-rust", "--python", out], check=True, cwd=ROOT)
    spec = importlib.util.spec_from_file_location(name, os.path.join(out, f"_{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    h = getattr(mod, name)()
    out_cases = []
    for log in logs or DEFAULT_LOGS:
        for c in distinct_cases(os.path.join(ROOT, log)):
            ctx = AHContext()
            for n, t, cat in c:
                ctx.add_feature(n, parse(t), is_categorical=cat)
            ctx.apply_operations(b.pad_mm_operations())
            out_cases.append({"log": log, "features": c, "expected": h.get_decision(ctx, ["orig", "pad"])})
    json.dump({"name": name, "cases": out_cases}, open(os.path.join(out, "cases.json"), "w"))
    print(name + ":", len(out_cases), "cases,", sum(o["expected"] is not None for o in out_cases), "decided")


def check(here):
    os.environ["TORCHINDUCTOR_AUTOHEURISTIC_USE"] = "pad_mm"
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()
    import torch
    import torch._inductor.autoheuristic as ahpkg
    from torch._inductor.autoheuristic import autoheuristic_utils as U
    from torch._inductor.autoheuristic.learned_heuristic_controller import LearnedHeuristicController

    print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name() if torch.cuda.is_available() else "")
    art_dir = os.path.join(os.path.dirname(ahpkg.__file__), "artifacts")
    print("shipped artifacts:", sorted(f for f in os.listdir(art_dir) if f.startswith("_")))
    prepared = json.load(open(os.path.join(here, "cases.json")))
    name, cases = prepared["name"], prepared["cases"]
    shutil.copy(os.path.join(here, f"_{name}.py"), art_dir)
    ops = U.pad_mm_operations
    meta = U.AHMetadata(232448, (9, 0), ["orig", "pad"], "pad_mm")
    same = 0
    diffs = []
    for c in cases:
        ctx = U.AHContext()
        for n, t, cat in c["features"]:
            ctx.add_feature(n, parse(t), is_categorical=cat)
        ctx.apply_operations(ops())
        got = LearnedHeuristicController(meta, ctx).get_decision()
        if got == c["expected"]:
            same += 1
        else:
            diffs.append((c, got))
    names = [type(h).__name__ for h in LearnedHeuristicController.existing_heuristics.get("pad_mm", [])]
    print("discovered pad_mm heuristics (in order):", names)
    decided = sum(c["expected"] is not None for c in cases)
    print(f"controller decisions equal to the model: {same} of {len(cases)} ({decided} decided); first differences: {diffs[:3]}")
    try:
        mod = importlib.import_module(f"torch._inductor.autoheuristic.artifacts._{name}")
        cls = getattr(mod, name)
        calls = []
        orig = cls.get_decision

        def spy(self, context, choices):
            r = orig(self, context, choices)
            calls.append(({k: context.context_dict[k] for k in ("m", "k", "n")}, r))
            return r

        cls.get_decision = spy
        from torch._dynamo.utils import counters

        for m, k, n, dtype in COMPILED:
            a = torch.randn(m, k, device="cuda", dtype=getattr(torch, dtype))
            b = torch.randn(k, n, device="cuda", dtype=getattr(torch, dtype))
            torch._dynamo.reset()
            before, asked = counters["inductor"].get("pad_mm_bench", 0), len(calls)
            out = torch.compile(lambda x, y: x @ y)(a, b)
            torch.cuda.synchronize()
            err = (out - a @ b).abs().max().item()
            benched = counters["inductor"].get("pad_mm_bench", 0) - before
            print(f"compiled {dtype} mm {m}x{k}x{n}: answers {[r for _, r in calls[asked:]]}, pad_mm benchmarks {benched}, max abs err vs eager {err:.3g}")
        print("heuristic answers inside torch.compile:", calls)
        print("pad_mm benchmarks (unsure -> autotune):", counters["inductor"].get("pad_mm_bench", 0))
    except Exception:
        traceback.print_exc()


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("prep", "check") or (sys.argv[1] == "check" and len(sys.argv) != 3):
        sys.exit(__doc__)
    (prep if sys.argv[1] == "prep" else check)(*sys.argv[2:])
