"""Stubs of PyTorch Inductor's objects for the handler runtime's tests, without PyTorch: a fake
`torch` (config, the virtualized handler slot, InductorChoices, device and TF32 settings) to put
in sys.modules for a test (`fake_torch`), Inductor's KernelInputs and KernelTemplateChoice as
stubs, and a tiny heuristic to decide with (`decide_by_m`). Shared by test_choices.py,
test_choices_install.py and the tests of the scripts that drive the runtime."""

import contextlib
import os
import sys
import threading
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ah_inductor import naming  # noqa: E402

TILE = dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=32, num_stages=3, num_warps=4, GROUP_M=8)
TILE_NAME = "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=128_numstages=3_numwarps=4_GROUP-M=8"
HEURISTIC = {"name": "TestMM", "device_capa": (9, 0), "torch": "2.11", "ops": ("mm", "addmm", "bmm")}


# -- stubs of Inductor's objects -------------------------------------------------------------

def ktc(uid, **kwargs):
    """A stub of a lazy KernelTemplateChoice."""
    return types.SimpleNamespace(
        template=types.SimpleNamespace(uid=uid),
        params=types.SimpleNamespace(to_kwargs=lambda: dict(kwargs)),
    )


def mm_choices(test=None, poison=False):
    """template uid -> generator, as `get_template_configs` builds it: cuBLAS, two Triton
    configs, a decompose-k subgraph. With `poison`, iterating a non-ATen generator fails `test`."""

    def gen(*items):
        if poison:
            test.fail("a non-ATen template's generator was iterated")
        yield from items

    return {
        "aten::mm": iter([ktc("aten::mm")]),
        "triton::mm": gen(ktc("triton::mm", **TILE), ktc("triton::mm", **dict(TILE, BLOCK_M=128))),
        "decompose_k": gen(ktc("decompose_k", k_split=4)),
    }


def templates_of(template_choices):
    return [types.SimpleNamespace(uid=uid) for uid in template_choices]


class Sym:
    """A symbolic size (dynamic shapes)."""

    free_symbols = {"s0"}

    def __int__(self):
        raise TypeError("symbolic")


class StubInputs:
    """A stub of MMKernelInputs: nodes given as (shape, stride, dtype)."""

    def __init__(self, nodes, mat1_idx=-2, mat2_idx=-1, hint=None):
        self._nodes = nodes
        self._mat1_idx, self._mat2_idx = mat1_idx, mat2_idx
        self._hint = hint or (lambda v: v)

    def nodes(self):
        return list(self._nodes)

    def shapes_symbolic(self):
        return tuple(tuple(s) for s, _, _ in self._nodes)

    def strides_symbolic(self):
        return tuple(tuple(st) for _, st, _ in self._nodes)

    def shapes_hinted(self):
        return tuple(tuple(self._hint(v) for v in s) for s in self.shapes_symbolic())

    def strides_hinted(self):
        return tuple(tuple(self._hint(v) for v in s) for s in self.strides_symbolic())

    def dtypes(self):
        return tuple(d for _, _, d in self._nodes)

    def mnk_hinted(self):
        shapes = self.shapes_hinted()
        a, b = shapes[self._mat1_idx], shapes[self._mat2_idx]
        assert a[-1] == b[-2]
        return a[-2], b[-1], a[-1]

    def batch_hinted(self):
        a = self.shapes_hinted()[self._mat1_idx]
        return a[-3] if len(a) >= 3 else 1


def operand(rows, cols, transposed, dtype="torch.bfloat16", batch=None):
    """(shape, strides, dtype) of a contiguous rows x cols matrix, or of the transpose of a
    contiguous cols x rows one."""
    stride = (1, rows) if transposed else (cols, 1)
    if batch is None:
        return ((rows, cols), stride, dtype)
    return ((batch, rows, cols), (rows * cols, *stride), dtype)


def mm_inputs(m, k, n, trans_a=False, trans_b=False, dtype="torch.bfloat16"):
    return StubInputs([operand(m, k, trans_a, dtype), operand(k, n, trans_b, dtype)])


# -- a fake torch ----------------------------------------------------------------------------

class FakeInductorChoices:
    def _finalize_template_configs(self, template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
        out = []
        for gen in template_choices.values():
            out.extend(gen)
        return out


class FakeVirtualized:
    """Inductor's Virtualized slot for the choices handler: thread-local, made lazily from
    config.inductor_choices_class (torch/_inductor/virtualized.py: _choices_default)."""

    def __init__(self, config):
        self._local = threading.local()
        self._config = config

    def _default(self):
        factory = self._config.inductor_choices_class
        rv = factory() if factory is not None else FakeInductorChoices()
        self._local.value = rv
        return rv

    def _set_handler(self, value):
        prior = self._get_handler(False)
        self._local.value = value

        @contextlib.contextmanager
        def ctx():
            try:
                yield
            finally:
                self._set_handler(prior)

        return ctx()

    def _get_handler(self, check_poisoned=True):
        try:
            return self._local.value
        except AttributeError:
            return self._default()


def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


@contextlib.contextmanager
def fake_torch(capa=(9, 0), version="2.11.0+cu130", cuda=True, fp32_precision=None, allow_tf32=False):
    matmul = types.SimpleNamespace(allow_tf32=allow_tf32)
    if fp32_precision is not None:
        matmul.fp32_precision = fp32_precision
    config = module("torch._inductor.config", inductor_choices_class=None)
    virtualized = module("torch._inductor.virtualized", _choices=FakeVirtualized(config))
    ichoices = module("torch._inductor.choices", InductorChoices=FakeInductorChoices)
    selector = types.SimpleNamespace(feedback_saver_fns=[])
    select = module("torch._inductor.select_algorithm", get_algorithm_selector_cache=lambda: selector)
    inductor = module("torch._inductor", config=config, virtualized=virtualized, choices=ichoices,
                      select_algorithm=select)
    torch = module(
        "torch",
        __version__=version,
        _inductor=inductor,
        cuda=types.SimpleNamespace(is_available=lambda: cuda, get_device_capability=lambda: capa),
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=matmul)),
    )
    mods = {m.__name__: m for m in (torch, inductor, config, virtualized, ichoices, select)}
    saved = {name: sys.modules.get(name) for name in mods}
    sys.modules.update(mods)
    try:
        yield torch
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def decide_by_m(f):
    """A tiny heuristic: cuBLAS for small m, one tile for m < 4096, unsure otherwise."""
    if f["m"] <= 64:
        return ("extern", ())
    if f["m"] < 4096:
        return ("keep", (TILE_NAME,))
    return ("default", ())


def names(result):
    return [naming.ktc_name(c) for c in result]
