"""Picks by lowering shape (`picked_by_shape`, scripts/inductor_harness.py, in the records of
scripts/inductor_eval.py) and their comparison between two compiles (`scripts/e2e_picks.py`), on
stub nodes and result files (no torch)."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import e2e_picks  # noqa: E402
import inductor_harness  # noqa: E402


class Node:
    def __init__(self, *size):
        self.size = size

    def get_size(self):
        return list(self.size)


class Sizeless:
    def get_size(self):
        raise NotImplementedError("no layout yet")


class ShapeKey(unittest.TestCase):
    def test_inputs_in_order_bias_first(self):
        key = inductor_harness.shape_key([Node(5632), Node(2048, 2048), Node(2048, 5632)])
        self.assertEqual(key, "5632, 2048x2048, 2048x5632")

    def test_a_size_that_cannot_be_read_is_a_question_mark(self):
        self.assertEqual(inductor_harness.shape_key([Node(4, 8), Sizeless(), object()]), "4x8, ?, ?")
        self.assertEqual(inductor_harness.shape_key(()), "")


class PicksByShape(unittest.TestCase):
    def test_winners_and_single_choices_grouped_by_shape(self):
        lowerings = [["extern_mm", "triton_a"], ["extern_mm"], ["extern_mm", "triton_a"], ["extern_bmm"]]
        shapes = ["8x8, 8x8", "8x8, 8x8", "4x4, 4x4", "2x4x4, 2x4x4"]
        # feedback arrives for the benchmarked lowerings only, with their own shapes
        picks = inductor_harness.picks_by_shape(lowerings, shapes, ["triton_a", "extern_mm"],
                                             ["8x8, 8x8", "4x4, 4x4"])
        self.assertEqual(picks, {"2x4x4, 2x4x4": {"extern_bmm": 1}, "4x4, 4x4": {"extern_mm": 1},
                                 "8x8, 8x8": {"extern_mm": 1, "triton_a": 1}})
        self.assertEqual(list(picks), sorted(picks))


class Compare(unittest.TestCase):
    def write(self, folder, name, e2e):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            json.dump({"gemms": [], "e2e": e2e}, f)
        return path

    def run_main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = e2e_picks.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_the_lowerings_that_moved_between_two_compiles(self):
        a = {"w": {"step_ms": {"ours": 4.114}, "picked_by_shape": {"ours": {
            "8x8, 8x8": {"extern_mm": 2}, "4x4, 4x4": {"triton_a": 1}}}}}
        b = {"w": {"step_ms": {"ours": 3.982}, "picked_by_shape": {"ours": {
            "8x8, 8x8": {"extern_mm": 2}, "4x4, 4x4": {"triton_b": 1}, "2x2, 2x2": {"extern_mm": 1}}}}}
        with tempfile.TemporaryDirectory() as d:
            pa, pb = self.write(d, "a.json", a), self.write(d, "b.json", b)
            code, out, err = self.run_main([f"{pa}:ours", f"{pb}:ours"])
        self.assertEqual(code, 0, err)
        self.assertIn(f"w: A = {pa}:ours (4.114 ms), B = {pb}:ours (3.982 ms); 2 lowering shape(s) picked differently", out)
        self.assertIn("| 2x2, 2x2 | - | extern_mm x1 |", out)
        self.assertIn("| 4x4, 4x4 | triton_a x1 | triton_b x1 |", out)
        self.assertNotIn("8x8", out)

    def test_unusable_arguments_are_named_and_exit_2(self):
        old = {"w": {"step_ms": {"ours": 4.0}, "picked": {"ours": {"extern_mm": 3}}}}
        with tempfile.TemporaryDirectory() as d:
            path = self.write(d, "old.json", old)
            broken = os.path.join(d, "broken.json")
            with open(broken, "w") as f:
                f.write("{")
            listed = os.path.join(d, "list.json")
            with open(listed, "w") as f:
                f.write("[1, 2]")
            cases = {
                "no setting": [path, f"{path}:ours"],
                "written before picked_by_shape": [f"{path}:ours", f"{path}:ours"],
                "missing file": [f"{d}/missing.json:ours", f"{path}:ours"],
                "broken file": [f"{broken}:ours", f"{path}:ours"],
                "not a result file": [f"{listed}:ours", f"{path}:ours"],
                "no such workload": [f"{path}:ours", f"{path}:ours", "--workload", "v"],
            }
            for what, argv in cases.items():
                code, out, err = self.run_main(argv)
                self.assertEqual(code, 2, what)
                self.assertTrue(err.startswith("e2e_picks: "), (what, err))
                self.assertEqual(out, "", what)
            _, _, err = self.run_main(cases["broken file"])
            self.assertIn(f"{broken}: line 1: not JSON", err)
            _, _, err = self.run_main(cases["written before picked_by_shape"])
            self.assertIn("written before picked_by_shape was recorded", err)


if __name__ == "__main__":
    unittest.main()
