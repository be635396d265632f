"""`scripts/aten_picks.py`: the searched addmm whose pick was the cuBLAS call the bias rule does
not keep, with what the rule's call ran; bad files named, exit 2."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import aten_picks  # noqa: E402


def addmm(m, k, n, dtype="float32", tf32=False):
    return {"name": f"a{m}", "op": "addmm", "batch": 1, "m": m, "k": k, "n": n, "dtype": dtype,
            "tf32": tf32, "trans_a": False, "trans_b": True}


def decisions(g, kind):
    return [{"m": g["m"], "k": g["k"], "n": g["n"], "batch": 1, "op": "addmm",
             "mat1_dtype": f"torch.{g['dtype']}", "mat2_dtype": f"torch.{g['dtype']}",
             "using_tf32": g["tf32"], "decision": kind, "kept": 0}]


def rec(g, kind, picked, run_ms):
    return {"gemm": g, "run_ms": run_ms, "picked": {"ours": {picked: 1}},
            "ours_decisions": decisions(g, kind)}


class AtenPicks(unittest.TestCase):
    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = aten_picks.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def test_lists_searches_that_picked_the_other_call(self):
        short = addmm(16384, 208, 200)  # the rule keeps the 1-D call
        long_k = addmm(16, 4096, 4096)  # 32 tiles, 128 k per tile: the expanded call
        gemms = [
            rec(short, "default", "extern_addmm", {"none": 0.015, "ours": 0.026, "max_autotune": 0.035}),
            rec(short, "extern", "extern_addmm", {"none": 0.015, "ours": 0.026, "max_autotune": 0.035}),
            rec(short, "drop", "extern_bias_addmm", {"none": 0.015, "ours": 0.015, "max_autotune": 0.035}),
            rec(long_k, "default", "extern_bias_addmm", {"none": 0.2, "ours": 0.2, "max_autotune": 0.1}),
        ]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump({"gemms": gemms}, f)
            code, out, _ = self.run_main(path)
        self.assertEqual(code, 0)
        self.assertIn("2 searched addmm picked the call the bias rule does not keep", out)
        self.assertIn("as they ran 2, with the rule's call 0", out)  # no probe: no estimate
        self.assertIn("| 1.733x | 1.000x (extern_bias_addmm) |", out)
        self.assertIn("| 2.000x | - |", out)

    def test_a_file_that_is_no_result_is_named_and_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            with open(path, "w") as f:
                f.write("[]")
            code, _, err = self.run_main(path)
        self.assertEqual(code, 2)
        self.assertIn("bad.json", err)
        self.assertEqual(self.run_main()[0], 2)


if __name__ == "__main__":
    unittest.main()
