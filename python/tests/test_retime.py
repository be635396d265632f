"""Tests of retime.py without PyTorch: the feedback saver's rules (which lowerings it re-times,
that it replaces timings in place and never raises) with the CUDA-graph timer stubbed, how a
choice's call is made, and its registration among Inductor's feedback savers (a fake
`torch._inductor.select_algorithm`)."""

import math
import os
import sys
import types
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from ah_inductor import retime  # noqa: E402

SMALL = retime.RETIME_BELOW_MS / 10


class Retimer(unittest.TestCase):
    def setUp(self):
        self.saver = retime.Retimer()
        self.timings = {"cublas": 0.025, "triton": 0.012, "broken": math.inf}

    def call(self, name="mm", timings=None):
        timings = self.timings if timings is None else timings
        with mock.patch.object(retime, "extern_test", lambda: lambda c: c.startswith("cublas")):
            self.saver(timings, name, ["a", "b"], list(timings), lambda: {}, {})
        return timings

    def test_replaces_the_timings_it_measured_in_place(self):
        seen = []

        def graphs(choices, inputs, flush=True, streamed=False):
            seen.append((sorted(choices), inputs))
            return {"cublas": 0.004}

        with mock.patch.object(retime, "graph_timings", graphs):
            out = self.call()
        self.assertEqual(out, {"cublas": 0.004, "triton": 0.012, "broken": math.inf})
        self.assertEqual(seen, [(["cublas", "triton"], ["a", "b"])])  # finite choices only
        self.assertEqual((self.saver.retimed, self.saver.failed), (1, 0))

    def test_leaves_other_lowerings_and_large_gemms_alone(self):
        with mock.patch.object(retime, "graph_timings", lambda c, i, flush=True, streamed=False: self.fail("re-timed")):
            self.call(name="convolution")
            large = {"cublas": retime.RETIME_BELOW_MS, "triton": 2 * retime.RETIME_BELOW_MS}
            self.assertEqual(self.call(timings=dict(large)), large)
            self.assertEqual(self.call(timings={"broken": math.inf}), {"broken": math.inf})
            self.saver.active = False
            self.call()
        self.assertEqual(self.saver.retimed, 0)

    def test_a_failure_keeps_inductors_timings(self):
        def boom(choices, inputs, flush=True, streamed=False):
            raise RuntimeError("capture failed")

        before = dict(self.timings)
        with mock.patch.object(retime, "graph_timings", boom):
            self.assertEqual(self.call(), before)
        self.assertEqual((self.saver.retimed, self.saver.failed), (0, 1))

    def test_re_times_only_the_aten_choice_inductor_timed_fastest(self):
        # addmm's expanded-bias call must not overtake the 1-D one by re-timing alone.
        seen = []

        def graphs(choices, inputs, flush=True, streamed=False):
            seen.append(list(choices))
            return {c: SMALL for c in choices}

        timings = {"cublas_bias_addmm": 0.030, "cublas_addmm": 0.031, "triton": 0.012}
        with mock.patch.object(retime, "graph_timings", graphs):
            out = self.call(name="addmm", timings=timings)
        self.assertEqual(seen, [["cublas_bias_addmm", "triton"]])
        self.assertEqual(out["cublas_addmm"], 0.031)  # Inductor's time: it stays behind
        self.assertEqual(min(out, key=out.get), "cublas_bias_addmm")

    def test_a_split_keeps_inductors_time_unless_warm(self):
        # Without `warm` the decompositions keep Inductor's time and the rest are re-timed
        # flushed; with it a lowering that offers any is re-timed whole, without the flush.
        seen = []

        def graphs(choices, inputs, flush=True, streamed=False):
            seen.append((list(choices), flush))
            return dict.fromkeys(choices, SMALL)

        timings = {"cublas": 0.030, "split_4": 0.012, "split_2": 0.011, "triton": 0.020}
        plain = {"cublas": 0.030, "triton": 0.020}
        with mock.patch.object(retime, "split_test", lambda: lambda c: c.startswith("split")), \
                mock.patch.object(retime, "graph_timings", graphs):
            self.assertEqual(self.call(timings=dict(timings))["split_2"], 0.011)
            self.saver.warm = True
            self.assertEqual(self.call(timings=dict(timings)), dict.fromkeys(timings, SMALL))
            self.assertEqual(self.call(timings=dict(plain)), dict.fromkeys(plain, SMALL))
        self.assertEqual(seen, [(["cublas", "triton"], True),
                                (["cublas", "split_4", "split_2", "triton"], False),
                                (["cublas", "triton"], True)])
        self.assertEqual(self.saver.retimed, 3)

    def test_warm_no_bias_re_times_mm_and_bmm_without_the_flush(self):
        seen = []

        def graphs(choices, inputs, flush=True, streamed=False):
            seen.append(flush)
            return dict.fromkeys(choices, SMALL)

        self.saver.warm_no_bias = True
        with mock.patch.object(retime, "graph_timings", graphs):
            for op in retime.RETIME_OPS:
                self.call(name=op, timings={"cublas": 0.030, "triton": 0.020})
        self.assertEqual(dict(zip(retime.RETIME_OPS, seen)),
                         {"mm": False, "addmm": True, "bmm": False, "baddbmm": True})

    def test_streamed_re_times_the_lowerings_its_test_names_on_streamed_operands(self):
        seen, asked = [], []

        def graphs(choices, inputs, flush=True, streamed=False):
            seen.append((flush, streamed))
            return dict.fromkeys(choices, SMALL)

        def few_rows(name, inputs):
            asked.append((name, inputs))
            return name == "addmm"

        self.saver.streamed = few_rows
        with mock.patch.object(retime, "graph_timings", graphs):
            self.call(name="addmm", timings={"cublas": 0.030, "triton": 0.020})
            self.call(name="bmm", timings={"cublas": 0.030, "triton": 0.020})
        self.assertEqual(seen, [(False, True), (True, False)])  # streamed: no flush; else as before
        self.assertEqual(asked, [("addmm", ["a", "b"]), ("bmm", ["a", "b"])])

    def test_re_times_every_gemm_op(self):
        with mock.patch.object(retime, "graph_timings", lambda c, i, flush=True, streamed=False: {"triton": SMALL}):
            for op in retime.RETIME_OPS:
                self.assertEqual(self.call(name=op, timings={"triton": 0.01})["triton"], SMALL)


