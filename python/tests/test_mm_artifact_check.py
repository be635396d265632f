"""scripts/check_mm_artifact_in_pytorch.py without PyTorch: the verdict on made-up kept lists,
the GEMM files' reading, the plan (mm only, distinct), and that it stops with exit status 2 and
one line saying what it needs when torch is missing."""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import check_mm_artifact_in_pytorch as check  # noqa: E402

TILE_A = "BLOCK-M=64_BLOCK-K=32_BLOCK-N=128_numstages=3_numwarps=4"
TILE_B = "BLOCK-M=128_BLOCK-K=64_BLOCK-N=128_numstages=5_numwarps=8"
ID_A, ID_B = "type=triton_" + TILE_A, "type=triton_" + TILE_B
OTHER = "type=triton_BLOCK-M=16_BLOCK-K=16_BLOCK-N=16_numstages=1_numwarps=1"
# Two kept configs that differ only in GROUP_M, and a third: PyTorch names the first two alike.
KEEP = ("keep", (f"triton_mm_{TILE_A}_GROUP-M=8", f"triton_mm_{TILE_A}_GROUP-M=4", f"triton_mm_{TILE_B}_GROUP-M=8"))
OFFERED = ["extern_mm", ID_A, ID_B, OTHER, "subgraph_contiguous_mm"]


class Verdict(unittest.TestCase):
    def test_extern_ok_only_with_extern_mm_alone_and_nothing_benchmarked(self):
        r = check.judge(("extern", ()), ["extern_mm"], ranked=["extern_mm"], offered=OFFERED)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["verdict"], "ok")
        for kept, bench in ((["extern_mm", ID_A], 2), (["extern_mm"], 1), ([ID_A], 0)):
            r = check.judge(("extern", ()), kept, ranked=["extern_mm"], benchmarked=bench)
            self.assertFalse(r["ok"], (kept, bench))
            self.assertTrue(r["verdict"].startswith("MISMATCH"), r)

    def test_extern_fails_when_the_artifact_was_not_asked_or_ranked_more(self):
        self.assertFalse(check.judge(("extern", ()), ["extern_mm"], consulted=False)["ok"])
        r = check.judge(("extern", ()), ["extern_mm"], ranked=["extern_mm", ID_A])
        self.assertFalse(r["ok"])
        self.assertIn("the artifact ranked 2", r["verdict"])

    def test_keep_compares_after_the_group_m_collapse(self):
        self.assertEqual(check.expected_ids(KEEP[1]), ["extern_mm", ID_A, ID_B])
        ranked = ["extern_mm", ID_A, ID_B]
        r = check.judge(KEEP, ["extern_mm", ID_B, ID_A], ranked=ranked, offered=OFFERED, benchmarked=3)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["verdict"], "ok")
        r = check.judge(KEEP, ["extern_mm", ID_A], ranked=ranked, offered=OFFERED)
        self.assertFalse(r["ok"])
        self.assertIn("missing [" + TILE_B, r["verdict"])
        r = check.judge(KEEP, ["extern_mm", ID_A, ID_B, OTHER], ranked=ranked, offered=OFFERED)
        self.assertFalse(r["ok"])
        self.assertIn("extra [" + OTHER.replace("type=triton_", ""), r["verdict"])
        r = check.judge(KEEP, ["extern_mm", ID_A, ID_A, ID_B], ranked=ranked, offered=OFFERED)
        self.assertFalse(r["ok"])
        self.assertIn("1 repeated", r["verdict"])

    def test_keep_of_configs_pytorch_did_not_offer(self):
        offered = ["extern_mm", ID_A, OTHER]
        r = check.judge(KEEP, ["extern_mm", ID_A], ranked=["extern_mm", ID_A, ID_B], offered=offered)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["not_offered"], [ID_B])
        self.assertIn("1 kept config not offered", r["verdict"])
        # None of them offered: the handler keeps cuBLAS alone, so the artifact ranks extern_mm
        # alone and nothing is benchmarked...
        offered = ["extern_mm", OTHER, "subgraph_contiguous_mm"]
        r = check.judge(KEEP, ["extern_mm"], ranked=["extern_mm"], offered=offered)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["effective"], "extern")
        # ... and Inductor's whole list, unranked, is a mismatch.
        r = check.judge(KEEP, offered, ranked=None, offered=offered + [OTHER], benchmarked=3)
        self.assertFalse(r["ok"])

    def test_keep_the_artifact_ranked_otherwise(self):
        r = check.judge(KEEP, ["extern_mm", ID_A, ID_B], ranked=["extern_mm", ID_A], offered=OFFERED)
        self.assertFalse(r["ok"])
        self.assertIn("ranked otherwise", r["verdict"])

    def test_default_is_inductors_whole_list(self):
        extras = [ID_A.replace("64", "32")]  # tuned_mm's extra Triton configs for the hook, last
        r = check.judge(("default", ()), OFFERED, ranked=None, offered=OFFERED + extras, benchmarked=4)
        self.assertTrue(r["ok"], r)
        self.assertTrue(check.judge(("default", ()), OFFERED, consulted=False)["ok"])
        for kept, ranked in ((["extern_mm"], None), (["extern_mm", ID_A], None), (OFFERED, ["extern_mm"])):
            r = check.judge(("default", ()), kept, ranked=ranked, offered=OFFERED + extras)
            self.assertFalse(r["ok"], kept)

    def test_a_trimmed_full_list_is_judged_as_the_whole_list(self):
        drop = ("drop", (ID_A,))
        r = check.judge(drop, OFFERED, ranked=None, offered=OFFERED, benchmarked=4)
        self.assertTrue(r["ok"], r)
        self.assertEqual((r["handler"], r["effective"]), ("drop", "default"))
        self.assertIn("trimmed", r["verdict"])
        self.assertFalse(check.judge(drop, ["extern_mm"], ranked=["extern_mm"], offered=OFFERED)["ok"])

    def test_no_autotuning_call(self):
        r = check.judge(("extern", ()), None)
        self.assertFalse(r["ok"])
        self.assertIn("not reached", r["verdict"])


