"""Times max-autotune's GEMM choices again by CUDA graph, so that CPU overhead does not pick them.

Inductor times each choice with CUDA events around one Python call after an L2 flush, and takes
the fastest. The flush (a 50 MB write on the H100) is meant to hide the call's CPU side, but
ATen's cuBLAS call, as max-autotune makes it, takes about 25 us of CPU to submit on the lent
H100 machine, and its Triton rivals 12-18 us (scripts/probe_extern_kernels.py): a cuBLAS kernel
of a few microseconds is read at about 25, and max-autotune picks a Triton config that runs
slower in the compiled graph. Over held-out sets 13-35, max-autotune's pick was more than 3 %
behind cuBLAS's on 57 of 169 GEMMs of 10-50 us, and its benchmark read cuBLAS at 2.7x its
compiled truth on 17 small GEMMs (data/profiled_bench_h100.jsonl; the profiler's timer, which
drops the CPU side, did not fix the picks: it reads cuBLAS's call at 2.3x).

`Retimer` is a feedback saver (`torch._inductor.select_algorithm.add_feedback_saver`): Inductor
calls it with the timings dict after benchmarking a lowering's choices, and selects from that dict
afterwards. For a GEMM lowering (`mm`, `addmm`, `bmm`, `baddbmm`) whose fastest time is under
RETIME_BELOW_MS, it times each cuBLAS and Triton choice again as a CUDA graph of an L2 flush and
one call, less the flush alone (the flush kept: cold operands, as Inductor measures; no CPU side),
and replaces those timings in place. Choices it cannot time that way (decompositions, a capture
that fails) keep Inductor's time. Of several ATen choices (addmm's 1-D bias call and its
expanded-bias call) it re-times only the one Inductor timed fastest, so that it never reorders
them: the expanded call copies the bias into the output first, which neither benchmark sees and
compiled truth does, and on blind set 37 a re-timing that reordered them picked it at 1.78x and
2.80x cuBLAS's run time (default max-autotune's full list, data/inductor_eval_h100_holdout37*).
On 17 small held-out GEMMs, default max-autotune against the same with this re-timing,
searched in one process: 6 against 2 more than 3 % behind the best of cuBLAS and the two picks,
0.933x against 0.850x cuBLAS's run time, for the same compile seconds
(data/graph_bench_h100.jsonl; scripts/probe_profiled_bench.py --retime graph). On blind sets
36-38 (84 GEMMs, data/inductor_eval_h100_holdout3[678]*), the shipped handler with it was over
that bound on 3 GEMMs against 14 without (sets 37 and 38: 0 against 5 and 3), and max-autotune's
full list re-timed on 8 against 18.

A lowering that offers decompositions (`decompose_k`'s splits of a long `k`, each a
`SubgraphChoiceCaller`: a batched product over parts of `k` and the sum of the parts) keeps
Inductor's time for them, which holds the CPU side of their calls, against rivals re-timed
without theirs. `Retimer(warm=True)` (``install(warm_splits=True)``, the default since the
forty-first session) re-times such a lowering whole, each split by the module Inductor compiled
to benchmark it (`split_call`), and without the flush: operands warm, as the compiled graph
replays. On the 12 long contractions of scripts/probe_splits.py the flushed timing read cuBLAS
and the splits up to 1.49x and 1.95x their compiled truth, most on small operands and unevenly
among the contenders of one GEMM; without the flush within 5 % on 103 of 125 contenders
(data/probe_splits_h100c.jsonl). On 48 blind long contractions
(data/inductor_eval_h100_longk_blind[23]*) the handler with it was over the 3 % bound on 1
against 6 without, and ran 0.92x their time (geometric mean). Two other ways were tried and
removed, each having failed a check registered before its data (docs/results.md, thirty-eighth
and thirty-ninth sessions): re-timing the splits flushed like the rest, and leaving such a
lowering Inductor's timings. A third, `warm_all`, re-timed every lowering so, small GEMMs
without splits too: the probe found the flush misleading for cuBLAS as much as for the splits,
most on small operands. It failed its blind check (docs/results.md, forty-second session): on
warm operands addmm's expanded-bias call read fastest on an fp32 addmm where it ran 2.5x the 1-D
call the flushed timing had picked; it was removed in the forty-third session.
`Retimer(warm_no_bias=True)` (``install(warm_no_bias=True)``, the default since the
forty-third session) re-times so the lowerings without a bias operand (WARM_NO_BIAS_OPS: `mm`,
`bmm`), whose ATen call has no second form to misread; `addmm` and `baddbmm` stay
flushed. On blind set 55 (data/inductor_eval_h100_holdout55[ab]_h2191*) the handler with it was
over the 3 % bound on 1 GEMM against 2 without, at 0.998x their run time (geometric mean).

`Retimer(streamed=test)` (``install(streamed_few_rows=True)``, off by default: a candidate
registered in the sixty-fourth session) re-times the lowerings `test(name, input_nodes)` names
(the runtime's: bf16 and fp16 `mm` and `addmm` of few rows, `choices.half_few_rows`) on operands
streamed from HBM, as a decode step reads its weights: each choice's graph sweeps fresh copies
of the inputs that cover STREAM_L2_MULTIPLE times the L2 (`copies`), without the flush. On such
GEMMs a Triton tile timed on operands in L2, or after the flush, picked by Inductor and by the
flushed re-timing, ran up to 1.12x cuBLAS's time once the operands streamed (docs/results.md,
sixty-fourth session), where twelve of the search's other picks ran 5-30 % faster than cuBLAS.

It never raises into Inductor: any failure leaves the timings as Inductor measured them.
"""

