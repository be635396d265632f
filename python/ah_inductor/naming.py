"""How a GEMM kernel choice of Inductor's max-autotune is named in our logs and heuristics.

One owner: `ah-collect`'s Inductor worker names every benchmarked choice with `choice_name`, and
the generated `InductorChoices` handler names the lazy `KernelTemplateChoice`s it prunes with the
same function (`ah-codegen` embeds this file's source), so a name the trainer learned is the name
the handler sees before any template code is generated.

A name is the template (``extern_`` + ATen op for cuBLAS choices, ``triton_`` + template name for
Triton templates, ``subgraph_`` + name for decompositions) followed by the config values that
tell two configs of one template apart, in a fixed order. Names hold only ``[A-Za-z0-9_=.-]``:
they go unquoted into PyTorch's CSV log and into generated code.
"""

import re

# Config keys that distinguish two configs of one template, with the spelling PyTorch's
# `autoheuristic_id()` uses for the first five.
_KEYS = (
    ("BLOCK_M", "BLOCK-M"),
    ("BLOCK_K", "BLOCK-K"),
    ("BLOCK_N", "BLOCK-N"),
    ("num_stages", "numstages"),
    ("num_warps", "numwarps"),
    ("GROUP_M", "GROUP-M"),
    ("k_split", "ksplit"),
    ("EPILOGUE_SUBTILE", "subtile"),
    ("NUM_SMS", "sms"),
)

_UNSAFE = re.compile(r"[^A-Za-z0-9_=.-]")


def clean(text):
    """`text` with every character outside ``[A-Za-z0-9_=.-]`` replaced by ``-``."""
    return _UNSAFE.sub("-", str(text))


def choice_name(template_uid, kwargs):
    """The name of the choice of template `template_uid` (``aten::mm``, ``triton::mm``, ...)
    with config `kwargs` (the template's `to_kwargs()`)."""
    kind, _, template = str(template_uid).partition("::")
    if not template:
        kind, template = "subgraph", kind
    if kind == "aten":
        return clean(f"extern_{template}")
    parts = [f"{kind}_{template}"]
    for key, label in _KEYS:
        if key in kwargs and isinstance(kwargs[key], (int, bool, str)):
            parts.append(f"{label}={int(kwargs[key]) if isinstance(kwargs[key], bool) else kwargs[key]}")
    return clean("_".join(parts))


# Triton's `bmm` template is `mm`'s kernel with a batch grid, offered the same configs: a
# heuristic keeps a config, whichever of the two a GEMM offers (`ah_train::prune::config_name`
# reads logs the same way). Without this a leaf learned mostly on mm GEMMs keeps no Triton
# choice of a bmm at all.
_SAME_CONFIGS = (("triton_bmm_", "triton_mm_"),)


# Inductor offers `decompose_k` as one choice per split of `k` (``subgraph_decompose_k_ksplit=S``),
# the splits a GEMM offers depending on the divisors of its `k`: a heuristic keeps the family, every
# split the GEMM offers, under one name (`ah_train::prune::family`, which prices it as all of them).
_FAMILIES = (("subgraph_decompose_k_", "subgraph_decompose_k"),)


def config_name(name):
    """The name a heuristic keeps for choice `name`: a `decompose_k` split's family's, and
    ``triton_bmm_`` spelled ``triton_mm_``."""
    for prefix, family in _FAMILIES:
        if name.startswith(prefix):
            return family
    for prefix, canonical in _SAME_CONFIGS:
        if name.startswith(prefix):
            return canonical + name[len(prefix):]
    return name


# Inductor sizes the configs of the `mm` template (and of `bmm`, whose configs are `mm`'s) to
# the GEMM before it makes its choices (`_scale_mm_configs` and `_finalize_mm_configs` in PyTorch
# 2.11's `torch/_inductor/template_heuristics/triton.py`): each block is clamped to the GEMM's
# dimension rounded up to a power of two (at least 16), then the warps to what the tile can use.
# `ah_train::prune::sizing` is the same rule for the trainer; a Rust test checks it against every
# GEMM of the shipped logs.
_SIZED_TEMPLATE = "triton_mm_"
_MIN_BLOCK = 16
_TILE_PER_WARP = 256


def _clamp(block, dim):
    power = 1
    while power < dim:
        power *= 2
    return max(min(block, max(power, _MIN_BLOCK)), _MIN_BLOCK)


def _config_values(name, needed):
    """The ``KEY=VALUE`` parts of the `triton_mm_` config `name` as a dict, in order; None for
    another name, unless every value is 1 to 18 ASCII digits, no key repeats and every key of
    `needed` is there (as `ah_train::prune::sizing` reads them: a hostile name is left alone
    alike in Rust and Python)."""
    if not name.startswith(_SIZED_TEMPLATE):
        return None
    parts = [p.partition("=") for p in name[len(_SIZED_TEMPLATE):].split("_")]
    if not all(eq and 0 < len(v) <= 18 and v.isascii() and v.isdigit() for _, eq, v in parts):
        return None
    values = {key: int(v) for key, _, v in parts}
    if len(values) != len(parts) or any(key not in values for key in needed):
        return None
    return values


