"""The runtime of a learned GEMM heuristic installed as Inductor's `InductorChoices` handler.

A generated handler module is: a header, the sources of ``naming.py``, ``ptxas.py`` and
``retime.py``, the source of this file, then the learned tree, which defines two globals:

    HEURISTIC = {"name": "InductorMMH100", "device_capa": (9, 0), "torch": "2.11",
                 "ops": ("mm", "addmm", "bmm"), "shared_memory": 232448}

    def decide(f):
        # f: m, k, n, batch, op, mat1_dtype, mat2_dtype, mat1_stride_0, mat1_stride_1,
        #    mat2_stride_0, mat2_stride_1, mat1_iscontig, mat2_iscontig, using_tf32
        if f["m"] <= 64:
            return ("extern", ())
        return ("keep", ("triton_mm_BLOCK-M=128_BLOCK-K=64_BLOCK-N=128_numstages=3_numwarps=8_GROUP-M=8",))

The module-level `install()`, `uninstall()`, `stats()`, `reset_stats()` and `decisions()` read
those globals at call time, so they may be defined after this source. `Runtime(heuristic,
decide)` does the same for a heuristic given explicitly (tests, or two heuristics in one
process).

What a decision does, before any Triton template code is generated (Inductor's
`_finalize_template_configs` sees lazy `KernelTemplateChoice`s):
- ``("extern", ())``: one ATen/cuBLAS choice (`one_aten`: the call Inductor makes without
  max-autotune, but for some fp32 addmm, `expanded_bias_call`) is handed to the
  inner handler; the generators of the other templates are never iterated, and with a single
  choice Inductor benchmarks nothing.
- ``("keep", names)``: that ATen choice plus the Triton/subgraph choices whose `ktc_name`, read
  by `config_name` (a `bmm` config is named as the same `mm` config), is one of names as
  Inductor sizes them to this GEMM (`sized_config`: a config learned on large GEMMs keeps the
  smaller-tiled config Inductor offers a small one in its place). Where every template
  choice so kept is a Triton `mm` config whose pipeline needs more shared memory than the
  device has at this GEMM's operand width (`none_fit`, with ``HEURISTIC["shared_memory"]``:
  a list learned on 16-bit GEMMs reached by an fp32 one), those configs would fail to run and
  leave cuBLAS alone: Inductor's list unchanged instead, counted as "unfit".
- ``("default", ())``: Inductor's list unchanged.
- ``("drop", names)``: Inductor's list without the Triton/subgraph choices whose `ktc_name`,
  read by `config_name`, is one of names as Inductor offers them to this GEMM (not sized: the
  names are configs that never came near the best on the training GEMMs of their kind,
  ``ah-prune --fp32-drop-never-near``); every ATen choice stays.
- With ``install(warm_splits=True)`` (the default) the re-timing times a lowering that offers
  `decompose_k`'s splits whole, splits included, on warm operands (no L2 flush);
  ``install(warm_splits=False)`` re-times it as every other lowering.
- With ``install(warm_no_bias=True)`` (the default) the re-timing times every `mm` and `bmm`
  lowering it re-times on warm operands too; `addmm` and `baddbmm` stay flushed.
- With ``install(narrow_search=True)`` (the default since its blind check: docs/results.md,
  forty-fifth session) an `extern` decision on a linear layer to a narrow output
  (`narrow_linear`: MoE routers, classifier heads, LoRA's lora_A, low-rank gates) is `default`;
  ``install(narrow_search=False)`` leaves it cuBLAS only.
- With ``install(small_bmm_search=True)`` (the default since its blind check: docs/results.md,
  forty-seventh session) an `extern` decision on a `bmm` with a side of at most 64
  (`small_side_bmm`: decode attention, MoE experts with few tokens, head dims of 64) is
  `default`; ``install(small_bmm_search=False)`` leaves it cuBLAS only.
- With ``install(one_aten_search=True)`` (the default since its blind check: docs/results.md,
  forty-eighth session) `default` and `drop` keep only `one_aten`'s ATen choice, as `extern`
  and `keep` do: of addmm's two cuBLAS calls, the one the bias rule (`expanded_bias_call`)
  picks, not the one Inductor's benchmark or the re-timing reads faster (neither sees the
  copy of the bias into the output that the expanded call makes in compiled truth);
  ``install(one_aten_search=False)`` leaves both to the search.
- With ``install(bias_head_search=True)`` (the default since its blind check: docs/results.md,
  forty-ninth session) an `extern` decision on a half-precision linear with bias over 128 to
  256 rows with a long input (`bias_head`: classifier heads at a batch of 128-256, biased
  layers over a short prompt) is `default`; ``install(bias_head_search=False)`` leaves it
  cuBLAS only.
- With ``install(half_unaligned_bias=True)`` (the default since its blind check:
  docs/results.md, sixty-first session) the bias rule also gives the expanded call to a bf16 or
  fp16 addmm of at least 32 rows whose contraction is long and not a multiple of 8
  (`half_unaligned_addmm`), where the 1-D call's epilogue ran up to 4.6x slower on the H200;
  ``install(half_unaligned_bias=False)`` keeps the 1-D call there.
- With ``install(fp32_small_search=True)`` (the default since its blind check: docs/results.md,
  sixty-second session) an `extern` decision on an fp32 `mm` or `addmm`, TF32 or not, of at
  most 2**31 multiply-adds (`fp32_small`: RL critics, GNN layers, detection heads, small linears
  trained in fp32) is `default`; ``install(fp32_small_search=False)`` leaves it cuBLAS only.
- With ``install(half_few_rows_search=True)`` an `extern` decision on a bf16 or fp16 `mm` or
  `addmm` of at most 256 rows and 2**31 multiply-adds (`half_few_rows`: decode steps,
  small-batch heads) is `default`. It is off by default (OFF_BY_DEFAULT): it passed its blind
  check on warm operands (sixty-third session) and failed it on streamed ones, as a decode step
  reads its weights (docs/results.md, sixty-fourth session).
- With ``install(streamed_few_rows=True)`` (off by default: a candidate of the sixty-fourth
  session, with `half_few_rows_search` its check's subject) the re-timing times a bf16 or fp16
  `mm` or `addmm` lowering of few rows (`few_rows_lowering`) on operands streamed from HBM
  (retime.py), so that the search picks what runs fastest where weights come from HBM.
- Four `install()` options that failed the checks registered before their data (`one_aten`,
  `narrow_search`, `warm_all`, `decode_search`) were removed in the forty-third session;
  `narrow_search` came back in the forty-fifth, since the re-timing that its recheck lacked has
  shipped, and passed a blind check; `one_aten` in the forty-eighth as `one_aten_search`, which
  passed one too; `expert_bmm_search` (MoE experts as a `bmm` over 65-256 tokens searched)
  failed its blind check and was removed in the fifty-third. docs/inductor.md says what each
  did and what it measured.

`install()` reaches every graph, the backward graph compiled in autograd's thread included:
it sets ``torch._inductor.config.inductor_choices_class`` to a `ChoicesFactory` (handlers made
lazily in new threads, and part of the FX graph cache key), wraps the current thread's handler,
and wraps any other thread's handler the next time Inductor asks that thread for it (handlers made
before `install()`, e.g. in autograd's device thread by an earlier compile). A handler the user
already has is wrapped, not replaced: the heuristic narrows the list that handler returns.

`install()` also points this process's Triton at the ptxas of Inductor's compile workers unless
``TRITON_PTXAS_PATH`` is set (``ptxas.py``: on PyTorch 2.11 with CUDA 13 the two differ, and every
template the workers precompiled is compiled again, serially, in the benchmark phase);
``install(align_ptxas=False)`` leaves Triton alone, and `uninstall()` undoes it.
`install()` also times the choices of small GEMMs that max-autotune still searches again by
CUDA graph, before Inductor picks (``retime.py``: Inductor's benchmark reads cuBLAS's call at its
CPU submit time, about 25 us); ``install(retime=False)`` leaves Inductor's timings as they are.

It refuses (warns once, returns False) when the CUDA device capability or PyTorch's major.minor
differ from the heuristic's, unless the environment sets ``AH_INDUCTOR_CHOICES_FORCE=1``. It
never raises into Inductor: a failure in the features or the decision keeps Inductor's list.
"""

