"""`scripts/probe_splits.py`: what it compiles for each GEMM (cuBLAS, every split, the Triton
configs put first), the filter that forces one choice, and how it judges each timing against
compiled truth."""

import io
import json
import os
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, ".."))

import inductor_eval  # noqa: E402
import probe_splits  # noqa: E402

BENCH = {"extern_mm": 0.07, "decompose_k_mm_ksplit=93": 0.076, "decompose_k_mm_ksplit=3": 0.88,
         "triton_mm_a": 0.09, "triton_mm_b": 0.08}


class Choice:
    """A stub ChoiceCaller, named as Inductor's ids are."""

    def __init__(self, name):
        self.name = name

    def autoheuristic_id(self):
        return self.name


class ProbeSplitsTest(unittest.TestCase):
    def test_contenders_are_cublas_every_split_by_its_k_and_the_triton_config_timed_first(self):
        graph = {"extern_mm": 0.066, "triton_mm_a": 0.05, "triton_mm_b": 0.07}
        self.assertEqual(probe_splits.contenders(BENCH, graph),
                         ["extern_mm", "decompose_k_mm_ksplit=3", "decompose_k_mm_ksplit=93", "triton_mm_a"])
        # without a re-timing, Inductor's benchmark picks the Triton config
        self.assertEqual(probe_splits.contenders(BENCH, None)[-1], "triton_mm_b")
        self.assertEqual(probe_splits.contenders({"extern_mm": 1.0}, {}), ["extern_mm"])
        # the warm re-timing's first Triton config too, where it differs
        warm = {"extern_mm": 0.04, "triton_mm_a": 0.05, "triton_mm_b": 0.03}
        self.assertEqual(probe_splits.contenders(BENCH, graph, warm)[-2:], ["triton_mm_a", "triton_mm_b"])
        self.assertEqual(probe_splits.contenders(BENCH, graph, graph)[-2:],
                         ["decompose_k_mm_ksplit=93", "triton_mm_a"])

    def test_the_filter_runs_before_the_list_is_recorded_and_the_recorder_first(self):
        import types

        seen, feedback = [], object()
        cache = types.SimpleNamespace(preprocessing_fns=[lambda cs: seen.append(len(cs)) or cs],
                                      feedback_saver_fns=[feedback])
        only, recorder = probe_splits.Only(), probe_splits.Recorder()
        probe_splits.install(cache, recorder, only)
        only.name = "extern_mm"
        choices = [Choice("extern_mm"), Choice("decompose_k_mm_ksplit=8")]
        for fn in cache.preprocessing_fns:  # as AlgorithmSelectorCache.__call__ runs them
            choices = fn(choices)
        self.assertEqual(seen, [1])
        self.assertEqual(cache.feedback_saver_fns, [recorder, feedback])

    def test_a_compile_that_did_not_pick_the_contender_is_refused(self):
        probe_splits.forced("decompose_k_mm_ksplit=8", {"decompose_k_mm_ksplit=8": 1, "extern_bmm_dtype": 8})
        probe_splits.forced("extern_mm", {"extern_mm": 1})
        with self.assertRaisesRegex(RuntimeError, "not forced"):
            probe_splits.forced("decompose_k_mm_ksplit=8", {"extern_mm": 1})

    def test_the_recorder_keeps_the_first_lowering_that_offers_a_split_and_changes_nothing(self):
        import types

        from ah_inductor import retime

        saved = retime.split_test, retime.graph_timings
        retime.split_test = lambda: (lambda c: "decompose_k" in c.name)
        retime.graph_timings = lambda choices, nodes, flush: {c: 0.5 if flush else 0.4 for c in choices
                                                              if c.name != "extern_bmm"}
        try:
            rec = probe_splits.Recorder()
            inner = {Choice("extern_bmm"): 1.0, Choice("triton_bmm"): 2.0}
            outer = {Choice("extern_mm"): 0.07, Choice("decompose_k_mm_ksplit=8"): 0.08}
            later = {Choice("extern_mm"): 9.0, Choice("decompose_k_mm_ksplit=4"): 9.0}
            rec(inner, "bmm", [], list(inner))
            self.assertIsNone(rec.bench)  # off
            rec.on = True
            for timings in (inner, outer, later):
                rec(timings, "mm", [], list(timings))
            self.assertEqual(rec.bench, {"extern_mm": 0.07, "decompose_k_mm_ksplit=8": 0.08})
            self.assertEqual(rec.graph, {"extern_mm": 0.5, "decompose_k_mm_ksplit=8": 0.5})
            self.assertEqual(rec.warm, {"extern_mm": 0.4, "decompose_k_mm_ksplit=8": 0.4})
            self.assertEqual(sorted(outer.values()), [0.07, 0.08])
            retime.graph_timings = types.SimpleNamespace  # raises TypeError when called
            rec.reset()
            rec(outer, "mm", [], list(outer))
            self.assertEqual((rec.graph, rec.warm), ({}, {}))
        finally:
            retime.split_test, retime.graph_timings = saved

    def test_a_splits_k_is_read_from_its_name(self):
        self.assertEqual(probe_splits.split_of("decompose_k_mm_ksplit=128"), 128)
        self.assertEqual(probe_splits.split_of("extern_mm"), 0)
        triton = "triton_mm_BLOCK-M=64_BLOCK-K=128_BLOCK-N=32_numstages=5_numwarps=4_GROUP-M=8"
        self.assertEqual(probe_splits.split_of(triton), 0)

    def test_only_keeps_the_named_choice_where_offered_and_leaves_other_lowerings_whole(self):
        only = probe_splits.Only()
        choices = [Choice("extern_mm"), Choice("decompose_k_mm_ksplit=8")]
        self.assertEqual(only(choices), choices)
        only.name = "decompose_k_mm_ksplit=8"
        self.assertEqual([c.name for c in only(choices)], ["decompose_k_mm_ksplit=8"])
        inner = [Choice("extern_bmm_dtype")]
        self.assertEqual(only(inner), inner)

    def test_a_timing_misses_where_its_first_runs_over_3_percent_behind_the_truly_fastest(self):
        rec = {"truth_ms": {"extern_mm": 0.0658, "decompose_k_mm_ksplit=93": 0.0748},
               "bench_ms": {"extern_mm": 0.070, "decompose_k_mm_ksplit=93": 0.076},
               "graph_ms": {"extern_mm": 0.070, "decompose_k_mm_ksplit=93": 0.060},
               "max_autotune_ms": 0.0659}
        self.assertEqual(probe_splits.misses([rec], "bench_ms"), (0, 1.0, 0))
        n, worst, over = probe_splits.misses([rec], "graph_ms")
        self.assertEqual((n, over), (1, 1))
        self.assertAlmostEqual(worst, 0.0748 / 0.0658)
        text = probe_splits.summary([rec])
        self.assertIn("bench_ms: 0 (worst 1.000x) / 0", text)
        self.assertIn("graph_ms: 1 (worst 1.137x) / 1", text)
        self.assertNotIn("warm_ms", text)  # not recorded: not judged
        self.assertIn("default max-autotune's pick: 0", text)

    def test_the_bound_is_the_faster_of_cublas_and_max_autotunes_pick(self):
        rec = {"truth_ms": {"extern_mm": 0.050, "decompose_k_mm_ksplit=8": 0.040,
                            "decompose_k_mm_ksplit=4": 0.045},
               "bench_ms": {"extern_mm": 0.09, "decompose_k_mm_ksplit=8": 0.07,
                            "decompose_k_mm_ksplit=4": 0.06},
               "warm_ms": {"extern_mm": 0.050, "decompose_k_mm_ksplit=8": 0.049,
                           "decompose_k_mm_ksplit=4": 0.051},
               "max_autotune_ms": 0.046}
        self.assertEqual(probe_splits.bound(rec), 0.045)  # the split the benchmark put first
        self.assertEqual(probe_splits.misses([rec], "warm_ms"), (0, 1.0, 0))
        # charged 3 %, the split that beat cuBLAS by 2 % is passed over: cuBLAS is 1.25x the
        # fastest and 1.11x the bound
        n, worst, over = probe_splits.misses([rec], "warm_ms", probe_splits.CHARGE)
        self.assertEqual((n, over), (1, 1))
        self.assertAlmostEqual(worst, 1.25)
        self.assertIn("warm_ms, splits charged 3 %: 1 (worst 1.250x) / 1", probe_splits.summary([rec]))

    def test_a_contender_a_timing_did_not_time_is_never_its_first(self):
        rec = {"truth_ms": {"extern_mm": 1.0, "triton_mm_a": 2.0},
               "graph_ms": {"triton_mm_a": 0.5}, "bench_ms": {}, "max_autotune_ms": 1.0}
        self.assertEqual(probe_splits.misses([rec], "graph_ms")[0], 1)


