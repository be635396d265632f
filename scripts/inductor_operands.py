"""How a GEMM's operands meet the GPU's L2 cache while scripts/inductor_eval.py times its compiled
truth (`--operands`). No torch at import.

`warm` (the default, and every result file before the sixty-third session): each replay calls
the GEMM on the same operands, so operands that fit stay in L2 between calls. That is how a
training step's small GEMMs and a model's activations run, but not how a decode step reads its
weights: there each layer's weight matrix comes from HBM once per step, and the kernel that wins
on warm operands (a few CTAs reading L2) can lose on streamed ones (too few CTAs to draw HBM's
bandwidth).

`streamed`: each replay sweeps over enough copies of the operands, fresh random data each, to
cover STREAM_L2_MULTIPLE times the L2, so every call reads its operands from HBM. Operand sets
smaller than the L2's share of MAX_COPIES stay partly warm (the sweep is capped); the result
records how many sets each GEMM swept (`operand_sets`). Result files say which they used
(`meta.operands`), and the pooling scripts refuse to put the two in one table, as they refuse
two GPUs (`inductor_results.device_of`).
"""

import math

OPERANDS = ("warm", "streamed")
STREAM_L2_MULTIPLE = 2  # a sweep's operands cover twice the L2: none of them is left there
MAX_COPIES = 1024  # sets of operands one sweep cycles through at most (the CUDA graph's size)
FALLBACK_L2_BYTES = 64 << 20  # where PyTorch does not say: more than an H100's or H200's 50 MiB


def copies(set_bytes, l2_bytes):
    """How many sets of operands of `set_bytes` each a streamed sweep cycles through: enough to
    cover STREAM_L2_MULTIPLE times `l2_bytes`, at least 2 (one set larger than that still gets
    a second, so that no call finds its predecessor's tiles), at most MAX_COPIES."""
    if set_bytes <= 0:
        raise ValueError(f"a set of operands of {set_bytes} bytes")
    need = math.ceil(STREAM_L2_MULTIPLE * l2_bytes / set_bytes)
    return max(2, min(MAX_COPIES, need))


def args_bytes(args):
    """Bytes of the tensors in `args` (a transposed view counts its tensor's elements once)."""
    return sum(t.numel() * t.element_size() for t in args)


def l2_bytes(torch):
    """The L2 cache of CUDA device 0 in bytes, as PyTorch reports it (FALLBACK_L2_BYTES where it
    does not)."""
    props = torch.cuda.get_device_properties(0)
    return int(getattr(props, "L2_cache_size", 0) or FALLBACK_L2_BYTES)


def operand_sets(torch, first, make, operands):
    """The argument tuples one replay sweeps: `first` alone when `operands` is warm; streamed,
    `first` and further sets made by `make()` (fresh operands of the same layout) up to
    `copies`."""
    if operands not in OPERANDS:
        raise ValueError(f"operands {operands!r} (one of {', '.join(OPERANDS)})")
    if operands == "warm":
        return [first]
    n = copies(args_bytes(first), l2_bytes(torch))
    return [first] + [make() for _ in range(n - 1)]