def write(lines):
    f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
    f.write("\n".join(lines) + "\n")
    f.close()
    return f.name


GOOD = '{"name": "a", "op": "mm", "batch": 1, "m": 4, "k": 2048, "n": 8192, "dtype": "bfloat16", "tf32": false, "trans_a": false, "trans_b": true}'


class GemmFiles(unittest.TestCase):
    def test_reads_and_normalizes(self):
        path = write([GOOD, "", '{"op": "mm", "m": 8, "k": 16, "n": 32, "dtype": "float32", "tf32": 1}'])
        self.addCleanup(os.remove, path)
        gemms = check.read_gemm_file(path)
        self.assertEqual(len(gemms), 2)
        self.assertEqual(gemms[1]["name"], "line 3")
        self.assertEqual((gemms[1]["batch"], gemms[1]["tf32"], gemms[1]["trans_b"]), (1, True, False))
        self.assertEqual(gemms[0]["source"], f"{path}:1")

    def test_a_bad_line_names_file_and_line(self):
        for bad, why in (("{not json", "not JSON"), ('{"op": "mm", "m": 4, "k": 4, "n": 4}', "no 'dtype'"),
                         ('{"op": "mm", "m": 0, "k": 4, "n": 4, "dtype": "bfloat16"}', "'m' is 0"),
                         ('{"op": "mm", "m": 4, "k": 4, "n": 4, "dtype": "int8"}', "dtype 'int8'"),
                         ("[1, 2]", "not a JSON object")):
            path = write([GOOD, bad])
            self.addCleanup(os.remove, path)
            with self.assertRaises(check.ie.GemmFileError) as cm:
                check.read_gemm_file(path)
            self.assertIn(f"{path}:2: ", str(cm.exception))
            self.assertIn(why, str(cm.exception))

    def test_plan_keeps_distinct_mm_gemms(self):
        bmm = GOOD.replace('"mm"', '"bmm"').replace('"a"', '"b"')
        path = write([GOOD, bmm, GOOD.replace('"a"', '"a again"')])
        self.addCleanup(os.remove, path)
        gemms, not_mm = check.plan([path], llama=False)
        self.assertEqual([g["name"] for g in gemms], ["a"])
        self.assertEqual(gemms[0]["also"], ["a again"])
        self.assertEqual(len(not_mm), 1)
        self.assertIn("(bmm)", not_mm[0])
        gemms, _ = check.plan([path], llama=True)
        self.assertGreater(len(gemms), 10)
        self.assertTrue(all(g["op"] == "mm" for g in gemms))

    def test_order_puts_rankings_first(self):
        gemms = [{"n": i} for i in range(3)]
        decisions = [("extern", ()), ("keep", ("x",)), ("default", ())]
        g, d = check.order(gemms, decisions)
        self.assertEqual([x[0] for x in d], ["keep", "default", "extern"])
        self.assertEqual([x["n"] for x in g], [1, 2, 0])


class WithoutTorch(unittest.TestCase):
    def run_main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(sys.modules, {"torch": None, "triton": None}), redirect_stdout(out), redirect_stderr(err):
            try:
                rc = check.main(argv)
            except SystemExit as e:
                rc = e.code
        return rc, out.getvalue(), err.getvalue()

    def test_main_exits_2_saying_what_it_needs(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x.json")
            rc, stdout, stderr = self.run_main(["--out", out])
            self.assertEqual(rc, 2)
            self.assertEqual(stdout, "")
            self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
            self.assertIn("needs PyTorch", stderr)
            self.assertIn("torch is not installed here", stderr)
            self.assertFalse(os.path.exists(out))

    def test_a_bad_gemm_file_exits_2_naming_it(self):
        path = write(["{oops"])
        self.addCleanup(os.remove, path)
        rc, _, stderr = self.run_main(["--out", os.devnull, "--gemms", path])
        self.assertEqual(rc, 2)
        self.assertIn(f"{path}:1: not JSON", stderr)

    def test_help_needs_no_torch(self):
        rc, stdout, _ = self.run_main(["--help"])
        self.assertEqual(rc, 0)
        self.assertIn("--budget-s", stdout)


if __name__ == "__main__":
    unittest.main()
