"""`scripts/holdout_sets.py`: result files grouped into sets by name, each set merged as
`inductor_eval.py --merge` merges it and scored in one row (a second row for a candidate
handler), every set together in a last row; autotuning summed as measured; `_MMRankingH100`
scored on its own GEMMs, set by set and pooled; bad files named, exit 2."""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import holdout_sets  # noqa: E402
from test_holdout_pool import write  # noqa: E402 - one writer of a result file in the tests


def gemm(name, run_ms, autotune_s):
    g = {"name": name, "op": "mm", "batch": 1, "m": 64, "k": 64, "n": 64, "dtype": "bfloat16",
         "tf32": False, "trans_a": False, "trans_b": True}
    return {"gemm": g, "run_ms": run_ms, "autotune_s": autotune_s}


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = holdout_sets.main(argv)
    return code, out.getvalue(), err.getvalue()


def one_plain_set():
    """What the script prints for one set of one GEMM, measured without `_MMRankingH100`."""
    with tempfile.TemporaryDirectory() as d:
        a = write(d, "inductor_eval_h200_holdout1a_h1.json", [
            gemm("g", {"none": 0.01, "ours": 0.01, "max_autotune": 0.01}, {"ours": 1.0, "max_autotune": 5.0})])
        return run([a])[1]


class SetNameTest(unittest.TestCase):
    def test_parts_and_suffixes_share_the_set(self):
        for name, want in (("inductor_eval_h100_holdout60a_h2191oa.json", "holdout60"),
                           ("inductor_eval_h100_holdout55l7_h2191.json", "holdout55"),
                           ("inductor_eval_h100_holdout15_mmranking.json", "holdout15"),
                           ("inductor_eval_h100_smallbmm_blind1b_h2191.json", "smallbmm_blind1"),
                           ("inductor_eval_h100_addmmblind1_h2191sb.json", "addmmblind1"),
                           ("results/inductor_eval_h100_decode1a_h2191.json", "decode1"),
                           ("mine.json", "mine")):
            self.assertEqual(holdout_sets.set_name(name), want, name)

    def test_sets_keep_the_order_given(self):
        sets = holdout_sets.grouped(["inductor_eval_h100_holdout2a.json", "inductor_eval_h100_holdout1a.json",
                                     "inductor_eval_h100_holdout2b.json"])
        self.assertEqual(list(sets), ["holdout2", "holdout1"])
        self.assertEqual(sets["holdout2"], ["inductor_eval_h100_holdout2a.json", "inductor_eval_h100_holdout2b.json"])