class Fresh:
    def __init__(self):
        self.count = 0

    def fresh(self):
        self.count += 1


class ProbeLoopTest(unittest.TestCase):
    GEMMS = [{"op": "mm", "batch": 1, "m": m, "k": 64, "n": 8, "dtype": "float16", "tf32": False,
              "trans_a": True, "trans_b": False, "line": m} for m in (1, 2, 3)]

    def run_loop(self, measure, budget_s=60.0, start=None):
        ind, err = Fresh(), io.StringIO()
        with tempfile.TemporaryDirectory() as d, redirect_stderr(err):
            path = os.path.join(d, "out.jsonl")
            recs = inductor_eval.probe_gemms("probe_x", ind, self.GEMMS, measure, path, budget_s,
                                             time.perf_counter() if start is None else start, "truth_ms")
            with open(path) as f:
                written = [json.loads(line) for line in f]
        return recs, written, ind, err.getvalue()

    def test_a_failing_gemm_is_recorded_and_the_rest_still_run(self):
        def measure(gm):
            if gm["m"] == 2:
                raise RuntimeError("no split")
            return {"gemm": gm, "truth_ms": {"extern_mm": 1.0}}

        recs, written, ind, err = self.run_loop(measure)
        self.assertEqual(written, recs)
        self.assertEqual([("error" in r) for r in recs], [False, True, False])
        self.assertEqual(recs[1]["error"], "RuntimeError: no split")
        self.assertEqual(ind.count, 1)
        self.assertIn("[3/3] mm 3x64x8 float16 TN {'extern_mm': 1.0}", err)

    def test_no_gemm_starts_after_the_budget(self):
        recs, written, _, err = self.run_loop(lambda gm: {"gemm": gm}, budget_s=1.0,
                                              start=time.perf_counter() - 2.0)
        self.assertEqual((recs, written), ([], []))
        self.assertIn("probe_x: the budget ran out before line 1", err)


if __name__ == "__main__":
    unittest.main()
