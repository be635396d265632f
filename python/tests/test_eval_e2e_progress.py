"""`scripts/inductor_eval.py`'s end-to-end measurement keeps what it measured as it goes: a run
cut inside a setting's compile (the forty-seventh session's DLRM step, whose max-autotune compile
outlasted a 600 s device call) still has the compile times before it, saved, and says which
setting it was in."""

import contextlib
import io
import json
import os
import sys
import tempfile
import types
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import inductor_eval  # noqa: E402
import inductor_results  # noqa: E402


class Cut(BaseException):
    """What the device's time limit is to the process: nothing in it catches this."""


class FakeInductor:
    """The parts of `inductor_harness.Inductor` that `measure_e2e` uses, without torch: each
    setting's first call takes `compile_s[setting]` seconds, or is cut where that is Cut."""

    def __init__(self, compile_s):
        self.compile_s = compile_s
        self.torch = types.SimpleNamespace(
            backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace())),
            manual_seed=lambda seed: None, cuda=types.SimpleNamespace(synchronize=lambda: None))

    def fresh(self):
        pass

    @contextlib.contextmanager
    def setting(self, name, record):
        yield name
        record.setdefault("lowerings", {})[name] = 1
        record.setdefault("autotuned", {})[name] = int(name != "none")

    def timed_first_call(self, first):
        return first()

    def capture(self, step, rounds):
        return types.SimpleNamespace(replay=step)

    def alternate(self, steps, rounds):
        return {s: 1.0 for s in steps}


def workload(compile_s):
    def make(torch, model, setting):
        def first():
            if compile_s[setting] is Cut:
                raise Cut()
            return compile_s[setting]
        return first, lambda: None
    return (lambda torch: None), make


class E2EProgress(unittest.TestCase):
    def measure(self, compile_s, progress):
        inductor_eval.E2E["fake_step"] = workload(compile_s)
        self.addCleanup(inductor_eval.E2E.pop, "fake_step")
        return inductor_eval.measure_e2e(FakeInductor(compile_s), "fake_step",
                                         ["none", "ours", "max_autotune"], lambda: False, progress)

    def test_each_setting_is_told_as_it_starts_and_ends(self):
        lines = []
        rec = self.measure({"none": 6.0, "ours": 5.5, "max_autotune": 259.0},
                           lambda rec, line: lines.append(line))
        self.assertEqual(lines, ["fake_step: compiling none", "fake_step: none compiled in 6.0 s",
                                 "fake_step: compiling ours", "fake_step: ours compiled in 5.5 s",
                                 "fake_step: compiling max_autotune",
                                 "fake_step: max_autotune compiled in 259.0 s"])
        self.assertNotIn("compiling", rec)
        self.assertEqual(rec["autotune_s"], {"none": 0.0, "ours": -0.5, "max_autotune": 253.0})
        self.assertEqual(rec["step_ms"], {"none": 1.0, "ours": 1.0, "max_autotune": 1.0})

    def test_a_run_cut_inside_a_compile_keeps_the_compile_times_before_it(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "e2e.json")
            results = inductor_eval.Results(out, {})
            err = io.StringIO()
            with redirect_stderr(err), self.assertRaises(Cut):
                self.measure({"none": 6.0, "ours": 5.5, "max_autotune": Cut},
                             inductor_eval.e2e_progress(results, "fake_step", 0.0))
            with open(out) as f:
                saved = json.load(f)["e2e"]["fake_step"]
        self.assertEqual(saved["compile_s"], {"none": 6.0, "ours": 5.5})
        self.assertEqual(saved["compiling"], "max_autotune")
        self.assertNotIn("step_ms", saved)
        self.assertIn("fake_step: ours compiled in 5.5 s", err.getvalue())
        self.assertIn("fake_step: compiling max_autotune", err.getvalue().splitlines()[-1])
        table = "\n".join(inductor_results.e2e_table("fake_step", saved))
        self.assertIn("| ours | 5.5 | - | 1 | 1 |", table)
        self.assertIn("the run was cut inside max_autotune's compile (no step timed)", table)


if __name__ == "__main__":
    unittest.main()
