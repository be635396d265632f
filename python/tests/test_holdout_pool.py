"""`scripts/holdout_pool.py` with `holdout_records.py`: held-out result files pooled run by
run; a setting is over the bound when it runs more than 3 % slower than the faster of cuBLAS
and max-autotune's pick; the second full-list search (`max_autotune_ptxas`) is counted against
the first's bound; bad files are named and exit 2. The replay of a handler on them:
test_holdout_replay.py."""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_fixtures import (  # noqa: E402 - puts scripts/ on the path too
    OTHER, PICK, decided_as, gemm, handler_file, rec, write)
import holdout_pool  # noqa: E402
import holdout_records  # noqa: E402
import holdout_replay  # noqa: E402


class PoolTest(unittest.TestCase):
    def pooled(self):
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "a.json", [
                # 5 us: the second search picked cuBLAS's 1.2x slower twin; ours 1.5x
                rec({"none": 0.005, "ours": 0.0075, "max_autotune": 0.005, "max_autotune_ptxas": 0.006}, OTHER),
                # 200 us: everyone within the bound but cuBLAS (1.2x)
                rec({"none": 0.24, "ours": 0.2, "max_autotune": 0.2, "max_autotune_ptxas": 0.201}, PICK),
                {"gemm": {"name": "skipped"}},
            ])
            b = write(d, "b.json", [rec({"none": 2.0, "max_autotune": 2.0})])
            return holdout_records.records([a, b])

    def test_autotuning_is_summed_over_the_gemms_that_measured_ours_and_max_autotune(self):
        with tempfile.TemporaryDirectory() as d:
            times = {"none": 0.1, "ours": 0.1, "max_autotune": 0.1}
            path = write(d, "a.json", [
                dict(rec(times), autotune_s={"ours": 1.0, "max_autotune": 9.0, "max_autotune_ptxas": 2.5}),
                dict(rec(times), autotune_s={"ours": -0.2, "max_autotune": 11.0}),
                dict(rec(times), autotune_s={"max_autotune": 50.0}),  # ours not measured: left out
            ])
            line = holdout_pool.autotuning_line(holdout_records.records([path]))
        self.assertIn("the 2 GEMMs", line)
        self.assertIn("ours 0.8 s, max-autotune 20.0 s (25.0x less)", line)
        self.assertIn("2.5 s on 1 of them", line)
        self.assertIn("No run", holdout_pool.autotuning_line([]))

    def test_failed_compiles_are_named_and_left_out_of_the_tallies(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [
                dict(rec({"none": 0.1, "max_autotune": 0.1}), errors={"ours": "NoValidChoicesError"}),
                dict(rec({"none": 0.1, "candidate": 0.1, "max_autotune": 0.1}),
                     errors={"ours": "NoValidChoicesError"}),
            ])
            recs = holdout_records.records([path])
            as_candidate = holdout_records.records([path], ours="candidate")
        self.assertEqual(holdout_records.tally(recs, "ours")[0], 0)
        self.assertEqual(holdout_pool.failed_line(recs), "Compiles that failed (left out of the tallies): "
                         "ours 2: mm 1x8x64x64 bfloat16 NT (a.json), mm 1x8x64x64 bfloat16 NT (a.json)")
        # Counting the candidate as ours: the run that measured it did not fail it.
        self.assertIn("ours 1:", holdout_pool.failed_line(as_candidate))
        self.assertEqual(holdout_pool.failed_line(self.pooled()), "No compile failed.")

    def test_every_measured_run_is_one_record(self):
        recs = self.pooled()
        self.assertEqual(len(recs), 3)
        self.assertEqual(holdout_records.tally(recs, "none"), (3, 1, 1, 1.2))
        self.assertEqual(holdout_records.tally(recs, "ours"), (2, 1, 1, 1.5))
        n, over, far, worst = holdout_records.tally(recs, "max_autotune_ptxas")
        self.assertEqual((n, over, far), (2, 1, 1))
        self.assertAlmostEqual(worst, 1.2)

    def test_the_second_search_is_counted_with_its_agreement(self):
        both, alike = holdout_records.twice(self.pooled())
        self.assertEqual((len(both), alike), (2, 1))

    def test_one_kernel_thrice_counts_its_spread_apart(self):
        cublas = {"none": {"extern_mm": 1}, "ours": {"extern_mm": 1}, "max_autotune": {"extern_mm": 1}}
        recs = [
            rec({"none": 0.105, "ours": 0.106, "max_autotune": 0.1}, cublas),  # 1.06x: spread alone
            rec({"none": 0.1, "ours": 0.1, "max_autotune": 0.1}, dict(cublas, ours={"triton_mm_a": 1})),
            rec({"none": 0.1, "max_autotune": 0.1}, cublas),  # ours not measured
        ]
        self.assertEqual(holdout_pool.same_kernel(recs), recs[:1])
        line = holdout_pool.same_kernel_line(recs)
        self.assertIn("On 1 GEMMs", line)
        self.assertIn("ours 1 (worst 1.060x), cuBLAS only 1 (worst 1.050x)", line)
        self.assertIn("No run", holdout_pool.same_kernel_line(recs[1:]))

    def test_two_handlers_deciding_alike_measure_their_own_noise_floor(self):
        def twin(ours, candidate, a, b=None):
            r = rec({"none": 0.1, "ours": ours, "candidate": candidate, "max_autotune": 0.1})
            return dict(r, ours_decisions=a, candidate_decisions=b or a)

        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [
                twin(0.100, 0.116, decided_as("default")),  # the full list searched twice: 1.16x
                twin(0.100, 0.101, decided_as("default")),
                twin(0.100, 0.102, decided_as("extern")),
                twin(0.100, 0.200, decided_as("keep", 2)),  # kept lists may differ: left out
                twin(0.100, 0.200, decided_as("extern"), decided_as("default")),  # decided apart
                rec({"none": 0.1, "ours": 0.1, "max_autotune": 0.1}),  # one handler
            ])
            recs = holdout_records.records([path])
        self.assertEqual([r["twin"] is not None for r in recs], [True, True, True, False, False, False])
        line = holdout_pool.twins_line(recs)
        self.assertIn("On 3 GEMMs", line)
        self.assertIn("cuBLAS only: 0 of 1 more than 3 % apart (worst 1.020x)", line)
        self.assertIn("the full list: 1 of 2 more than 3 % apart (worst 1.160x)", line)
        self.assertIn("No run", holdout_pool.twins_line(recs[3:]))

    def test_bands_split_by_cublas_run_time(self):
        bands = [holdout_pool.band_of(r) for r in self.pooled()]
        self.assertEqual(bands, [0, 3, 4])
        self.assertEqual(holdout_pool.band_label(0), "0 us - 10 us")
        self.assertEqual(holdout_pool.band_label(4), ">= 1000 us")

    def test_tables_print(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [rec({"none": 0.005, "ours": 0.0075, "max_autotune": 0.005,
                                            "max_autotune_ptxas": 0.006}, OTHER)])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main([path]), 0)
        text = out.getvalue()
        self.assertIn("searched default max-autotune's full list twice: 1 GEMMs; the two searches "
                      "picked the same choice on 0", text)
        self.assertIn("| max-autotune again (one ptxas) | 1 / 1 (1 past 1.10x; worst 1.20x) | 1.200 |", text)
        self.assertNotIn("re-timed", text)  # no run measured it: no row, no column

    def test_the_re_timed_search_is_tabled_where_a_run_measured_it(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [dict(
                rec({"none": 0.005, "ours": 0.005, "max_autotune": 0.006, "max_autotune_ptxas": 0.006,
                     "max_autotune_retime": 0.005}, OTHER),
                autotune_s={"ours": 1.0, "max_autotune": 9.0, "max_autotune_ptxas": 3.0,
                            "max_autotune_retime": 3.5})])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main([path]), 0)
        text = out.getvalue()
        self.assertIn("| max-autotune again, re-timed (one ptxas) | 0 / 1 (0 past 1.10x; worst 1.00x) | 0.833 |",
                      text)
        self.assertIn("| max-autotune again (one ptxas) | max-autotune again, re-timed (one ptxas) |", text)
        self.assertIn("on 1 of them; re-timed 3.5 s on 1.", text)

    def test_ours_misses_at_and_above_100_us_are_listed_with_the_decision(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [
                # 200 us, ours 1.1x after keeping 2 choices: listed
                dict(rec({"none": 0.2, "ours": 0.22, "max_autotune": 0.2}),
                     ours_decisions=[dict(holdout_records.handler_features(gemm(8)), decision="keep", kept=2)]),
                # 2 ms, ours 1.05x on cuBLAS only, recorded by stats alone (older runs): listed
                dict(rec({"none": 2.1, "ours": 2.1, "max_autotune": 2.0}), ours_stats={"extern": 1}),
                # 5 us, ours 1.5x: under 100 us, not listed; 300 us within the bound: not listed
                rec({"none": 0.005, "ours": 0.0075, "max_autotune": 0.005}),
                rec({"none": 0.3, "ours": 0.305, "max_autotune": 0.3}),
            ])
            recs = holdout_records.records([path])
        table = holdout_records.misses_table(recs)
        rows = [line for line in table.splitlines() if line.startswith("| a.json")]
        self.assertEqual(rows, [
            "| a.json | mm 1x8x64x64 bfloat16 NT | kept 2 | 1.100x | 1.000x | 1.000x |",
            "| a.json | mm 1x8x64x64 bfloat16 NT | cuBLAS only | 1.050x | 1.050x | 1.000x |",
        ])
        self.assertIn("No GEMM of at least 10000 us",
                      holdout_records.misses_table(recs, min_ms=10.0))

    def test_a_file_that_is_not_a_result_is_named_and_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("[1, 2]")
            for path in (bad, os.path.join(d, "missing.json")):
                err = io.StringIO()
                with redirect_stderr(err):
                    self.assertEqual(holdout_pool.main([path]), 2)
                self.assertIn(path, err.getvalue())

    def test_cublas_only_decisions_are_scored_on_every_record_not_only_those_searched_twice(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [
                rec({"none": 0.0104, "max_autotune": 0.01}),               # m 8: extern, 1.04x: over
                dict(rec({"none": 0.0102, "max_autotune": 0.01}), gemm=gemm(9)),  # extern, 1.02x
                dict(rec({"none": 2.0, "max_autotune": 1.0}), gemm=gemm(200)),    # default: not counted
            ])
            decide = holdout_replay.handler_decide(handler_file(d))
            line = holdout_replay.extern_line(holdout_records.records([path]), decide)
        self.assertEqual(line, "On all 3 records, the replayed handler decides cuBLAS only on 2 with that "
                               "call timed; cuBLAS there is over the bound on 1 (worst 1.040x).")

    def test_cublas_only_decisions_are_grouped_by_kind_with_the_most_over_first(self):
        fp16 = dict(gemm(40), name="h40", dtype="float16")
        slow_big = {"none": 0.208, "max_autotune": 0.2}  # 1.04x at 208 us
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [
                rec({"none": 0.0104, "max_autotune": 0.01}),                        # m 8: over
                dict(rec({"none": 0.0102, "max_autotune": 0.01}), gemm=gemm(9)),    # m 9: within
                dict(rec({"none": 0.0110, "max_autotune": 0.01}), gemm=fp16),       # fp16 m 40: over
                dict(rec(slow_big), gemm=dict(fp16, name="h41", m=41)),             # over, >= 100 us
                dict(rec({"none": 0.0101, "max_autotune": 0.01}), gemm=gemm(50)),   # bf16 m 50: within
                dict(rec({"none": 2.0, "max_autotune": 1.0}), gemm=gemm(200)),      # default: not counted
            ])
            decide = holdout_replay.handler_decide(handler_file(d))
            table = holdout_replay.extern_kinds(holdout_records.records([path]), decide)
        self.assertEqual(table.splitlines(), [
            "| cuBLAS only, by kind | decided | over the bound | of them at 100 us or more | worst |",
            "|---|---|---|---|---|",
            "| mm, float16, m 17-256 | 2 | 2 | 1 | 1.100x |",
            "| mm, bfloat16, m <= 16 | 2 | 1 | 0 | 1.040x |",
        ])

    def test_no_kind_table_when_no_cublas_only_decision_is_over(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "a.json", [rec({"none": 0.0101, "max_autotune": 0.01})])
            decide = holdout_replay.handler_decide(handler_file(d))
            self.assertIsNone(holdout_replay.extern_kinds(holdout_records.records([path]), decide))

    def test_result_files_can_come_from_a_list_beside_them(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "a.json", [rec({"none": 1.0, "ours": 1.0, "max_autotune": 0.9})])
            listing = os.path.join(d, "pool.txt")
            with open(listing, "w") as f:
                f.write("# the pool\n\na.json\n")
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--files-from", listing]), 0)
            self.assertIn("1 measured GEMMs from 1 result files.", out.getvalue())
            with open(listing, "w") as f:
                f.write("# nothing yet\n")
            with redirect_stderr(io.StringIO()) as err:
                self.assertEqual(holdout_pool.main(["--files-from", listing]), 2)
            self.assertIn("names no result file", err.getvalue())

    def test_only_narrow_linears_asks_every_question_of_them_alone(self):
        router = dict(gemm(4096), k=4096, n=16)
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "a.json", [
                rec({"none": 1.0, "ours": 1.0, "max_autotune": 0.9}),
                {"gemm": router, "run_ms": {"none": 0.01, "ours": 0.012, "max_autotune": 0.01}},
                {"gemm": dict(router, op="bmm", batch=8), "run_ms": {"none": 1.0, "max_autotune": 1.0}},
            ])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--only", "narrow-linears", a]), 0)
            self.assertIn("1 measured GEMMs from 1 result files.", out.getvalue())
            self.assertIn("| 10 us - 50 us | 1 | 0 / 1 (0 past 1.10x; worst 1.00x) | 1 / 1", out.getvalue())
            with redirect_stderr(io.StringIO()) as err:
                self.assertEqual(holdout_pool.main(["--only", "routers", a]), 2)
            self.assertIn("--only routers: give one of narrow-linears", err.getvalue())

    def test_only_bias_heads_reads_the_dtype_as_the_handler_does(self):
        head = dict(gemm(256), op="addmm", k=2048, n=1000)
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "a.json", [
                {"gemm": head, "run_ms": {"none": 0.008, "ours": 0.008, "max_autotune": 0.007}},
                {"gemm": dict(head, dtype="float32"), "run_ms": {"none": 0.02, "max_autotune": 0.02}},
                rec({"none": 1.0, "ours": 1.0, "max_autotune": 0.9}),
            ])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--only", "bias-heads", a]), 0)
        self.assertIn("1 measured GEMMs from 1 result files.", out.getvalue())
        self.assertIn("| 0 us - 10 us | 1 | 1 / 1 (1 past 1.10x; worst 1.14x) |", out.getvalue())
        # No run searched max-autotune's list twice: one line, not a table of dashes.
        self.assertIn("No run searched default max-autotune's full list twice", out.getvalue())
        self.assertNotIn("| cuBLAS only | - | - |", out.getvalue())

    def test_only_expert_bmm_keeps_half_precision_experts_over_65_to_256_tokens(self):
        experts = dict(gemm(94), op="bmm", batch=64, k=2048, n=2048)
        with tempfile.TemporaryDirectory() as d:
            a = write(d, "a.json", [
                {"gemm": experts, "run_ms": {"none": 0.218, "ours": 0.218, "max_autotune": 0.208}},
                {"gemm": dict(experts, dtype="float32"), "run_ms": {"none": 0.5, "max_autotune": 0.5}},
                {"gemm": dict(experts, m=64), "run_ms": {"none": 0.2, "max_autotune": 0.2}},  # small side
                rec({"none": 1.0, "ours": 1.0, "max_autotune": 0.9}),
            ])
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(holdout_pool.main(["--only", "expert-bmm", a]), 0)
        self.assertIn("1 measured GEMMs from 1 result files.", out.getvalue())
        self.assertIn("| 100 us - 1000 us | 1 | 1 / 1 (0 past 1.10x; worst 1.05x) |", out.getvalue())
        edge = dict(experts, m=65, k=512, n=512)
        self.assertTrue(holdout_pool.experts_bmm(edge))
        self.assertTrue(holdout_pool.experts_bmm(dict(edge, m=256, dtype="float16")))
        for other in ({"op": "mm"}, {"m": 257}, {"k": 511}, {"n": 511}):
            self.assertFalse(holdout_pool.experts_bmm(edge | other), other)

    def test_misses_are_also_counted_by_what_ours_decided(self):
        recs = [dict(rec({"none": 1.0, "ours": 1.2, "max_autotune": 1.0}), ours_decisions=decided_as("extern")),
                dict(rec({"none": 1.2, "ours": 1.0, "max_autotune": 1.0}), ours_decisions=decided_as("default")),
                dict(rec({"none": 1.0, "ours": 1.0, "max_autotune": 1.0}), ours_decisions=decided_as("extern"))]
        table = holdout_pool.decision_table(recs)
        self.assertIn("| cuBLAS only | 2 | 0 / 2 (0 past 1.10x; worst 1.00x) | 1 / 2 (1 past 1.10x; worst 1.20x)", table)
        self.assertIn("| full list | 1 | 1 / 1 (1 past 1.10x; worst 1.20x) | 0 / 1", table)
        self.assertTrue(table.splitlines()[0].endswith("| autotuning s: ours / max-autotune |"))
        self.assertTrue(all(line.endswith("| - |") for line in table.splitlines()[2:]), table)

    def test_autotuning_is_also_summed_by_what_ours_decided(self):
        times = {"none": 1.0, "ours": 1.0, "max_autotune": 1.0}
        recs = [dict(rec(times), ours_decisions=decided_as("extern"), autotune_s={"ours": -0.1, "max_autotune": 8.0}),
                dict(rec(times), ours_decisions=decided_as("default"), autotune_s={"ours": 2.0, "max_autotune": 9.0}),
                dict(rec(times), ours_decisions=decided_as("default"), autotune_s={"ours": 3.0, "max_autotune": 11.0}),
                dict(rec(times), ours_decisions=decided_as("default"), autotune_s={"max_autotune": 50.0}),
                dict(rec(times), ours_decisions=decided_as("default") + decided_as("extern"))]
        table = holdout_pool.decision_table(recs)
        self.assertIn("| mixed or unrecorded | 1 |", table)
        self.assertIn("| cuBLAS only | 1 |", table)
        self.assertTrue(any(line.startswith("| cuBLAS only") and line.endswith(
            "| -0.1 / 8.0 (ours spent none; 1 GEMM) |") for line in table.splitlines()), table)
        self.assertTrue(any(line.startswith("| full list | 3") and line.endswith(
            "| 5.0 / 20.0 (4.0x less; 2 GEMMs) |") for line in table.splitlines()), table)

    def test_compile_time_noise_of_cublas_only_decisions_is_no_autotuning(self):
        times = {"none": 1.0, "ours": 1.0, "max_autotune": 1.0}
        noise = [dict(rec(times), ours_decisions=decided_as("extern"),
                      autotune_s={"ours": s, "max_autotune": 20.0}) for s in (0.3, -0.25, -0.04)]
        table = holdout_pool.decision_table(noise)
        self.assertTrue(any(line.startswith("| cuBLAS only | 3") and line.endswith(
            "| 0.0 / 60.0 (ours spent none; 3 GEMMs) |") for line in table.splitlines()), table)
        searched = [dict(rec(times), ours_decisions=decided_as("default"),
                         autotune_s={"ours": 0.4, "max_autotune": 20.0})]
        self.assertIn("| 0.4 / 20.0 (50.0x less; 1 GEMM) |", holdout_pool.decision_table(searched))

    def test_no_file_is_a_usage_error(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(holdout_pool.main([]), 2)
        self.assertIn("name the result files", err.getvalue())
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(holdout_pool.main(["--measured", "m.py", "a.json"]), 2)
        self.assertIn("--measured needs --handler", err.getvalue())


if __name__ == "__main__":
    unittest.main()
