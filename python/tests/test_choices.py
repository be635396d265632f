"""Tests of the InductorChoices handler runtime without PyTorch: the features it reads from
Inductor's inputs, its decisions on a template list, and how it fails (the stubs and the fake
`torch` are inductor_stubs.py's). Installing it, the generated module and its fingerprint:
test_choices_install.py."""

import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ah_inductor import choices, naming  # noqa: E402
from inductor_stubs import (  # noqa: E402
    TILE, TILE_NAME, HEURISTIC, ktc, mm_choices, templates_of, Sym, StubInputs, operand,
    mm_inputs, FakeInductorChoices, fake_torch, decide_by_m, names)


class Features(unittest.TestCase):
    def test_mm(self):
        with fake_torch():
            f = choices.features(mm_inputs(32, 4096, 1024), "mm")
        self.assertEqual(f, {
            "m": 32, "k": 4096, "n": 1024, "batch": 1, "op": "mm",
            "mat1_dtype": "torch.bfloat16", "mat2_dtype": "torch.bfloat16",
            "mat1_stride_0": 4096, "mat1_stride_1": 1, "mat2_stride_0": 1024, "mat2_stride_1": 1,
            "mat1_iscontig": True, "mat2_iscontig": True, "using_tf32": "not_float_32",
        })

    def test_transposed_operands(self):
        # Forward x @ W.t(): mat2 is the transpose of a contiguous (n, k) weight.
        with fake_torch():
            f = choices.features(mm_inputs(512, 2048, 5632, trans_b=True), "mm")
            self.assertEqual((f["mat2_stride_0"], f["mat2_stride_1"], f["mat2_iscontig"]), (1, 2048, False))
            # Weight gradient dy.t() @ x: mat1 is the transpose of a contiguous (m_tokens, n_out).
            f = choices.features(mm_inputs(5632, 8192, 2048, trans_a=True), "mm")
            self.assertEqual((f["mat1_stride_0"], f["mat1_stride_1"], f["mat1_iscontig"]), (1, 5632, False))

    def test_addmm_bias_first(self):
        bias = ((1024,), (1,), "torch.float16")
        ki = StubInputs([bias, operand(64, 512, False, "torch.float16"), operand(512, 1024, True, "torch.float16")])
        with fake_torch():
            f = choices.features(ki, "addmm")
        self.assertEqual((f["m"], f["k"], f["n"], f["op"]), (64, 512, 1024, "addmm"))
        self.assertEqual((f["mat1_stride_0"], f["mat2_stride_1"], f["mat1_dtype"]), (512, 512, "torch.float16"))

    def test_bmm_strides_of_last_two_dims(self):
        ki = StubInputs([operand(128, 64, False, batch=32), operand(64, 128, True, batch=32)])
        with fake_torch():
            f = choices.features(ki, "bmm")
        self.assertEqual((f["batch"], f["m"], f["k"], f["n"]), (32, 128, 64, 128))
        self.assertEqual((f["mat1_stride_0"], f["mat1_stride_1"], f["mat2_stride_0"], f["mat2_stride_1"]),
                         (64, 1, 1, 64))

    def test_fp32_tf32(self):
        ki = mm_inputs(256, 256, 256, dtype="torch.float32")
        with fake_torch(allow_tf32=True):
            self.assertIs(choices.features(ki, "mm")["using_tf32"], True)
        with fake_torch(allow_tf32=False):
            self.assertIs(choices.features(ki, "mm")["using_tf32"], False)
        # PyTorch 2.11 reads fp32_precision (autoheuristic_utils.context_add_using_tf32).
        with fake_torch(fp32_precision="tf32", allow_tf32=False):
            self.assertIs(choices.features(ki, "mm")["using_tf32"], True)
        with fake_torch(fp32_precision="ieee", allow_tf32=True):
            self.assertIs(choices.features(ki, "mm")["using_tf32"], False)

    def test_size_one_dims_are_contiguous(self):
        self.assertTrue(choices.is_contiguous(1, 4096, 1, 1))  # decode: m = 1, any stride_0
        self.assertTrue(choices.is_contiguous(4096, 1, 1, 7))
        self.assertFalse(choices.is_contiguous(2, 3, 1, 2))

    def test_symbolic_sizes_raise_symbolic(self):
        ki = StubInputs([((Sym(), 64), (64, 1), "torch.bfloat16"), operand(64, 64, False)], hint=lambda v: 8 if isinstance(v, Sym) else v)
        with fake_torch(), self.assertRaises(choices.Symbolic):
            choices.features(ki, "mm")


