"""`scripts/inductor_eval.py --candidate`: a second handler measured as setting `candidate` beside
`ours` in one process. Its GEMMs are flagged against the same bound, its autotuning ratios and
misses summarised and tabled next to ours', and the command line refuses what cannot work."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import inductor_eval  # noqa: E402
import inductor_results  # noqa: E402
from test_eval_merge import rec  # noqa: E402


def two_handlers():
    """Two GEMMs: on "a" the candidate misses the bound and ours does not; on "b" the reverse."""
    return [
        rec("a", {"none": 1.0, "ours": 1.0, "candidate": 1.5, "max_autotune": 1.1},
            {"none": 0.0, "ours": 1.0, "candidate": 4.0, "max_autotune": 10.0}),
        rec("b", {"none": 2.0, "ours": 1.5, "candidate": 1.0, "max_autotune": 1.0},
            {"none": 0.0, "ours": 1.0, "candidate": 1.0, "max_autotune": 20.0}),
    ]


class CandidateTest(unittest.TestCase):
    def test_each_handler_is_flagged_and_summarised(self):
        gemms = two_handlers()
        for r in gemms:
            inductor_eval.flag_ours(r)
        a, b = gemms
        self.assertEqual((a["ours_flag"], a["candidate_flag"]), (False, True))
        self.assertEqual((b["ours_flag"], b["candidate_flag"]), (True, False))
        self.assertAlmostEqual(a["candidate_rel_best"], 1.5)
        sm = inductor_results.summarize({"gemms": gemms})
        self.assertEqual(sm["autotune_ratio_max_autotune_over_ours"], 15.0)
        self.assertEqual(sm["autotune_ratio_max_autotune_over_candidate"], 6.0)
        self.assertEqual(sm["ours_slower_than_best_by_3pct"], ["b"])
        self.assertEqual(sm["candidate_slower_than_best_by_3pct"], ["a"])
        self.assertEqual(sm["slower_than_best_by_3pct"]["candidate"], 1)

    def test_no_ratio_over_compile_time_noise(self):
        gemms = [rec(name, {"none": 1.0, "ours": 1.0, "max_autotune": 1.0},
                     {"none": 0.0, "ours": spent, "max_autotune": 20.0})
                 for name, spent in (("a", 0.09), ("b", 0.02))]
        self.assertIsNone(inductor_results.summarize({"gemms": gemms})["autotune_ratio_max_autotune_over_ours"])
        gemms[0]["autotune_s"]["ours"] = 1.98
        self.assertEqual(inductor_results.summarize({"gemms": gemms})["autotune_ratio_max_autotune_over_ours"], 20.0)

    def test_the_table_shows_both_handlers(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump({"gemms": two_handlers(), "e2e": {}}, f)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(inductor_eval.main(["--merge", path]), 0)
        text = out.getvalue()
        self.assertIn("| ours / best | candidate / best |", text)
        self.assertIn("1.500 **slow** |", text)  # a's candidate
        self.assertIn("autotuning time max_autotune / candidate: 6.0x; candidate > 1.03x the best: ['a']", text)
        self.assertIn("autotuning time max_autotune / ours: 15.0x; ours > 1.03x the best: ['b']", text)

    def test_without_a_candidate_the_table_is_as_before(self):
        gemms = [rec("a", {"none": 1.0, "ours": 1.0, "max_autotune": 1.0},
                     {"none": 0.0, "ours": 0.5, "max_autotune": 3.0})]
        for r in gemms:
            inductor_eval.flag_ours(r)
        data = {"gemms": gemms, "e2e": {}}
        data["summary"] = inductor_results.summarize(data)
        self.assertNotIn("autotune_ratio_max_autotune_over_candidate", data["summary"])
        text = inductor_eval.table(data, ["none", "ours", "max_autotune"])
        self.assertNotIn("candidate", text)

    def test_a_run_without_a_handler_has_no_handler_column(self):
        gemms = [rec("a", {"none": 1.0, "mm_ranking": 1.2}, {"none": 0.0, "mm_ranking": 3.0})]
        data = {"gemms": gemms, "e2e": {}}
        data["summary"] = inductor_results.summarize(data)
        lines = inductor_eval.table(data, ["none", "mm_ranking"]).splitlines()
        self.assertEqual(lines[0], "| GEMM | compile s none | compile s mm_ranking | run ms none | "
                                   "run ms mm_ranking | picked (max_autotune) |")
        self.assertEqual(lines[1], "|" + "---|" * 6)
        self.assertFalse(any("/ ours" in line for line in lines), lines)

    def parse_error(self, argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as cm:
            inductor_eval.parse(argv)
        self.assertEqual(cm.exception.code, 2)
        return err.getvalue()

    def test_the_command_line_refuses_what_cannot_work(self):
        base = ["--out", "x.json", "--settings", "none,ours,candidate"]
        self.assertIn("setting candidate needs --candidate", self.parse_error(base + ["--handler", "a/h.py"]))
        named = self.parse_error(base + ["--handler", "a/h.py", "--candidate", "b/h.py"])
        self.assertIn("both named h.py", named)
        a = inductor_eval.parse(base + ["--handler", "a/h.py", "--candidate", "b/c.py"])
        self.assertEqual(inductor_eval.handler_paths(a), {"candidate": "b/c.py", "ours": "a/h.py"})
        a = inductor_eval.parse(["--out", "x.json", "--settings", "none,max_autotune", "--handler", "h.py"])
        self.assertEqual(inductor_eval.handler_paths(a), {})

    def test_install_options_name_only_the_roles_given(self):
        base = ["--out", "x.json", "--settings", "none,ours,candidate", "--handler", "a/h.py",
                "--candidate", "b/c.py"]
        self.assertEqual(inductor_eval.install_options(inductor_eval.parse(base)), {})
        a = inductor_eval.parse(base + ["--no-retime", "ours", "--retime", "candidate"])
        self.assertEqual(inductor_eval.install_options(a),
                         {"ours": {"retime": False}, "candidate": {"retime": True}})
        a = inductor_eval.parse(base + ["--no-warm-no-bias", "candidate", "--no-retime", "candidate"])
        self.assertEqual(inductor_eval.install_options(a),
                         {"candidate": {"retime": False, "warm_no_bias": False}})
        a = inductor_eval.parse(base + ["--warm-no-bias", "candidate", "--warm-splits", "candidate"])
        self.assertEqual(inductor_eval.install_options(a),
                         {"candidate": {"warm_no_bias": True, "warm_splits": True}})
        a = inductor_eval.parse(base + ["--narrow-search", "candidate", "--warm-splits", "candidate"])
        self.assertEqual(inductor_eval.install_options(a),
                         {"candidate": {"narrow_search": True, "warm_splits": True}})
        a = inductor_eval.parse(base + ["--no-warm-splits", "ours", "--warm-splits", "candidate"])
        self.assertEqual(inductor_eval.install_options(a),
                         {"ours": {"warm_splits": False}, "candidate": {"warm_splits": True}})
        both = self.parse_error(base + ["--retime", "ours", "--no-retime", "ours"])
        self.assertIn("--retime and --no-retime both name ours", both)
        both = self.parse_error(base + ["--warm-splits", "ours", "--no-warm-splits", "ours"])
        self.assertIn("--warm-splits and --no-warm-splits both name ours", both)


if __name__ == "__main__":
    unittest.main()