class Streamed(unittest.TestCase):
    def test_copies_cover_twice_the_l2_at_least_two_at_most_the_cap(self):
        l2 = 50 << 20
        self.assertEqual(retime.copies(8 << 20, l2), 13)  # a 4 x 2048 x 2048 decode step's 8 MiB weight
        self.assertEqual(retime.copies(1 << 30, l2), 2)  # larger than the L2: still a second set
        self.assertEqual(retime.copies(1 << 10, l2), retime.MAX_COPIES)  # tiny: the sweep is capped
        with self.assertRaises(ValueError):
            retime.copies(0, l2)

    def test_input_sets_are_one_set_or_enough_fresh_ones_to_stream(self):
        class T:
            def numel(self):
                return 1 << 20

            def element_size(self):
                return 2

        made = []
        make = lambda: made.append(1) or [T(), T()]  # noqa: E731 - 4 MiB a set
        first = make()
        self.assertEqual(retime.input_sets(first, make, False, lambda: 1 / 0), [first])
        sets = retime.input_sets(first, make, True, lambda: 50 << 20)
        self.assertEqual((len(sets), sets[0]), (25, first))
        self.assertEqual(len(made), 25)

    def test_a_timed_graph_holds_about_1_ms_of_calls_in_whole_sweeps(self):
        self.assertEqual(retime.sweep_calls(0.004, 1), 50)  # capped at 50
        self.assertEqual(retime.sweep_calls(0.1, 1), 10)
        self.assertEqual(retime.sweep_calls(2.0, 1), 1)
        self.assertEqual(retime.sweep_calls(0.004, 40), 40)  # one sweep of 40 sets
        self.assertEqual(retime.sweep_calls(0.004, 15), 45)  # three sweeps of 15
        self.assertEqual(retime.sweep_calls(2.0, 7), 7)  # never less than one sweep