import math

RETIME_OPS = ("mm", "addmm", "bmm", "baddbmm")  # the names Inductor gives its GEMM lowerings
WARM_NO_BIAS_OPS = ("mm", "bmm")  # those without a bias operand (`warm_no_bias`)
# Above this fastest benchmark (ms), the call's CPU side is hidden behind the flush or the kernel.
RETIME_BELOW_MS = 0.2
RETIME_ROUNDS = 5
# Streamed operands (`Retimer(streamed=...)`, and scripts/inductor_eval.py --operands streamed):
STREAM_L2_MULTIPLE = 2  # a sweep's operands cover twice the L2: none of them is left there
MAX_COPIES = 1024  # sets of operands one sweep cycles through at most (a CUDA graph's calls)
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


def l2_bytes(torch, device=0):
    """The L2 cache of CUDA device `device` in bytes, as PyTorch reports it (FALLBACK_L2_BYTES
    where it does not)."""
    props = torch.cuda.get_device_properties(device)
    return int(getattr(props, "L2_cache_size", 0) or FALLBACK_L2_BYTES)


class Retimer:
    """The feedback saver; counts GEMM lowerings re-timed and re-timings that failed. With
    `warm` a lowering that offers decompositions is re-timed whole, without the flush; with
    `warm_no_bias` every one of WARM_NO_BIAS_OPS is, decompositions included; with `streamed`
    (a test of a lowering's name and input nodes) the lowerings it names are re-timed whole on
    operands streamed from HBM."""

    def __init__(self, warm=False, warm_no_bias=False, streamed=None):
        self.active = True
        self.warm = warm
        self.warm_no_bias = warm_no_bias
        self.streamed = streamed
        self.retimed = 0
        self.failed = 0

    def __call__(self, timings, name, input_nodes, choices, *rest):
        if not self.active or name not in RETIME_OPS:
            return
        try:
            finite = [c for c, t in timings.items() if math.isfinite(t)]
            if not finite or min(timings[c] for c in finite) >= RETIME_BELOW_MS:
                return
            is_split = split_test()
            streamed = self.streamed is not None and bool(self.streamed(name, input_nodes))
            warm = (streamed or (self.warm_no_bias and name in WARM_NO_BIAS_OPS)
                    or (self.warm and any(is_split(c) for c in finite)))
            chosen = with_splits(one_extern(finite, timings, extern_test()), is_split, warm)
            again = graph_timings(chosen, input_nodes, flush=not warm, streamed=streamed)
        except Exception:  # noqa: BLE001 - never raise into Inductor
            self.failed += 1
            return
        timings.update(again)
        self.retimed += 1


def one_extern(choices, timings, is_extern):
    """`choices` less every ATen choice but the one Inductor timed fastest (see the module
    docstring), in their order."""
    extern = [c for c in choices if is_extern(c)]
    if len(extern) < 2:
        return choices
    keep = min(extern, key=timings.__getitem__)
    return [c for c in choices if c is keep or not is_extern(c)]


def with_splits(choices, is_split, keep):
    """`choices` with their decompositions (`is_split`) only where `keep`, in their order. All
    of them: Inductor compiled each to benchmark it, so timing one again costs a capture, and
    its benchmark of them is no guide to which is fastest (one split of a 32 x 9072 x 32 read
    0.009 ms in one process, the best 0.053 ms in another; data/inductor_eval_h100_recheck_*)."""
    return [c for c in choices if keep or not is_split(c)]


def split_test():
    """Whether a choice is a decomposition compiled as a subgraph (`decompose_k`); none on a
    PyTorch without them."""
    try:
        from torch._inductor.codegen.subgraph import SubgraphChoiceCaller
    except ImportError:
        return lambda c: False
    return lambda c: isinstance(c, SubgraphChoiceCaller)


def extern_test():
    """Whether a choice is an ATen (cuBLAS) call, as Inductor types it."""
    from torch._inductor.select_algorithm import ExternKernelCaller

    return lambda c: isinstance(c, ExternKernelCaller)


