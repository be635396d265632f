"""The decision preview of scripts/inductor_eval.py (`--dry-run --handler`) computes the features
the handler computes from Inductor's nodes: checked against `choices.features` on stub nodes laid
out as the evaluation lays out its operands, for every GEMM of both held-out lists and of the
LLaMA workloads; and, where Inductor's pad_mm padded a GEMM first, the GEMM it handed on, checked
against every such record of both pools."""

import io
import json
import os
import sys
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import holdout_pool  # noqa: E402 - the owner of the pool list's format
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


def pool_records():
    """Every record of both pools (data/holdout_pool*.txt) whose run recorded one decision."""
    for pool in ("holdout_pool.txt", "holdout_pool_h200.txt"):
        for path in holdout_pool.listed_files(os.path.join(ROOT, "data", pool)):
            with open(path) as f:
                for rec in json.load(f)["gemms"]:
                    if len(rec.get("ours_decisions") or []) == 1:
                        yield rec["gemm"], rec["ours_decisions"][0]


class PadMm(unittest.TestCase):
    def test_aligned_gemms_are_not_padded(self):
        gm = inductor_gemms.g("x", "y", "mm", 64, 128, 256, "bfloat16", tb=True)
        self.assertIsNone(inductor_gemms.padded_by_pad_mm(gm))
        self.assertIsNone(inductor_gemms.padded_by_pad_mm(dict(gm, dtype="float32", k=132)))

    def test_a_padded_operand_is_laid_out_row_major(self):
        gm = inductor_gemms.g("x", "y", "mm", 64, 128, 1025, "float16", ta=True, tb=True)
        padded = inductor_gemms.padded_by_pad_mm(gm)
        self.assertEqual((padded["m"], padded["k"], padded["n"]), (64, 128, 1032))
        self.assertEqual((padded["trans_a"], padded["trans_b"]), (True, False))
        padded = inductor_gemms.padded_by_pad_mm(dict(gm, dtype="float32", k=130))
        self.assertEqual((padded["k"], padded["n"], padded["trans_a"]), (132, 1028, False))

    def test_every_gemm_inductor_padded_is_seen_as_predicted(self):
        keys = ("m", "k", "n", "batch", "mat1_stride_0", "mat1_stride_1", "mat2_stride_0",
                "mat2_stride_1", "mat1_iscontig", "mat2_iscontig")
        padded = 0
        for gm, seen in pool_records():
            if (seen["m"], seen["k"], seen["n"]) == (gm["m"], gm["k"], gm["n"]):
                continue
            padded += 1
            want = {k: seen[k] for k in keys}
            got = inductor_gemms.handler_features(inductor_gemms.padded_by_pad_mm(gm))
            self.assertEqual({k: got[k] for k in keys}, want, inductor_gemms.describe(gm))
        self.assertGreaterEqual(padded, 69)

    def test_preview_shows_what_the_handler_decides_once_padded(self):
        class Handler:
            decide = staticmethod(lambda f: ("extern", ()) if f["mat2_stride_1"] == 1 else ("default", ()))

        head = inductor_gemms.g("lm", "head", "mm", 4096, 1024, 55028, "bfloat16", tb=True)
        out = io.StringIO()
        with redirect_stdout(out):
            inductor_eval.preview([head, dict(head, n=55040)], Handler)
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].endswith("-> default  (if pad_mm pads it to 4096x1024x55032 first: extern)"), lines[0])
        self.assertTrue(lines[1].endswith("-> default"), lines[1])
        self.assertTrue(lines[2].startswith("pad_mm may pad 1 of these first"), lines[2])
        self.assertEqual(lines[3], "decisions: default 2")


if __name__ == "__main__":
    unittest.main()