class Decisions(unittest.TestCase):
    def setUp(self):
        self.rt = choices.Runtime(HEURISTIC, decide_by_m)
        self.rt.active = True
        self.inner = FakeInductorChoices()._finalize_template_configs

    def run_op(self, ki, op="mm", tc=None, allow_tf32=False):
        tc = tc if tc is not None else mm_choices()
        with fake_torch(allow_tf32=allow_tf32):
            return self.rt.finalize(self.inner, tc, ki, templates_of(tc), op, None)

    def test_extern_keeps_cublas_and_never_iterates_templates(self):
        tc = mm_choices(self, poison=True)
        out = self.run_op(mm_inputs(16, 4096, 4096), tc=tc)
        self.assertEqual(names(out), ["extern_mm"])
        self.assertEqual(self.rt.stats()["extern"], 1)

    def test_keep_filters_by_name(self):
        out = self.run_op(mm_inputs(512, 4096, 4096))
        self.assertEqual(names(out), ["extern_mm", TILE_NAME])
        self.assertEqual(self.rt.stats()["keep"], 1)

    def test_drop_leaves_out_configs_by_the_name_offered_and_keeps_every_aten_choice(self):
        big = TILE_NAME.replace("BLOCK-M=64", "BLOCK-M=128")
        rt = choices.Runtime(HEURISTIC, lambda f: ("drop", (big, "subgraph_decompose_k")))
        rt.active = True
        tc = mm_choices()
        with fake_torch():
            out = rt.finalize(self.inner, tc, mm_inputs(8192, 4096, 4096), templates_of(tc), "mm", None)
        self.assertEqual(names(out), ["extern_mm", TILE_NAME])
        self.assertEqual(rt.stats()["drop"], 1)
        # Not sized: a dropped name that Inductor offers this GEMM only sized down is not dropped.
        rt = choices.Runtime(HEURISTIC, lambda f: ("drop", (big,)))
        rt.active = True
        ki = StubInputs([operand(16, 64, False, batch=4), operand(64, 32, False, batch=4)])
        tc = {"aten::bmm": iter([ktc("aten::bmm")]),
              "triton::bmm": iter([ktc("triton::bmm", **dict(TILE, BLOCK_M=16, BLOCK_N=32, num_warps=2))])}
        with fake_torch():
            out = rt.finalize(self.inner, tc, ki, templates_of(tc), "bmm", None)
        self.assertEqual(len(out), 2)

    def test_drop_of_every_template_keeps_what_is_left(self):
        rt = choices.Runtime(HEURISTIC, lambda f: ("drop", ("nothing_offered",)))
        rt.active = True
        tc = mm_choices()
        with fake_torch():
            out = rt.finalize(self.inner, tc, mm_inputs(8192, 4096, 4096), templates_of(tc), "mm", None)
        self.assertEqual(len(out), 4)
        self.assertEqual(rt.stats()["drop"], 1)

    def test_default_is_unchanged(self):
        out = self.run_op(mm_inputs(8192, 4096, 4096))
        self.assertEqual(len(out), 4)
        self.assertEqual(self.rt.stats()["default"], 1)

    def test_narrow_search_leaves_a_narrow_linears_cublas_decision_to_the_search(self):
        rt = choices.Runtime(HEURISTIC, lambda f: ("extern", ()))
        rt.active = True

        def run(ki):
            tc = mm_choices()
            with fake_torch():
                return names(rt.finalize(self.inner, tc, ki, templates_of(tc), "mm", None))
        router = mm_inputs(4096, 4096, 16, trans_b=True)  # a router of 16 experts
        wide = mm_inputs(4096, 4096, 4096, trans_b=True)
        self.assertEqual(run(router), ["extern_mm"])  # off by default
        rt.narrow_search = True
        self.assertGreater(len(run(router)), 1)
        self.assertEqual(run(wide), ["extern_mm"])
        self.assertEqual(run(mm_inputs(4096, 256, 16, trans_b=True)), ["extern_mm"])  # k < 512
        self.assertEqual(run(mm_inputs(32768, 4096, 16, trans_b=True)), ["extern_mm"])  # m > 16384
        self.assertEqual((rt.stats()["extern"], rt.stats()["default"]), (4, 1))
        self.assertEqual([d["decision"] for d in rt.decisions()], ["extern", "default", "extern", "extern", "extern"])

    def test_installed_searches_a_narrow_linears_cublas_decision_by_default(self):
        router = {"op": "mm", "m": 4096, "k": 2048, "n": 8}
        self.assertEqual(choices.installed("extern", frozenset(), router), ("default", frozenset()))
        self.assertEqual(choices.installed("extern", frozenset(), router, narrow_search=False),
                         ("extern", frozenset()))
        self.assertEqual(choices.installed("keep", frozenset({"a"}), router), ("keep", frozenset({"a"})))
        wide = dict(router, n=4096)
        self.assertEqual(choices.installed("extern", frozenset(), wide), ("extern", frozenset()))

    def test_small_bmm_search_leaves_a_small_side_bmms_cublas_decision_to_the_search(self):
        rt = choices.Runtime(HEURISTIC, lambda f: ("extern", ()))
        rt.active = True

        def run(m, k, n):
            ki = StubInputs([operand(m, k, False, batch=8), operand(k, n, False, batch=8)])
            tc = {"aten::bmm": iter([ktc("aten::bmm")]), "triton::bmm": iter([ktc("triton::bmm", **TILE)])}
            with fake_torch():
                return names(rt.finalize(self.inner, tc, ki, templates_of(tc), "bmm", None))
        decode = (1, 4096, 128)  # a decode step's attention context: one query
        self.assertEqual(run(*decode), ["extern_bmm"])  # off until install() turns it on
        rt.small_bmm_search = True
        self.assertEqual(len(run(*decode)), 2)
        self.assertEqual(run(128, 128, 128), ["extern_bmm"])  # no side of 64 or less
        self.assertEqual((rt.stats()["extern"], rt.stats()["default"]), (2, 1))

    def test_installed_searches_a_small_side_bmm_by_default(self):
        decode = {"op": "bmm", "m": 1, "k": 4096, "n": 128}
        self.assertEqual(choices.installed("extern", frozenset(), decode), ("default", frozenset()))
        self.assertEqual(choices.installed("extern", frozenset(), decode, small_bmm_search=False),
                         ("extern", frozenset()))
        router = {"op": "mm", "m": 4096, "k": 2048, "n": 8}
        self.assertEqual(choices.installed("extern", frozenset(), router, narrow_search=False,
                                           small_bmm_search=True), ("extern", frozenset()))

    def test_bias_head_search_leaves_a_biased_heads_cublas_decision_to_the_search(self):
        head = {"op": "addmm", "m": 256, "k": 2048, "n": 1000, "mat1_dtype": "torch.float16"}
        self.assertEqual(choices.installed("extern", frozenset(), head), ("default", frozenset()))  # by default
        self.assertEqual(choices.installed("extern", frozenset(), head, bias_head_search=False,
                                           half_few_rows_search=False), ("extern", frozenset()))
        self.assertEqual(choices.installed("keep", frozenset({"a"}), head, bias_head_search=True),
                         ("keep", frozenset({"a"})))

    def test_fp32_small_search_leaves_a_small_fp32_cublas_decision_to_the_search(self):
        critic = {"op": "addmm", "m": 256, "k": 393, "n": 256, "mat1_dtype": "torch.float32"}
        self.assertEqual(choices.installed("extern", frozenset(), critic), ("default", frozenset()))  # by default
        self.assertEqual(choices.installed("extern", frozenset(), critic, fp32_small_search=False),
                         ("extern", frozenset()))
        self.assertEqual(choices.installed("drop", frozenset({"a"}), critic, fp32_small_search=True),
                         ("drop", frozenset({"a"})))

    def test_a_small_fp32_gemm_is_an_mm_or_addmm_of_at_most_2_to_the_31_multiply_adds(self):
        f = {"op": "mm", "m": 512, "k": 2048, "n": 2048, "mat1_dtype": "torch.float32"}  # 2**31 exactly
        self.assertTrue(choices.fp32_small(f))
        self.assertTrue(choices.fp32_small(dict(f, op="addmm", m=8, k=8, n=8)))
        for other in ({"op": "bmm"}, {"m": 513}, {"mat1_dtype": "torch.bfloat16"},
                      {"mat1_dtype": "torch.float16"}):
            self.assertFalse(choices.fp32_small(dict(f, **other)), other)

    def test_half_few_rows_search_leaves_a_few_row_half_cublas_decision_to_the_search(self):
        decode = {"op": "mm", "m": 2, "k": 2048, "n": 1032, "mat1_dtype": "torch.bfloat16"}
        self.assertEqual(choices.installed("extern", frozenset(), decode), ("extern", frozenset()))  # off by default
        self.assertEqual(choices.installed("extern", frozenset(), decode, half_few_rows_search=True),
                         ("default", frozenset()))
        self.assertEqual(choices.installed("extern", frozenset(), decode, half_few_rows_search=False),
                         ("extern", frozenset()))
        self.assertEqual(choices.installed("keep", frozenset({"a"}), decode, half_few_rows_search=True),
                         ("keep", frozenset({"a"})))

    def test_an_option_is_on_unless_given_false_but_those_off_by_default(self):
        self.assertEqual(choices.OFF_BY_DEFAULT, ("half_few_rows_search", "streamed_few_rows"))
        for name in choices.SEARCH_OPTIONS + choices.RETIME_OPTIONS:
            self.assertEqual(choices.option_on({}, name), name not in choices.OFF_BY_DEFAULT, name)
            self.assertTrue(choices.option_on({name: True}, name), name)
            self.assertFalse(choices.option_on({name: False}, name), name)

    def test_a_few_row_lowering_is_read_from_its_input_nodes(self):
        class Node:
            def __init__(self, size, dtype="torch.bfloat16"):
                self.size, self.dtype = size, dtype

            def get_size(self):
                return self.size

            def get_dtype(self):
                return self.dtype

        class Sym:
            free_symbols = {"s0"}

        decode = [Node([16, 4096]), Node([4096, 4096])]
        self.assertTrue(choices.few_rows_lowering("mm", decode))
        self.assertTrue(choices.few_rows_lowering("addmm", [Node([4096])] + decode))  # bias first
        self.assertFalse(choices.few_rows_lowering("bmm", decode))
        self.assertFalse(choices.few_rows_lowering("mm", [Node([512, 4096]), Node([4096, 4096])]))
        self.assertFalse(choices.few_rows_lowering("mm", [Node([16, 4096], "torch.float32"), decode[1]]))
        self.assertFalse(choices.few_rows_lowering("mm", [Node([Sym(), 4096]), decode[1]]))  # dynamic
        self.assertFalse(choices.few_rows_lowering("mm", decode[:1]))

    def test_a_few_row_half_gemm_is_an_mm_or_addmm_of_at_most_256_rows_and_2_to_the_31(self):
        f = {"op": "mm", "m": 128, "k": 4096, "n": 4096, "mat1_dtype": "torch.bfloat16"}  # 2**31 exactly
        self.assertTrue(choices.half_few_rows(f))
        self.assertTrue(choices.half_few_rows(dict(f, op="addmm", m=256, k=8, n=8, mat1_dtype="torch.float16")))
        for other in ({"op": "bmm"}, {"m": 129}, {"m": 257, "k": 8, "n": 8},
                      {"mat1_dtype": "torch.float32"}):
            self.assertFalse(choices.half_few_rows(dict(f, **other)), other)

    def test_a_bias_head_is_a_half_precision_addmm_of_128_to_256_rows_with_a_long_input(self):
        f = {"op": "addmm", "m": 128, "k": 2048, "n": 4096, "mat1_dtype": "torch.bfloat16"}
        self.assertTrue(choices.bias_head(f))
        self.assertTrue(choices.bias_head(dict(f, m=256, k=16384, n=80, mat1_dtype="torch.float16")))
        for other in ({"op": "mm"}, {"m": 127}, {"m": 257}, {"k": 2047}, {"n": 4097},
                      {"mat1_dtype": "torch.float32"}):
            self.assertFalse(choices.bias_head(f | other), other)

    def test_a_small_side_bmm_has_a_side_of_at_most_64(self):
        f = {"op": "bmm", "m": 256, "k": 64, "n": 256}
        self.assertTrue(choices.small_side_bmm(f))
        self.assertTrue(choices.small_side_bmm(dict(f, k=4096, m=1)))
        for other in ({"op": "mm"}, {"k": 65}):
            self.assertFalse(choices.small_side_bmm(f | other), other)

    def test_narrow_linear_is_a_linear_to_at_most_64_outputs(self):
        f = {"op": "mm", "m": 16384, "k": 512, "n": 64}
        self.assertTrue(choices.narrow_linear(f))
        self.assertTrue(choices.narrow_linear(dict(f, op="addmm", m=1, n=1)))
        for other in ({"op": "bmm"}, {"n": 65}, {"k": 511}, {"m": 16385}):
            self.assertFalse(choices.narrow_linear(f | other), other)

    def test_a_list_left_to_the_search_keeps_every_cublas_call(self):
        fp16 = self.addmm_inputs(8192)  # decide_by_m: default
        both = names(self.run_op(fp16, op="addmm", tc=self.addmm_choices()))
        self.assertEqual(both[:2], ["extern_addmm", "extern_bias_addmm"])
        self.assertEqual(self.rt.stats()["default"], 1)
        rt = choices.Runtime(HEURISTIC, lambda f: ("drop", ("nothing_offered",)))
        rt.active = True
        tc = self.addmm_choices()
        with fake_torch():
            out = rt.finalize(self.inner, tc, fp16, templates_of(tc), "addmm", None)
        self.assertEqual(names(out), both)

    def test_each_decision_is_recorded_with_the_features_it_was_made_on(self):
        self.run_op(mm_inputs(16, 4096, 4096))
        self.run_op(mm_inputs(512, 4096, 4096))
        self.run_op(mm_inputs(8192, 4096, 4096))
        self.run_op(mm_inputs(16, 64, 64), op="convolution")  # not the heuristic's: no record
        got = self.rt.decisions()
        self.assertEqual([(d["m"], d["decision"], d["kept"]) for d in got],
                         [(16, "extern", 0), (512, "keep", 1), (8192, "default", 0)])
        self.assertEqual(got[0]["op"], "mm")
        got[0]["m"] = -1  # a copy: the log is not the caller's to change
        self.assertEqual(self.rt.decisions()[0]["m"], 16)
        self.rt.reset_stats()
        self.assertEqual(self.rt.decisions(), [])

    def test_the_decision_log_keeps_the_most_recent(self):
        for m in range(3):
            self.rt.record({"m": m}, "extern", ())
        old = choices.DECISION_LOG
        choices.DECISION_LOG = 2
        self.addCleanup(setattr, choices, "DECISION_LOG", old)
        self.rt.record({"m": 3}, "extern", ())
        self.assertEqual([d["m"] for d in self.rt.decisions()], [2, 3])

    def addmm_choices(self, poison=False):
        tc = mm_choices(self, poison=poison)
        del tc["aten::mm"]
        return {"aten::addmm": iter([ktc("aten::addmm")]), "aten::bias_addmm": iter([ktc("aten::bias_addmm")]), **tc}

    def addmm_inputs(self, m, dtype="torch.float16", k=4096):
        bias = ((4096,), (1,), dtype)
        return StubInputs([bias, operand(m, k, False, dtype), operand(k, 4096, True, dtype)])

    def test_extern_keeps_one_aten_choice_the_1d_bias_call(self):
        out = self.run_op(self.addmm_inputs(16), op="addmm", tc=self.addmm_choices(poison=True))
        self.assertEqual(names(out), ["extern_bias_addmm"])

    def test_extern_tries_the_next_aten_choice_when_the_preferred_makes_none(self):
        # Inductor 2.11 offers aten::bias_addmm for the fp16 addmm 16384 x 4096 x 1 and makes no
        # choice of it: a list of that one template alone was empty, and the compile failed.
        tc = self.addmm_choices(poison=True)
        tc["aten::bias_addmm"] = iter([])
        out = self.run_op(self.addmm_inputs(16), op="addmm", tc=tc)
        self.assertEqual(names(out), ["extern_addmm"])
        self.assertEqual(self.rt.stats()["extern"], 1)

    def test_extern_keeps_everything_when_no_aten_template_makes_a_choice(self):
        tc = self.addmm_choices()
        tc["aten::bias_addmm"], tc["aten::addmm"] = iter([]), iter([])
        out = self.run_op(self.addmm_inputs(16), op="addmm", tc=tc)
        self.assertEqual(len(out), 3)
        self.assertEqual(self.rt.stats()["empty"], 1)

    def test_keep_keeps_one_aten_choice(self):
        out = self.run_op(self.addmm_inputs(512), op="addmm", tc=self.addmm_choices())
        self.assertEqual(names(out), ["extern_bias_addmm", TILE_NAME])

    def test_fp32_addmm_keeps_the_expanded_bias_call_where_k_splits(self):
        fp32 = self.addmm_inputs(16, "torch.float32")  # 16 x 4096 x 4096: 32 tiles, 128 k per tile
        out = self.run_op(fp32, op="addmm", tc=self.addmm_choices(poison=True))
        self.assertEqual(names(out), ["extern_addmm"])
        out = self.run_op(self.addmm_inputs(256, "torch.float32"), op="addmm", tc=self.addmm_choices())
        self.assertEqual(names(out), ["extern_addmm", TILE_NAME])  # a kept list too: 64 tiles, 64 k per tile
        out = self.run_op(self.addmm_inputs(512, "torch.float32"), op="addmm", tc=self.addmm_choices())
        self.assertEqual(names(out), ["extern_bias_addmm", TILE_NAME])  # on the bound: 128 tiles, 32 k per tile
        out = self.run_op(fp32, op="addmm", tc=self.addmm_choices(poison=True), allow_tf32=True)
        self.assertEqual(names(out), ["extern_bias_addmm"])  # TF32: more than 16 tiles

    def test_half_unaligned_bias_keeps_the_expanded_call_in_its_corner_only(self):
        def run(k, dtype="torch.float16", m=choices.HALF_UNALIGNED_MIN_M):
            tc = self.addmm_choices(poison=True)
            return names(self.run_op(self.addmm_inputs(m, dtype, k), op="addmm", tc=tc))
        self.assertEqual(run(51433), ["extern_bias_addmm"])  # off until install() turns it on
        self.rt.half_unaligned_bias = True
        self.assertEqual(run(51433), ["extern_addmm"])
        self.assertEqual(run(choices.HALF_UNALIGNED_MIN_K, "torch.bfloat16"), ["extern_addmm"])
        for k, dtype, m in ((choices.HALF_UNALIGNED_MIN_K - 2, "torch.float16", 32),  # short
                            (51432, "torch.float16", 32),  # aligned
                            (51433, "torch.float16", 8),  # few rows: blind set 74's cryoDRGN encoder
                            (51433, "torch.float32", 8)):  # fp32: its own rule (m 8 below its edge)
            self.assertEqual(run(k, dtype, m), ["extern_bias_addmm"], (k, dtype, m))
        out = self.run_op(self.addmm_inputs(512, k=51433), op="addmm", tc=self.addmm_choices())
        self.assertEqual(names(out), ["extern_addmm", TILE_NAME])  # a kept list keeps it too

    def test_half_unaligned_addmm_is_a_long_unaligned_half_precision_addmm(self):
        f = {"op": "addmm", "mat1_dtype": "torch.bfloat16", "m": 32, "k": 4097, "n": 1024}
        self.assertTrue(choices.half_unaligned_addmm(f))
        self.assertTrue(choices.half_unaligned_addmm(dict(f, mat1_dtype="torch.float16", k=65535)))
        for other in ({"op": "mm"}, {"k": 4095}, {"k": 4104}, {"mat1_dtype": "torch.float32"},
                      {"m": 31}):
            self.assertFalse(choices.half_unaligned_addmm(f | other), other)
        both = ["aten::bias_addmm", "aten::addmm"]
        self.assertEqual(choices.one_aten(both, f), "aten::addmm")  # the default, as install()'s
        self.assertEqual(choices.one_aten(both, f, half_unaligned=False), "aten::bias_addmm")
        self.assertEqual(choices.aten_order(both, f, False), ["aten::bias_addmm", "aten::addmm"])

    def extern_runtime(self):
        """A runtime whose tree gives every GEMM cuBLAS alone, active, every option off."""
        rt = choices.Runtime(HEURISTIC, lambda f: ("extern", ()))
        rt.active = True
        return rt

    def addmm_list(self, rt, m, dtype, k=4096):
        """How many choices `rt` leaves of an addmm m x k x 4096's list (1: cuBLAS alone)."""
        tc = self.addmm_choices()
        with fake_torch():
            return len(rt.finalize(self.inner, tc, self.addmm_inputs(m, dtype, k=k), templates_of(tc),
                                   "addmm", None))

    def assert_searched_only_when_on(self, option, m, dtype, k, outside):
        """With `option` off, m x k x 4096 in `dtype` stays cuBLAS only; on, the whole list (both
        ATen calls and Triton); `outside`, (m, dtype) pairs of other kinds, stay cuBLAS only."""
        rt = self.extern_runtime()
        self.assertEqual(self.addmm_list(rt, m, dtype, k), 1)  # off until install() turns it on
        setattr(rt, option, True)
        self.assertEqual(self.addmm_list(rt, m, dtype, k), 5)
        for other_m, other_dtype in outside:
            self.assertEqual(self.addmm_list(rt, other_m, other_dtype, k), 1, (other_m, other_dtype))
        self.assertEqual((rt.stats()["extern"], rt.stats()["default"]), (1 + len(outside), 1))

    def test_bias_head_search_searches_a_half_precision_heads_cublas_decision(self):
        # 256 x 4096 x 4096; too many rows; fp32
        self.assert_searched_only_when_on("bias_head_search", 256, "torch.float16", 4096,
                                          [(512, "torch.float16"), (256, "torch.float32")])

    def test_fp32_small_search_searches_a_small_fp32_cublas_decision(self):
        # 64 x 64 x 4096; over 2**31; half precision
        self.assert_searched_only_when_on("fp32_small_search", 64, "torch.float32", 64,
                                          [(8193, "torch.float32"), (64, "torch.float16")])

    def test_half_few_rows_search_searches_a_few_row_half_cublas_decision(self):
        # 16 x 1024 x 4096; too many rows; fp32
        self.assert_searched_only_when_on("half_few_rows_search", 16, "torch.bfloat16", 1024,
                                          [(257, "torch.bfloat16"), (16, "torch.float32")])

    def test_one_aten_search_keeps_the_bias_rules_call_in_the_lists_left_to_the_search(self):
        both = ["extern_addmm", "extern_bias_addmm"]
        for kind, names_ in (("default", ()), ("drop", ("nothing_offered",))):
            rt = choices.Runtime(HEURISTIC, lambda f, kind=kind, names_=names_: (kind, names_))
            rt.active = True

            def run(m, dtype="torch.float16"):
                tc = self.addmm_choices()
                with fake_torch():
                    out = names(rt.finalize(self.inner, tc, self.addmm_inputs(m, dtype), templates_of(tc),
                                            "addmm", None))
                return sorted(n for n in out if n.startswith("extern")), len(out)
            self.assertEqual(run(512), (both, 5))  # off by default: both calls searched
            rt.one_aten_search = True
            self.assertEqual(run(512), (["extern_bias_addmm"], 4))  # 16-bit: the 1-D call
            self.assertEqual(run(16, "torch.float32"), (["extern_addmm"], 4))  # k long per tile
            self.assertEqual(run(512, "torch.float32"), (["extern_bias_addmm"], 4))  # on the bound
            self.assertEqual(rt.stats()[kind], 4)
        rt.one_aten_search = True
        out = self.run_op(mm_inputs(8192, 4096, 4096))  # one ATen choice offered: all kept
        self.assertEqual(len(out), 4)

    def test_aten_first_takes_the_expanded_call_only_inside_its_region(self):
        both = ["aten::addmm", "aten::bias_addmm"]
        per_tile = choices.EXPANDED_BIAS_K_PER_TILE
        # without TF32: 4 x 2 tiles of 128, so k above 8 x K_PER_TILE (on the bound, the 1-D call)
        f = {"op": "addmm", "mat1_dtype": "torch.float32", "using_tf32": False, "m": 512, "n": 129,
             "k": 8 * per_tile[False] + 1}
        self.assertEqual(choices.output_tiles(512, 129), 8)
        self.assertEqual(choices.one_aten(both, f), "aten::addmm")
        self.assertEqual(choices.one_aten(both, dict(f, m=choices.EXPANDED_BIAS_MIN_M, k=2 * per_tile[False] + 1)),
                         "aten::addmm")
        for other in ({"m": choices.EXPANDED_BIAS_MIN_M - 1}, {"k": f["k"] - 1}, {"n": 257},
                      {"using_tf32": "not_float_32", "mat1_dtype": "torch.bfloat16"}, {"op": "mm"}):
            self.assertEqual(choices.one_aten(both, f | other), "aten::bias_addmm", other)
        # with TF32: K_PER_TILE[True] per tile, over at most 16 tiles
        t = dict(f, using_tf32=True, k=8 * per_tile[True] + 1)
        self.assertEqual(choices.one_aten(both, t), "aten::addmm")
        self.assertEqual(choices.one_aten(both, dict(t, k=t["k"] - 1)), "aten::bias_addmm")
        wide = dict(t, m=1024, n=257, k=10**6)  # 8 x 3 = 24 tiles
        self.assertEqual(choices.one_aten(both, wide), "aten::bias_addmm")
        self.assertEqual(choices.one_aten(both, dict(wide, using_tf32=False)), "aten::addmm")
        self.assertEqual(choices.one_aten(both), "aten::bias_addmm")

    def test_one_aten_prefers_bias_addmm_else_the_first(self):
        self.assertEqual(choices.one_aten(["triton::mm", "aten::addmm", "aten::bias_addmm"]), "aten::bias_addmm")
        self.assertEqual(choices.one_aten(["triton::mm", "aten::addmm"]), "aten::addmm")
        self.assertIsNone(choices.one_aten(["triton::mm", "decompose_k"]))
        self.assertEqual(choices.aten_order(["aten::addmm", "triton::mm", "aten::bias_addmm"]),
                         ["aten::bias_addmm", "aten::addmm"])

    def test_baddbmm_is_decided_as_bmm(self):
        seen = []
        rt = choices.Runtime(HEURISTIC, lambda f: seen.append(f["op"]) or ("extern", ()))
        rt.active = True
        ki = StubInputs([operand(16, 64, False, batch=4), operand(16, 64, False, batch=4), operand(64, 32, False, batch=4)])
        tc = {"aten::baddbmm": iter([ktc("aten::baddbmm")]), "triton::bmm": iter([ktc("triton::bmm", **TILE)])}
        with fake_torch():
            out = rt.finalize(self.inner, tc, ki, templates_of(tc), "baddbmm", None)
        self.assertEqual((seen, names(out)), (["bmm"], ["extern_baddbmm"]))

    def test_keep_matches_a_bmm_config_by_its_mm_name(self):
        rt = choices.Runtime(HEURISTIC, lambda f: ("keep", (TILE_NAME,)))
        rt.active = True
        ki = StubInputs([operand(64, 32, False, batch=4), operand(32, 128, False, batch=4)])
        other = dict(TILE, BLOCK_M=128)
        tc = {"aten::bmm": iter([ktc("aten::bmm")]),
              "triton::bmm": iter([ktc("triton::bmm", **TILE), ktc("triton::bmm", **other)])}
        with fake_torch():
            out = rt.finalize(self.inner, tc, ki, templates_of(tc), "bmm", None)
        self.assertEqual(names(out), ["extern_bmm", TILE_NAME.replace("triton_mm_", "triton_bmm_")])
        self.assertEqual(rt.stats()["keep"], 1)

    def test_keep_of_the_decompose_k_family_keeps_every_split_offered(self):
        rt = choices.Runtime(HEURISTIC, lambda f: ("keep", ("subgraph_decompose_k",)))
        rt.active = True
        tc = {"aten::mm": iter([ktc("aten::mm")]),
              "triton::mm": iter([ktc("triton::mm", **TILE)]),
              "decompose_k": iter([ktc("decompose_k", k_split=s) for s in (2, 8, 32)])}
        with fake_torch():
            out = rt.finalize(self.inner, tc, mm_inputs(64, 65536, 64), templates_of(tc), "mm", None)
        self.assertEqual(names(out), ["extern_mm"] + [f"subgraph_decompose_k_ksplit={s}" for s in (2, 8, 32)])
        self.assertEqual(rt.stats()["keep"], 1)

    def test_keep_keeps_the_config_inductor_sized_for_a_small_gemm(self):
        # 16 x 64 x 32 per batch entry: Inductor offers TILE (64 x 32 x 128, 4 warps) as
        # 16 x 32 x 32 with 2 warps, and the kept TILE keeps that one.
        rt = choices.Runtime(HEURISTIC, lambda f: ("keep", (TILE_NAME,)))
        rt.active = True
        ki = StubInputs([operand(16, 64, False, batch=4), operand(64, 32, False, batch=4)])
        sized = dict(TILE, BLOCK_M=16, BLOCK_N=32, num_warps=2)
        other = dict(sized, num_stages=2)
        tc = {"aten::bmm": iter([ktc("aten::bmm")]),
              "triton::bmm": iter([ktc("triton::bmm", **other), ktc("triton::bmm", **sized)])}
        with fake_torch():
            out = rt.finalize(self.inner, tc, ki, templates_of(tc), "bmm", None)
        want = naming.sized_config(TILE_NAME, 16, 32, 64).replace("triton_mm_", "triton_bmm_")
        self.assertEqual(names(out), ["extern_bmm", want])
        self.assertIn("BLOCK-M=16", want)

    def test_sized_config_clamps_blocks_and_warps_as_inductor(self):
        c = "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=8_GROUP-M=8"
        self.assertEqual(naming.sized_config(c, 4096, 4096, 4096), c)
        self.assertEqual(naming.sized_config(c, 1, 33, 20),
                         "triton_mm_BLOCK-M=16_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=4_GROUP-M=8")
        self.assertEqual(naming.sized_config(c, 100, 17, 9),
                         "triton_mm_BLOCK-M=64_BLOCK-K=16_BLOCK-N=32_numstages=5_numwarps=8_GROUP-M=8")
        self.assertEqual(naming.sized_config(c, 3, 5, 4096),
                         "triton_mm_BLOCK-M=16_BLOCK-K=32_BLOCK-N=16_numstages=5_numwarps=1_GROUP-M=8")
        self.assertEqual(naming.sized_configs([c, c.replace("N=64", "N=128")], 1, 33, 20),
                         [naming.sized_config(c, 1, 33, 20)])
        for name in ("extern_mm", "subgraph_decompose_k_ksplit=2", "triton_mm_persistent_tma_BLOCK-M=128_BLOCK-K=64_BLOCK-N=128",
                     "triton_mm_BLOCK-M=64_BLOCK-K=x_BLOCK-N=64", "triton_mm_BLOCK-M=64_numwarps=4",
                     "triton_mm_BLOCK-M=-64_BLOCK-K=32_BLOCK-N=64", "triton_mm_BLOCK-M=+64_BLOCK-K=32_BLOCK-N=64",
                     "triton_mm_BLOCK-M=1234567890123456789_BLOCK-K=32_BLOCK-N=64",
                     "triton_mm_BLOCK-M=64_BLOCK-M=32_BLOCK-K=32_BLOCK-N=64", "t1"):
            self.assertEqual(naming.sized_config(name, 1, 1, 1), name)

    def test_config_name_reads_bmm_as_mm_a_split_as_its_family_and_nothing_else(self):
        self.assertEqual(naming.config_name("triton_bmm_BLOCK-M=64"), "triton_mm_BLOCK-M=64")
        self.assertEqual(naming.config_name("subgraph_decompose_k_ksplit=2"), "subgraph_decompose_k")
        for name in ("triton_mm_BLOCK-M=64", "extern_bmm", "subgraph_decompose_kx", "triton_bmmx"):
            self.assertEqual(naming.config_name(name), name)

    def test_other_ops_pass_through(self):
        for op in ("mm-ah", "int_mm", "scaled_mm", "mm_plus_mm"):
            out = self.run_op(mm_inputs(16, 64, 64), op=op)
            self.assertEqual(len(out), 4, op)
        self.assertEqual(self.rt.stats()["other_op"], 4)
        self.assertEqual(self.rt.stats()["extern"], 0)

    def test_op_not_in_heuristic_passes_through(self):
        rt = choices.Runtime(dict(HEURISTIC, ops=("mm",)), decide_by_m)
        rt.active = True
        tc = mm_choices()
        with fake_torch():
            out = rt.finalize(self.inner, tc, mm_inputs(16, 64, 64), templates_of(tc), "bmm", None)
        self.assertEqual(len(out), 4)

    def test_symbolic_sizes_are_skipped(self):
        ki = StubInputs([((Sym(), 64), (64, 1), "torch.bfloat16"), operand(64, 64, False)], hint=lambda v: 8 if isinstance(v, Sym) else v)
        out = self.run_op(ki)
        self.assertEqual(len(out), 4)
        self.assertEqual(self.rt.stats()["skipped"], 1)

    def test_inactive_passes_through(self):
        self.rt.active = False
        self.assertEqual(len(self.run_op(mm_inputs(16, 64, 64))), 4)
        self.assertEqual(sum(self.rt.stats().values()), 0)

    def test_keep_without_a_match_keeps_cublas(self):
        rt = choices.Runtime(HEURISTIC, lambda f: ("keep", ("triton_mm_nonexistent",)))
        rt.active = True
        tc = mm_choices()
        with fake_torch():
            out = rt.finalize(self.inner, tc, mm_inputs(512, 64, 64), templates_of(tc), "mm", None)
        self.assertEqual(names(out), ["extern_mm"])

    def test_keep_whose_configs_cannot_run_at_the_width_keeps_inductors_list(self):
        # 128 x 128 x 128 at 4 stages: 4 x (128 x 128 + 128 x 128) x 2 bytes = 256 KiB in bf16,
        # 512 KiB in fp32, beyond the H100's 227 KiB; 64 x 32 x 128 at 3 stages fits either.
        big = dict(TILE, BLOCK_M=128, BLOCK_K=128, BLOCK_N=128, num_stages=4, num_warps=8)
        big_name = naming.choice_name("triton::mm", big)
        heuristic = dict(HEURISTIC, shared_memory=232448)

        def run(decision, dtype, heuristic=heuristic):
            rt = choices.Runtime(heuristic, lambda f: decision)
            rt.active = True
            tc = {"aten::mm": iter([ktc("aten::mm")]),
                  "triton::mm": iter([ktc("triton::mm", **TILE), ktc("triton::mm", **big)])}
            with fake_torch():
                out = rt.finalize(self.inner, tc, mm_inputs(4096, 4096, 4096, dtype=dtype), templates_of(tc), "mm", None)
            return names(out), rt.stats()

        out, stats = run(("keep", (big_name,)), "torch.float32")
        self.assertEqual((out, stats["unfit"], stats["keep"]), (["extern_mm", TILE_NAME, big_name], 1, 0))
        self.assertEqual(run(("keep", (big_name,)), "torch.bfloat16")[0], ["extern_mm", TILE_NAME, big_name])
        # One config that fits is enough to keep the list; without a limit nothing changes.
        self.assertEqual(run(("keep", (big_name, TILE_NAME)), "torch.float32")[0], ["extern_mm", TILE_NAME, big_name])
        self.assertEqual(run(("keep", (big_name,)), "torch.float32", HEURISTIC)[0], ["extern_mm", big_name])
        self.assertEqual(run(("keep", (TILE_NAME,)), "torch.float32")[0], ["extern_mm", TILE_NAME])

    def test_pipeline_bytes_counts_each_operands_tiles_per_stage(self):
        c = "triton_mm_BLOCK-M=128_BLOCK-K=64_BLOCK-N=32_numstages=5_numwarps=8_GROUP-M=8"
        self.assertEqual(naming.pipeline_bytes(c, 4, 2), 5 * (128 * 64 * 4 + 64 * 32 * 2))
        for name in ("extern_mm", "subgraph_decompose_k", "triton_mm_persistent_tma_BLOCK-M=128_BLOCK-K=64_BLOCK-N=128",
                     "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=64_numwarps=4", "triton_mm_BLOCK-M=64_BLOCK-K=x_BLOCK-N=64_numstages=2"):
            self.assertIsNone(naming.pipeline_bytes(name, 4, 4))
        f = {"mat1_dtype": "torch.float32", "mat2_dtype": "torch.float32"}
        self.assertFalse(naming.none_fit([], f, 232448))
        self.assertTrue(naming.none_fit([c.replace("N=32", "N=128")], f, 232448))
        self.assertFalse(naming.none_fit([c.replace("N=32", "N=128"), "subgraph_decompose_k"], f, 232448))
        self.assertFalse(naming.none_fit([c.replace("N=32", "N=128")], dict(f, mat1_dtype="torch.int8"), 232448))

    def test_extern_without_aten_keeps_everything(self):
        tc = mm_choices()
        del tc["aten::mm"]
        out = self.run_op(mm_inputs(16, 64, 64), tc=tc)
        self.assertEqual(len(out), 3)
        self.assertEqual(self.rt.stats()["empty"], 1)


