"""`scripts/inductor_eval.py --lines A-B`: a GEMM set measured in parts reads only its part's
lines, keeps their line numbers in errors, names what the budget skipped or cut for a next run,
and the command line refuses a range that is no range."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import inductor_eval  # noqa: E402


def gemm(m):
    return json.dumps({"op": "mm", "m": m, "k": 64, "n": 64, "dtype": "bfloat16"}) + "\n"


class LinesTest(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            f.writelines([gemm(1), gemm(2), "\n", gemm(4), "not json\n"])
        self.addCleanup(os.unlink, self.path)

    def test_only_the_lines_of_the_range_are_read(self):
        got = inductor_eval.read_gemms(self.path, lines=[(2, 4)])
        self.assertEqual([g["m"] for g in got], [2, 4])
        self.assertEqual([g["name"] for g in got], ["line 2", "line 4"])
        self.assertEqual(len(inductor_eval.read_gemms(self.path, lines=[(1, 1)])), 1)

    def test_each_gemm_keeps_its_line_and_the_budget_note_names_the_rest(self):
        got = inductor_eval.read_gemms(self.path, lines=[(1, 4)])
        self.assertEqual([g["line"] for g in got], [1, 2, 4])
        note = inductor_eval.budget_note(got[1:], "set.jsonl")
        # Line 3 is blank: the two GEMMs are two ranges, each one --lines reads back.
        self.assertIn("before or during 2 GEMM(s) (lines 2,4 of set.jsonl)", note)
        self.assertIn("`--lines 2,4`", note)
        self.assertNotIn("--lines", inductor_eval.budget_note([{"name": "x"}], None))

    def test_a_gemm_the_budget_cut_between_settings_is_named_to_measure_again(self):
        class FakeInductor:  # no torch: what main() asks of the harness
            refused = []

            def __init__(self, *args):
                pass

            def meta(self):
                return {"device": "a GPU"}

        def measure(ind, gm, settings, out_of_time, operands):
            run = {"none": 1.0, "ours": 1.0, "max_autotune": 1.0}
            rec = {"gemm": gm, "run_ms": run, "autotune_s": {"none": 0.0, "ours": 0.0, "max_autotune": 9.0}}
            if gm["line"] == 2:  # the budget ran out after its cuBLAS and handler compiles
                del run["max_autotune"], rec["autotune_s"]["max_autotune"]
                rec["not_run"] = ["max_autotune"]
            return rec

        with tempfile.TemporaryDirectory() as d:
            out, argv = io.StringIO(), ["--gemms", self.path, "--lines", "1-4", "--workloads", "gemms",
                                        "--settings", "none,max_autotune", "--out", os.path.join(d, "r.json")]
            with mock.patch.object(inductor_eval, "Inductor", FakeInductor), \
                    mock.patch.object(inductor_eval, "measure_gemm", measure), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(inductor_eval.main(argv), 0)
        self.assertIn("before or during 1 GEMM(s) (lines 2 of ", out.getvalue())
        self.assertIn("`--lines 2`", out.getvalue())

    def test_a_bad_line_in_the_range_is_named_with_its_line(self):
        with self.assertRaisesRegex(inductor_eval.GemmFileError, r":5: not JSON"):
            inductor_eval.read_gemms(self.path, lines=[(4, 5)])

    def test_several_ranges_are_read_and_skipped_lines_named_as_few_ranges(self):
        self.assertEqual(inductor_eval.line_ranges("12-14,21-28"), [(12, 14), (21, 28)])
        got = inductor_eval.read_gemms(self.path, lines=[(1, 1), (4, 4)])
        self.assertEqual([g["m"] for g in got], [1, 4])
        self.assertEqual(inductor_eval.as_ranges([13, 14, 21, 22, 23, 28]), "13-14,21-23,28")
        note = inductor_eval.budget_note([{"line": 14}, {"line": 21}, {"line": 22}], "s.jsonl")
        self.assertIn("`--lines 14,21-22`", note)

    def test_a_range_that_is_no_range_is_refused(self):
        self.assertEqual(inductor_eval.line_range("15-28"), (15, 28))
        self.assertEqual(inductor_eval.line_ranges("10-12,17,28"), [(10, 12), (17, 17), (28, 28)])
        for bad in ("0", "0-3", "3-1", "a-b", "-2", "1-", "1-2,", "1-2,,3-4", "1-2;3-4"):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit):
                    inductor_eval.parse(["--dry-run", "--gemms", self.path, "--lines", bad])
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            inductor_eval.parse(["--dry-run", "--lines", "1-2"])


if __name__ == "__main__":
    unittest.main()
