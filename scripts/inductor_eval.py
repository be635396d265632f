#!/usr/bin/env python3
"""Evaluation by compiled truth of a learned Inductor GEMM handler against max-autotune.

Usage (one CUDA GPU, PyTorch with Inductor and Triton):
  python3 scripts/inductor_eval.py --handler generated/inductor_mm_h100.py --out out/eval.json \
      [--gemms FILE.jsonl] [--workloads gemms,llama_train,llama_infer,encoder_train] \
      [--settings none,ours,max_autotune,mm_ranking] [--budget-s 1500] [--rounds 9]
  python3 scripts/inductor_eval.py --handler H.py --out out/eval.json --workload-file my_model.py
                                                     # your own model end to end (load_workload_file)
  python3 scripts/inductor_eval.py --handler H.py --candidate C.py --settings none,ours,candidate,...
                                                     # two handlers side by side in one process
  python3 scripts/inductor_eval.py --handler H.py --gemms SET.jsonl --lines 1-14 --out A.json ...
                                                     # a set in parts (each part one device call)
  python3 scripts/inductor_eval.py --handler H.py --gemms SET.jsonl --operands streamed ...
                                                     # compiled truth with the operands read from
                                                     # HBM, as a decode step reads its weights
                                                     # (inductor_operands.py)
  python3 scripts/inductor_eval.py --dry-run        # the planned GEMMs, no torch needed
  python3 scripts/inductor_eval.py --dry-run --handler H.py [--gemms F] [--workloads W]
                                                     # what the handler decides for each (and where
                                                     # pad_mm may pad it first), no torch
  python3 scripts/inductor_eval.py --merge A.json B.json ... [--out AB.json]
                                                     # the GEMMs of several result files as one
                                                     # table (and one file), no torch (see merge)

Settings (one warm process, caches disabled, a fresh Triton cache folder for every compile, so
that no setting finds kernels another compiled; start-up paid first):
  none          torch.compile's default (no max-autotune: cuBLAS)
  max_autotune  options={"max_autotune_gemm": True}
  max_autotune_ptxas  max_autotune with this process's Triton on the ptxas of Inductor's compile
                workers (python/ah_inductor/ptxas.py; the handler's install() does the same):
                how much of ours is that alone
  max_autotune_retime  max_autotune_ptxas with the choices of small GEMMs timed again by CUDA
                graph before Inductor picks (python/ah_inductor/retime.py, as the handler's
                install(retime=True) does): the re-timing alone, on every GEMM's full list
  mm_ranking    max_autotune_gemm plus PyTorch's shipped `_MMRankingH100` (autoheuristic_use="mm";
                only `tuned_mm` consults it, so it is run for op mm only)
  ours          max_autotune_gemm with the handler module's install() (stats() recorded)
  full_max_autotune  mode="max-autotune-no-cudagraphs": GEMM templates, coordinate-descent and
                pointwise autotuning (torch.compile's "max-autotune" without its CUDA graphs)
  ours_full     full_max_autotune with the handler installed
  candidate     max_autotune_gemm with a second handler (--candidate) installed: a new handler
                judged beside the shipped one on the same GEMMs, in the same process

Per GEMM (default: held-out real-model GEMMs from crates/ah-bench/catalogue/holdout.toml;
`--gemms` lines: {"op":"mm","batch":1,"m":..,"k":..,"n":..,"dtype":"bfloat16","tf32":false,
"trans_a":false,"trans_b":true}): each setting compiles fresh (dynamo reset) and its first call is
timed (compile time; autotuning time = compile time minus none's); the compiled function is
captured in a CUDA graph at once; after all settings, the graphs are replayed alternately after
warming the clocks, median per call (run time). Inductor's pick and choice count come from its
feedback saver and a choice preprocessing hook.

End to end: a 2-layer LLaMA-style decoder (hidden 2048, SwiGLU 5632, 16 heads of 128, RMSNorm,
bias-free linears, bf16, SDPA; no RoPE or embeddings: GEMMs and attention are what matter here):
`llama_train` one forward+backward on 8 x 1024 tokens; `llama_infer` prefill 4 x 512 tokens then
32 decode steps with a static KV cache. Compile time = first call(s) until every graph (forward and
backward; prefill and decode) is compiled; step time = median of alternated CUDA-graph replays
(eager calls right after the compile if capture fails, flagged). GEMM lowerings seen per setting
show that the handler reached every graph, the backward one included. `encoder_train`: a model of
another family, where the GEMMs are addmm and bmm: a 2-layer BERT-base-style encoder (hidden 768,
12 heads of 64, GELU MLP 3072, LayerNorm, linears with bias, attention as explicit matmul and
softmax) with its MLM head onto BERT's 30522-word vocabulary (a width cuBLAS handles poorly),
fp16, one forward+backward on 8 x 512 tokens.

Work is ordered by --workloads (GEMMs first by default; --gemms alone measures only its GEMMs),
settings by --settings (none always first: it is the baseline). The JSON is rewritten after
every item; --budget-s skips what would start after the budget (a GEMM's later settings too),
and the end says which `--lines` of the --gemms file measure again what it skipped or cut short.
The markdown table is printed at the end.
"""