def sized_config(name, m, n, k):
    """The config Inductor offers a GEMM of `m` x `n` x `k` (one batch entry) for config `name`
    (read by `config_name`): `name` itself when it is no `triton_mm_` config or the GEMM is large
    enough. A kept config means the choice Inductor sized from it for the GEMM at hand."""
    values = _config_values(name, ("BLOCK-M", "BLOCK-N", "BLOCK-K"))
    if values is None:
        return name
    bm, bn = _clamp(values["BLOCK-M"], m), _clamp(values["BLOCK-N"], n)
    sized = {"BLOCK-M": bm, "BLOCK-N": bn, "BLOCK-K": _clamp(values["BLOCK-K"], k)}
    if "numwarps" in values:
        sized["numwarps"] = min(values["numwarps"], bm * bn // _TILE_PER_WARP)
    return _SIZED_TEMPLATE + "_".join(f"{key}={sized.get(key, v)}" for key, v in values.items())


# A Triton `mm` config's software pipeline holds `num_stages` tiles of each operand in shared
# memory: num_stages x (BLOCK_M x BLOCK_K x a's element bytes + BLOCK_K x BLOCK_N x b's). Where
# that exceeds what one block may use on the device (the log's `shared_memory`, 232448 bytes on
# the H100), the config mostly fails to run: of the 46614 template benchmarks of the shipped H100
# logs, none of the 43812 within it failed, and 1824 of the 2802 beyond it did, 1465 of them in
# fp32. `ah_train::prune::sizing::pipeline_bytes` is the same rule; Rust tests check that the
# two agree and that the logs bear the rule out. A kept list learned on 16-bit GEMMs may hold
# only such configs for an fp32 one: the handler then leaves the GEMM to Inductor's full list.
# Element bytes by dtype as the log spells it: `ah_codegen::prune_tree::DTYPE_BYTES`'s table.
DTYPE_BYTES = {"torch.float64": 8, "torch.int64": 8, "torch.float32": 4, "torch.int32": 4,
               "torch.float16": 2, "torch.bfloat16": 2}


def pipeline_bytes(name, a_bytes, b_bytes):
    """Shared memory, in bytes, that the `triton_mm_` config `name` (as offered: sized) asks for
    operands of `a_bytes` and `b_bytes` per element; None for any other name."""
    values = _config_values(name, ("BLOCK-M", "BLOCK-N", "BLOCK-K", "numstages"))
    if values is None:
        return None
    bm, bn, bk = values["BLOCK-M"], values["BLOCK-N"], values["BLOCK-K"]
    need = values["numstages"] * (bm * bk * a_bytes + bk * bn * b_bytes)
    return need if need < 1 << 63 else None  # as the trainer's i64 reads it


def none_fit(names, f, shared_memory):
    """Whether the template choices `names` (read by `config_name`, as offered to the GEMM of
    features `f`) are one or more `triton_mm_` configs that each need more than
    `shared_memory` bytes (0: no limit known, never). A choice of another template may run."""
    a, b = DTYPE_BYTES.get(f.get("mat1_dtype")), DTYPE_BYTES.get(f.get("mat2_dtype"))
    if not shared_memory or a is None or b is None:
        return False
    need = [pipeline_bytes(name, a, b) for name in names]
    return bool(need) and all(x is not None and x > shared_memory for x in need)


def sized_configs(names, m, n, k):
    """`sized_config` of each of `names`, each once, first occurrence first."""
    out = []
    for name in names:
        sized = sized_config(name, m, n, k)
        if sized not in out:
            out.append(sized)
    return out


# PyTorch's `mm` AutoHeuristic hook (`autoheuristic_use="mm"`, in `tuned_mm`) names a choice by
# `ChoiceCaller.autoheuristic_id()`: ``extern_mm``, or a Triton config of the mm template by its
# five tile values alone (GROUP_M is not in it, so two of our configs may share one id).
_PYTORCH_TILE = ("BLOCK-M", "BLOCK-K", "BLOCK-N", "numstages", "numwarps")


def pytorch_mm_id(name):
    """The id PyTorch's `mm` hook gives choice `name`, or None for a choice that hook does not
    offer (other templates, decompositions, configs with keys beyond the tile and GROUP-M)."""
    if name == "extern_mm":
        return name
    prefix = "triton_mm_"
    name = config_name(name)
    if not name.startswith(prefix):
        return None
    parts = [p.partition("=") for p in name[len(prefix):].split("_")]
    values = {k: v for k, eq, v in parts if eq}
    if len(values) != len(parts) or set(values) - set(_PYTORCH_TILE) - {"GROUP-M"}:
        return None
    if any(k not in values for k in _PYTORCH_TILE):
        return None
    return "type=triton_" + "_".join(f"{k}={values[k]}" for k in _PYTORCH_TILE)


def ktc_name(ktc):
    """The name of a lazy `KernelTemplateChoice` (no code is generated)."""
    return choice_name(ktc.template.uid, ktc.params.to_kwargs())


def caller_name(caller):
    """The name of a `ChoiceCaller` that Inductor benchmarked: from the `KernelTemplateChoice`
    it was made from when there is one, else from its own id."""
    ktc = (getattr(caller, "annotations", None) or {}).get("ktc")
    if ktc is not None:
        return ktc_name(ktc)
    try:
        return clean(caller.autoheuristic_id())
    except Exception:  # noqa: BLE001 - any caller without an id is named by its name
        return clean(f"other_{getattr(caller, 'name', type(caller).__name__)}")
