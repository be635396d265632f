#!/usr/bin/env python3
"""The settings scripts/inductor_eval.py compiles a GEMM or a workload under: their names, the
Inductor options each passes to `torch.compile`, which install a handler, and the workloads a run
may name. No torch.
"""

SETTINGS = ("none", "ours", "max_autotune", "max_autotune_ptxas", "max_autotune_retime", "mm_ranking",
            "full_max_autotune", "ours_full", "candidate")
ALIGNED = ("max_autotune_ptxas", "max_autotune_retime")  # settings with ptxas aligned, no handler
WORKLOADS = ("gemms", "llama_train", "llama_infer", "encoder_train")
# Full max-autotune is mode="max-autotune-no-cudagraphs" (templates, coordinate-descent tuning,
# pointwise autotuning): its options come from Inductor itself (`list_mode_options`), because
# torch.compile takes a mode or options, not both. CUDA graphs are ours to capture.
FULL = "max-autotune-no-cudagraphs"
OPTIONS = {
    "none": {},
    "max_autotune": {"max_autotune_gemm": True},
    "max_autotune_ptxas": {"max_autotune_gemm": True},
    "max_autotune_retime": {"max_autotune_gemm": True},
    "mm_ranking": {"max_autotune_gemm": True, "autoheuristic_use": "mm"},
    "ours": {"max_autotune_gemm": True},
    "full_max_autotune": FULL,
    "ours_full": FULL,
    "candidate": {"max_autotune_gemm": True},
}
# The settings with a handler installed, and which: --handler's ("ours") or --candidate's.
HANDLED = {"ours": "ours", "ours_full": "ours", "candidate": "candidate"}
ROLES = tuple(dict.fromkeys(HANDLED.values()))  # the handlers a run installs: ours, candidate
OURS = ("ours", "ours_full")  # the settings with --handler installed
LEARNED = ("ours", "candidate")  # the GEMM settings flagged against the bound, one per handler
DEFAULT_SETTINGS = ("none", "ours", "max_autotune", "mm_ranking")
