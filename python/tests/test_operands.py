"""`scripts/inductor_eval.py --operands streamed`: compiled truth with the operands read from HBM.
A replay sweeps enough fresh copies of the operands to cover twice the L2 (capped), the record
says how many, and result files timed that way never share a table with warm ones."""

import contextlib
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import inductor_eval  # noqa: E402
import inductor_operands as ops  # noqa: E402
import inductor_results  # noqa: E402

L2 = 50 << 20


class FakeTensor:
    def __init__(self, shape, itemsize):
        self.shape, self.itemsize = tuple(shape), itemsize

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return self.itemsize

    def transpose(self, a, b):
        return self


class FakeTorch:
    """What measure_gemm touches of torch: dtypes, the three ops, randn, compile, the device's L2."""
    bfloat16, float16, float32 = 2, 2, 4

    def __init__(self, l2=L2):
        self.made = 0
        self.backends = type("B", (), {"cuda": type("C", (), {"matmul": type("M", (), {})()})()})()
        props = type("P", (), {"L2_cache_size": l2})()
        self.cuda = type("Cuda", (), {"get_device_properties": staticmethod(lambda i: props)})()
        self.calls = []

    def randn(self, shape, device, dtype):
        self.made += 1
        return FakeTensor(shape if isinstance(shape, tuple) else (shape,), dtype)

    def mm(self, a, b):
        self.calls.append((id(a), id(b)))

    def addmm(self, bias, a, b):
        self.calls.append((id(a), id(b)))

    def bmm(self, a, b):
        self.calls.append((id(a), id(b)))

    def compile(self, fn, **kwargs):
        return fn


class FakeInductor:
    """The harness as measure_gemm uses it: replays are recorded, not timed."""

    def __init__(self, torch):
        self.torch, self.captured, self.per_replay = torch, [], None

    def fresh(self):
        pass

    @contextlib.contextmanager
    def setting(self, name, rec):
        yield {}

    def timed_first_call(self, fn):
        fn()
        return 1.0

    def probe_ms(self, fn):
        fn()
        return 0.5

    def capture(self, fn, calls):
        self.captured.append(calls)
        return type("G", (), {"replay": staticmethod(fn)})()

    def alternate(self, replays, per_replay):
        self.per_replay = per_replay
        return {s: 0.01 for s in replays}


def gemm(m, k, n, op="mm", dtype="bfloat16"):
    return {"name": "g", "op": op, "batch": 1, "m": m, "k": k, "n": n, "dtype": dtype, "tf32": False,
            "trans_a": False, "trans_b": True}


class CopiesTest(unittest.TestCase):
    # How many copies a sweep takes is retime.py's (test_retime.Streamed); the harness's own:
    def test_the_l2_comes_from_pytorch_or_a_fallback(self):
        self.assertEqual(ops.l2_bytes(FakeTorch()), L2)
        self.assertEqual(ops.l2_bytes(FakeTorch(l2=0)), ops.FALLBACK_L2_BYTES)

    def test_warm_sweeps_one_set_streamed_makes_fresh_ones(self):
        torch = FakeTorch()
        first = (FakeTensor((4, 2048), 2), FakeTensor((2048, 2048), 2))
        self.assertEqual(ops.operand_sets(torch, first, lambda: 1 / 0, "warm"), [first])
        sets = ops.operand_sets(torch, first, lambda: ("fresh",), "streamed")
        self.assertEqual((sets[0], len(sets), sets[1]), (first, 13, ("fresh",)))
        with self.assertRaises(ValueError):
            ops.operand_sets(torch, first, lambda: (), "lukewarm")


class MeasureTest(unittest.TestCase):
    def measure(self, gm, operands):
        torch = FakeTorch()
        ind = FakeInductor(torch)
        rec = inductor_eval.measure_gemm(ind, gm, ["none"], lambda: False, operands)
        return rec, ind, torch

    def test_warm_replays_one_call_on_the_same_operands(self):
        rec, ind, torch = self.measure(gemm(4, 2048, 2048), "warm")
        self.assertEqual((ind.captured, ind.per_replay, rec["graph_calls"]), ([4], 4, 4))
        self.assertNotIn("operand_sets", rec)
        self.assertEqual(len(set(torch.calls)), 1)

    def test_streamed_sweeps_every_set_and_divides_by_all_calls(self):
        rec, ind, torch = self.measure(gemm(4, 2048, 2048), "streamed")
        self.assertEqual(rec["operand_sets"], 13)
        self.assertEqual(len(set(torch.calls)), 13)  # each set's operands, once a sweep
        self.assertEqual(ind.per_replay, ind.captured[0] * 13)
        self.assertEqual(rec["graph_calls"], ind.per_replay)

    def test_addmm_copies_its_bias_too(self):
        rec, _, torch = self.measure(gemm(8, 320, 1280, op="addmm", dtype="float16"), "streamed")
        self.assertEqual(torch.made, 3 * rec["operand_sets"])


class PoolingTest(unittest.TestCase):
    def test_streamed_files_name_it_and_never_pool_with_warm_ones(self):
        warm = {"meta": {"device": "NVIDIA H200"}}
        streamed = {"meta": {"device": "NVIDIA H200", "operands": "streamed"}}
        self.assertEqual(inductor_results.device_of(warm), "NVIDIA H200")
        self.assertEqual(inductor_results.device_of(streamed), "NVIDIA H200 (operands streamed)")
        self.assertEqual(inductor_results.device_of({"meta": {"operands": "streamed"}}), None)
        named = [("w.json", inductor_results.device_of(warm)), ("s.json", inductor_results.device_of(streamed))]
        with self.assertRaisesRegex(ValueError, "s.json: measured on NVIDIA H200 .operands streamed., "
                                                "but w.json on NVIDIA H200"):
            inductor_results.one_device(named, ValueError)


if __name__ == "__main__":
    unittest.main()