def graph_timings(choices, input_nodes, flush=True, streamed=False):
    """{choice: ms} by CUDA graph for the cuBLAS, Triton and decomposition choices of `choices`,
    on inputs made as Inductor makes them to benchmark; a choice that fails to capture is left
    out. With `flush`, each call follows an L2 flush, timed alone and taken off (cold operands,
    as Inductor measures); without, the calls follow one another (warm operands, as a compiled
    graph replays). With `streamed`, they cycle through `copies` fresh sets of inputs (operands
    from HBM, as a decode step reads its weights)."""
    import torch
    from torch._inductor.select_algorithm import AlgorithmSelectorCache, ExternKernelCaller

    make = AlgorithmSelectorCache.benchmark_example_value
    make_set = lambda: [make(n) for n in input_nodes]  # noqa: E731
    sets = input_sets(make_set(), make_set, streamed,
                      lambda: l2_bytes(torch, torch.cuda.current_device()))
    before, base = None, 0.0
    if flush:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        before = torch.empty(props.L2_cache_size // 4, dtype=torch.int, device="cuda").zero_
        base = graph_ms([lambda: before], None)
    out, is_split = {}, split_test()
    for c in choices:
        try:
            result = make(c.layout)
            factories = [call_factory(c, inputs, result, ExternKernelCaller, is_split)
                         for inputs in sets]
            if None not in factories:
                out[c] = max(graph_ms(factories, before) - base, 1e-6)
        except Exception:  # noqa: BLE001 - this choice keeps Inductor's time
            torch.cuda.synchronize()
    return out


def input_sets(first, make_set, streamed, l2):
    """The sets of inputs a graph cycles through: `first` alone; with `streamed`, `first` and
    fresh sets made by `make_set()`, as many in all as `copies` asks for a set of its bytes and
    an L2 of `l2()` bytes."""
    if not streamed:
        return [first]
    n = copies(args_bytes(first), l2())
    return [first] + [make_set() for _ in range(n - 1)]


def call_factory(choice, inputs, result, extern_type, is_split=lambda c: False):
    """A function making `choice`'s call on `inputs` into `result`, made anew on the stream it
    runs on (a Triton run function binds the current stream; a compiled module's call takes the
    current stream when called); None for other choices."""
    if isinstance(choice, extern_type):
        algo = choice.to_callable()
        return lambda: (lambda: algo(*inputs, out=result))
    if is_split(choice):
        call = split_call(choice, inputs)
        return None if call is None else (lambda: call)
    bmreq = getattr(choice, "bmreq", None)
    if bmreq is not None and hasattr(bmreq, "make_run_fn"):
        return lambda: bmreq.make_run_fn(*inputs, out=result)
    return None


def split_call(choice, inputs):
    """The call of decomposition `choice` as Inductor benchmarked it: on PyTorch 2.11 its
    `benchmark` compiles the subgraph to a module once and keeps it (`_compiled_module`), whose
    `call` takes the symbolic sizes' values and the inputs in one list (which it clears). None
    where the choice keeps no module (another PyTorch: it keeps Inductor's time)."""
    module = getattr(choice, "_compiled_module", None)
    if module is None or not callable(getattr(module, "call", None)):
        return None
    sizes = list(getattr(choice, "sym_input_values", ()))
    return lambda: module.call([*sizes, *inputs])


def graph_ms(factories, before, rounds=RETIME_ROUNDS):
    """Median ms of one `before(); call()` in a CUDA graph of about 1 ms of them (at most 50),
    but whole sweeps of `factories` (each makes a call on the stream it runs on; calls cycle
    through them: one set of operands each)."""
    import torch

    def run(calls, times):
        for i in range(times):
            if before is not None:
                before()
            calls[i % len(calls)]()

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        first = [factories[0]()]  # one set is enough to size the graph
        run(first, 1)
        start.record()
        run(first, 1)
        end.record()
    end.synchronize()
    torch.cuda.current_stream().wait_stream(stream)
    n = sweep_calls(start.elapsed_time(end), len(factories))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run([f() for f in factories], n)
    graph.replay()
    times = []
    for _ in range(rounds):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / n)
    return sorted(times)[len(times) // 2]


def sweep_calls(call_ms, sets):
    """Calls in a timed graph: about 1 ms of calls of `call_ms` each (1 to 50), rounded to
    whole sweeps of `sets` sets of operands (at least one)."""
    calls = max(1, min(50, round(1.0 / max(call_ms, 1e-3))))
    return sets * max(1, round(calls / sets))


def retime_install(warm=False, warm_no_bias=False, streamed=None):
    """Registers a `Retimer(warm, warm_no_bias, streamed)` first among Inductor's feedback
    savers (before any that records picks); returns it, or None where this PyTorch has no
    feedback savers."""
    try:
        from torch._inductor import select_algorithm

        savers = select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
    except Exception:  # noqa: BLE001 - another PyTorch: nothing to re-time
        return None
    saver = Retimer(warm, warm_no_bias, streamed)
    savers.insert(0, saver)
    return saver


def retime_uninstall(saver):
    """Removes what `retime_install()` registered (None: nothing)."""
    if saver is None:
        return
    saver.active = False
    try:
        from torch._inductor import select_algorithm

        savers = select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
        savers[:] = [s for s in savers if s is not saver]
    except Exception:  # noqa: BLE001 - the saver is inactive either way
        pass
