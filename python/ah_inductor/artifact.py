"""The runtime of a pruning heuristic's `mm` AutoHeuristic artifact (issue 26, 3b).

`ah-prune --artifact-dir DIR` writes ``DIR/_<Name>.py``: a PyTorch artifact for users of
``torch._inductor.config.autoheuristic_use = "mm"``, droppable into
``torch/_inductor/autoheuristic/artifacts/``. The file is a header, the sources of `naming.py`
and of this file, the heuristic's `HEURISTIC` description and `decide(f)` tree (the same as the
`InductorChoices` handler module's), and a `LearnedHeuristicDecision` subclass whose methods
call the functions below.

PyTorch's hook (`tuned_mm`) consults it after Inductor generated every choice and keeps, of
those choices, the ones named in `get_decisions_ranked` (top 10, plus `extern_mm`), so it
saves benchmarking but not code generation; the handler module acts before generation and
covers addmm and bmm as well. The hook sees `mm` only, so `batch` is 1 and `op` is "mm".
A decision becomes a variable-length ranking:
- ``("extern", ())``: ``[extern_mm]``: only cuBLAS is kept, nothing is benchmarked;
- ``("keep", names)``: ``extern_mm`` and the kept configs as Inductor sizes them to the GEMM
  (`sized_config`), as PyTorch names them (`pytorch_mm_id`; configs that differ only in
  GROUP_M become one); no ranking (None) where every kept config Inductor offers needs more
  shared memory than the device has (`none_fit`), as the handler does;
- ``("default", ())``: no ranking (None): Inductor keeps its whole list.

On another GPU or PyTorch (major.minor) than the heuristic's, `mm_precondition` is False
(PyTorch then autotunes as without it) and a warning says so once.
"""

import re
import warnings

try:
    none_fit, pytorch_mm_id, sized_config, sized_configs  # noqa: B018 - defined when pasted after naming.py's source
except NameError:
    from ah_inductor.naming import none_fit, pytorch_mm_id, sized_config, sized_configs

# Features of our log that PyTorch's `mm` context does not hold: constant for `tuned_mm`.
MM_CONSTANTS = {"batch": 1, "op": "mm"}
# The largest dimension `mm_known_ids` sizes configs to: no Triton block is larger.
MAX_SIZED_DIM = 1 << 12
_warned = set()


def mm_choice_ids(names):
    """``extern_mm`` then PyTorch's ids of `names` (each once, first occurrence first)."""
    out = ["extern_mm"]
    for name in names:
        i = pytorch_mm_id(name)
        if i is not None and i not in out:
            out.append(i)
    return out


def mm_known_ids(names):
    """`mm_choice_ids` of `names` and of every config Inductor may size them to (`sized_config`
    for each power-of-two m, n and k from 16 to the largest block in `names`, at most
    `MAX_SIZED_DIM`): the choices `get_choice` knows by index, fixed when the artifact is made.
    A sized config it does not know is left out of a ranking (Inductor's list is not widened)."""
    blocks = [int(v) for name in names for v in re.findall(r"BLOCK-[MNK]=(\d{1,18})(?=_|$)", name)]
    dims, dim = [], 16
    while dim <= min(max(blocks, default=0), MAX_SIZED_DIM):
        dims.append(dim)
        dim *= 2
    sized = [sized_config(name, m, n, k) for name in names for m in dims for n in dims for k in dims]
    return mm_choice_ids(list(names) + sized)


def mm_features(context, names):
    """The features `names` of PyTorch's `AHContext`, as the handler computes them: dtypes as
    their text (``torch.bfloat16``), numbers and booleans as they are. None when one is missing."""
    f = dict(MM_CONSTANTS)
    for name in names:
        if name in f:
            continue
        try:
            v = context.get_value(name)
        except (KeyError, AttributeError):
            return None
        f[name] = v if isinstance(v, (bool, int, float, str)) else str(v)
    return f


def mm_best_choices(decide, feature_names, context, choices, shared_memory=0):
    """`get_best_choices`: (probability, index into `choices`) best first, or None (unsure).
    `shared_memory`: the heuristic's (`HEURISTIC["shared_memory"]`; 0: no limit known)."""
    f = mm_features(context, feature_names)
    if f is None:
        return None
    kind, names = decide(f)
    if kind not in ("extern", "keep"):
        # The full list, whole or trimmed ("drop"): PyTorch's hook can only narrow the
        # choices to ranked ones, so the artifact is unsure and Inductor autotunes them all.
        return None
    kept = sized_configs(names, f["m"], f["n"], f["k"]) if kind == "keep" else ()
    ranked = mm_choice_ids(kept)
    index = {c: i for i, c in enumerate(choices)}
    if none_fit([n for n in kept if pytorch_mm_id(n) in index], f, shared_memory):
        return None
    kept = [index[c] for c in ranked if c in index]
    return [(1.0 / len(kept), i) for i in kept]


def mm_precondition(heuristic, metadata):
    """Whether the artifact decides here: PyTorch's `mm` hook on the GPU and PyTorch it was
    trained for. Otherwise False, with one warning naming what differs."""
    if getattr(metadata, "name", None) != "mm":
        return False
    capa = tuple(getattr(metadata, "device_capa", ()) or ())
    want = tuple(heuristic["device_capa"])
    import torch

    version = ".".join(str(torch.__version__).split("+")[0].split(".")[:2])
    if capa == want and version == heuristic["torch"]:
        return True
    key = (capa, version)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(
            f"{heuristic['name']}: trained for device capability {want} and PyTorch "
            f"{heuristic['torch']}, this is {capa} and {version}: not used, Inductor autotunes "
            "every mm choice as it would without it",
            stacklevel=2,
        )
    return False
