#!/usr/bin/env python3
"""A generated handler module as scripts/inductor_eval.py and the replay scripts use it, without
torch: loaded by path (`load_handler`), the options its install() can be given (`SWITCHES`), and
its decisions as install() applies them (`installed_decide`), for a dry run or a replay.
"""

import functools
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from ah_inductor.choices import SEARCHED_KINDS  # noqa: E402  (imports no torch)


# The install() options a role's handler can be given (`--retime ROLE`, `--no-retime ROLE`,
# ...), and what each does when on: one table for the flags, install_options and the result's
# meta. A role whose flags name no option keeps its module's default for it.
SWITCHES = (
    ("retime", "the choices of small GEMMs it leaves to max-autotune are timed again by CUDA graph "
               "(retime.py; the default of handler modules since the twenty-seventh session)"),
    ("warm_splits", "a lowering that offers decompose_k's splits is re-timed whole on warm operands "
                    "(retime.py; the default of handler modules since the forty-first session)"),
    ("warm_no_bias", "every mm and bmm lowering it re-times is re-timed on warm operands, without "
                     "the L2 flush (retime.py; the default of handler modules since the forty-third "
                     "session)"),
    ("streamed_few_rows", "a bf16 or fp16 mm or addmm lowering of at most 256 rows and 2**31 "
                          "multiply-adds that it re-times is re-timed on operands streamed from HBM, "
                          "as a decode step reads its weights (retime.py, choices.few_rows_lowering; "
                          "off by default: a candidate of the sixty-fourth session)"),
    ("narrow_search", "a linear layer to a narrow output (choices.narrow_linear: MoE routers, "
                      "classifier heads, LoRA's lora_A) that it decides cuBLAS only is left to "
                      "max-autotune (the default of handler modules since the forty-fifth session)"),
    ("small_bmm_search", "a bmm with a side of at most 64 (choices.small_side_bmm: decode "
                         "attention, MoE experts over few tokens) that it decides cuBLAS only is "
                         "left to max-autotune (the default of handler modules since the "
                         "forty-seventh session)"),
    ("one_aten_search", "the lists it leaves to max-autotune keep one ATen choice, the one it keeps "
                        "when it decides cuBLAS only (addmm's two cuBLAS calls: the bias rule's, "
                        "choices.one_aten; the default of handler modules since the forty-eighth "
                        "session)"),
    ("bias_head_search", "a half-precision linear with bias over 128-256 rows with k >= 2048 and n <= "
                         "4096 (choices.bias_head: classifier heads at a batch of 128-256) that it "
                         "decides cuBLAS only is left to max-autotune (the default of handler "
                         "modules since the forty-ninth session)"),
    ("half_unaligned_bias", "a bf16 or fp16 addmm of at least 32 rows with k not a multiple of 8 "
                            "and at least 4097 (choices.half_unaligned_addmm) keeps the "
                            "expanded-bias call, not the 1-D one (the default of handler modules "
                            "since the sixty-first session)"),
    ("fp32_small_search", "an fp32 mm or addmm (TF32 or not) of at most 2**31 multiply-adds "
                          "(choices.fp32_small: RL critics, GNN layers, small linears trained in "
                          "fp32) that it decides cuBLAS only is left to max-autotune (the default "
                          "of handler modules since the sixty-second session)"),
    ("half_few_rows_search", "a bf16 or fp16 mm or addmm of at most 256 rows and 2**31 "
                             "multiply-adds (choices.half_few_rows: decode steps, heads at a small "
                             "batch) that it decides cuBLAS only is left to max-autotune (off by "
                             "default: the default of handler modules in the sixty-third session "
                             "only, until its check on streamed operands)"),
)


def load_handler(path):
    """Imports the generated handler module, registered in sys.modules (Inductor pickles its
    factory by name)."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    for need in ("install", "uninstall", "stats", "reset_stats", "HEURISTIC"):
        if not hasattr(mod, need):
            raise SystemExit(f"inductor_eval: {path} defines no {need}")
    return mod


# The install() options that change a decision, not only how a search is timed: what a preview
# or a replay without torch must apply (`installed_decide`); the handler runtime's own table.
DECIDING = tuple(name for name, _ in SEARCHED_KINDS)


def installed_decide(module, options=None):
    """`decide` of handler `module` as its `install(**options)` applies a decision (the module's
    `installed`: since the forty-fifth session a linear to a narrow output that the tree gives
    cuBLAS alone is left to the search by default, since the forty-seventh a `bmm` with a
    small side, since the forty-ninth a half-precision biased head, since the sixty-second a
    small fp32 mm or addmm; a half-precision mm or addmm of few rows only when asked, by
    `half_few_rows_search`, off by default since the sixty-fourth session). Options of DECIDING
    not in `options` keep the module's defaults. A module generated before `installed` existed
    decides as its tree does."""
    decide, installed = module.decide, getattr(module, "installed", None)
    if not callable(installed):
        return decide
    chosen = {k: v for k, v in (options or {}).items() if k in DECIDING}

    @functools.wraps(decide)  # `__wrapped__`: the replay reads the module's rules through it
    def applied(f):
        return installed(*decide(f), f, **chosen)
    return applied