import hashlib
import os
import threading
import types
import warnings
import weakref

try:
    ktc_name, config_name, none_fit, sized_configs  # noqa: B018 - defined when pasted after naming.py's source
except NameError:
    from ah_inductor.naming import config_name, ktc_name, none_fit, sized_configs
try:
    ptxas_align, ptxas_restore  # noqa: B018 - defined when pasted after ptxas.py's source
except NameError:
    from ah_inductor.ptxas import ptxas_align, ptxas_restore
try:
    retime_install, retime_uninstall  # noqa: B018 - defined when pasted after retime.py's source
except NameError:
    from ah_inductor.retime import retime_install, retime_uninstall

FORCE_ENV = "AH_INDUCTOR_CHOICES_FORCE"
KINDS = ("extern", "keep", "default", "drop")
# Inductor's op names (the `name` its lowerings pass to `get_template_configs`) -> the logged `op`.
OP_NAMES = {"mm": "mm", "addmm": "addmm", "bmm": "bmm", "baddbmm": "bmm"}
# What `stats()` counts: decisions by kind; "skipped": an op of the heuristic whose features
# cannot be computed (symbolic sizes); "other_op": an op the heuristic does not handle;
# "error": features or decision failed (Inductor's list kept); "empty": a decision that would
# have left no choice at all (Inductor's list kept); "unfit": a kept list whose template choices
# cannot run on the device (`none_fit`; Inductor's list kept).
STAT_KEYS = KINDS + ("skipped", "other_op", "error", "empty", "unfit")
# `decisions()` keeps the most recent this many (features, decision) records: a model compiles
# hundreds of GEMM lowerings at most, and a long-lived process must not grow without bound.
DECISION_LOG = 10000

_MARK = "_ah_choices_runtime"
_INNER = "_ah_choices_inner"
_WRAPPED = ("_finalize_template_configs", "uuid")  # the instance attributes wrap() sets
_RUNTIMES = {}  # key -> Runtime: how a pickled ChoicesFactory finds its runtime


class Symbolic(Exception):
    """A size or stride that is not a plain integer (dynamic shapes)."""


def _static(value):
    """`value` as an int; raises Symbolic for a symbolic size (sympy expression, SymInt)."""
    if isinstance(value, bool):
        raise Symbolic(repr(value))
    if isinstance(value, int):
        return value
    if getattr(value, "free_symbols", None):
        raise Symbolic(str(value))
    try:
        return int(value)
    except (TypeError, ValueError) as e:
        raise Symbolic(str(value)) from e


def is_contiguous(rows, cols, stride_0, stride_1):
    """PyTorch's is_contiguous of a rows x cols matrix with strides (stride_0, stride_1)."""
    return (cols == 1 or stride_1 == 1) and (rows == 1 or stride_0 == cols)


def using_tf32(dtype_name):
    """The `using_tf32` feature: for float32, whether matmuls may use TF32 (PyTorch 2.11 reads
    ``fp32_precision == "tf32"``, older ones ``allow_tf32``); "not_float_32" otherwise."""
    if dtype_name != "torch.float32":
        return "not_float_32"
    import torch

    matmul = torch.backends.cuda.matmul
    precision = getattr(matmul, "fp32_precision", None)
    if isinstance(precision, str):
        return precision == "tf32"
    return bool(matmul.allow_tf32)


def features(kernel_inputs, op):
    """The logged features of the GEMM `kernel_inputs` (an `MMKernelInputs`) for logged op `op`."""
    n_nodes = len(kernel_inputs.nodes())
    i1 = getattr(kernel_inputs, "_mat1_idx", -2) % n_nodes
    i2 = getattr(kernel_inputs, "_mat2_idx", -1) % n_nodes
    symbolic_shapes = kernel_inputs.shapes_symbolic()
    symbolic_strides = kernel_inputs.strides_symbolic()
    for i in (i1, i2):
        for v in tuple(symbolic_shapes[i]) + tuple(symbolic_strides[i]):
            _static(v)
    m, n, k = (_static(v) for v in kernel_inputs.mnk_hinted())
    strides = kernel_inputs.strides_hinted()
    s10, s11 = (_static(v) for v in tuple(strides[i1])[-2:])
    s20, s21 = (_static(v) for v in tuple(strides[i2])[-2:])
    dtypes = kernel_inputs.dtypes()
    d1, d2 = str(dtypes[i1]), str(dtypes[i2])
    return {
        "m": m,
        "k": k,
        "n": n,
        "batch": _static(kernel_inputs.batch_hinted()),
        "op": op,
        "mat1_dtype": d1,
        "mat2_dtype": d2,
        "mat1_stride_0": s10,
        "mat1_stride_1": s11,
        "mat2_stride_0": s20,
        "mat2_stride_1": s21,
        "mat1_iscontig": is_contiguous(m, k, s10, s11),
        "mat2_iscontig": is_contiguous(k, n, s20, s21),
        "using_tf32": using_tf32(d1),
    }


