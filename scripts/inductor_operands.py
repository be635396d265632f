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

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
# The copies of a streamed sweep have one owner, the handler runtime's re-timing, which streams
# few-row lowerings the same way (install(streamed_few_rows=True)); it imports no torch.
from ah_inductor.retime import (  # noqa: E402, F401 - re-exported
    FALLBACK_L2_BYTES, MAX_COPIES, STREAM_L2_MULTIPLE, args_bytes, copies, input_sets, l2_bytes)

OPERANDS = ("warm", "streamed")


def operand_sets(torch, first, make, operands):
    """The argument tuples one replay sweeps: `first` alone when `operands` is warm; streamed,
    `first` and further sets made by `make()` (fresh operands of the same layout) up to
    `copies`."""
    if operands not in OPERANDS:
        raise ValueError(f"operands {operands!r} (one of {', '.join(OPERANDS)})")
    return input_sets(first, make, operands == "streamed", lambda: l2_bytes(torch))
