#!/usr/bin/env python3
"""Checks a generated PyTorch artifact inside real PyTorch (run once on the GPU machine).

Two steps:
  prep DIR   (here, no torch: uses the stub of crates/ah-codegen/tests/python_stub)
             generates `_AhrsPadMMH100Check.py` from generated/ah-heuristics/models/PadMMA100.model.json
             with the H100/H200 device identity (232448, (9, 0)) so that the lent GPU matches it,
             and writes DIR/cases.json: every 5th distinct input of ../shared/data/pytorch/pad_mm_a100.txt
             with the artifact's decision under the stub (equal to the model: tests/python_artifact.rs).
  check DIR  (on the machine with torch) copies the artifact into torch/_inductor/autoheuristic/artifacts/,
             1) asks LearnedHeuristicController on every case (PyTorch's own pad_mm_operations computed
                by AHContext.apply_operations) and counts decisions equal to the expected ones;
             2) with TORCHINDUCTOR_AUTOHEURISTIC_USE=pad_mm, torch.compile's an fp16 mm of unaligned
                shapes and records what the heuristic answered (unsure -> pad_mm benchmarks).
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
NAME = "AhrsPadMMH100Check"


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


def prep(out):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import bench_python_artifact as b  # the stub comes with it
    from torch._inductor.autoheuristic.autoheuristic_utils import AHContext

    os.makedirs(out, exist_ok=True)
    model = json.load(open(os.path.join(ROOT, "generated/ah-heuristics/models/PadMMA100.model.json")))
    model["heuristic_name"] = NAME
    model["precondition"] = {"shared_memory": 232448, "device_capa": [9, 0]}
    path = os.path.join(out, f"{NAME}.model.json")
    json.dump(model, open(path, "w"), indent=2)
    exe = os.path.join(ROOT, "target/release/ah-codegen")
    cmd = [exe] if os.path.exists(exe) else ["cargo", "run", "-q", "-p", "ah-codegen", "--"]
    subprocess.run(cmd + [path, "--no-rust", "--python", out], check=True, cwd=ROOT)
    spec = importlib.util.spec_from_file_location(NAME, os.path.join(out, f"_{NAME}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    h = getattr(mod, NAME)()
    with open(b.LOG) as f:
        meta = json.loads(f.readline())
        header = f.readline().strip().split(",")[:-2]
        rows = [line.strip().split(",") for line in f if line.strip()]
    seen, cases = set(), []
    for r in rows:
        key = ",".join(r[: len(header)])
        if key not in seen:
            seen.add(key)
            cases.append([[n, t, n in meta["categorical_features"]] for n, t in zip(header, r)])
    out_cases = []
    for c in cases[::5]:
        ctx = AHContext()
        for n, t, cat in c:
            ctx.add_feature(n, parse(t), is_categorical=cat)
        ctx.apply_operations(b.pad_mm_operations())
        out_cases.append({"features": c, "expected": h.get_decision(ctx, ["orig", "pad"])})
    json.dump(out_cases, open(os.path.join(out, "cases.json"), "w"))
    print(len(out_cases), "cases,", sum(o["expected"] is not None for o in out_cases), "decided")


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
    shutil.copy(os.path.join(here, f"_{NAME}.py"), art_dir)
    ops = U.pad_mm_operations
    cases = json.load(open(os.path.join(here, "cases.json")))
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
    print(f"controller decisions equal to the model: {same} of {len(cases)}; first differences: {diffs[:3]}")
    try:
        mod = importlib.import_module(f"torch._inductor.autoheuristic.artifacts._{NAME}")
        cls = getattr(mod, NAME)
        calls = []
        orig = cls.get_decision

        def spy(self, context, choices):
            r = orig(self, context, choices)
            calls.append(({k: context.context_dict[k] for k in ("m", "k", "n")}, r))
            return r

        cls.get_decision = spy
        from torch._dynamo.utils import counters

        for m, k, n in [(4097, 8191, 2049), (8193, 4096, 1025), (1025, 30000, 3001)]:
            a = torch.randn(m, k, device="cuda", dtype=torch.float16)
            b = torch.randn(k, n, device="cuda", dtype=torch.float16)
            torch._dynamo.reset()
            out = torch.compile(lambda x, y: x @ y)(a, b)
            torch.cuda.synchronize()
            print(f"compiled mm {m}x{k}x{n}: max abs err vs eager {(out - a @ b).abs().max().item():.3g}")
        print("heuristic answers inside torch.compile:", calls)
        print("pad_mm benchmarks (unsure -> autotune):", counters["inductor"].get("pad_mm_bench", 0))
    except Exception:
        traceback.print_exc()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("prep", "check"):
        sys.exit(__doc__)
    (prep if sys.argv[1] == "prep" else check)(sys.argv[2])
