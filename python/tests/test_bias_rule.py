"""`scripts/bias_rule.py`: the handler's pick between addmm's two cuBLAS calls, judged on probe
rows, with `>` and `>=` at its k-per-tile bound and with that bound scaled; bad lines are named.
And `scripts/probe_addmm_bias.py`'s boundary grid puts k exactly on that bound, its per-tile grid
at multiples of it."""

import io
import json
import os
import sys
import tempfile
import types
import unittest
from contextlib import redirect_stdout
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import bias_rule  # noqa: E402
from ah_inductor import choices  # noqa: E402  (bias_rule put python/ on the path)


def row(m, k, n, tf32, expanded_over_bias):
    return {"m": m, "k": k, "n": n, "dtype": "float32", "tf32": tf32, "trans_a": False,
            "trans_b": True, "source": "test", "ms_bias": 0.010,
            "ms_expanded": 0.010 * expanded_over_bias}


# 256 x 1000: 2 x 8 = 16 tiles, so with TF32 the bound is k = K_PER_TILE x 16.
BOUND_TF32 = choices.EXPANDED_BIAS_K_PER_TILE[True] * 16
ON_BOUND_1D_WINS = row(256, BOUND_TF32, 1000, True, 1.25)
ABOVE_BOUND_EXPANDED_WINS = row(256, 2 * BOUND_TF32, 1000, True, 0.5)
BELOW_BOUND_1D_WINS = row(256, BOUND_TF32 // 2, 1000, True, 1.5)


class BiasRuleTest(unittest.TestCase):
    def write(self, lines):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "probe.jsonl")
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        return path

    def test_the_inclusive_rule_differs_only_on_the_bound(self):
        self.assertFalse(bias_rule.shipped(ON_BOUND_1D_WINS))
        self.assertTrue(bias_rule.inclusive(ON_BOUND_1D_WINS))
        for r in (ABOVE_BOUND_EXPANDED_WINS, BELOW_BOUND_1D_WINS):
            self.assertEqual(bias_rule.shipped(r), bias_rule.inclusive(r))
        off = row(256, choices.EXPANDED_BIAS_K_PER_TILE[False] * 16, 1000, False, 1.0)
        self.assertFalse(bias_rule.shipped(off))
        self.assertTrue(bias_rule.inclusive(off))

    def test_a_scaled_bound_moves_only_its_own_tf32_setting(self):
        twice = bias_rule.scaled(True, 2)
        self.assertTrue(bias_rule.shipped(ABOVE_BOUND_EXPANDED_WINS))
        self.assertFalse(twice(ABOVE_BOUND_EXPANDED_WINS))  # now exactly on the doubled bound
        self.assertTrue(twice(dict(ABOVE_BOUND_EXPANDED_WINS, k=2 * BOUND_TF32 + 1)))
        off = row(256, 2 * choices.EXPANDED_BIAS_K_PER_TILE[False] * 16, 1000, False, 1.0)
        self.assertEqual(twice(off), bias_rule.shipped(off))
        self.assertTrue(bias_rule.shipped(off))
        self.assertFalse(bias_rule.scaled(False, 2)(off))

    def test_a_higher_min_m_hands_short_outputs_to_the_1d_call(self):
        edge = choices.EXPANDED_BIAS_MIN_M
        short = row(edge, 4 * choices.EXPANDED_BIAS_K_PER_TILE[False], 100, False, 20.0)
        self.assertTrue(bias_rule.shipped(short))
        self.assertTrue(bias_rule.min_m(edge)(short))
        self.assertFalse(bias_rule.min_m(edge + 1)(short))
        text = bias_rule.report([short])
        self.assertIn(f"| {edge} | 1 | 1 | 0 | 20.00x |", text)
        self.assertIn("| 64 | 1 | 0 | 0 | 1.00x |", text)

    def test_the_report_counts_slow_picks_scans_the_bound_and_lists_it(self):
        rows = [ON_BOUND_1D_WINS, ABOVE_BOUND_EXPANDED_WINS, BELOW_BOUND_1D_WINS]
        text = bias_rule.report(rows)
        self.assertIn("| shipped (`k > bound`) | 3 | 0 | 0 | 1.00x |", text)
        self.assertIn("| inclusive (`k >= bound`) | 3 | 1 | 1 | 1.25x |", text)
        self.assertIn("| 1-D call always | 3 | 1 | 1 | 2.00x |", text)
        self.assertIn("| expanded call always | 3 | 2 | 2 | 1.50x |", text)
        self.assertIn("| on | 1 | 3 | 0 | 1.00x |", text)
        self.assertIn("| on | 2 | 3 | 1 | 2.00x |", text)  # hands the long-k GEMM to the 1-D call
        self.assertIn("| off | 1 | 0 | 0 | 1.00x |", text)
        self.assertIn("On the bound, where the rules differ: 1 (expanded / 1-D bias)", text)
        self.assertIn(f"256 x {BOUND_TF32} x 1000 TF32: 1.250", text)

    def test_reads_only_fp32_rows_by_default(self):
        bf16 = dict(ON_BOUND_1D_WINS, dtype="bfloat16")
        path = self.write([json.dumps(ON_BOUND_1D_WINS), json.dumps(bf16)])
        self.assertEqual(len(bias_rule.read([path])), 1)

    def test_a_bad_line_is_named(self):
        path = self.write([json.dumps(ON_BOUND_1D_WINS), "{not json", "[1, 2]"])
        with self.assertRaises(ValueError) as e:
            bias_rule.read([path])
        self.assertIn("probe.jsonl:2: not JSON", str(e.exception))
        path = self.write(["[1, 2]"])
        with self.assertRaises(ValueError) as e:
            bias_rule.read([path])
        self.assertIn("probe.jsonl:1: not a line of probe_addmm_bias.py", str(e.exception))
        path = self.write([json.dumps(dict(ON_BOUND_1D_WINS, ms_bias="fast"))])
        with self.assertRaises(ValueError) as e:
            bias_rule.read([path])
        self.assertIn("probe.jsonl:1: m, k, n and the two times must be positive", str(e.exception))

    def half(self, k, expanded_over_bias, dtype="float16"):
        return dict(row(choices.HALF_UNALIGNED_MIN_M, k, 1024, False, expanded_over_bias), dtype=dtype)

    def test_half_unaligned_bias_passes_only_with_fewer_slow_picks_and_few_new_ones(self):
        corner_wins = [self.half(8191, 0.5)] * 9
        self.assertEqual(bias_rule.half_verdict(corner_wins + [self.half(8191, 1.2)]), (1, 9, 10, 1, True))
        self.assertFalse(bias_rule.half_verdict(corner_wins + [self.half(8191, 1.2)] * 2)[-1])  # 2 new of 11
        self.assertFalse(bias_rule.half_verdict([self.half(8192, 0.5)])[-1])  # aligned: not fewer
        text = bias_rule.half_report(corner_wins + [self.half(4095, 0.5, "bfloat16")])
        self.assertIn("| 1-D call always | 10 | 10 | 9 | 2.00x |", text)
        self.assertIn("| half_unaligned_bias (shipped) | 10 | 1 | 0 | 2.00x |", text)
        self.assertIn("1 slow picks against 10 for the 1-D call always; 0 new of 9", text)
        self.assertIn("meets the registered rule", text)

    def test_main_judges_fp32_and_half_rows_apart(self):
        path = self.write([json.dumps(ON_BOUND_1D_WINS), json.dumps(self.half(8191, 0.5))])
        out = io.StringIO()
        with mock.patch.object(sys, "argv", ["bias_rule.py", path]), redirect_stdout(out):
            self.assertEqual(bias_rule.main(), 0)
        self.assertIn("| shipped (`k > bound`) | 1 |", out.getvalue())
        self.assertIn("| half_unaligned_bias (shipped) | 1 | 0 | 0 | 1.00x |", out.getvalue())


