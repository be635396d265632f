"""Runs a generated AutoHeuristic artifact over contexts, against the torch stub beside this file.

Usage: python3 run_artifact.py ARTIFACT.py CASES.json
CASES.json: {"shared_memory": int, "device_capa": [a, b], "name": str, "choices": [...],
             "contexts": [{"features": [[name, value, is_categorical], ...],
                           "augmented": [[name, value], ...]}, ...]}
Values are tagged: {"i": int} {"f": "python float repr"} {"b": bool} {"s": str}.
Prints one JSON object: {"precondition": bool, "decisions": [choice or null or "error: ..."],
"ranked": [[...] or null, ...]}.
"""
import importlib.util
import inspect
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from torch._inductor.autoheuristic.autoheuristic_utils import AHContext, AHMetadata  # noqa: E402
from torch._inductor.autoheuristic.learnedheuristic_interface import LearnedHeuristic  # noqa: E402


def decode(v):
    if "i" in v:
        return int(v["i"])
    if "f" in v:
        return float(v["f"])
    if "b" in v:
        return bool(v["b"])
    return str(v["s"])


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # As LearnedHeuristicController does: every LearnedHeuristic subclass defined there.
    found = [
        obj
        for _, obj in inspect.getmembers(module)
        if inspect.isclass(obj) and issubclass(obj, LearnedHeuristic) and obj.__module__ == module.__name__
    ]
    assert len(found) == 1, found
    return found[0]()


def main():
    heuristic = load(sys.argv[1])
    with open(sys.argv[2]) as f:
        cases = json.load(f)
    metadata = AHMetadata(cases["shared_memory"], tuple(cases["device_capa"]), cases["choices"], cases["name"])
    out = {"precondition": heuristic.check_precondition(metadata, AHContext()), "decisions": [], "ranked": []}
    for case in cases["contexts"]:
        ctx = AHContext()
        for name, value, categorical in case["features"]:
            ctx.add_feature(name, decode(value), is_categorical=categorical)
        for name, value in case["augmented"]:
            ctx.context_dict[name] = decode(value)
        try:
            out["decisions"].append(heuristic.get_decision(ctx, cases["choices"]))
        except Exception as e:  # noqa: BLE001
            out["decisions"].append(f"error: {type(e).__name__}: {e}")
        try:
            out["ranked"].append(heuristic.get_decisions_ranked(ctx))
        except Exception as e:  # noqa: BLE001
            out["ranked"].append(f"error: {type(e).__name__}: {e}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