class GraphMs(unittest.TestCase):
    def fake_torch(self, call_ms):
        """What graph_ms touches of torch.cuda: streams, events reading `call_ms`, graphs."""
        import contextlib

        thing = types.SimpleNamespace(wait_stream=lambda s: None, record=lambda: None,
                                      synchronize=lambda: None, replay=lambda: None,
                                      elapsed_time=lambda other: call_ms)
        cuda = types.SimpleNamespace(
            Stream=lambda: thing, current_stream=lambda: thing, Event=lambda enable_timing: thing,
            CUDAGraph=lambda: thing, stream=lambda s: contextlib.nullcontext(),
            graph=lambda g: contextlib.nullcontext())
        return mock.patch.dict(sys.modules, {"torch": types.SimpleNamespace(cuda=cuda)})

    def test_sizes_the_graph_on_one_set_and_captures_whole_sweeps_of_every_set(self):
        made, ran = [], []

        def factory(i):
            return lambda: made.append(i) or (lambda: ran.append(i))

        with self.fake_torch(0.004):
            ms = retime.graph_ms([factory(i) for i in range(3)], None, rounds=3)
        n = retime.sweep_calls(0.004, 3)
        self.assertEqual(made, [0, 0, 1, 2])  # the probe's call, then one call per set captured
        self.assertEqual(ran, [0, 0] + [i % 3 for i in range(n)])  # probe twice, then the sweeps
        self.assertAlmostEqual(ms, 0.004 / n)

    def test_the_flush_runs_before_every_call(self):
        ran = []
        with self.fake_torch(0.5):
            retime.graph_ms([lambda: lambda: ran.append("call")], lambda: ran.append("flush"), rounds=1)
        self.assertEqual(ran, ["flush", "call"] * (2 + retime.sweep_calls(0.5, 1)))


class CallFactory(unittest.TestCase):
    class Extern:
        def __init__(self):
            self.calls = []

        def to_callable(self):
            return lambda *args, out: self.calls.append((args, out))

    def test_an_extern_choice_calls_its_aten_function_with_out(self):
        choice = self.Extern()
        call = retime.call_factory(choice, (1, 2), "out", self.Extern)()
        call()
        self.assertEqual(choice.calls, [((1, 2), "out")])

    def test_a_triton_choice_makes_its_run_function_on_each_stream(self):
        made = []
        bmreq = types.SimpleNamespace(make_run_fn=lambda *args, out: made.append((args, out)) or (lambda: None))
        factory = retime.call_factory(types.SimpleNamespace(bmreq=bmreq), (1,), "out", self.Extern)
        self.assertEqual(made, [])  # nothing bound until a stream asks
        factory()
        factory()
        self.assertEqual(made, [((1,), "out"), ((1,), "out")])

    def test_other_choices_are_not_re_timed(self):
        self.assertIsNone(retime.call_factory(types.SimpleNamespace(), (), "out", self.Extern))

    def test_a_split_is_timed_by_the_module_inductor_compiled_for_it(self):
        calls = []
        module = types.SimpleNamespace(call=lambda args: calls.append(list(args)) or args.clear())
        split = types.SimpleNamespace(_compiled_module=module, sym_input_values=[7])
        factory = retime.call_factory(split, (1, 2), "out", self.Extern, lambda c: c is split)
        call = factory()
        call()
        call()  # a fresh list each time: the module's call clears the one it gets
        self.assertEqual(calls, [[7, 1, 2], [7, 1, 2]])

    def test_a_split_without_a_compiled_module_keeps_inductors_time(self):
        for split in (types.SimpleNamespace(), types.SimpleNamespace(_compiled_module=None),
                      types.SimpleNamespace(_compiled_module=object())):
            self.assertIsNone(retime.call_factory(split, (), "out", self.Extern, lambda c: True))
        self.assertEqual(retime.split_call(types.SimpleNamespace(_compiled_module=types.SimpleNamespace(
            call=lambda args: args)), (3,))(), [3])  # no symbolic sizes


class Registration(unittest.TestCase):
    def fake(self, savers):
        selector = types.SimpleNamespace(feedback_saver_fns=savers)
        select = types.ModuleType("torch._inductor.select_algorithm")
        select.get_algorithm_selector_cache = lambda: selector
        inductor = types.ModuleType("torch._inductor")
        inductor.select_algorithm = select
        torch = types.ModuleType("torch")
        torch._inductor = inductor
        return mock.patch.dict(sys.modules, {"torch": torch, "torch._inductor": inductor,
                                             "torch._inductor.select_algorithm": select})

    def test_installs_first_and_uninstalls_only_its_own(self):
        savers = ["recorder"]
        with self.fake(savers):
            saver = retime.retime_install()
            self.assertEqual(savers, [saver, "recorder"])
            retime.retime_uninstall(saver)
        self.assertEqual(savers, ["recorder"])
        self.assertFalse(saver.active)
        retime.retime_uninstall(None)

    def test_a_pytorch_without_feedback_savers_gets_none(self):
        with mock.patch.dict(sys.modules, {"torch": None, "torch._inductor": None,
                                           "torch._inductor.select_algorithm": None}):
            self.assertIsNone(retime.retime_install())


if __name__ == "__main__":
    unittest.main()