class BoundaryGridTest(unittest.TestCase):
    def grid(self, name):
        had_torch = "torch" in sys.modules
        sys.modules.setdefault("torch", types.ModuleType("torch"))  # the grid needs no GPU
        try:
            import probe_addmm_bias
            rows = list(probe_addmm_bias.grid(name))
        finally:
            if not had_torch:
                sys.modules.pop("torch", None)
                sys.modules.pop("probe_addmm_bias", None)
        return rows

    def test_every_gemm_of_the_boundary_grid_sits_on_the_bound(self):
        rows = self.grid("boundary")
        self.assertEqual({r["tf32"] for r in rows}, {True, False})
        for r in rows:
            self.assertTrue(bias_rule.inclusive(r), r)
            self.assertFalse(bias_rule.shipped(r), r)

    def test_the_per_tile_grid_puts_k_at_each_multiple_of_the_bound(self):
        rows = self.grid("per-tile")
        self.assertEqual({r["tf32"] for r in rows}, {True, False})
        multiples = set()
        for r in rows:
            bound = choices.EXPANDED_BIAS_K_PER_TILE[r["tf32"]] * choices.output_tiles(r["m"], r["n"])
            multiples.add(r["k"] / bound)
            self.assertTrue(bias_rule.shipped(r), r)  # every multiple is above the bound
        self.assertEqual(sorted(multiples), [1.5, 2, 3, 4, 6, 8])

    def test_the_small_m_grid_spans_the_min_m_candidates_above_the_bound(self):
        rows = self.grid("small-m")
        self.assertEqual({r["tf32"] for r in rows}, {True, False})
        ms = {r["m"] for r in rows}
        self.assertLessEqual(min(ms), min(bias_rule.MIN_M_CANDIDATES))
        for value in bias_rule.MIN_M_CANDIDATES[1:-1]:
            self.assertTrue(any(m < value for m in ms) and any(m >= value for m in ms), value)
        for r in rows:
            self.assertTrue(bias_rule.shipped(r), r)  # above the bound, so m alone decides

    def test_the_half_unaligned_grid_pairs_unaligned_contractions_with_aligned_controls(self):
        rows = self.grid("half-unaligned")
        self.assertEqual({r["dtype"] for r in rows}, {"bfloat16", "float16"})
        unaligned = {(r["dtype"], r["m"], r["n"]) for r in rows if r["k"] % 8}
        aligned = {(r["dtype"], r["m"], r["n"]) for r in rows if r["k"] % 8 == 0}
        self.assertEqual(unaligned, aligned)  # every cell has its control
        self.assertIn(("float16", 8, 1024, 51433), {(r["dtype"], r["m"], r["n"], r["k"]) for r in rows})

    def test_the_check_grid_shares_no_k_m_or_n_with_the_grid_the_rule_was_read_from(self):
        first, check = self.grid("half-unaligned"), self.grid("half-unaligned-check")
        for side in ("k", "m", "n"):
            self.assertFalse({r[side] for r in first} & {r[side] for r in check}, side)
        corner = [r for r in check if bias_rule.half_unaligned(r)]
        self.assertTrue(corner and len(corner) < len(check))
        self.assertTrue(any(r["k"] % 8 and not bias_rule.half_unaligned(r) for r in check))  # k 2049

    def test_the_recheck_grid_is_new_and_straddles_the_rules_edges(self):
        rows = self.grid("half-unaligned-recheck")
        earlier = self.grid("half-unaligned") + self.grid("half-unaligned-check")
        for side in ("k", "m", "n"):
            self.assertFalse({r[side] for r in earlier} & {r[side] for r in rows}, side)
        unaligned = [r for r in rows if r["k"] % 8]
        for side, edge in (("m", choices.HALF_UNALIGNED_MIN_M), ("k", choices.HALF_UNALIGNED_MIN_K)):
            self.assertTrue(any(r[side] < edge for r in unaligned) and any(r[side] >= edge for r in unaligned))
        corner = [r for r in rows if bias_rule.half_unaligned(r)]
        self.assertTrue(corner and {r["dtype"] for r in corner} == {"bfloat16", "float16"})


if __name__ == "__main__":
    unittest.main()