import argparse
import contextlib
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

# This script's own modules, each one idea, none importing torch at import: the settings, the
# GEMMs before any torch, the handler modules, the warm process that measures (torch imported
# when it starts), the end-to-end workloads, the result file and its report.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_gemms import (GemmFileError, describe, handler_features, holdout_gemms,  # noqa: E402
                            padded_by_pad_mm, read_gemms)
from inductor_handlers import SWITCHES, installed_decide, load_handler  # noqa: E402
from inductor_harness import Inductor  # noqa: E402
from inductor_operands import OPERANDS, operand_sets  # noqa: E402
from inductor_results import MergeError, Results, flag_ours, json_default, merge, table, write_merged  # noqa: E402
from inductor_settings import DEFAULT_SETTINGS, HANDLED, OURS, ROLES, SETTINGS, WORKLOADS  # noqa: E402
from inductor_workloads import E2E, WorkloadFileError, load_workload_file, workload_gemms  # noqa: E402


# -- the dry run, and what the probe scripts share (no torch) -----------------------------------


def preview(gemms, handler, options=None):
    """Prints what the handler decides for each GEMM, without torch or a GPU, as its install()
    applies a decision with `options` (the role's `install_options`; `installed_decide`), and,
    where Inductor's pad_mm may pad the GEMM first, what it decides then if that differs."""
    counts, padded_apart = {}, 0
    decide = installed_decide(handler, options)
    for i, gm in enumerate(gemms):
        decision = decide(handler_features(gm))
        counts[decision[0]] = counts.get(decision[0], 0) + 1
        padded = padded_by_pad_mm(gm)
        after = decide(handler_features(padded)) if padded else decision
        note = ""
        if (after[0], tuple(after[1])) != (decision[0], tuple(decision[1])):
            padded_apart += 1
            same = decision_text(after) == decision_text(decision)
            note = (f"  (if pad_mm pads it to {padded['m']}x{padded['k']}x{padded['n']} first: "
                    f"{decision_text(after)}{', other configs' if same else ''})")
        print(f"{i + 1:3d}  {describe(gm):42s} {gm['name']}  -> {decision_text(decision)}{note}")
    if padded_apart:
        print(f"pad_mm may pad {padded_apart} of these first, and the handler then decides otherwise "
              "(shown): pad_mm pads where its benchmark says padding pays")
    print("decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def decision_text(decision):
    """A handler's decision in words: its kind, and how many Triton configs it keeps or drops."""
    kind, names = decision
    return kind + {"keep": f" + {len(names)} Triton configs",
                   "drop": f" - {len(names)} Triton configs"}.get(kind, "")


def probe_gemms(prog, ind, gemms, measure, out_path, budget_s, start, shown):
    """What a probe script runs: `measure(gm)` on each GEMM in order, starting none after
    `budget_s` seconds from `start` (perf_counter); a GEMM that raises is recorded as its error
    (`ind` made fresh) and the rest still run. `out_path` is rewritten as JSON lines after each
    GEMM (written empty first); progress goes to stderr with the record's `shown` field.
    Returns the records."""
    recs = []
    open(out_path, "w").close()
    for i, gm in enumerate(gemms, 1):
        if time.perf_counter() - start > budget_s:
            print(f"{prog}: the budget ran out before line {gm['line']}", file=sys.stderr)
            break
        try:
            recs.append(measure(gm))
        except Exception as e:  # noqa: BLE001 - one GEMM's failure is recorded, the rest still run
            recs.append({"gemm": gm, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            ind.fresh()
        with open(out_path, "w") as f:
            for r in recs:
                f.write(json.dumps(r, default=json_default) + "\n")
        print(f"[{i}/{len(gemms)}] {describe(gm)} {recs[-1].get(shown) or recs[-1].get('error')}",
              file=sys.stderr, flush=True)
    return recs


# -- one GEMM --------------------------------------------------------------------------------------


def gemm_fn(torch, gm):
    """(function, args) of the GEMM: operands laid out as described, fresh random data."""
    dtype = getattr(torch, gm["dtype"])

    def operand(rows, cols, transposed):
        shape = (cols, rows) if transposed else (rows, cols)
        if gm["op"] == "bmm":
            shape = (gm["batch"], *shape)
        t = torch.randn(shape, device="cuda", dtype=dtype)
        return t.transpose(-2, -1) if transposed else t

    a, b = operand(gm["m"], gm["k"], gm["trans_a"]), operand(gm["k"], gm["n"], gm["trans_b"])
    if gm["op"] == "bmm":
        return torch.bmm, (a, b)
    if gm["op"] == "addmm":
        return torch.addmm, (torch.randn(gm["n"], device="cuda", dtype=dtype), a, b)
    return torch.mm, (a, b)


def settings_for(gm, settings):
    """mm_ranking only where PyTorch consults it (tuned_mm); none first."""
    out = ["none"] + [s for s in settings if s != "none"]
    return [s for s in out if s != "mm_ranking" or gm["op"] == "mm"]


def sweep_of(compiled, sets):
    """One replay's calls: `compiled` on each argument tuple of `sets` (inductor_operands)."""
    def sweep():
        for args in sets:
            compiled(*args)
    return sweep


def measure_gemm(ind, gm, settings, out_of_time, operands="warm"):
    """Compile time, autotuning and compiled truth of GEMM `gm` under each setting, `operands`
    warm or streamed through the L2 (inductor_operands)."""
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
    fn, args = gemm_fn(torch, gm)
    sets = operand_sets(torch, args, lambda: gemm_fn(torch, gm)[1], operands)
    rec = {"gemm": gm, "compile_s": {}}
    graphs, calls = {}, None
    for s in settings_for(gm, settings):
        if out_of_time():
            rec.setdefault("not_run", []).append(s)
            continue
        ind.fresh()
        with ind.setting(s, rec) as options, failure(ind, rec, s):
            compiled = torch.compile(fn, dynamic=False, fullgraph=True, options=options)
            rec["compile_s"][s] = ind.timed_first_call(lambda: compiled(*args))
            sweep = sweep_of(compiled, sets)
            if calls is None:
                calls = max(1, min(20, round(2.0 / max(ind.probe_ms(sweep), 1e-3))))
            graphs[s] = ind.capture(sweep, calls)
    ind.fresh()
    if "none" in rec["compile_s"]:
        rec["autotune_s"] = {s: t - rec["compile_s"]["none"] for s, t in rec["compile_s"].items()}
    rec["graph_calls"] = (calls or 1) * len(sets)
    rec["run_ms"] = ind.alternate({s: gr.replay for s, gr in graphs.items()}, rec["graph_calls"])
    if operands != "warm":
        rec["operand_sets"] = len(sets)
    flag_ours(rec)
    return rec


@contextlib.contextmanager
def failure(ind, rec, setting):
    """A setting that fails is recorded in rec["errors"]; the other settings still run."""
    try:
        yield
    except Exception as e:  # noqa: BLE001
        rec.setdefault("errors", {})[setting] = f"{type(e).__name__}: {str(e)[:300]}"
        ind.torch.cuda.synchronize()
        ind.fresh()


# -- end to end --------------------------------------------------------------------------------------


def measure_e2e(ind, workload, settings, out_of_time, progress=None):
    """Compile time and step time of `workload` under each setting, none first, the steps timed
    alternated at the end. `progress(rec, line)`, when given, gets the record so far and a line
    saying what happened as each setting starts and ends, so that a run cut inside a compile
    (max-autotune's can outlast a device call) keeps the compile times before it and names the
    setting it was in (`rec["compiling"]`)."""
    tell = progress or (lambda rec, line: None)
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    build, make = E2E[workload]
    model = build(torch)
    rec = {"compile_s": {}, "timing": {}}
    replays, eager = {}, {}
    # A captured graph reads its workload's tensors (inputs, KV caches, positions) when it is
    # replayed: they must outlive it, or the replay reads memory given to later settings.
    alive = []
    for s in ["none"] + [x for x in settings if x != "none"]:
        if out_of_time():
            rec.setdefault("not_run", []).append(s)
            continue
        ind.fresh()
        rec["compiling"] = s
        tell(rec, f"{workload}: compiling {s}")
        with ind.setting(s, rec) as options, failure(ind, rec, s):
            first, step = make(torch, model, options)
            rec["compile_s"][s] = ind.timed_first_call(first)
            try:
                graph = ind.capture(step, 1)
                alive.append((graph, first, step))
                replays[s] = graph.replay
                rec["timing"][s] = "cuda_graph"
            except Exception as e:  # noqa: BLE001 - timed by eager calls instead, flagged
                torch.cuda.synchronize()
                rec["timing"][s] = f"eager right after compile ({type(e).__name__}: {str(e)[:200]})"
                eager[s] = ind.alternate({s: step}, 1)[s]
        del rec["compiling"]
        done = f"compiled in {rec['compile_s'][s]:.1f} s" if s in rec["compile_s"] else "failed"
        tell(rec, f"{workload}: {s} {done}")
    ind.fresh()
    rec["step_ms"] = dict(eager, **ind.alternate(replays, 1)) if replays else dict(eager)
    if "none" in rec["compile_s"]:
        rec["autotune_s"] = {s: t - rec["compile_s"]["none"] for s, t in rec["compile_s"].items()}
    return rec


# -- main ---------------------------------------------------------------------------------------------


def line_range(text):
    """`A-B` (1 <= A <= B) as (A, B); a single line `A` as (A, A)."""
    first, dash, last = text.partition("-")
    if not dash:
        last = first
    if first.isdigit() and last.isdigit() and 1 <= int(first) <= int(last):
        return int(first), int(last)
    raise argparse.ArgumentTypeError(f"{text!r} is not A or A-B with 1 <= A <= B (e.g. 1-14)")


def line_ranges(text):
    """`A-B[,C,D-E...]` as a list of (A, B), for --lines."""
    return [line_range(part) for part in text.split(",")]


def as_ranges(numbers):
    """Line numbers as `A-B[,C,D-E...]`, each run of consecutive numbers one range (a lone line
    as its number)."""
    runs = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(f"{a}-{b}" if a < b else f"{a}" for a, b in runs)


def default_workloads(a):
    """--workloads when not given: all of them; but what the command names instead where it
    names GEMMs (--gemms: only those) or a workload of its own (--workload-file: only that).
    A call meant for a file's GEMMs that also ran the built-in end-to-end models spent its
    device time on them (docs/results.md, fortieth session)."""
    if a.gemms:
        return "gemms"
    return "" if a.workload_file else ",".join(WORKLOADS)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--handler", help="the generated handler module (.py); needed for setting ours")
    p.add_argument("--candidate", metavar="MODULE.py",
                   help="a second handler module, measured as setting candidate beside ours (its file "
                        "name must differ from --handler's: ah-prune --heuristic-name)")
    p.add_argument("--out", help="the JSON results file")
    p.add_argument("--gemms", help="JSON lines of GEMMs (replaces the held-out list)")
    p.add_argument("--lines", metavar="A-B[,C,...]", type=line_ranges,
                   help="only the GEMMs on lines A to B (and C to D ...) of --gemms (1-based, "
                        "inclusive): a set measured in parts, each result file naming the file and "
                        "its lines")
    p.add_argument("--workloads", default=None,
                   help=f"comma-separated, of {', '.join(WORKLOADS)} (default: all of them; only gemms "
                        f"when --gemms is given, none when --workload-file is given, and only gemms "
                        f"when both are)")
    p.add_argument("--workload-file", action="append", default=[], metavar="FILE.py",
                   help="an end-to-end workload of your own, run after --workloads under the file's "
                        "name: it defines build(torch) and workload(torch, model, options) "
                        "(docs/inductor.md); repeatable")
    p.add_argument("--settings", default=",".join(DEFAULT_SETTINGS),
                   help=f"comma-separated, of {', '.join(SETTINGS)}")
    p.add_argument("--budget-s", type=float, default=None, help="start no item after this many seconds")
    p.add_argument("--rounds", type=int, default=9, help="alternated rounds of the run-time median")
    p.add_argument("--operands", choices=OPERANDS, default="warm",
                   help="how each GEMM's compiled truth meets the L2 cache (scripts/inductor_operands.py): "
                        "warm, every call on the same operands (the default, as every earlier result), or "
                        "streamed, each replay sweeping copies that cover twice the L2, so that every "
                        "call reads its operands from HBM, as a decode step reads its weights (GEMMs "
                        "only: end-to-end workloads run as their model does); the pooling scripts "
                        "keep the two apart")
    p.add_argument("--merge", nargs="+", metavar="JSON",
                   help="print the GEMMs of these result files as one table (see merge) and stop; "
                        "with --out, also write them there as one result file")
    for option, what in SWITCHES:
        flag = option.replace("_", "-")
        p.add_argument("--" + flag, action="append", default=[], choices=ROLES,
                       help=f"install that role's handler with {option}=True: {what}; repeatable")
        p.add_argument("--no-" + flag, action="append", default=[], choices=ROLES,
                       help=f"install that role's handler with {option}=False; repeatable")
    p.add_argument("--dry-run", action="store_true",
                   help="print the planned GEMMs and stop (no torch); with --handler, what it decides for each")
    a = p.parse_args(argv)
    if a.workloads is None:
        a.workloads = default_workloads(a)
    a.workloads = [w for w in a.workloads.split(",") if w]
    a.settings = [s for s in a.settings.split(",") if s]
    files = {os.path.splitext(os.path.basename(f))[0]: f for f in a.workload_file}
    for w in a.workloads:
        if w in files:
            p.error(f"workload {w!r} is --workload-file {files[w]}'s: it runs after --workloads "
                    f"without being named there; leave it out of --workloads")
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r} (one of {', '.join(WORKLOADS)}; a workload of your own "
                    f"runs by --workload-file FILE.py)")
    for s in a.settings:
        if s not in SETTINGS:
            p.error(f"unknown setting {s!r} (one of {', '.join(SETTINGS)})")
    if not a.dry_run and not a.out and not a.merge:
        p.error("--out is required")
    if not a.dry_run and not a.merge:
        if set(OURS) & set(a.settings) and not a.handler:
            p.error("settings ours and ours_full need --handler")
        if "candidate" in a.settings and not a.candidate:
            p.error("setting candidate needs --candidate")
    if a.lines and not a.gemms:
        p.error("--lines needs --gemms")
    if a.handler and a.candidate and os.path.basename(a.handler) == os.path.basename(a.candidate):
        p.error(f"--handler and --candidate are both named {os.path.basename(a.candidate)}: each handler "
                "is imported under its file name, so give the candidate another (ah-prune --heuristic-name)")
    for option, _ in SWITCHES:
        both = set(getattr(a, option)) & set(getattr(a, "no_" + option))
        if both:
            flag = option.replace("_", "-")
            p.error(f"--{flag} and --no-{flag} both name {', '.join(sorted(both))}")
    return a


def install_options(a):
    """role -> the arguments its handler's install() gets: `OPTION=True` from --OPTION ROLE and
    `OPTION=False` from --no-OPTION ROLE, for each of SWITCHES; a role not named keeps its
    module's defaults (older modules lack the later arguments)."""
    options = {}
    for option, _ in SWITCHES:
        for value, roles in ((True, getattr(a, option)), (False, getattr(a, "no_" + option))):
            for role in roles:
                options.setdefault(role, {})[option] = value
    return options


def handler_paths(a):
    """role -> module path of the handlers the settings install."""
    roles = {HANDLED[s] for s in a.settings if s in HANDLED}
    return {role: getattr(a, "handler" if role == "ours" else role) for role in sorted(roles)}


def main(argv=None):
    a = parse(argv)
    try:
        a.workloads += [load_workload_file(f) for f in a.workload_file]
    except WorkloadFileError as e:
        print(f"inductor_eval: {e}", file=sys.stderr)
        return 2
    if a.merge:
        try:
            data = merge(a.merge)
            if a.out:
                write_merged(data, a.out, a.merge)
        except MergeError as e:
            print(f"inductor_eval: {e}", file=sys.stderr)
            return 2
        print(table(data, [s for s in SETTINGS if s in data["summary"]["autotune_s"]]))
        return 0
    try:
        gemms = read_gemms(a.gemms, lines=a.lines) if a.gemms else holdout_gemms()
    except (OSError, GemmFileError) as e:
        print(f"inductor_eval: {e}", file=sys.stderr)
        return 2
    if a.dry_run and (a.handler or a.candidate):
        roles = [(role, p) for role, p in (("ours", a.handler), ("candidate", a.candidate)) if p]
        options = install_options(a)
        for role, path in roles:
            handler = load_handler(path)
            for w in a.workloads:
                print(f"{w} ({os.path.basename(path)}):" if len(roles) > 1 else f"{w}:")
                if w in WORKLOADS:
                    preview(gemms if w == "gemms" else workload_gemms(w), handler, options.get(role))
                else:
                    print("  (a workload file: its GEMMs are known once Inductor compiles it)")
        return 0
    if a.dry_run:
        for i, gm in enumerate(gemms):
            print(f"{i + 1:3d}  {describe(gm):42s} {gm['name']}  settings: {','.join(settings_for(gm, a.settings))}")
        print(f"{len(gemms)} GEMMs; workloads {','.join(a.workloads)}")
        return 0
    t0 = time.perf_counter()
    ind = Inductor(handler_paths(a), a.rounds, install_options(a))
    for role in ind.refused:
        dropped = [s for s in a.settings if HANDLED.get(s) == role]
        print(f"inductor_eval: the {role} handler refused this GPU or PyTorch; setting(s) "
              f"{', '.join(dropped)} dropped", file=sys.stderr)
        a.settings = [s for s in a.settings if s not in dropped]
    results = Results(a.out, dict(ind.meta(), operands=a.operands, args=vars(a),
                                  start_up_s=time.perf_counter() - t0))
    budget_end = None if a.budget_s is None else t0 + a.budget_s

    def out_of_time():
        return budget_end is not None and time.perf_counter() > budget_end

    late = []  # GEMMs the budget left unmeasured, or cut before their last setting
    for w in a.workloads:
        items = gemms if w == "gemms" else [w]
        for item in items:
            label = item["name"] if w == "gemms" else item
            if out_of_time():
                results.data["skipped"].append(label)
                if w == "gemms":
                    late.append(item)
                continue
            print(f"[{time.perf_counter() - t0:7.1f}s] {label}", file=sys.stderr, flush=True)
            try:
                if w == "gemms":
                    rec = measure_gemm(ind, item, a.settings, out_of_time, a.operands)
                    results.data["gemms"].append(rec)
                    if rec.get("not_run"):  # cut between settings: measure it again, whole
                        late.append(item)
                else:
                    results.data["e2e"][w] = measure_e2e(ind, w, a.settings, out_of_time,
                                                         e2e_progress(results, w, t0))
            except Exception as e:  # noqa: BLE001 - recorded; the next item still runs
                ind.fresh()
                results.data["skipped"].append(f"{label}: {type(e).__name__}: {str(e)[:300]}")
            results.save()
    results.save()
    print(table(results.data, a.settings))
    if late:
        note = budget_note(late, a.gemms)
        print(f"\n{note}")
        print(f"inductor_eval: {note}", file=sys.stderr)
    return 0


def e2e_progress(results, workload, t0):
    """`measure_e2e`'s progress: the record so far saved as the workload's, the line to stderr
    with the seconds since `t0`."""
    def progress(rec, line):
        results.data["e2e"][workload] = rec
        results.save()
        print(f"[{time.perf_counter() - t0:7.1f}s] {line}", file=sys.stderr, flush=True)
    return progress


def budget_note(late, gemms_path):
    """What the budget left unmeasured or cut short (a GEMM whose later settings did not run has
    no figures to compare), and the --lines that measure it (GEMMs of a --gemms file carry their
    line), as few ranges as hold them."""
    lines = as_ranges(g["line"] for g in late if "line" in g)
    rerun = (f" (lines {lines} of {gemms_path}): measure them with `--lines {lines}`"
             if lines and gemms_path else "")
    return f"The budget ran out before or during {len(late)} GEMM(s){rerun}."


if __name__ == "__main__":
    sys.exit(main())
