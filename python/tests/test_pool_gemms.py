"""`scripts/pool_gemms.py`: the pooled GEMMs of one kind as a --gemms file, each shape once, kept
by the handler's decision on the features the run recorded and by cuBLAS's run time; bad
lists are named and exit 2."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import holdout_pool  # noqa: E402
import holdout_records  # noqa: E402
import pool_gemms  # noqa: E402

HANDLER = """
HEURISTIC = {"name": "Fake"}
install = uninstall = stats = reset_stats = lambda *a: None
def decide(f):
    return ("extern", ()) if f["m"] < 100 else ("default", ())
"""


def gemm(m, k, n=64, line=1):
    return {"name": f"g{m}x{k}", "op": "mm", "batch": 1, "m": m, "k": k, "n": n, "dtype": "bfloat16",
            "tf32": False, "trans_a": False, "trans_b": True, "line": line}


def measured(g, cublas_ms):
    features = dict(holdout_records.handler_features(g), decision="extern", kept=0)
    return {"gemm": g, "run_ms": {"none": cublas_ms, "max_autotune": cublas_ms, "ours": cublas_ms},
            "picked": {}, "ours_decisions": [features]}


class PoolGemms(unittest.TestCase):
    def run_main(self, *args, gemms, handler=HANDLER):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "a.json"), "w") as f:
                json.dump({"gemms": gemms}, f)
            with open(os.path.join(d, "h_choices.py"), "w") as f:
                f.write(handler)
            with open(os.path.join(d, "pool.txt"), "w") as f:
                f.write("# the pool\na.json\n")
            out, err = io.StringIO(), io.StringIO()
            argv = [a.replace("H.py", os.path.join(d, "h_choices.py")) for a in args]
            with redirect_stdout(out), redirect_stderr(err):
                rc = pool_gemms.main(["--files-from", os.path.join(d, "pool.txt"), *argv])
        return rc, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()

    def test_long_contractions_are_those_inductor_offers_splits_for(self):
        f = {"op": "mm", "m": 64, "n": 32, "k": 64 * holdout_pool.SPLIT_THRESHOLD}
        self.assertTrue(holdout_pool.long_contraction(f))
        self.assertFalse(holdout_pool.long_contraction(dict(f, k=f["k"] - 1)))
        self.assertFalse(holdout_pool.long_contraction(dict(f, op="bmm")))

    def test_decode_contexts_are_one_query_over_a_long_cache_to_a_head(self):
        f = {"op": "bmm", "m": 1, "k": holdout_pool.DECODE_MIN_K, "n": holdout_pool.DECODE_MAX_N}
        self.assertTrue(holdout_pool.decode_context(f))
        for other in (dict(f, m=2), dict(f, k=f["k"] - 1), dict(f, n=f["n"] + 1), dict(f, op="mm")):
            self.assertFalse(holdout_pool.decode_context(other), other)

    def test_writes_each_shape_once_without_its_line_kept_by_every_test(self):
        gemms = [measured(gemm(200, 8192, line=3), 0.05),   # long, searched, fast: kept
                 measured(gemm(200, 8192, line=9), 0.05),   # the same shape again
                 measured(gemm(50, 8192), 0.05),            # decided cuBLAS only
                 measured(gemm(256, 9000), 0.5),            # cuBLAS too slow
                 measured(gemm(200, 512), 0.05)]            # not a long contraction
        rc, out, _ = self.run_main("--only", "long-contractions", "--handler", "H.py", "--searched",
                                   "--below-ms", "0.2", gemms=gemms)
        self.assertEqual(rc, 0)
        want = dict(gemm(200, 8192))
        del want["line"]
        self.assertEqual(out, [want])
        rc, out, _ = self.run_main(gemms=gemms)
        self.assertEqual([(g["m"], g["k"]) for g in out], [(200, 8192), (50, 8192), (256, 9000), (200, 512)])

    def test_cublas_only_and_over_keep_the_decisions_where_cublas_alone_missed_the_bound(self):
        slow = measured(gemm(50, 512), 0.05)
        slow["run_ms"]["max_autotune"] = 0.04  # cuBLAS 1.25x the best
        near = measured(gemm(60, 512), 0.05)
        near["run_ms"]["max_autotune"] = 0.049  # within 3 %
        gemms = [slow, near, measured(gemm(200, 512), 0.05)]  # the last searched
        rc, out, _ = self.run_main("--handler", "H.py", "--cublas-only", gemms=gemms)
        self.assertEqual((rc, [g["m"] for g in out]), (0, [50, 60]))
        rc, out, _ = self.run_main("--handler", "H.py", "--cublas-only", "--cublas-over", gemms=gemms)
        self.assertEqual((rc, [g["m"] for g in out]), (0, [50]))
        rc, out, _ = self.run_main("--cublas-over", gemms=gemms)
        self.assertEqual([g["m"] for g in out], [50])

    def test_decisions_are_those_install_applies(self):
        # A module whose `installed` searches every extern decision: nothing is cuBLAS only.
        rc, out, _ = self.run_main("--handler", "H.py", "--cublas-only", gemms=[measured(gemm(50, 512), 0.05)],
                                   handler=HANDLER + "def installed(kind, names, f, **o):\n"
                                                     "    return ('default', frozenset())\n")
        self.assertEqual((rc, out), (0, []))

    def test_cublas_only_needs_a_handler(self):
        with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
            pool_gemms.main(["--files-from", "x.txt", "--cublas-only"])
        self.assertEqual(e.exception.code, 2)

    def test_a_file_that_is_no_result_is_named_and_exits_2(self):
        rc, out, err = self.run_main(gemms="not a list of GEMMs")
        self.assertEqual((rc, out), (2, []))
        self.assertIn("a.json", err)


if __name__ == "__main__":
    unittest.main()
