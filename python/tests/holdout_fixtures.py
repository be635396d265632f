"""Fixtures shared by the held-out pool's tests (test_holdout_pool.py, test_holdout_replay.py):
result records, result files and fake generated handler modules."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import holdout_records  # noqa: E402


def gemm(m):
    return {"name": f"g{m}", "op": "mm", "batch": 1, "m": m, "k": 64, "n": 64, "dtype": "bfloat16",
            "tf32": False, "trans_a": False, "trans_b": True}


def rec(run_ms, picked=None):
    return {"gemm": gemm(8), "run_ms": run_ms, "picked": picked or {}}


HANDLER = """
HEURISTIC = {"name": "Fake"}
install = uninstall = stats = reset_stats = lambda *a: None
def decide(f):
    if f["m"] < 100:
        return ("extern", ())
    return ("default", ()) if f["m"] < 300 else ("keep", ("triton_mm_x",))
"""


def write(folder, name, gemms):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump({"gemms": gemms}, f)
    return path


def handler_file(folder):
    """HANDLER written as a generated module in `folder`; its path."""
    path = os.path.join(folder, "h_choices.py")
    with open(path, "w") as f:
        f.write(HANDLER)
    return path


def handler_with_installed(folder, body):
    """HANDLER with an `installed(kind, names, f, narrow_search=True, small_bmm_search=False)`
    returning `body` (an expression), as a generated module in `folder`; its path."""
    path = handler_file(folder)
    with open(path, "a") as f:
        f.write(f"def installed(kind, names, f, narrow_search=True, small_bmm_search=False):\n"
                f"    return {body}\n")
    return path


def decided_as(kind, kept=0):
    """A run's recorded decisions on `rec`'s GEMM: one lowering, decided `kind`, `kept` kept."""
    return [dict(holdout_records.handler_features(gemm(8)), decision=kind, kept=kept)]


def seen_keep(m):
    """A run's recorded decision: `keep`, made on GEMM `gemm(m)` as the handler saw it."""
    return dict(holdout_records.handler_features(gemm(m)), decision="keep", kept=1)


PICK = {"max_autotune": {"triton_mm_a": 1}, "max_autotune_ptxas": {"triton_mm_a": 1}}
OTHER = {"max_autotune": {"triton_mm_a": 1}, "max_autotune_ptxas": {"extern_mm": 1}}
