"""`scripts/never_near.py`: a config is dropped only if it was offered often enough and never came
near the best, by dtype class; the precompile wall is the slowest config's; the blind check finds
a dropped config near the best of a pooled GEMM."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import never_near  # noqa: E402

SLOW = "triton_mm_BLOCK-M=128_BLOCK-K=128_BLOCK-N=128_numstages=4_numwarps=8_GROUP-M=8"
FAST = "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=3_numwarps=4_GROUP-M=8"


def choices(slow_ms, fast_ms=1.0, extern_ms=1.0):
    return [
        {"name": "extern_mm", "bench_ms": extern_ms, "precompile_s": 0.0},
        {"name": FAST, "bench_ms": fast_ms, "precompile_s": 0.5},
        {"name": SLOW, "bench_ms": slow_ms, "precompile_s": 7.0},
    ]


def strict(ch):
    return ("strict fp32", ch)


class NeverNearTest(unittest.TestCase):
    def test_a_config_never_near_the_best_is_dropped_and_the_wall_falls_to_the_next(self):
        recs = [strict(choices(slow_ms=2.0)) for _ in range(3)]
        dropped, gemms = never_near.never_near(recs, 1.03, 3)["strict fp32"]
        self.assertEqual(dropped, {never_near.config_of(SLOW)})
        self.assertEqual(never_near.walls(gemms, dropped), [(7.0, 0.5)] * 3)

    def test_once_near_the_best_or_seen_too_rarely_it_stays(self):
        near_once = [strict(choices(slow_ms=2.0)), strict(choices(slow_ms=1.02))]
        self.assertEqual(never_near.never_near(near_once, 1.03, 2)["strict fp32"][0], set())
        rare = [strict(choices(slow_ms=2.0))]
        self.assertEqual(never_near.never_near(rare, 1.03, 2)["strict fp32"][0], set())

    def test_a_failed_choice_counts_as_offered_and_never_near(self):
        recs = [strict(choices(slow_ms=float("inf"))) for _ in range(2)]
        self.assertEqual(never_near.never_near(recs, 1.03, 2)["strict fp32"][0], {never_near.config_of(SLOW)})

    def test_dtype_classes_and_config_names(self):
        self.assertEqual(never_near.dtype_class({"dtype": "float32", "tf32": False}), "strict fp32")
        self.assertEqual(never_near.dtype_class({"dtype": "float32", "tf32": True}), "fp32 TF32")
        self.assertEqual(never_near.dtype_class({"dtype": "bfloat16"}), "bfloat16")
        self.assertEqual(never_near.config_of("triton_bmm_BLOCK-M=16_X"), "BLOCK-M=16_X")
        self.assertIsNone(never_near.config_of("extern_mm"))

    def test_the_blind_check_names_a_dropped_config_near_a_pooled_gemms_best(self):
        with tempfile.TemporaryDirectory() as d:
            result = {"gemms": [
                {"gemm": {"dtype": "float32", "tf32": False}, "bench_ms": {"extern_mm": 1.0, SLOW: 1.01}},
                {"gemm": {"dtype": "float32", "tf32": False}, "bench_ms": {"extern_mm": 1.0, SLOW: 3.0}},
                {"gemm": {"dtype": "bfloat16"}, "bench_ms": {"extern_mm": 1.0, SLOW: 1.0}},
            ]}
            with open(os.path.join(d, "r.json"), "w") as f:
                json.dump(result, f)
            with open(os.path.join(d, "pool.txt"), "w") as f:
                f.write("# the pool\nr.json\n")
            seen, hits = never_near.blind_check(os.path.join(d, "pool.txt"),
                                                {"strict fp32": {never_near.config_of(SLOW)}}, 1.03)
        self.assertEqual(seen, {"strict fp32": 2, "bfloat16": 1})
        self.assertEqual(hits["strict fp32"], [("r.json", SLOW)])
        self.assertEqual(hits["bfloat16"], [])

    def test_a_line_that_is_not_json_names_its_file_and_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write(json.dumps({"gemm": {"dtype": "bfloat16"}, "choices": choices(2.0)}) + "\n{oops\n")
        try:
            with self.assertRaises(SystemExit) as e:
                never_near.read_extras([f.name])
            self.assertIn(f"{f.name}:2: not JSON", str(e.exception))
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
