"""`scripts/inductor_eval.py --merge`: result files combine by GEMM name, a later file's settings
replacing an earlier's setting by setting, and the summary counts, for every setting, the GEMMs
more than 3 % slower than the faster of cuBLAS (none) and max-autotune's pick."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import inductor_eval  # noqa: E402
import inductor_harness  # noqa: E402
import inductor_results  # noqa: E402


def rec(name, run_ms, autotune_s):
    gemm = {"name": name, "op": "mm", "batch": 1, "m": 8, "k": 16, "n": 32, "dtype": "bfloat16",
            "tf32": False, "trans_a": False, "trans_b": True}
    return {"gemm": gemm, "run_ms": run_ms, "autotune_s": autotune_s, "compile_s": {}}


class MergeTest(unittest.TestCase):
    def write(self, folder, name, gemms):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            json.dump({"gemms": gemms, "e2e": {}}, f)
        return path

    def test_a_later_file_replaces_the_settings_it_measured(self):
        with tempfile.TemporaryDirectory() as d:
            first = self.write(d, "a.json", [
                rec("a", {"none": 1.0, "ours": 1.2, "max_autotune": 1.1, "mm_ranking": 1.5},
                    {"none": 0.0, "ours": 2.0, "max_autotune": 10.0, "mm_ranking": 5.0}),
                rec("b", {"none": 2.0, "ours": 2.0, "max_autotune": 1.0},
                    {"none": 0.0, "ours": 1.0, "max_autotune": 20.0}),
                {"gemm": {"name": "skipped"}},
            ])
            rerun = self.write(d, "b.json", [
                rec("a", {"none": 1.0, "ours": 1.01, "max_autotune": 1.1},
                    {"none": 0.0, "ours": 0.5, "max_autotune": 9.0}),
            ])
            data = inductor_results.merge([first, rerun])
        a, b = data["gemms"]
        self.assertEqual(a["run_ms"], {"none": 1.0, "ours": 1.01, "max_autotune": 1.1,
                                       "mm_ranking": 1.5})
        self.assertFalse(a["ours_flag"])
        self.assertTrue(b["ours_flag"])
        sm = data["summary"]
        self.assertEqual(sm["gemms_measured"], 2)
        self.assertEqual(sm["autotune_s"]["ours"], 1.5)
        self.assertEqual(sm["autotune_s"]["max_autotune"], 29.0)
        # bound: a 1.0 (none), b 1.0 (max_autotune)
        self.assertEqual(sm["slower_than_best_by_3pct"],
                         {"none": 1, "ours": 1, "max_autotune": 1, "mm_ranking": 1})
        self.assertEqual(sm["worst_rel_best"]["none"], 2.0)
        self.assertEqual(sm["worst_rel_best"]["mm_ranking"], 1.5)

    def test_one_lowerings_timings_are_kept_max_autotunes_and_the_handlers_and_merged(self):
        one = [{"extern_mm": 0.0123456789, "triton_mm_a": 0.01}]
        self.assertEqual(inductor_harness.bench_record("max_autotune", one),
                         {"extern_mm": 0.0123457, "triton_mm_a": 0.01})
        self.assertIsNone(inductor_harness.bench_record("ours", one))
        self.assertIsNone(inductor_harness.bench_record("max_autotune", one * 2))
        self.assertIsNone(inductor_harness.bench_record("max_autotune", []))
        self.assertEqual(inductor_harness.seen_record("candidate", one),
                         {"extern_mm": 0.0123457, "triton_mm_a": 0.01})
        self.assertIsNone(inductor_harness.seen_record("max_autotune", one))
        self.assertIsNone(inductor_harness.seen_record("ours", one * 2))
        with tempfile.TemporaryDirectory() as d:
            a = dict(rec("a", {"none": 1.0, "max_autotune": 1.0}, {}), bench_ms={"extern_mm": 1.0})
            merged = inductor_results.merge([self.write(d, "a.json", [a])])
        self.assertEqual(merged["gemms"][0]["bench_ms"], {"extern_mm": 1.0})

    def test_the_merged_table_prints_without_torch(self):
        with tempfile.TemporaryDirectory() as d:
            path = self.write(d, "a.json", [rec("a", {"none": 1.0, "ours": 1.0, "max_autotune": 1.0},
                                                {"none": 0.0, "ours": 0.0, "max_autotune": 3.0})])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(inductor_eval.main(["--merge", path]), 0)
        self.assertIn("GEMMs > 1.03x the faster of none and max_autotune: none 0", out.getvalue())
        # Ours decided cuBLAS only: no ratio to a total of nothing.
        self.assertIn("autotuning time max_autotune / ours: ours spent none;", out.getvalue())

    def test_a_failed_compile_is_printed_until_a_later_file_measures_that_setting(self):
        failed = dict(rec("a", {"none": 1.0, "max_autotune": 1.0}, {"none": 0.0, "max_autotune": 3.0}),
                      errors={"ours": "InductorError: NoValidChoicesError\n  target: aten.addmm"})
        fixed = rec("a", {"none": 1.0, "ours": 1.0, "max_autotune": 1.0}, {"none": 0.0, "ours": 0.1, "max_autotune": 3.0})
        with tempfile.TemporaryDirectory() as d:
            first = self.write(d, "a.json", [failed])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(inductor_eval.main(["--merge", first]), 0)
            self.assertIn("FAILED: ours on mm 8x16x32 bfloat16 NT (a): InductorError: NoValidChoicesError\n",
                          out.getvalue())
            merged = inductor_results.merge([first, self.write(d, "b.json", [fixed])])
        self.assertEqual(merged["gemms"][0]["errors"], {})
        self.assertEqual(inductor_results.failed_lines(merged["gemms"]), [])

    def test_a_setting_the_budget_cut_stays_cut_until_a_later_file_measures_it(self):
        cut = dict(rec("a", {"none": 1.0, "ours": 1.0}, {"none": 0.0, "ours": 0.0}),
                   not_run=["max_autotune"])
        whole = rec("a", {"none": 1.0, "ours": 1.0, "max_autotune": 1.2},
                    {"none": 0.0, "ours": 0.0, "max_autotune": 30.0})
        with tempfile.TemporaryDirectory() as d:
            first = self.write(d, "a.json", [cut])
            self.assertEqual(inductor_results.merge([first])["gemms"][0]["not_run"], ["max_autotune"])
            merged = inductor_results.merge([first, self.write(d, "b.json", [whole])])
            again = inductor_results.merge([self.write(d, "c.json", [whole]), first])
        self.assertNotIn("not_run", merged["gemms"][0])
        self.assertEqual(merged["summary"]["autotune_s"]["max_autotune"], 30.0)
        # A cut file merged after the whole one takes the settings it measured, and nothing is cut.
        self.assertNotIn("not_run", again["gemms"][0])
        self.assertEqual(again["gemms"][0]["run_ms"]["max_autotune"], 1.2)

    def test_out_writes_the_merged_result_as_one_file(self):
        with tempfile.TemporaryDirectory() as d:
            a = self.write(d, "a.json", [rec("a", {"none": 1.0, "ours": 1.0, "max_autotune": 1.0},
                                             {"none": 0.0, "ours": 0.0, "max_autotune": 3.0})])
            b = self.write(d, "b.json", [dict(rec("b", {"none": 2.0, "ours": 1.0, "max_autotune": 1.0},
                                                  {"none": 0.0, "ours": 1.0, "max_autotune": 4.0}),
                                              ours_decisions=[{"decision": "keep", "kept": 2}])])
            out = os.path.join(d, "ab.json")
            with redirect_stdout(io.StringIO()):
                self.assertEqual(inductor_eval.main(["--merge", a, b, "--out", out]), 0)
            with open(out) as f:
                written = json.load(f)
            self.assertEqual(written["meta"]["merged_from"], [a, b])
            self.assertEqual([r["gemm"]["name"] for r in written["gemms"]], ["a", "b"])
            # Every figure of a record travels, not only the run and compile times.
            self.assertEqual(written["gemms"][1]["ours_decisions"], [{"decision": "keep", "kept": 2}])
            # The file is a result file itself: merging it alone gives the same summary.
            self.assertEqual(inductor_results.merge([out])["summary"], written["summary"])
            self.assertFalse(os.path.exists(out + ".tmp"))

    def test_out_never_replaces_an_input(self):
        with tempfile.TemporaryDirectory() as d:
            a = self.write(d, "a.json", [rec("a", {"none": 1.0, "ours": 1.0, "max_autotune": 1.0},
                                             {"none": 0.0, "ours": 0.0, "max_autotune": 3.0})])
            with open(a) as f:
                before = f.read()
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                self.assertEqual(inductor_eval.main(["--merge", a, "--out", a]), 2)
            self.assertIn("one of the files being merged", err.getvalue())
            with open(a) as f:
                self.assertEqual(f.read(), before)

    def test_files_of_one_gpu_merge_under_its_name_and_of_two_are_refused(self):
        run, tuned = {"none": 1.0, "ours": 1.0, "max_autotune": 1.0}, {"none": 0.0, "ours": 0.0, "max_autotune": 3.0}
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, device in (("a", "NVIDIA H100 80GB HBM3"), ("b", None), ("c", "NVIDIA H200")):
                paths[name] = os.path.join(d, f"{name}.json")
                with open(paths[name], "w") as f:
                    json.dump({"meta": {"device": device}, "gemms": [rec(name, run, tuned)]}, f)
            merged = inductor_results.merge([paths["a"], paths["b"]])
            self.assertEqual(merged["meta"]["device"], "NVIDIA H100 80GB HBM3")
            self.assertNotIn("device", inductor_results.merge([paths["b"]])["meta"])
            out = os.path.join(d, "ac.json")
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                self.assertEqual(inductor_eval.main(["--merge", paths["a"], paths["b"], paths["c"], "--out", out]), 2)
            self.assertFalse(os.path.exists(out))
        self.assertIn(f"{paths['c']}: measured on NVIDIA H200, but {paths['a']} on NVIDIA H100", err.getvalue())

    def test_a_file_that_is_not_a_result_is_named_and_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{not json")
            for path in (bad, os.path.join(d, "missing.json")):
                err = io.StringIO()
                with redirect_stderr(err):
                    self.assertEqual(inductor_eval.main(["--merge", path]), 2)
                self.assertIn(path, err.getvalue())


if __name__ == "__main__":
    unittest.main()