def is_aten(uid):
    """Whether template uid `uid` is an `ExternKernelChoice` (ATen/cuBLAS)."""
    return str(uid).startswith("aten::")


# ATen templates preferred when Inductor offers several for one GEMM. `bias_addmm` is addmm with
# the 1-D bias (cuBLASLt's bias epilogue), the call Inductor makes without max-autotune; its
# `aten::addmm` choice gets the bias expanded to 2-D, which makes ATen copy it into the output
# first. On the H100 the 1-D call is the faster of the two on 137 of 155 bf16, 140 of 155 fp16 and
# 129 of 155 TF32 GEMMs of a grid (scripts/probe_addmm_bias.py, data/addmm_bias_h100.jsonl).
# `ah_train::prune` models the same choice (PREFERRED_EXTERN there).
ATEN_FIRST = ("aten::bias_addmm",)
# fp32 addmm is the exception: there the expanded call (ATen copies the bias into the output, then
# cuBLAS's GEMM with beta 1, which may split k) wins where k is long for the output's size, and by
# up to 3.7x; the 1-D call's epilogue kernels elsewhere, by up to 7.8x. Measured as "k per output
# tile" (tiles of 128 x 128): the expanded call is kept for m >= 16 and k > 32 per tile without
# TF32, and k > 512 per tile over at most 16 tiles with TF32. Inductor's own benchmark of the two
# is no judge: it misorders 8 of the 28 logged ones, by up to 2.2x. `ah_train::prune` scores the
# expanded call with the 1-D call's compiled truth (the logs hold no other), a pessimistic
# estimate there. How the bounds were chosen (scripts/bias_rule.py over the probe files, each
# scripts/probe_addmm_bias.py's; "slow" is more than 3 % behind the faster call):
# - Thirty-second session, on data/addmm_bias_h100.jsonl (a grid, the logged GEMMs, held-out sets
#   10-24) and data/addmm_bias_longk_h100.jsonl (contractions of 8k-64k): `k >= 16` and `k >= 128`
#   per tile, slow on 44 of 529 fp32 GEMMs against 105 for the rule before it and 232 for the 1-D
#   call always; on held-out sets 25-33, 3 of 37 against 4.
# - Thirty-fifth session, by rules registered before their data (docs/results.md):
#   data/addmm_bias_boundary_h100.jsonl put k exactly on those bounds, where the 1-D call won on
#   54 of 60 TF32 GEMMs (the expanded call on 6) and on 56 of 80 without (18), so `>` replaced
#   `>=`: slow picks over the three files 157 -> 70. data/addmm_bias_pertile_h100.jsonl put k at
#   1.5-8 times the bounds; over the four files (1543 fp32 GEMMs) the fewest slow picks came at
#   4x with TF32 (103 of 693, against 199 at 1x) and 2x without (206 of 850, against 237), so the
#   bounds became 512 and 32. On the 120 held-out and logged GEMMs among them: slow 8 against 10,
#   but the worst from 1.42x to 2.56x (a 20 x 113 x 512 fp32 addmm, a few microseconds).
# - Thirty-sixth session, registered before its data: data/addmm_bias_smallm_h100.jsonl put m at
#   16-56 over other widths. Over the five files (1895 fp32 GEMMs) the smallest m of 16 is slow
#   on 367 (24: 378, 32: 433, 48: 517, 64: 561), so EXPANDED_BIAS_MIN_M stays 16.
# For bf16 and fp16 no such rule beat the 1-D call always.
EXPANDED_BIAS_MIN_M, EXPANDED_BIAS_TILE = 16, 128
EXPANDED_BIAS_K_PER_TILE = {False: 32, True: 512}  # by `using_tf32`
EXPANDED_BIAS_MAX_TILES_TF32 = 16
HALF_DTYPES = ("torch.float16", "torch.bfloat16")
# But for one corner of them, `install(half_unaligned_bias=True)` (`half_unaligned_addmm`): a
# bf16 or fp16 addmm of at least HALF_UNALIGNED_MIN_M rows whose k is not a multiple of
# HALF_ALIGN elements (rows of A not 16-byte aligned) and at least HALF_UNALIGNED_MIN_K.
# - Sixtieth session, on the H200 (data/addmm_bias_half_unaligned_h200.jsonl, after blind set
#   74's cryoDRGN addmm 8 x 51433 x 1024 fp16 ran its 1-D call 1.33x the expanded one): with k
#   unaligned and at least 4097 the 1-D call was more than 3 % slower on 158 of 220 GEMMs, up to
#   4.63x, and on 21 of 182 aligned controls.
# - Sixty-first session, by grids registered before their data (docs/results.md): without a
#   smallest m the corner failed the first (data/addmm_bias_half_unaligned_check_h200.jsonl: 30
#   slow picks against 80 for the 1-D call always, but 12 new ones of its 82 GEMMs, 11 of them at
#   m 4; on the grid above, 25 of its 32 new ones are at m below 32). From m 32 on
#   (HALF_UNALIGNED_MIN_M) it passed the second (data/addmm_bias_half_unaligned_recheck_h200.jsonl:
#   89 slow picks against 182, 4 new of its 110, at most 1.07x), so it is the default. On the
#   H100's probe files, 3 GEMMs in the corner: one slow pick fewer, none new.
HALF_ALIGN = 8
HALF_UNALIGNED_MIN_K = 4097
HALF_UNALIGNED_MIN_M = 32


