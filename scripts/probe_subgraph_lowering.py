#!/usr/bin/env python3
"""Where Inductor asks a choices handler about the `bmm` inside `decompose_k`'s splits (one GPU,
PyTorch with Inductor and Triton; changes nothing, decides nothing).

Usage: python3 scripts/probe_subgraph_lowering.py --out OUT.txt [--m 192 --k 401408 --n 96
       --dtype float16]

Compiles one long contraction (`mm`, k far longer than the output's sides, so that Inductor
offers `decompose_k`'s splits) under `max_autotune_gemm` with a handler that only records, for
each lowering Inductor asks it about: the op, the graph being lowered (its class and name), the
operands' sizes and strides, and the Inductor options in force then. It also writes the source
of this PyTorch's `SubgraphChoiceCaller` methods that compile a split's subgraph to time it,
which say whether max-autotune is on there. Why: the pools record an inner `bmm` lowering for
every split of every long contraction, and cuBLAS picked in all 385; if Inductor autotuned
Triton templates inside each split, a handler could stop that. On PyTorch 2.11 it does not (the
subgraph is compiled with max-autotune off and the ATen backend alone; what a long contraction's
autotuning pays for is compiling each split: docs/results.md, fifty-fifth session).
"""

import argparse
import inspect
import sys
import time


def spy_factory(log):
    """An `inductor_choices_class` whose handler records each `_finalize_template_configs` call."""
    from torch._inductor import config
    from torch._inductor.choices import InductorChoices
    from torch._inductor.virtualized import V

    class Spy(InductorChoices):
        def _finalize_template_configs(self, template_choices, kernel_inputs, templates, op_name,
                                       kwarg_overrides=None):
            graph = V.graph
            try:
                shapes = [(tuple(s), tuple(t), str(d)) for s, t, d in zip(
                    kernel_inputs.shapes_hinted(), kernel_inputs.strides_hinted(), kernel_inputs.dtypes())]
            except Exception as e:  # noqa: BLE001 - a probe records what it cannot read
                shapes = repr(e)
            log.append(
                f"op={op_name} graph={type(graph).__name__} name={getattr(graph, 'name', None)!r} "
                f"templates={[getattr(t, 'uid', getattr(t, 'name', t)) for t in templates]} "
                f"inputs={shapes} max_autotune={config.max_autotune} "
                f"max_autotune_gemm={config.max_autotune_gemm} "
                f"backends={config.max_autotune_gemm_backends!r}")
            return super()._finalize_template_configs(template_choices, kernel_inputs, templates,
                                                      op_name, kwarg_overrides)

    return Spy


def sources():
    """This PyTorch's code that compiles a split's subgraph to benchmark it."""
    out = []
    try:
        from torch._inductor.codegen.subgraph import SubgraphChoiceCaller
    except ImportError as e:
        return [f"no SubgraphChoiceCaller: {e}"]
    for name in ("benchmark", "precompile", "_compile_for_benchmarking"):
        fn = getattr(SubgraphChoiceCaller, name, None)
        if fn is not None:
            out.append(f"--- SubgraphChoiceCaller.{name}\n{inspect.getsource(fn)}")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--m", type=int, default=192)
    p.add_argument("--k", type=int, default=401408)
    p.add_argument("--n", type=int, default=96)
    p.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    a = p.parse_args()
    import torch
    from torch._inductor import config

    log = []
    config.inductor_choices_class = spy_factory(log)
    dtype = getattr(torch, a.dtype)
    x = torch.randn(a.m, a.k, device="cuda", dtype=dtype)
    w = torch.randn(a.k, a.n, device="cuda", dtype=dtype)
    torch._dynamo.reset()
    fn = torch.compile(torch.mm, options={"max_autotune_gemm": True})
    t0 = time.perf_counter()
    fn(x, w)
    torch.cuda.synchronize()
    log.append(f"compiled in {time.perf_counter() - t0:.1f} s")
    with open(a.out, "w") as f:
        f.write(f"torch {torch.__version__}; mm {a.m}x{a.k}x{a.n} {a.dtype}; "
                f"{len(log)} lowerings asked about\n")
        f.write("\n".join(log) + "\n")
        f.write("\n".join(sources()) + "\n")
    print(f"{len(log)} lowerings; written to {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
