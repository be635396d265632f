"""`scripts/holdout_replay.py` through `holdout_pool.py --handler`: a handler replayed on the
pooled held-out records, as measured where its decisions were, kept lists estimated from the
recorded benchmark, two handlers side by side, install options with `--with`/`--without`, and
bad handler modules named with exit 2."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_fixtures import (  # noqa: E402 - puts scripts/ on the path too
    HANDLER, OTHER, PICK, gemm, handler_file, handler_with_installed, rec, seen_keep, write)
import holdout_pool  # noqa: E402
import holdout_records  # noqa: E402
import holdout_replay  # noqa: E402


class ReplayTest(unittest.TestCase):
    def test_a_handler_is_replayed_where_its_outcomes_were_measured(self):
        with tempfile.TemporaryDirectory() as d:
            module = os.path.join(d, "fake_choices.py")
            with open(module, "w") as f:
                f.write(HANDLER)
            path = write(d, "a.json", [
                # m 8: cuBLAS only, replayed as none (1.2x the bound)
                dict(rec({"none": 0.006, "ours": 0.005, "max_autotune": 0.005, "max_autotune_ptxas": 0.005},
                         PICK), autotune_s={"ours": 1.0, "max_autotune": 9.0, "max_autotune_ptxas": 2.0}),
                # m 200: full list, replayed as the second search
                dict(rec({"none": 1.0, "ours": 1.0, "max_autotune": 0.9, "max_autotune_ptxas": 0.91}, PICK),
                     gemm=gemm(200), autotune_s={"ours": 0.0, "max_autotune": 12.0, "max_autotune_ptxas": 3.0}),
                # m 500: a kept list, not replayed
                dict(rec({"none": 1.0, "ours": 1.0, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}, PICK),
                     gemm=gemm(500)),
                # searched once: not replayed
                dict(rec({"none": 1.0, "max_autotune": 1.0}), gemm=gemm(200)),
            ])
            recs = holdout_records.records([path])
            decide = holdout_replay.handler_decide(module)
            rows = holdout_replay.replayed(recs, decide)
            self.assertEqual([r["kind"] for r in rows], ["extern", "default", "keep"])
            self.assertEqual([r["run_ms"]["replay"] for r in rows], [0.006, 0.91, None])
            self.assertEqual([r["replay_s"] for r in rows], [0.0, 3.0, None])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--handler", module, path]), 0)
        text = out.getvalue()
        self.assertIn("1 cuBLAS only, 1 full list, 1 kept lists (1 not replayed)", text)
        self.assertIn("| replayed handler | 1 / 2 (1 past 1.10x; worst 1.20x) |", text)
        self.assertIn("replayed 3.0 s, the measured handler 1.0 s, max-autotune 21.0 s, "
                      "max-autotune again (one ptxas) 5.0 s", text)
        self.assertIn("No GEMM of at least 100 us is over the bound for the replayed handler.", text)

    def test_a_full_list_is_replayed_as_the_re_timed_search_where_a_run_measured_it(self):
        with tempfile.TemporaryDirectory() as d:
            module = os.path.join(d, "fake_choices.py")
            with open(module, "w") as f:
                f.write(HANDLER)
            times = {"none": 1.0, "ours": 1.0, "max_autotune": 0.9, "max_autotune_ptxas": 0.95}
            path = write(d, "a.json", [
                dict(rec(dict(times, max_autotune_retime=0.91), PICK), gemm=gemm(200),
                     autotune_s={"ours": 0.0, "max_autotune": 12.0, "max_autotune_ptxas": 3.0,
                                 "max_autotune_retime": 3.5}),
                dict(rec(times, PICK), gemm=gemm(200),
                     autotune_s={"ours": 0.0, "max_autotune": 12.0, "max_autotune_ptxas": 3.0}),
            ])
            rows = holdout_replay.replayed(holdout_records.records([path]), holdout_replay.handler_decide(module))
        self.assertEqual([r["run_ms"]["replay"] for r in rows], [0.91, 0.95])
        self.assertEqual([r["replay_s"] for r in rows], [3.5, 3.0])

    def test_a_trimmed_full_list_is_replayed_as_the_search_unless_it_drops_the_pick(self):
        with tempfile.TemporaryDirectory() as d:
            module = os.path.join(d, "fake_choices.py")
            with open(module, "w") as f:
                f.write(HANDLER.replace('("default", ())', '("drop", ("triton_mm_a",))'))
            times = {"none": 1.0, "ours": 1.0, "max_autotune": 0.9, "max_autotune_ptxas": 0.95}
            cost = {"ours": 0.0, "max_autotune": 12.0, "max_autotune_ptxas": 3.0}
            path = write(d, "a.json", [
                dict(rec(times, OTHER), gemm=gemm(200), autotune_s=cost),  # picked cuBLAS
                dict(rec(times, PICK), gemm=gemm(200), autotune_s=cost),  # picked the dropped `a`
            ])
            rows = holdout_replay.replayed(holdout_records.records([path]), holdout_replay.handler_decide(module))
        self.assertEqual([r["kind"] for r in rows], ["drop", "drop"])
        self.assertEqual([r["run_ms"]["replay"] for r in rows], [0.95, None])
        self.assertEqual([r["replay_s"] for r in rows], [3.0, None])
        self.assertEqual(holdout_records.in_words("drop"), "full list trimmed")

    def test_two_handlers_are_scored_on_the_gemms_both_replay(self):
        other = HANDLER.replace('if f["m"] < 100', 'if f["m"] < 300')  # m 200: cuBLAS only
        with tempfile.TemporaryDirectory() as d:
            b = os.path.join(d, "other_choices.py")
            with open(b, "w") as f:
                f.write(other)
            path = write(d, "a.json", [
                # m 200: A's full list runs as the second search (0.91), B's cuBLAS only 1.1x
                dict(rec({"none": 1.0, "ours": 1.0, "max_autotune": 0.9, "max_autotune_ptxas": 0.91}, PICK),
                     gemm=gemm(200), autotune_s={"ours": 0.0, "max_autotune": 12.0, "max_autotune_ptxas": 3.0}),
                # m 8: both cuBLAS only, within the bound
                dict(rec({"none": 0.005, "ours": 0.005, "max_autotune": 0.005, "max_autotune_ptxas": 0.005},
                         PICK), autotune_s={"ours": 0.0, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}),
                # m 500: both keep a list, not measured: scored for neither
                dict(rec({"none": 1.0, "ours": 1.0, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}, PICK),
                     gemm=gemm(500)),
            ])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--handler", handler_file(d), "--against", b, path]), 0)
        text = out.getvalue()
        self.assertIn("(B): 1 of 3 decisions differ; both replayed on 2 GEMMs:", text)
        self.assertIn("| A | 0 / 2 (0 past 1.10x; worst 1.01x) | 0 | 1.006 | 0.0100 | 3.0 |", text)
        self.assertIn("| B | 1 / 2 (1 past 1.10x; worst 1.11x) | 1 | 1.054 | 0.1000 | 0.0 |", text)
        self.assertIn("| a.json | mm 1x200x64x64 bfloat16 NT | full list | 1.011x | cuBLAS only | 1.111x | 1.0000 |",
                      text)

    def test_decisions_that_differ_only_in_a_lists_configs_are_counted_apart(self):
        def row(kind, *names):
            return {"kind": kind, "names": names}
        pairs = [(row("drop", "a", "b"), row("drop", "a")),  # the same kind, one config more
                 (row("extern"), row("default")),  # another kind
                 (row("keep", "x"), row("keep", "x"))]  # alike
        self.assertEqual(holdout_replay.differ_words(pairs),
                         "2 of 3 decisions differ (1 only in the configs a list keeps)")
        self.assertEqual(holdout_replay.differ_words(pairs[1:]), "1 of 2 decisions differ")

    def test_against_needs_a_handler(self):
        with redirect_stderr(io.StringIO()) as err:
            self.assertEqual(holdout_pool.main(["--against", "b.py", "a.json"]), 2)
        self.assertIn("--against needs --handler", err.getvalue())

    def test_the_replayed_handlers_misses_at_and_above_100_us_are_listed(self):
        run = {"none": 1.2, "ours": 1.0, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [dict(rec(run, PICK), gemm=gemm(50))])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--handler", handler_file(d), path]), 0)
        self.assertIn("The replayed handler over the bound at and above 100 us of cuBLAS:", out.getvalue())
        self.assertIn("| a.json | mm 1x50x64x64 bfloat16 NT | cuBLAS only | 1.200x | 1.200x | 1.000x |",
                      out.getvalue())

    def test_a_handler_keeping_the_expanded_bias_call_is_replayed_by_the_probe(self):
        expanded = HANDLER + ("def expanded_bias_call(f):\n"
                              "    return f['op'] == 'addmm' and f['k'] >= 1000\n")
        addmm = lambda k: dict(gemm(8), op="addmm", k=k, name=f"a{k}", dtype="float32")  # noqa: E731
        run = {"none": 1.0, "ours": 1.0, "max_autotune": 0.6, "max_autotune_ptxas": 0.6}
        both = {"max_autotune": {"extern_addmm": 1}, "max_autotune_ptxas": {"extern_addmm": 1}}
        with tempfile.TemporaryDirectory() as d:
            module = os.path.join(d, "x_choices.py")
            with open(module, "w") as f:
                f.write(expanded)
            probe = os.path.join(d, "probe.jsonl")
            with open(probe, "w") as f:
                row = dict(holdout_records.handler_features(addmm(2000)), dtype="float32", tf32=False,
                           trans_a=False, trans_b=True, ms_bias=0.05, ms_expanded=0.03)
                f.write(json.dumps(row) + "\n")
            path = write(d, "a.json", [
                # the probe timed it: the expanded call at 0.03 / 0.05 of the 1-D call's 1.0 ms
                dict(rec(run, dict(both, ours={"extern_bias_addmm": 1})), gemm=addmm(2000),
                     ours_stats={"extern": 1}),
                # not timed: the replay cannot say
                dict(rec(run, dict(both, ours={"extern_bias_addmm": 1})), gemm=addmm(3000),
                     ours_stats={"extern": 1}),
                # the handler keeps the 1-D call here, as `ours` ran it: replayed as measured
                dict(rec(run, dict(both, ours={"extern_bias_addmm": 1})), gemm=addmm(500),
                     ours_stats={"extern": 1}),
            ])
            recs = holdout_records.records([path], probes=[probe, os.path.join(d, "missing.jsonl")])
            self.assertAlmostEqual(recs[0]["expanded_ms"], 0.6)
            self.assertIsNone(recs[1]["expanded_ms"])
            decide = holdout_replay.handler_decide(module)
            rows = holdout_replay.replayed(recs, decide, measured=decide)
        self.assertAlmostEqual(rows[0]["run_ms"]["replay"], 0.6)
        # `ours` ran the 1-D call under the same decision: not the handler's run, so not replayed as it
        self.assertFalse(rows[0]["as_measured"])
        self.assertIsNone(rows[1]["run_ms"]["replay"])
        self.assertEqual(rows[2]["run_ms"]["replay"], 1.0)
        self.assertTrue(rows[2]["as_measured"])
        self.assertEqual([r["aten_call"] for r in rows], ["extern_addmm", "extern_addmm", "extern_bias_addmm"])

    def test_files_of_two_gpus_are_refused_and_the_probes_replay_only_their_own_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            probe = os.path.join(d, "probe.jsonl")
            with open(probe, "w") as f:
                row = {"m": 8, "k": 64, "n": 64, "dtype": "bfloat16", "tf32": False, "trans_a": False,
                       "trans_b": True, "ms_bias": 0.05, "ms_expanded": 0.03}
                f.write(json.dumps(row) + "\n")

            def result(name, device):
                path = write(d, name, [dict(rec({"none": 1.0, "max_autotune": 1.0}), gemm=dict(gemm(8), op="addmm"))])
                with open(path) as f:
                    data = json.load(f)
                if device:
                    data["meta"] = {"device": device}
                with open(path, "w") as f:
                    json.dump(data, f)
                return path

            h100 = result("h100.json", holdout_records.PROBES_DEVICE)
            unnamed = result("old.json", None)
            h200 = result("h200.json", "NVIDIA H200")
            recs = holdout_records.records([h100, unnamed], probes=[probe])
            self.assertEqual([round(r["expanded_ms"], 3) for r in recs], [0.6, 0.6])
            self.assertIsNone(holdout_records.records([h200], probes=[probe])[0]["expanded_ms"])
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(holdout_pool.main([h100, unnamed, h200]), 2)
        self.assertIn("h200.json: measured on NVIDIA H200, but", err.getvalue())
        self.assertIn("h100.json on " + holdout_records.PROBES_DEVICE, err.getvalue())

    def test_a_bad_probe_line_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            probe = os.path.join(d, "probe.jsonl")
            with open(probe, "w") as f:
                f.write(json.dumps({"m": 1, "k": 2, "n": 3, "dtype": "float32", "ms_bias": 1.0, "ms_expanded": 1.0}))
                f.write("\n{\"m\": 1}\n")
            path = write(d, "a.json", [rec({"none": 1.0, "max_autotune": 1.0})])
            with self.assertRaises(holdout_records.PoolError) as e:
                holdout_records.records([path], probes=[probe])
        self.assertIn("probe.jsonl:2: not a line of probe_addmm_bias.py", str(e.exception))

    def test_a_decompose_k_pick_is_estimated_by_its_own_name(self):
        sized = HANDLER + "config_name = lambda n: n\nsized_configs = lambda names, m, n, k: names\n"
        run = {"none": 1.0, "ours": 1.0, "max_autotune": 0.5, "max_autotune_ptxas": 0.5}
        dk = "subgraph_decompose_k_ksplit=4"
        bench = {"extern_mm": 0.9, dk: 0.4, "triton_mm_x": 0.6}
        # the subgraph's batched GEMM is compiled too, but was never a choice of the benchmark
        picked = {dk: 1, "extern_bmm_dtype": 2}
        with tempfile.TemporaryDirectory() as d:
            module = os.path.join(d, "fake_choices.py")
            with open(module, "w") as f:
                f.write(sized)
            path = write(d, "a.json", [dict(rec(run, {"max_autotune": picked, "max_autotune_ptxas": picked}),
                                            gemm=gemm(500), bench_ms=bench)])
            recs = holdout_records.records([path])
            keeps = holdout_replay.handler_keeps(holdout_replay.handler_module(module))
            self.assertEqual(holdout_replay.kept_estimate(recs[0], (dk,), keeps), 0.5)
            self.assertAlmostEqual(holdout_replay.kept_estimate(recs[0], ("triton_mm_x",), keeps), 0.75)

    def test_kept_lists_are_estimated_from_the_recorded_benchmark_on_a_line_of_their_own(self):
        sized = HANDLER + "config_name = lambda n: n\nsized_configs = lambda names, m, n, k: names\n"
        run = {"none": 1.0, "ours": 1.0, "max_autotune": 0.5, "max_autotune_ptxas": 0.5}
        bench = {"extern_mm": 0.9, "triton_mm_a": 0.4, "triton_mm_x": 0.6}
        with tempfile.TemporaryDirectory() as d:
            module = os.path.join(d, "fake_choices.py")
            with open(module, "w") as f:
                f.write(sized)
            path = write(d, "a.json", [
                # m 500 keeps triton_mm_x: picked over cuBLAS, at 0.6 / 0.4 of max-autotune's truth
                dict(rec(run, PICK), gemm=gemm(500), bench_ms=bench),
                # no benchmark recorded: not estimated; max-autotune's pick is not kept and cuBLAS
                # is 2x: a likely miss
                dict(rec(run, PICK), gemm=gemm(501)),
                # nor here, but max-autotune's pick is kept
                dict(rec(run, {"max_autotune": {"triton_mm_x": 1}, "max_autotune_ptxas": {"triton_mm_x": 1}}),
                     gemm=gemm(502)),
            ])
            recs = holdout_records.records([path])
            keeps = holdout_replay.handler_keeps(holdout_replay.handler_module(module))
            self.assertAlmostEqual(holdout_replay.kept_estimate(recs[0], ("triton_mm_x",), keeps), 0.75)
            self.assertEqual(holdout_replay.kept_estimate(recs[0], ("triton_mm_a",), keeps), 0.5)
            self.assertEqual(holdout_replay.kept_estimate(recs[0], ("triton_mm_z",), keeps), 1.0)
            self.assertIsNone(holdout_replay.kept_estimate(recs[1], ("triton_mm_x",), keeps))
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--handler", module, path]), 0)
        self.assertIn("(`bench_ms`): 1, over the bound on 1; worst 1.50x.", out.getvalue())
        self.assertIn("The replayed handler: 2 kept lists neither replayed nor estimated; on 1 of them "
                      "max-autotune's pick is not kept and cuBLAS alone is over the bound (likely misses; "
                      "1 at 100 us or more).", out.getvalue())
        self.assertEqual(holdout_replay.replay_decided({"kind": "keep", "names": ("a", "b")}), "kept 2")
        with tempfile.TemporaryDirectory() as d:  # no naming functions: nothing is estimated
            self.assertIsNone(holdout_replay.handler_keeps(holdout_replay.handler_module(handler_file(d))))

    def test_two_handlers_are_also_scored_with_kept_lists_estimated(self):
        sized = HANDLER + "config_name = lambda n: n\nsized_configs = lambda names, m, n, k: names\n"
        run = {"none": 1.0, "ours": 1.0, "max_autotune": 0.5, "max_autotune_ptxas": 0.5}
        bench = {"extern_mm": 0.9, "triton_mm_a": 0.4, "triton_mm_x": 0.6}
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a_choices.py"), os.path.join(d, "b_choices.py")
            with open(a, "w") as f:
                f.write(sized)
            with open(b, "w") as f:  # m 500: the full list instead of A's kept list
                f.write(sized.replace('if f["m"] < 300', 'if f["m"] < 600'))
            path = write(d, "r.json", [
                # A keeps triton_mm_x: estimated at 0.75, 1.5x; B's full list ran 0.5
                dict(rec(run, PICK), gemm=gemm(500), bench_ms=bench),
                dict(rec({"none": 0.005, "ours": 0.005, "max_autotune": 0.005, "max_autotune_ptxas": 0.005},
                         PICK), gemm=gemm(8)),
            ])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--handler", a, "--against", b, path]), 0)
        text = out.getvalue()
        self.assertIn("both replayed on 1 GEMMs:", text)
        self.assertIn("on the 2 GEMMs where both are known or estimated", text)
        self.assertIn("| A | 1 / 2; worst 1.50x | 1 | 1.225 | 0.2500 |", text)
        self.assertIn("| B | 0 / 2 | 0 | 1.000 | 0.0000 |", text)

    def test_decisions_as_the_measured_handler_made_them_replay_as_ours_ran(self):
        with tempfile.TemporaryDirectory() as d:
            candidate, measured = os.path.join(d, "cand_choices.py"), os.path.join(d, "meas_choices.py")
            with open(candidate, "w") as f:
                f.write(HANDLER)
            with open(measured, "w") as f:  # keeps m 500 the same way, leaves m 200 to the full list too
                f.write(HANDLER)
            stats = lambda kind: {"extern": 0, "keep": 0, "default": 0, kind: 1}  # noqa: E731
            runs = {"none": 1.0, "ours": 1.5, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}
            path = write(d, "a.json", [
                dict(rec(dict(runs), PICK), gemm=gemm(200), ours_stats=stats("default"),
                     autotune_s={"ours": 2.0, "max_autotune": 9.0, "max_autotune_ptxas": 3.0}),
                dict(rec(dict(runs), PICK), gemm=gemm(500), ours_stats=stats("keep"),
                     autotune_s={"ours": -0.5, "max_autotune": 9.0, "max_autotune_ptxas": 3.0}),
            ])
            recs = holdout_records.records([path])
            rows = holdout_replay.replayed(recs, holdout_replay.handler_decide(candidate),
                                         holdout_replay.handler_decide(measured))
            self.assertEqual([r["as_measured"] for r in rows], [True, True])
            self.assertEqual([r["run_ms"]["replay"] for r in rows], [1.5, 1.5])
            self.assertEqual([r["replay_s"] for r in rows], [2.0, 0.0])
            # A module the runs did not measure is refused, naming the file.
            with open(measured, "w") as f:
                f.write(HANDLER.replace('("default", ())', '("extern", ())'))
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                code = holdout_pool.main(["--handler", candidate, "--measured", measured, path])
            self.assertEqual(code, 2)
            self.assertIn("the measured handler decides extern, the run's handler decided default", err.getvalue())

    def test_recorded_features_are_decided_on_instead_of_the_preview(self):
        # The run's handler saw m=500 (Inductor rewrote the GEMM, as pad_mm does); the preview
        # of the GEMM as written says m=8. Both handlers decide on what the run saw.
        with tempfile.TemporaryDirectory() as d:
            handler = handler_file(d)
            seen = seen_keep(500)
            path = write(d, "a.json", [dict(
                rec({"none": 1.0, "ours": 0.9, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}, PICK),
                ours_stats={"extern": 0, "keep": 1, "default": 0}, ours_decisions=[seen],
                autotune_s={"ours": 0.5, "max_autotune": 9.0, "max_autotune_ptxas": 3.0})])
            recs = holdout_records.records([path])
            self.assertEqual(holdout_records.features_of(recs[0])["m"], 500)
            decide = holdout_replay.handler_decide(handler)
            rows = holdout_replay.replayed(recs, decide, decide)
            self.assertEqual((rows[0]["kind"], rows[0]["as_measured"]), ("keep", True))
            self.assertEqual(rows[0]["run_ms"]["replay"], 0.9)
            # Without the record, the preview's m=8 decides extern, which the run did not.
            del recs[0]["ours_decisions"]
            with self.assertRaises(holdout_records.PoolError):
                holdout_replay.replayed(recs, decide, decide)

    def test_a_runs_candidate_can_count_as_ours(self):
        with tempfile.TemporaryDirectory() as d:
            handler = handler_file(d)
            seen = seen_keep(500)
            both = dict(rec({"none": 1.0, "ours": 2.0, "candidate": 0.9, "max_autotune": 1.0,
                             "max_autotune_ptxas": 1.0}, PICK),
                        ours_stats={"extern": 1}, candidate_stats={"keep": 1}, candidate_decisions=[seen],
                        autotune_s={"ours": 0.0, "candidate": 0.5, "max_autotune": 9.0, "max_autotune_ptxas": 3.0})
            alone = rec({"none": 1.0, "ours": 1.1, "max_autotune": 1.0, "max_autotune_ptxas": 1.0}, PICK)
            path = write(d, "a.json", [both, alone])
            plain, cand = holdout_records.records([path]), holdout_records.records([path], "candidate")
            self.assertEqual([r["run_ms"]["ours"] for r in plain], [2.0, 1.1])
            self.assertEqual([r["run_ms"]["ours"] for r in cand], [0.9, 1.1])  # no candidate: its ours
            self.assertEqual(cand[0]["autotune_s"]["ours"], 0.5)
            self.assertEqual(holdout_records.measured_kind(cand[0]), "keep")
            decide = holdout_replay.handler_decide(handler)
            row = holdout_replay.replayed(cand[:1], decide, decide)[0]
            self.assertEqual((row["kind"], row["as_measured"], row["run_ms"]["replay"]), ("keep", True, 0.9))
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                self.assertEqual(holdout_pool.main(["--ours", "mine", path]), 2)
            self.assertIn("give ours or candidate", err.getvalue())

    def test_a_handler_is_replayed_as_install_runs_it_narrow_linears_searched(self):
        with tempfile.TemporaryDirectory() as d:
            path = handler_with_installed(d, "('default', ()) if kind == 'extern' and f['n'] <= 64 else (kind, names)")
            decide = holdout_pool.installed_decide(holdout_replay.handler_module(path))
        self.assertEqual(decide({"m": 8, "n": 16}), ("default", ()))  # the tree: extern
        self.assertEqual(decide({"m": 8, "n": 128}), ("extern", ()))
        self.assertEqual(decide({"m": 400, "n": 16}), ("keep", ("triton_mm_x",)))
        with tempfile.TemporaryDirectory() as d:  # a module generated before narrow_search
            decide = holdout_pool.installed_decide(holdout_replay.handler_module(handler_file(d)))
        self.assertEqual(decide({"m": 8, "n": 16}), ("extern", ()))

    def test_the_replay_reads_the_modules_rules_through_installed_decide(self):
        # The forty-fifth session's `installed_decide` wrapped `decide` in a lambda of
        # inductor_eval's, and the replay, reading the module's rules from its `__globals__`,
        # lost them: every strict-fp32 addmm decided cuBLAS only was scored with the 1-D call.
        with tempfile.TemporaryDirectory() as d:
            path = handler_with_installed(d, "(kind, names)")
            with open(path, "a") as f:
                f.write("def expanded_bias_call(f):\n    return f['k'] > 1000\n"
                        "def config_name(name):\n    return name.upper()\n")
            decide = holdout_pool.installed_decide(holdout_replay.handler_module(path))
        self.assertTrue(holdout_replay.keeps_expanded(decide, {"op": "addmm", "k": 2048}))
        self.assertFalse(holdout_replay.keeps_expanded(decide, {"op": "addmm", "k": 512}))
        self.assertEqual(holdout_replay.module_globals(decide)["config_name"]("triton_a"), "TRITON_A")

    def replay_with_options(self, searched, runs, refused):
        """The pool's stdout for each extra argument list of `runs`, and its stderr for
        `refused` (which must exit 2), replaying a handler whose `installed` returns `searched`
        on one GEMM the tree decides cuBLAS only."""
        with tempfile.TemporaryDirectory() as d:
            path = handler_with_installed(d, searched)
            result = write(d, "a.json", [
                dict(rec({"none": 0.0104, "max_autotune": 0.01, "max_autotune_ptxas": 0.01}),
                     autotune_s={"max_autotune": 2.0, "max_autotune_ptxas": 1.0})])
            texts = []
            for extra in runs:
                out = io.StringIO()
                with redirect_stdout(out):
                    self.assertEqual(holdout_pool.main(["--handler", path, *extra, result]), 0)
                texts.append(out.getvalue())
            err = io.StringIO()
            with redirect_stderr(err), redirect_stdout(io.StringIO()):
                self.assertEqual(holdout_pool.main(["--handler", path, *refused, result]), 2)
        return texts, err.getvalue()

    def test_with_replays_the_handler_as_that_install_option_decides(self):
        texts, err = self.replay_with_options(
            "('default', ()) if kind == 'extern' and small_bmm_search else (kind, names)",
            ([], ["--with", "small_bmm_search"]), ["--with", "retime"])
        self.assertIn("1 cuBLAS only, 0 full list", texts[0])
        self.assertIn("0 cuBLAS only, 1 full list", texts[1])
        self.assertIn("--with retime: give one of narrow_search, small_bmm_search", err)

    def test_without_replays_the_handler_with_that_install_option_off(self):
        texts, err = self.replay_with_options(
            "('default', ()) if kind == 'extern' and narrow_search else (kind, names)",
            ([], ["--without", "narrow_search"]), ["--with", "narrow_search", "--without", "narrow_search"])
        self.assertIn("0 cuBLAS only, 1 full list", texts[0])
        self.assertIn("1 cuBLAS only, 0 full list", texts[1])
        self.assertIn("--with and --without both name narrow_search", err)

    def test_a_module_that_is_no_handler_is_named_and_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            result = write(d, "a.json", [rec({"none": 1.0, "max_autotune": 1.0})])
            broken = os.path.join(d, "broken_choices.py")
            with open(broken, "w") as f:
                f.write("def install(:\n")
            no_decide = os.path.join(d, "plain_choices.py")
            with open(no_decide, "w") as f:
                f.write(HANDLER.replace("def decide", "def other"))
            for module in (broken, no_decide, os.path.join(d, "missing.py")):
                err = io.StringIO()
                with redirect_stderr(err):
                    self.assertEqual(holdout_pool.main(["--handler", module, result]), 2)
                self.assertIn(module, err.getvalue())


if __name__ == "__main__":
    unittest.main()