def output_tiles(m, n):
    """The 128 x 128 tiles of an m x n output (EXPANDED_BIAS_TILE)."""
    return -(-m // EXPANDED_BIAS_TILE) * -(-n // EXPANDED_BIAS_TILE)


def half_unaligned_addmm(f):
    """Whether features `f` are a bf16 or fp16 addmm of at least HALF_UNALIGNED_MIN_M rows with k
    not a multiple of HALF_ALIGN and at least HALF_UNALIGNED_MIN_K."""
    k = f.get("k", 0)
    return (f.get("op") == "addmm" and f.get("mat1_dtype") in HALF_DTYPES and k % HALF_ALIGN != 0
            and k >= HALF_UNALIGNED_MIN_K and f.get("m", 0) >= HALF_UNALIGNED_MIN_M)


def expanded_bias_call(f, k_per_tile=None, min_m=None, half_unaligned=True):
    """Whether the GEMM of features `f` is an fp32 addmm that the expanded-bias call runs faster
    (see EXPANDED_BIAS_*; `k_per_tile`, by `using_tf32`, and `min_m` in place of
    EXPANDED_BIAS_K_PER_TILE and EXPANDED_BIAS_MIN_M judge other bounds: scripts/bias_rule.py),
    or, with `half_unaligned` (install(half_unaligned_bias=True), the default), a
    `half_unaligned_addmm`."""
    if half_unaligned and half_unaligned_addmm(f):
        return True
    tf32 = f.get("using_tf32")
    if f.get("op") != "addmm" or f.get("mat1_dtype") != "torch.float32" or tf32 not in (True, False):
        return False
    m, k, n = f.get("m", 0), f.get("k", 0), f.get("n", 0)
    tiles = output_tiles(m, n)
    if m < (min_m or EXPANDED_BIAS_MIN_M) or (tf32 and tiles > EXPANDED_BIAS_MAX_TILES_TF32):
        return False
    return k > (k_per_tile or EXPANDED_BIAS_K_PER_TILE)[tf32] * tiles


def aten_first(f, half_unaligned=True):
    """The ATen template uids `one_aten` prefers, in order, for the GEMM of features `f` (with
    `half_unaligned`: as `expanded_bias_call`'s)."""
    if f is not None and expanded_bias_call(f, half_unaligned=half_unaligned):
        return ("aten::addmm",) + ATEN_FIRST
    return ATEN_FIRST


def aten_order(uids, f=None, half_unaligned=True):
    """The ATen template uids of `uids` in the order they are tried for the GEMM of features
    `f`: those of `aten_first(f, half_unaligned)` offered, in its order, then the others as
    offered."""
    aten = [u for u in uids if is_aten(u)]
    first = [u for u in aten_first(f, half_unaligned) if u in aten]
    return first + [u for u in aten if u not in first]


def one_aten(uids, f=None, half_unaligned=True):
    """The one ATen template uid kept of `uids` for the GEMM of features `f`: the first of
    `aten_order`; None when there is none."""
    return next(iter(aten_order(uids, f, half_unaligned)), None)


# A linear layer to a narrow output (`narrow_linear`): MoE routers, classifier and regression
# heads, LoRA's lora_A; a kind `scripts/holdout_pool.py --only narrow-linears` scores apart. On
# the pooled blind sets 13-52 the handlers decided 25 such GEMMs cuBLAS only and 14 of them were
# over the bound (default max-autotune on 3 of the 25), against 2 of the 18 they left to
# Inductor's list; searching them instead (`narrow_search`, docs/results.md, thirty-seventh
# session) failed its recheck in the thirty-eighth, on three long contractions where the search
# took cuBLAS over a faster split that the re-timing of then did not time again. The re-timing
# shipped since (`warm_splits`) does; with it, on 24 blind narrow linears the tree decides
# cuBLAS only, the search was over the bound on 1 against 5 (forty-fifth session), and
# `install(narrow_search=True)` is the default.
NARROW_MAX_N = 64
NARROW_MIN_K = 512
NARROW_MAX_M = 16384


def narrow_linear(f):
    """Whether features `f` are a linear layer to a narrow output: not bmm, n <= NARROW_MAX_N,
    k >= NARROW_MIN_K, m <= NARROW_MAX_M."""
    return (f["op"] != "bmm" and f["n"] <= NARROW_MAX_N and f["k"] >= NARROW_MIN_K
            and f["m"] <= NARROW_MAX_M)


# A `bmm` with a side of at most SMALL_BMM_MAX_SIDE (`small_side_bmm`): a decode step's attention
# (one query), MoE experts run as `bmm` over few tokens, attention over heads of 64. On the pooled
# blind sets the shipped handler decides 21 such GEMMs cuBLAS only, and cuBLAS alone is over the
# bound on 11 of them (forty-sixth session; `scripts/holdout_pool.py --only small-bmm --handler`);
# `install(small_bmm_search=True)`, the default since its blind check (docs/results.md,
# forty-seventh session: over on 0 of 19 such GEMMs where cuBLAS alone was over on 9), leaves
# them to Inductor's list, re-timed.
SMALL_BMM_MAX_SIDE = 64


def small_side_bmm(f):
    """Whether features `f` are a `bmm` with a side (m, k or n of one matrix) of at most
    SMALL_BMM_MAX_SIDE."""
    return f["op"] == "bmm" and min(f["m"], f["k"], f["n"]) <= SMALL_BMM_MAX_SIDE


# A half-precision linear with bias over BIAS_HEAD_MIN_M to BIAS_HEAD_MAX_M rows, with an input
# of at least BIAS_HEAD_MIN_K and an output of at most BIAS_HEAD_MAX_N (`bias_head`): classifier
# heads at a batch of 128-256 images (2048 -> 1000), biased layers over a short prompt. Few
# output tiles over a long contraction; on the pooled blind sets 13-60 the shipped handler
# decides 5 such GEMMs cuBLAS only and cuBLAS alone is over the bound on all 5 (1.08x-1.23x),
# where default max-autotune's Triton pick is the best (forty-ninth session).
# `install(bias_head_search=True)` leaves them to Inductor's list, re-timed, the default since
# its blind check (docs/results.md, forty-ninth session: on 24 blind such GEMMs over the bound
# on 2 against the tree's 3, none new, 0.965x its run time; default max-autotune on 18).
BIAS_HEAD_MIN_M = 128
BIAS_HEAD_MAX_M = 256
BIAS_HEAD_MIN_K = 2048
BIAS_HEAD_MAX_N = 4096


def bias_head(f):
    """Whether features `f` are a half-precision `addmm` with BIAS_HEAD_MIN_M <= m <=
    BIAS_HEAD_MAX_M, k >= BIAS_HEAD_MIN_K and n <= BIAS_HEAD_MAX_N."""
    return (f["op"] == "addmm" and f.get("mat1_dtype") in HALF_DTYPES
            and BIAS_HEAD_MIN_M <= f["m"] <= BIAS_HEAD_MAX_M and f["k"] >= BIAS_HEAD_MIN_K
            and f["n"] <= BIAS_HEAD_MAX_N)


# An fp32 `mm` or `addmm` (strict or TF32) of at most FP32_SMALL_MAX_VOLUME multiply-adds
# (`fp32_small`): RL critics, GNN layers, detection heads, LSTM gates and small linears trained in
# fp32. On the fourteen pooled H200 blind sets 63-76 the shipped handler decides 20 such GEMMs
# cuBLAS only and is over the bound on 9 of them (1.07x-1.33x, all under 35 us), where default
# max-autotune's Triton pick is the best, against 9 over of the 179 half-precision `mm` and
# `addmm` it decides cuBLAS only (sixty-second session). `install(fp32_small_search=True)` leaves
# them to Inductor's list, re-timed, the default since its blind check (docs/results.md,
# sixty-second session: on 15 blind such GEMMs over the bound on 2 against the tree's 4, none
# new, 0.940x its run time, 5.2x less autotuning than default max-autotune's).
FP32_SMALL_MAX_VOLUME = 2**31


def fp32_small(f):
    """Whether features `f` are an fp32 `mm` or `addmm` (TF32 or not) with m * k * n <=
    FP32_SMALL_MAX_VOLUME."""
    return (f["op"] in ("mm", "addmm") and f.get("mat1_dtype") == "torch.float32"
            and f["m"] * f["k"] * f["n"] <= FP32_SMALL_MAX_VOLUME)


# A bf16 or fp16 `mm` or `addmm` of at most HALF_FEW_ROWS_MAX_M rows and HALF_FEW_ROWS_MAX_VOLUME
# multiply-adds (`half_few_rows`): a decode step's linears over 1-256 sequences, heads and
# projections at a small batch. On the fifteen pooled H200 blind sets 63-77 the shipped handler
# decides 27 such GEMMs cuBLAS only and is over the bound on 8 of them (1.04x-2.26x; seven under
# 12 us, one of 107 us), where default max-autotune's Triton pick is the best, against 1 over of
# the 164 other half-precision `mm` and `addmm` it decides cuBLAS only (sixty-third session).
# `install(half_few_rows_search=True)` leaves them to Inductor's list, re-timed. On 26 blind such
# GEMMs it was over the bound on 1 against the tree's 3 with the operands warm (sixty-third
# session), and on 3 against 0 with them streamed from HBM, as a decode step reads its weights
# (sixty-fourth session; 0.96x the tree's run time both ways): off by default (OFF_BY_DEFAULT).
HALF_FEW_ROWS_MAX_M = 256
HALF_FEW_ROWS_MAX_VOLUME = 2**31


def half_few_rows(f):
    """Whether features `f` are a bf16 or fp16 `mm` or `addmm` with m <= HALF_FEW_ROWS_MAX_M
    and m * k * n <= HALF_FEW_ROWS_MAX_VOLUME."""
    return (f["op"] in ("mm", "addmm") and f.get("mat1_dtype") in HALF_DTYPES
            and f["m"] <= HALF_FEW_ROWS_MAX_M
            and f["m"] * f["k"] * f["n"] <= HALF_FEW_ROWS_MAX_VOLUME)


def few_rows_lowering(name, input_nodes):
    """Whether the GEMM lowering the re-timing sees (Inductor's name for it, its input nodes:
    `mm`'s mat1 and mat2, `addmm`'s bias, mat1 and mat2) is of `half_few_rows`' kind, by its
    nodes' sizes and mat1's dtype; False where a size is symbolic. The test of
    install(streamed_few_rows=True)'s re-timing (retime.py)."""
    if name not in ("mm", "addmm") or len(input_nodes) < 2:
        return False
    mat1, mat2 = input_nodes[-2], input_nodes[-1]
    try:
        m, k = (_static(v) for v in tuple(mat1.get_size())[-2:])
        n = _static(tuple(mat2.get_size())[-1])
    except Symbolic:
        return False
    return half_few_rows({"op": name, "m": m, "k": k, "n": n, "mat1_dtype": str(mat1.get_dtype())})


# The searches that turn a cuBLAS-only (`extern`) decision on a kind of GEMM into `default`, each
# an install() option (on by default unless of OFF_BY_DEFAULT), with the kind it takes.
SEARCHED_KINDS = (("narrow_search", narrow_linear), ("small_bmm_search", small_side_bmm),
                  ("bias_head_search", bias_head), ("fp32_small_search", fp32_small),
                  ("half_few_rows_search", half_few_rows))
# install()'s options, in the order of the cache key's suffixes: the re-timing's three (which
# need `retime`), then the searches of SEARCHED_KINDS and the two that change what a list keeps
# (`one_aten_search`, `half_unaligned_bias`). Each is on unless given False, but those of
# OFF_BY_DEFAULT, off unless given True (`option_on`): an option that passed one blind check
# and failed a later one stays for whoever runs the workloads it passed on, and a candidate
# waits there for its check.
RETIME_OPTIONS = ("warm_splits", "warm_no_bias", "streamed_few_rows")
SEARCH_OPTIONS = ("narrow_search", "small_bmm_search", "one_aten_search", "bias_head_search",
                  "half_unaligned_bias", "fp32_small_search", "half_few_rows_search")
OFF_BY_DEFAULT = ("half_few_rows_search", "streamed_few_rows")


def option_on(options, name):
    """Whether install() option `name` is on among keyword arguments `options`: as given, else
    on unless it is of OFF_BY_DEFAULT."""
    return bool(options.get(name, name not in OFF_BY_DEFAULT))


def unknown_options(options, known):
    """Raises TypeError naming the keys of `options` not in `known`."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(unknown)} (known: {', '.join(known)})")


def installed(kind, names, f, **searches):
    """Decision `(kind, names)` on features `f` as `install()` applies it: an `extern` decision
    on a GEMM of a kind of SEARCHED_KINDS is `default` unless `searches` turns that search off
    (`narrow_search=False`: narrow linears, `narrow_linear`; `small_bmm_search`: a `bmm` with a
    small side; `bias_head_search`: a half-precision biased head; `fp32_small_search`: a small
    fp32 `mm` or `addmm`; `half_few_rows_search`, off by default: a half-precision `mm` or
    `addmm` of few rows).
    What a replay or a preview of the handler without torch decides with
    (scripts/holdout_replay.py, scripts/inductor_eval.py --dry-run)."""
    unknown_options(searches, [name for name, _ in SEARCHED_KINDS])
    if kind == "extern" and any(option_on(searches, name) and kind_of(f)
                                for name, kind_of in SEARCHED_KINDS):
        return "default", frozenset()
    return kind, names


def check_decision(decision):
    """`decide`'s answer as (kind, frozenset of names); raises ValueError on anything else."""
    kind, names = decision
    if kind not in KINDS:
        raise ValueError(f"decide returned kind {kind!r}, not one of {KINDS}")
    if isinstance(names, str):
        raise ValueError("decide's names must be a collection of names, not a string")
    return kind, frozenset(names)


def _code_digest(code, h):
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            _code_digest(c, h)
        elif isinstance(c, frozenset):  # a set literal: its order changes with the hash seed
            h.update(repr(sorted(map(repr, c))).encode())
        else:
            h.update(repr(c).encode())


def _plain(v):
    """Whether `v` is a constant whose repr is the same in every process."""
    if isinstance(v, (str, int, float, bool, type(None))):
        return True
    if isinstance(v, tuple):
        return all(map(_plain, v))
    return isinstance(v, dict) and all(_plain(k) and _plain(x) for k, x in v.items())


def _module_digest(decide, h):
    """The code of the functions and classes of the module `decide` is defined in, and its
    public upper-case constants: the runtime's rules (`one_aten` and the EXPANDED_BIAS_* bounds)
    and the template lists `decide` shares change what Inductor compiles as much as `decide`."""
    env = getattr(decide, "__globals__", None) or {}
    module = env.get("__name__")
    for name in sorted(env):
        v = env[name]
        if isinstance(v, (types.FunctionType, type)) and getattr(v, "__module__", None) == module:
            members = [v] if isinstance(v, types.FunctionType) else [m for _, m in sorted(vars(v).items())]
            h.update(name.encode())
            for f in members:
                if isinstance(f, types.FunctionType):
                    _code_digest(f.__code__, h)
        elif name.isupper() and not name.startswith("_") and _plain(v):
            h.update(f"{name}={v!r}".encode())


def fingerprint(heuristic, decide):
    """A stable id of the heuristic (its metadata, its decision code and the module around it:
    `_module_digest`), for cache keys; the same in every process."""
    if heuristic.get("fingerprint"):
        return str(heuristic["fingerprint"])
    h = hashlib.sha256(repr(sorted((str(k), repr(v)) for k, v in heuristic.items())).encode())
    code = getattr(decide, "__code__", None)
    if code is not None:
        _code_digest(code, h)
    _module_digest(decide, h)
    return h.hexdigest()[:16]


class ChoicesFactory:
    """What `install()` puts in ``torch._inductor.config.inductor_choices_class``: builds the
    previous factory's handler (or `InductorChoices()`) and wraps it. Defined at module level
    and holding only picklable state (the runtime's key and the previous factory), because
    Inductor's FX graph cache pickles its config; the key makes the cache tell our compiles apart.
    """

    def __init__(self, key, prev):
        self.key = key
        self.prev = prev

    def __call__(self):
        if self.prev is not None:
            handler = self.prev()
        else:
            from torch._inductor.choices import InductorChoices

            handler = InductorChoices()
        runtime = _RUNTIMES.get(self.key)
        return runtime.wrap(handler) if runtime is not None else handler

    def __eq__(self, other):
        return isinstance(other, ChoicesFactory) and (self.key, self.prev) == (other.key, other.prev)

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"ChoicesFactory({self.key!r}, {self.prev!r})"


class Runtime:
    """One heuristic (`heuristic` dict and `decide` function) as an `InductorChoices` wrapper."""

    def __init__(self, heuristic, decide):
        self.heuristic = dict(heuristic)
        self.decide = decide
        ops = set(self.heuristic.get("ops", ("mm", "addmm", "bmm")))
        self.ops = {name: op for name, op in OP_NAMES.items() if op in ops}
        self.key = f"{self.heuristic.get('name', 'heuristic')}-{fingerprint(self.heuristic, decide)}"
        self.active = False
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(STAT_KEYS, 0)
        self._decisions = []
        self._warned = set()
        self._wrapped = weakref.WeakSet()
        self._saved = None  # (config module, previous factory, virtualized `_choices`, hook)
        self._ptxas = None  # what `ptxas_align()` changed, for uninstall()
        self._retimer = None  # the feedback saver of install(retime=True), for uninstall()
        self._factory_key = self.key  # the key installed: `factory_key(retime, ...)`
        self._set_searches(False)  # each of SEARCH_OPTIONS an attribute, on only while installed
        _RUNTIMES[self.key] = self

    def _set_searches(self, on, options=None):
        """Each of SEARCH_OPTIONS as an attribute: `options`' value for it (`option_on`) when
        `on`, else off."""
        for name in SEARCH_OPTIONS:
            setattr(self, name, on and option_on(options or {}, name))

    # -- statistics and warnings -------------------------------------------------------------

    def count(self, kind):
        with self._lock:
            self._counts[kind] = self._counts.get(kind, 0) + 1

    def stats(self):
        """Decisions per kind since the last `reset_stats()` (see STAT_KEYS)."""
        with self._lock:
            return dict(self._counts)

    def reset_stats(self):
        with self._lock:
            self._counts = dict.fromkeys(STAT_KEYS, 0)
            self._decisions = []

    def record(self, f, kind, names):
        """Remembers one decision and the features it was made on (see `decisions()`)."""
        with self._lock:
            self._decisions.append(dict(f, decision=kind, kept=len(names)))
            del self._decisions[:-DECISION_LOG]

    def decisions(self):
        """The decisions since the last `reset_stats()`, oldest first (at most DECISION_LOG):
        each the features the heuristic saw, as Inductor handed it the GEMM (after its own
        rewrites, e.g. pad_mm's padding), plus `decision` (extern, keep, default or drop) and
        `kept` (how many template configs a keep named, or a drop left out)."""
        with self._lock:
            return [dict(d) for d in self._decisions]

    def warn_once(self, message):
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    # -- the decision inside Inductor --------------------------------------------------------

    def finalize(self, inner, template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
        """Our `_finalize_template_configs` around the inner handler's bound method `inner`."""
        args = (kernel_inputs, templates, op_name, kwarg_overrides)
        if not self.active:
            return inner(template_choices, *args)
        op = self.ops.get(op_name)
        if op is None:
            self.count("other_op")
            return inner(template_choices, *args)
        decided = self._decision(kernel_inputs, op)
        if decided is None:
            return inner(template_choices, *args)
        (kind, names), f = decided
        self.record(f, kind, names)
        if kind == "extern":
            return self._extern(inner, template_choices, args, f)
        result = inner(template_choices, *args)
        if kind == "keep":
            return self._keep(result, frozenset(sized_configs(names, f["m"], f["n"], f["k"])), f)
        if kind == "drop":
            return self._searched(self._drop(result, names), f)
        self.count("default")
        return self._searched(result, f)

    def _decision(self, kernel_inputs, op):
        """((kind, names), features), or None (counted) when the features or the decision
        fail."""
        try:
            f = features(kernel_inputs, op)
        except Symbolic:
            self.count("skipped")
            return None
        except Exception as e:  # noqa: BLE001 - never raise into Inductor
            return self._error("computing the GEMM's features", e)
        try:
            kind, names = check_decision(self.decide(f))
            searches = {name: getattr(self, name) for name, _ in SEARCHED_KINDS}
            return installed(kind, names, f, **searches), f
        except Exception as e:  # noqa: BLE001 - never raise into Inductor
            return self._error("deciding", e)

    def _error(self, what, e):
        self.count("error")
        self.warn_once(
            f"{self.heuristic.get('name')}: {what} failed ({type(e).__name__}: {e}); "
            "Inductor's own GEMM choices are used where this happens"
        )
        return None

    def _extern(self, inner, template_choices, args, f):
        """The first ATen choice, in `aten_order`, that the inner handler makes of its template
        alone; Inductor's whole list (counted as "empty") where none makes one. An offered
        template may make none: for the fp16 addmm 16384 x 4096 x 1 on PyTorch 2.11 Inductor
        offers `aten::bias_addmm` and makes no choice of it (blind set 42, line 34)."""
        kernel_inputs, templates, op_name, kwarg_overrides = args
        try:
            uids = aten_order(template_choices, f, self.half_unaligned_bias)
        except Exception as e:  # noqa: BLE001
            self._error("selecting the ATen templates", e)
            return inner(template_choices, *args)
        for uid in uids:
            alone = [t for t in templates if getattr(t, "uid", "") == uid]
            made = inner({uid: template_choices[uid]}, kernel_inputs, alone, op_name, kwarg_overrides)
            kept = [c for c in made if is_aten(c.template.uid)]
            if kept:
                self.count("extern")
                return kept
        # No ATen choice made (e.g. max_autotune_gemm_backends without ATEN): Inductor's list.
        self.count("empty")
        return inner(template_choices, *args)

    def _keep(self, result, names, f):
        def kept_if():
            aten = one_aten([c.template.uid for c in result], f, self.half_unaligned_bias)
            return lambda c: c.template.uid == aten or config_name(ktc_name(c)) in names

        def unfit(kept):
            templates = [config_name(ktc_name(c)) for c in kept if not is_aten(c.template.uid)]
            return none_fit(templates, f, self.heuristic.get("shared_memory", 0))
        return self._narrow(result, "keep", kept_if, unfit)

    def _drop(self, result, names):
        def kept_if():
            return lambda c: is_aten(c.template.uid) or config_name(ktc_name(c)) not in names
        return self._narrow(result, "drop", kept_if)

    def _searched(self, result, f):
        """A list left to Inductor's search (`default`, `drop`): with
        install(one_aten_search=True), without the ATen choices other than `one_aten`'s; else, or
        where naming them fails, `result` itself."""
        if not self.one_aten_search:
            return result
        try:
            keep = one_aten([c.template.uid for c in result], f, self.half_unaligned_bias)
            return [c for c in result if c.template.uid == keep or not is_aten(c.template.uid)]
        except Exception as e:  # noqa: BLE001 - never raise into Inductor
            self._error("naming the choices", e)
            return result

    def _narrow(self, result, kind, kept_if, unfit=None):
        """Inductor's `result` narrowed to the choices the test `kept_if()` makes keeps, counted
        as `kind`; `result` itself (counted as an error, "empty" or "unfit") where naming the
        choices fails, nothing would be left, or `unfit(kept)` says they cannot run."""
        try:
            keeps = kept_if()
            kept = [c for c in result if keeps(c)]
            cannot_run = unfit is not None and unfit(kept)
        except Exception as e:  # noqa: BLE001
            self._error("naming the choices", e)
            return result
        if not kept or cannot_run:
            self.count("unfit" if kept else "empty")
            return result
        self.count(kind)
        return kept

    # -- wrapping handlers ---------------------------------------------------------------------

    def wrap(self, handler):
        """Wraps `handler`'s `_finalize_template_configs` and `uuid` (instance attributes);
        returns it. `uuid()` is the wrapped handler's (None where it has none) with this
        heuristic's key: PyTorch after 2.11 keys its caches on it and refuses a configured
        handler without one."""
        d = getattr(handler, "__dict__", None)
        if d is None or not hasattr(handler, "_finalize_template_configs") or d.get(_MARK) is self:
            return handler
        saved = {name: d[name] for name in _WRAPPED if name in d}
        inner = handler._finalize_template_configs
        inner_uuid = getattr(handler, "uuid", None)
        runtime = self

        def _finalize_template_configs(template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
            return runtime.finalize(inner, template_choices, kernel_inputs, templates, op_name, kwarg_overrides)

        def uuid():
            return ("ah_inductor_choices", runtime.key, inner_uuid() if callable(inner_uuid) else None)

        d["_finalize_template_configs"] = _finalize_template_configs
        d["uuid"] = uuid
        d[_MARK] = self
        d[_INNER] = (saved, _finalize_template_configs)
        try:
            self._wrapped.add(handler)
        except TypeError:
            pass  # not weak-referenceable: stays wrapped, inactive after uninstall()
        return handler

    def unwrap(self, handler):
        d = getattr(handler, "__dict__", {})
        if d.get(_MARK) is not self:
            return
        saved, ours = d[_INNER]
        if d.get("_finalize_template_configs") is not ours:
            return  # wrapped again on top of us: left in place, passes through while inactive
        for name in _WRAPPED:
            if name in saved:
                d[name] = saved[name]
            else:
                d.pop(name, None)
        del d[_MARK], d[_INNER]

    # -- install / uninstall -------------------------------------------------------------------

    def mismatch(self, torch):
        """Why this process is not the one the heuristic was trained for, or None."""
        want_capa = tuple(self.heuristic.get("device_capa", ()))
        want_torch = str(self.heuristic.get("torch", ""))
        have_torch = ".".join(str(torch.__version__).split("+")[0].split(".")[:2])
        if not torch.cuda.is_available():
            have_capa = None
        else:
            have_capa = tuple(torch.cuda.get_device_capability())
        problems = []
        if want_capa and have_capa != want_capa:
            have = "no CUDA device" if have_capa is None else f"CUDA capability {have_capa}"
            problems.append(f"it was trained for CUDA capability {want_capa} and this process has {have}")
        if want_torch and have_torch != want_torch:
            problems.append(f"it was trained with PyTorch {want_torch} and this is PyTorch {have_torch}")
        return "; ".join(problems) or None

    def factory_key(self, retime, **options):
        """The key of the factory `install(retime=..., **options)` sets: `-retime`, then the name
        of each option of RETIME_OPTIONS (with `retime`) and SEARCH_OPTIONS that is on
        (`option_on`), dashed. Each changes what Inductor picks, so the cache must tell them
        apart."""
        unknown_options(options, RETIME_OPTIONS + SEARCH_OPTIONS)
        on = [name for name in RETIME_OPTIONS if retime and option_on(options, name)]
        on += [name for name in SEARCH_OPTIONS if option_on(options, name)]
        suffix = "".join("-" + name.replace("_", "-") for name in on)
        return self.key + ("-retime" if retime else "") + suffix

    def install(self, align_ptxas=True, retime=True, **options):
        """Installs the heuristic for every graph Inductor compiles from now on; True if installed,
        False if refused (the device or PyTorch differ; warned once). With `align_ptxas` (the
        default), this process's Triton also uses the ptxas of Inductor's compile workers, so that
        the templates they precompile are not compiled again here (ptxas.py). With `retime` (the
        default since blind set 36 measured it), the choices of small GEMMs that max-autotune still
        searches are timed again by CUDA graph before Inductor picks (retime.py), and the cache key
        says so. With `warm_splits` (the default since its blind checks: docs/results.md,
        forty-first session; needs `retime`) the re-timing times a lowering that offers
        `decompose_k`'s splits whole, splits included, without the L2 flush (retime.py). With
        `warm_no_bias` (the default since its blind check: docs/results.md, forty-third session;
        needs `retime`) every `mm` and `bmm` lowering the re-timing times is timed without the flush
        too. With `streamed_few_rows` (off by default: a candidate, docs/results.md, sixty-fourth
        session; needs `retime`) a bf16 or fp16 `mm` or `addmm` lowering of few rows
        (`few_rows_lowering`) is re-timed on operands streamed from HBM, as a decode step reads its
        weights (retime.py). With `narrow_search` (the default since its blind check:
        docs/results.md, forty-fifth session) a linear layer to a narrow output that `decide` gives
        cuBLAS alone is left to Inductor's list (`narrow_linear`). With `small_bmm_search` (the
        default since its blind check: docs/results.md, forty-seventh session) a `bmm` with a side
        of at most 64 that `decide` gives cuBLAS alone is left to Inductor's list
        (`small_side_bmm`). With `one_aten_search` (the default since its blind check:
        docs/results.md, forty-eighth session) the lists left to Inductor's search keep one ATen
        choice, `one_aten`'s, as `extern` and `keep` do. With `bias_head_search` (the default since
        its blind check: docs/results.md, forty-ninth session) a half-precision biased head that
        `decide` gives cuBLAS alone is left to Inductor's list (`bias_head`). With
        `half_unaligned_bias` (the default since its blind check: docs/results.md, sixty-first
        session) the bias rule gives a bf16 or fp16 addmm of at least 32 rows with a long
        contraction that is not a multiple of 8 the expanded call (`half_unaligned_addmm`). With
        `fp32_small_search` (the default since its blind check: docs/results.md, sixty-second
        session) a small fp32 `mm` or `addmm` that `decide` gives cuBLAS alone is left to Inductor's
        list (`fp32_small`). With `half_few_rows_search` (off by default: it failed its blind check
        on streamed operands, docs/results.md, sixty-fourth session) so is a bf16 or fp16 `mm` or
        `addmm` of few rows (`half_few_rows`). Each option is a keyword, on unless given False, but
        those of OFF_BY_DEFAULT, off unless given True (`option_on`); an unknown one raises
        TypeError. `uninstall()` undoes all of it."""
        unknown_options(options, RETIME_OPTIONS + SEARCH_OPTIONS)
        if self.active:
            return True
        import torch
        import torch._inductor.config as config
        import torch._inductor.virtualized as virtualized

        why = self.mismatch(torch)
        if why and os.environ.get(FORCE_ENV) != "1":
            self.warn_once(
                f"{self.heuristic.get('name')} is not installed: {why}. Inductor's default GEMM "
                f"autotuning stays. Set {FORCE_ENV}=1 to install it anyway."
            )
            return False
        prev = config.inductor_choices_class
        if isinstance(prev, ChoicesFactory) and (prev.key + "-").startswith(self.key + "-"):
            prev = prev.prev  # ours, installed with other options: replaced, not stacked
        self._factory_key = self.factory_key(retime, **options)
        self._set_searches(True, options)
        _RUNTIMES[self._factory_key] = self
        config.inductor_choices_class = ChoicesFactory(self._factory_key, prev)
        slot = virtualized._choices
        self._saved = (config, prev, slot, self._hook(slot))
        self._ptxas = ptxas_align() if align_ptxas else None
        warm = [option_on(options, name) for name in ("warm_splits", "warm_no_bias")]
        streamed = few_rows_lowering if option_on(options, "streamed_few_rows") else None
        self._retimer = retime_install(*warm, streamed) if retime else None
        self.active = True
        self.wrap(slot._get_handler())
        return True

    def _hook(self, slot):
        """Makes the virtualized `_choices` wrap whatever handler a thread gets from it."""
        original = slot._get_handler
        runtime = self

        def _get_handler(*args, **kwargs):
            handler = original(*args, **kwargs)
            if runtime.active:
                d = getattr(handler, "__dict__", None)
                if d is not None and d.get(_MARK) is not runtime:
                    runtime.wrap(handler)
            return handler

        slot._get_handler = _get_handler
        return _get_handler

    def uninstall(self):
        """Restores Inductor's previous choices factory and handlers."""
        if not self.active:
            return
        self.active = False
        self._set_searches(False)
        config, prev, slot, hook = self._saved
        self._saved = None
        ptxas_restore(self._ptxas)
        self._ptxas = None
        retime_uninstall(self._retimer)
        self._retimer = None
        current = config.inductor_choices_class
        if isinstance(current, ChoicesFactory) and current.key == self._factory_key:
            config.inductor_choices_class = prev
        if slot.__dict__.get("_get_handler") is hook:
            del slot.__dict__["_get_handler"]
        for handler in list(self._wrapped):
            self.unwrap(handler)


_DEFAULT = []


def _default_runtime():
    """The runtime of this module's HEURISTIC and decide (defined after this source)."""
    g = globals()
    if "HEURISTIC" not in g or "decide" not in g:
        raise RuntimeError("this module defines no HEURISTIC and decide: use a generated handler module")
    if not _DEFAULT or _DEFAULT[0].decide is not g["decide"] or _DEFAULT[0].heuristic != dict(g["HEURISTIC"]):
        _DEFAULT[:] = [Runtime(g["HEURISTIC"], g["decide"])]
    return _DEFAULT[0]


def install(align_ptxas=True, retime=True, **options):
    """Installs this module's heuristic (see the module docstring; `Runtime.install` names the
    options, each of RETIME_OPTIONS and SEARCH_OPTIONS, on by default but those of
    OFF_BY_DEFAULT); True if installed."""
    return _default_runtime().install(align_ptxas, retime, **options)


def uninstall():
    """Restores what `install()` replaced."""
    if _DEFAULT:
        _DEFAULT[0].uninstall()


def stats():
    """Decisions per kind since start or the last `reset_stats()`."""
    return _default_runtime().stats()


def reset_stats():
    _default_runtime().reset_stats()


def decisions():
    """What was decided, and on which features, since start or the last `reset_stats()`."""
    return _default_runtime().decisions()
