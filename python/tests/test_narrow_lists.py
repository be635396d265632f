"""`scripts/narrow_lists.py`: the screen of short fixed lists for a handler's cuBLAS-only
decisions on narrow GEMMs: which records it screens, how a list is chosen and scored on the
other half, and bad arguments named with exit 2."""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import narrow_lists  # noqa: E402

A, B, C = (f"triton_mm_BLOCK-M=16_BLOCK-K={k}_BLOCK-N=32_numstages=2_numwarps=4_GROUP-M=8" for k in (32, 64, 128))


def rec(m, k, n, bench, none=0.010, ma=0.008, picked=A):
    return {"gemm": {"name": f"g{m}x{k}x{n}", "op": "mm", "batch": 1, "m": m, "k": k, "n": n,
                     "dtype": "bfloat16", "tf32": False, "trans_a": False, "trans_b": True},
            "run_ms": {"none": none, "max_autotune": ma}, "picked": {"max_autotune": {picked: 1}},
            "bench_ms": bench}


class Screen(unittest.TestCase):
    def test_needs_and_covers_by_the_benchmark_within_3_percent(self):
        bench = {"extern_mm": 0.0110, A: 0.0100, B: 0.0102, C: 0.0200}
        self.assertTrue(narrow_lists.needs(bench))
        self.assertTrue(narrow_lists.covered(bench, [B]))
        self.assertFalse(narrow_lists.covered(bench, [C]))
        self.assertFalse(narrow_lists.needs(dict(bench, extern_mm=0.0103)))

    def test_the_greedy_list_takes_the_config_that_covers_most_first(self):
        recs = [rec(16, 4096, 16, {"extern_mm": 0.02, A: 0.01, B: 0.03}),
                rec(16, 4096, 32, {"extern_mm": 0.02, A: 0.01, B: 0.0101}),
                rec(16, 4096, 64, {"extern_mm": 0.02, A: 0.03, B: 0.01}),
                rec(16, 4096, 8, {"extern_mm": 0.01, A: 0.01, B: 0.01})]  # needs nothing
        self.assertEqual(narrow_lists.greedy_list(recs, 1), [A])
        self.assertEqual(narrow_lists.greedy_list(recs, 5), [A, B])  # nothing left to cover

    def test_only_cublas_only_decisions_on_a_narrow_side_with_a_benchmark_are_screened(self):
        bench = {"extern_mm": 0.02, A: 0.01}
        recs = [rec(16, 4096, 16, bench), rec(4096, 4096, 4096, bench), rec(8, 512, 8, bench),
                rec(16, 4096, 32, None)]
        decide = lambda f: ("keep", (A,)) if f["n"] == 8 else ("extern", ())  # noqa: E731
        kept = narrow_lists.narrow_cublas_only(recs, decide, 100)
        self.assertEqual([r["gemm"]["n"] for r in kept], [16])

    def test_a_list_scored_on_the_half_it_was_not_chosen_on(self):
        recs = [rec(16, 4096, 16 + i, {"extern_mm": 0.02, A: 0.01}, none=0.02, ma=0.01) for i in range(4)]
        (cov, need, res, over), = narrow_lists.screen(recs, [1], repeats=2).values()
        self.assertEqual((cov, need, res, over), (4.0, 4.0, 4.0, 4.0))

    def test_bad_sizes_exit_2(self):
        err = io.StringIO()
        with redirect_stderr(err):
            rc = narrow_lists.main(["--files-from", "x", "--handler", "y", "--sizes", "0,2"])
        self.assertEqual(rc, 2)
        self.assertIn("--sizes", err.getvalue())

    def test_a_missing_list_exits_2_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            err, out = io.StringIO(), io.StringIO()
            with redirect_stderr(err), redirect_stdout(out):
                rc = narrow_lists.main(["--files-from", os.path.join(d, "none.txt"), "--handler", "y"])
        self.assertEqual(rc, 2)
        self.assertIn("none.txt", err.getvalue())
        self.assertEqual(out.getvalue(), "")


if __name__ == "__main__":
    unittest.main()
