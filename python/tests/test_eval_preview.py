"""The decision preview of scripts/inductor_eval.py (`--dry-run --handler`) computes the features
the handler computes from Inductor's nodes: checked against `choices.features` on stub nodes laid
out as the evaluation lays out its operands, for every GEMM of both held-out lists and of the
LLaMA workloads."""

import io
import os
import sys
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import inductor_eval  # noqa: E402
import inductor_gemms  # noqa: E402
import inductor_workloads  # noqa: E402
from ah_inductor import choices  # noqa: E402
from inductor_stubs import StubInputs, fake_torch, operand  # noqa: E402


def stub_inputs(gm):
    dtype = f"torch.{gm['dtype']}"
    batch = gm["batch"] if gm["op"] == "bmm" else None
    nodes = [operand(gm["m"], gm["k"], gm["trans_a"], dtype, batch),
             operand(gm["k"], gm["n"], gm["trans_b"], dtype, batch)]
    if gm["op"] == "addmm":
        nodes.insert(0, ((gm["n"],), (1,), dtype))
    return StubInputs(nodes)


def all_gemms():
    gemms = inductor_eval.holdout_gemms()
    gemms += inductor_gemms.read_gemms(os.path.join(ROOT, "data", "inductor_holdout2_gemms.jsonl"))
    for w in inductor_eval.WORKLOADS[1:]:
        gemms += inductor_eval.workload_gemms(w)
    return gemms


class Preview(unittest.TestCase):
    def test_features_equal_the_handlers(self):
        gemms = all_gemms()
        self.assertGreater(len(gemms), 60)
        for gm in gemms:
            with self.subTest(gm["name"]), fake_torch(allow_tf32=gm["tf32"]):
                want = choices.features(stub_inputs(gm), gm["op"])
                self.assertEqual(inductor_gemms.handler_features(gm), want)

    def test_preview_counts_every_decision(self):
        class Handler:
            @staticmethod
            def decide(f):
                return ("extern", ()) if f["m"] <= 64 else ("keep", ("a", "b"))

        out = io.StringIO()
        with redirect_stdout(out):
            inductor_eval.preview(inductor_workloads.llama_gemms("llama_infer"), Handler)
        text = out.getvalue()
        self.assertIn("decode m=4  -> extern", text)
        self.assertIn("prefill 4x512  -> keep + 2 Triton configs", text)
        self.assertTrue(text.rstrip().endswith("decisions: extern 4, keep 4"), text)


    def test_preview_shows_decisions_as_install_applies_them(self):
        class Handler:
            decide = staticmethod(lambda f: ("extern", ()))
            installed = staticmethod(choices.installed)

        router = dict(inductor_workloads.llama_gemms("llama_infer")[0], name="router", m=4096, k=2048, n=8)
        for options, want in ((None, "-> default"), ({"narrow_search": False}, "-> extern")):
            out = io.StringIO()
            with redirect_stdout(out):
                inductor_eval.preview([router], Handler, options)
            self.assertIn(want, out.getvalue(), options)

    def test_preview_applies_small_bmm_search_unless_the_role_turns_it_off(self):
        class Handler:
            decide = staticmethod(lambda f: ("extern", ()))
            installed = staticmethod(choices.installed)

        decode = dict(inductor_workloads.llama_gemms("llama_infer")[0], name="decode context", op="bmm",
                      batch=512, m=1, k=4096, n=128)
        for options, want in ((None, "-> default"), ({"small_bmm_search": False}, "-> extern"),
                              ({"small_bmm_search": True, "retime": False}, "-> default")):
            out = io.StringIO()
            with redirect_stdout(out):
                inductor_eval.preview([decode], Handler, options)
            self.assertIn(want, out.getvalue(), options)


if __name__ == "__main__":
    unittest.main()
