"""`scripts/inductor_harness.py`'s `PhaseTimer` against a stub Inductor (no torch): the seconds
inside each timed entry point (Triton template generation among them) and Inductor's own GEMM
phases are summed, an entry point this PyTorch lacks is named in `missing`, and the timed
methods still return what they returned."""

import os
import sys
import types
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import inductor_harness  # noqa: E402


class Template:
    def generate(self, *args, **kwargs):
        return ("generated", args, kwargs)


class Selector:
    @staticmethod
    def log_results(name, input_nodes, timings, elapse, precompile_elapse, *a, **kw):
        return "logged"


def stub_inductor(with_templates=True):
    """The modules PhaseTimer patches, as a `sys.modules` mapping: `TritonTemplate.generate` only
    when `with_templates`, no kernel tuner at all."""
    select = types.ModuleType("torch._inductor.select_algorithm")
    select.AlgorithmSelectorCache = type("AlgorithmSelectorCache", (Selector,), {})
    if with_templates:
        select.TritonTemplate = type("TritonTemplate", (Template,), {})
    heuristics = types.ModuleType("torch._inductor.runtime.triton_heuristics")
    inductor = types.ModuleType("torch._inductor")
    inductor.select_algorithm = select
    torch = types.ModuleType("torch")
    torch._inductor = inductor
    return {"torch": torch, "torch._inductor": inductor, "torch._inductor.runtime": types.ModuleType("r"),
            "torch._inductor.runtime.triton_heuristics": heuristics, "torch._inductor.select_algorithm": select}


class PhaseTimerTest(unittest.TestCase):
    def test_template_generation_and_the_gemm_phases_are_summed(self):
        modules = stub_inductor()
        with mock.patch.dict(sys.modules, modules):
            timer = inductor_harness.PhaseTimer()
            select = modules["torch._inductor.select_algorithm"]
            self.assertEqual(select.TritonTemplate().generate(1, k=2), ("generated", (1,), {"k": 2}))
            select.TritonTemplate().generate()
            self.assertEqual(select.AlgorithmSelectorCache.log_results("mm", [], {}, 1.5, 0.25), "logged")
            select.AlgorithmSelectorCache.log_results("mm", [], {}, 0.5, 0.25)
        totals = timer.totals()
        self.assertEqual(totals["gemm_benchmark"], 2.0)
        self.assertEqual(totals["gemm_precompile"], 0.5)
        self.assertGreater(totals["template_generation"], 0.0)
        self.assertEqual(totals["missing"], ["coordinate_descent", "kernel_configs"])
        timer.reset()
        self.assertNotIn("template_generation", timer.totals())

    def test_a_pytorch_without_triton_templates_names_the_phase_missing(self):
        with mock.patch.dict(sys.modules, stub_inductor(with_templates=False)):
            timer = inductor_harness.PhaseTimer()
        self.assertIn("template_generation", timer.totals()["missing"])


if __name__ == "__main__":
    unittest.main()