class TableTest(unittest.TestCase):
    def test_a_set_in_parts_scores_as_one_row(self):
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "inductor_eval_h100_holdout9a_h1.json", [
                # ours 1.05x the bound (over); max-autotune the bound; cuBLAS 1.2x (over)
                gemm("g1", {"none": 0.012, "ours": 0.0105, "max_autotune": 0.010},
                     {"none": 0.0, "ours": 1.0, "max_autotune": 20.0})])
            b = write(d, "inductor_eval_h100_holdout9b_h1.json", [
                gemm("g2", {"none": 0.010, "ours": 0.010, "max_autotune": 0.011},
                     {"none": 0.0, "ours": 1.0, "max_autotune": 10.0})])
            code, out, _ = run([a, b])
        self.assertEqual(code, 0)
        rows = out.strip().splitlines()
        self.assertEqual(len(rows), 3, out)
        self.assertEqual(rows[2].split(" | ")[:8],
                         ["| holdout9", "2", "1", "1", "1", "2.0", "30.0", "15.0x"])

    def test_every_set_together_in_a_last_row_without_candidates(self):
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "inductor_eval_h200_holdout1a_h1.json", [
                # ours 1.1x the bound (over), max-autotune the bound, cuBLAS 1.2x (over)
                gemm("g1", {"none": 0.012, "ours": 0.011, "max_autotune": 0.010},
                     {"none": 0.0, "ours": 1.0, "max_autotune": 20.0})])
            b = write(d, "inductor_eval_h200_holdout2a_h1.json", [
                # a candidate too: over on none, and it stays out of the last row
                gemm("g2", {"none": 0.010, "ours": 0.010, "candidate": 0.010, "max_autotune": 0.0125},
                     {"none": 0.0, "ours": 2.0, "candidate": 9.0, "max_autotune": 10.0})])
            code, out, _ = run([a, b])
        self.assertEqual(code, 0)
        rows = out.strip().splitlines()[2:]
        self.assertEqual([r.split(" | ")[0] for r in rows],
                         ["| holdout1", "| holdout2", "| holdout2 (candidate)", "| all 2 sets"])
        self.assertEqual(rows[3], "| all 2 sets | 2 | 1 | 1 | 1 | 3.0 | 30.0 | 10.0x | 0.938 |")

    def test_one_set_no_last_row(self):
        self.assertNotIn("| all", one_plain_set())

    def test_a_later_part_replaces_a_gemm_measured_again(self):
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "inductor_eval_h100_holdout3a.json", [gemm("g", {"none": 0.01, "ours": 0.02, "max_autotune": 0.01},
                                                   {"ours": 1.0, "max_autotune": 5.0})])
            b = write(d, "inductor_eval_h100_holdout3b.json", [gemm("g", {"none": 0.01, "ours": 0.01, "max_autotune": 0.01},
                                                   {"ours": 2.0, "max_autotune": 6.0})])
            _, out, _ = run([a, b])
        self.assertEqual(out.strip().splitlines()[2].split(" | ")[1:8], ["1", "0", "0", "0", "2.0", "6.0", "3.0x"])

    def test_a_candidate_gets_its_own_row_and_no_spend_no_ratio(self):
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "inductor_eval_h100_kind1a.json", [gemm("g", {"none": 0.01, "ours": 0.01, "candidate": 0.008,
                                                      "max_autotune": 0.008},
                                                  {"ours": -0.02, "candidate": 2.0, "max_autotune": 8.0})])
            _, out, _ = run([a])
        rows = out.strip().splitlines()[2:]
        self.assertEqual([r.split(" | ")[0] for r in rows], ["| kind1", "| kind1 (candidate)"])
        self.assertEqual(rows[0].split(" | ")[2:8], ["1", "0", "1", "-0.0", "8.0", "-"])
        self.assertEqual(rows[1].split(" | ")[2:8], ["0", "0", "1", "2.0", "8.0", "4.0x"])

    def test_a_set_without_max_autotune_scores_nothing_and_does_not_fail(self):
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "inductor_eval_h100_holdout4a.json", [gemm("g", {"none": 0.01, "ours": 0.01},
                                                                   {"ours": 1.0})])
            code, out, _ = run([a])
        self.assertEqual(code, 0)
        self.assertEqual(out.strip().splitlines()[2], "| holdout4 | 0 | 0 | 0 | 0 | 0.0 | 0.0 | - | - |")

    def test_files_from_a_list(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "inductor_eval_h100_holdout1a.json", [gemm("g", {"none": 0.01, "ours": 0.01, "max_autotune": 0.01},
                                               {"ours": 1.0, "max_autotune": 5.0})])
            listed = os.path.join(d, "pool.txt")
            with open(listed, "w") as f:
                f.write("# the pool\ninductor_eval_h100_holdout1a.json\n")
            code, out, _ = run(["--files-from", listed])
        self.assertEqual(code, 0)
        self.assertIn("| holdout1 | 1 |", out)


class RankingTableTest(unittest.TestCase):
    def test_mm_ranking_is_scored_on_its_gemms_alone_and_pooled(self):
        ranked = ({"none": 0.010, "ours": 0.0100, "mm_ranking": 0.0120, "max_autotune": 0.011},
                  {"none": 0.0, "ours": 0.5, "mm_ranking": 6.0, "max_autotune": 9.0})
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "inductor_eval_h200_holdout7a_h1.json", [
                gemm("g1", *ranked),
                # no mm_ranking measured (a bmm): not in the second table
                gemm("g2", {"none": 0.02, "ours": 0.03, "max_autotune": 0.02}, {"ours": 1.0, "max_autotune": 4.0})])
            b = write(d, "inductor_eval_h200_holdout8a_h1.json", [gemm("g3", *ranked)])
            code, out, _ = run([a, b])
        self.assertEqual(code, 0)
        rows = [ln for ln in out.splitlines() if ln.startswith("| holdout") or ln.startswith("| all")]
        self.assertEqual(len(rows), 6, out)
        self.assertEqual(rows[3], "| holdout7 | 1 | 0 | 1 | 1 | 0.5 | 6.0 | 9.0 | 0.909 | 1.091 |")
        self.assertEqual(rows[5], "| all 2 sets | 2 | 0 | 2 | 2 | 1.0 | 12.0 | 18.0 | 0.909 | 1.091 |")

    def test_no_ranking_measured_no_second_table(self):
        self.assertNotIn("_MMRankingH100", one_plain_set())


class ErrorTest(unittest.TestCase):
    def test_a_file_that_is_no_result_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "inductor_eval_h100_holdout1a.json")
            with open(bad, "w") as f:
                f.write("{not json")
            code, out, err = run([bad])
        self.assertEqual((code, out), (2, ""))
        self.assertIn("inductor_eval_h100_holdout1a.json", err)

    def test_no_files_is_a_usage_error(self):
        code, _, err = run([])
        self.assertEqual(code, 2)
        self.assertIn("--files-from", err)

    def test_files_from_takes_one_list(self):
        code, _, err = run(["--files-from", "a.txt", "b.json"])
        self.assertEqual(code, 2)
        self.assertIn("one list file", err)


if __name__ == "__main__":
    unittest.main()