class Failures(unittest.TestCase):
    def check_falls_back(self, rt, ki):
        rt.active = True
        tc = mm_choices()
        inner = FakeInductorChoices()._finalize_template_configs
        with fake_torch(), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):
                tc = mm_choices()
                out = rt.finalize(inner, tc, ki, templates_of(tc), "mm", None)
                self.assertEqual(len(out), 4)
        self.assertEqual(rt.stats()["error"], 3)
        self.assertEqual(len(w), 1)  # warned once
        self.assertIn("Inductor's own GEMM choices", str(w[0].message))

    def test_decide_raises(self):
        def boom(f):
            raise KeyError("no such feature")

        self.check_falls_back(choices.Runtime(HEURISTIC, boom), mm_inputs(16, 64, 64))

    def test_decide_returns_garbage(self):
        self.check_falls_back(choices.Runtime(HEURISTIC, lambda f: ("prune", ())), mm_inputs(16, 64, 64))

    def test_features_raise(self):
        ki = mm_inputs(16, 64, 64)
        ki.mnk_hinted = lambda: (_ for _ in ()).throw(AssertionError("K dimensions don't match"))
        self.check_falls_back(choices.Runtime(HEURISTIC, decide_by_m), ki)

    def test_inner_errors_are_inductors(self):
        rt = choices.Runtime(HEURISTIC, decide_by_m)
        rt.active = True

        def inner(*a):
            raise ValueError("Inductor's own")

        with fake_torch(), self.assertRaises(ValueError):
            rt.finalize(inner, mm_choices(), mm_inputs(512, 64, 64), [], "mm", None)
