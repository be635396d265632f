#!/usr/bin/env python3
"""Pools the held-out evaluations of scripts/inductor_eval.py and asks them five questions
(and sums their autotuning: ours against max-autotune, over the GEMMs that measured both).

1. How reachable is issue 26's bound? (And how much of a miss is measurement alone: on GEMMs
   where cuBLAS only, ours and max-autotune all ran a cuBLAS kernel, each setting ran the same
   kernel, so any distance between them is run-to-run spread, not a decision.) A GEMM is over it when its compiled truth is more than 3 %
   slower than the faster of cuBLAS and default max-autotune's pick (`inductor_results.best_ms`).
   Runs that measured `max_autotune_ptxas` beside `max_autotune` compiled each GEMM under default
   max-autotune twice in one process: the same choice list, searched again with one ptxas, which
   changes what compiling costs and not what is offered. How often that second search lands over
   the bound set by the first is the bound's noise floor: what default max-autotune itself
   scores against its own pick. Runs that also measured `max_autotune_retime` (the second search with
   its choices re-timed by CUDA graph, python/ah_inductor/retime.py) get a row and a column of
   their own. Runs that measured two handlers (`--candidate`) give the
   handlers' own floor: on the GEMMs both decided alike (cuBLAS only, or the full list), how
   often the two compiled results lie more than 3 % apart.
2. Where do the misses lie? Per band of cuBLAS's run time, how many GEMMs each setting leaves over
   the bound (every run that measured `none` and `max_autotune`; `ours` is whichever handler that
   run measured); and per decision of ours (cuBLAS only, a kept list, the full list, the full
   list trimmed), the same counts on the GEMMs it decided so, with ours' and max-autotune's
   autotuning on them (where ours spends the seconds it spends).
3. Which are ours at and above 100 us, where max-autotune's two searches agree? One line each
   (and, with `--handler`, the replayed handler's too):
   the file, the GEMM, what the handler decided (`ours_decisions`: cuBLAS only, a kept list of
   how many choices, or the full list), and ours, cuBLAS and max-autotune over the bound's best.
4. With `--handler MODULE.py`: what would another handler have done on these GEMMs, without a
   GPU? First, on every record (cuBLAS only was measured on each): where it decides cuBLAS
   only, how often that one call is over the bound, and by kind (op, precision, band of rows)
   the kinds with a GEMM over, the most over first: where a rule might pay. Then its decisions, as its install() makes
   them by default (a narrow linear or a small-side `bmm` the tree gives cuBLAS alone is
   searched, since the forty-fifth and forty-seventh sessions), are replayed on the runs that
   searched the full list twice, where each outcome was measured: `extern` ran as `none`
   (cuBLAS, the one choice Inductor then takes; for an addmm where the handler's runtime keeps
   the expanded-bias call instead of the 1-D one `none` ran, `none` scaled by the two calls'
   eager twins in data/addmm_bias_*.jsonl, and not replayed where they were not timed),
   `default` as the second search, `max_autotune_ptxas` (the full list with ptxas aligned, as
   the handler's install() runs it; an outcome measured apart from the bound's), or, where the
   run measured it, as that search re-timed, `max_autotune_retime` (as install() runs it since
   the twenty-seventh session). A `keep` list
   was measured only where the run's own handler kept the same list: with `--measured
   MEASURED.py`, the handler those runs measured as `ours`, every decision equal to its
   decision is replayed as `ours` ran (its run time and autotuning), kept lists included;
   other kept lists are not replayed as measured; where the run recorded default max-autotune's
   benchmark of each choice (`bench_ms`, since the nineteenth session), they are estimated as the
   trainer scores a kept list and counted on a line of their own. The rest are counted on another,
   with the likely misses among them: max-autotune's pick not kept, and cuBLAS alone over the
   bound. The measured handler must decide every GEMM of the files as their `ours` did
   (checked). Screening only: the held-out sets were written
   blind for the handlers they measured, not for the one replayed, so a handler chosen this
   way still needs a fresh blind set.

5. With `--handler A.py --against B.py`: which of two handlers to ship? Both are replayed as in
   4 and scored on the GEMMs where both outcomes are known (the same GEMMs for both, which the
   two replays alone are not: a kept list one of them decides may be unmeasured), with the
   GEMMs where one is over the bound and the other is not. Beside the count, each handler's run
   time over the bound's best, summed over those GEMMs: what a job running each GEMM once pays
   for the misses, which the count weighs alike at 5 us and 5 ms. Then again with the unmeasured kept
   lists estimated from the recorded benchmark as in 4, where that adds GEMMs (a candidate that
   turns full lists into kept lists is otherwise scored only where it did not).

`--ours candidate` counts the second handler of runs that measured one (`inductor_eval.py
--candidate`) as `ours` in all five (its run time, autotuning, stats and recorded decisions);
other runs keep their `ours`. A handler those runs measured as `candidate` and then shipped is
then the `--measured` one.

Where a run recorded the features its handler decided on (`ours_decisions`, since the
fifteenth session), replayed handlers decide on those, not on the preview's: Inductor may
rewrite a GEMM (pad_mm) before the handler sees it.

Compiles that failed (a setting's `errors` in a result file) are named on a line of their own;
the tallies leave them out, having no run time.

Reads only the result files (no torch, no GPU). Every run is one record: a GEMM measured in two
runs counts twice, as the two measurements it is.

`--files-from LIST` reads result files from LIST, one per line relative to LIST's folder (#
starts a comment), before any named on the command line. data/holdout_pool.txt lists the pool
that docs/results.md scores: every blind set since 13, each measured with the handler shipped
when it ran, on the H100; data/holdout_pool_h200.txt lists the H200's. Files of two GPUs are
refused (exit 2): their run times do not compare.

`--only narrow-linears` asks every question of one kind of GEMM only: linear layers to a narrow
output (not `bmm`; n <= 64, k >= 512, m <= 16384: MoE routers, classifier and regression heads,
LoRA's `lora_A`), where the handlers' misses were densest in the thirty-seventh session.
`--only long-contractions`: `mm` with k at least 32 times the larger output side, where
PyTorch 2.11's Inductor offers `decompose_k`'s splits (`triton.decompose_k_threshold`).
`--only decode-contexts`: a decode step's attention context `bmm` (m <= 1 per matrix, k >= 1024
cached tokens, n <= 256, a head's width).
`--only small-bmm`: a `bmm` with a side of at most 64 (choices.small_side_bmm).
`--only bias-heads`: a half-precision `addmm` over 128-256 rows with k >= 2048 and n <= 4096
(choices.bias_head: classifier heads at a batch of 128-256).
`--only expert-bmm`: a half-precision `bmm` of 65-256 rows with k and n of at least 512 (MoE
experts run as a `bmm` over 65-256 tokens each).

`--with OPTION` replays `--handler` as its `install(OPTION=True)` decides (an option that changes
decisions: narrow_search, small_bmm_search, bias_head_search, fp32_small_search,
half_few_rows_search), and
`--without OPTION` as `install(OPTION=False)` does; `--against` stays at its module's defaults,
so `--handler H.py --without small_bmm_search --against H.py` scores what the option, on by
default, changes on the shipped tree (and `--with half_few_rows_search`, off by default, what
turning that one on would).

Usage: scripts/holdout_pool.py [--handler MODULE.py [--measured MEASURED.py] [--against OTHER.py]
                                                [--with OPTION] [--without OPTION]]
                               [--ours ours|candidate] [--only narrow-linears|long-contractions|
                               decode-contexts|small-bmm|bias-heads|expert-bmm]
                               [--files-from LIST] [RESULT.json ...] > pooled.md
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from ah_inductor.choices import bias_head, narrow_linear, small_side_bmm  # noqa: E402 - each kind has one owner
from holdout_records import (  # noqa: E402 - the records and the bound's tallies
    LABELS, RETIMED, SECOND, PoolError, decided, fmt_tally, misses_table, records, shape_of, shown_settings,
    tally, twice)
from holdout_replay import (  # noqa: E402 - questions 4 and 5
    against_table, handler_decide, handler_keeps, handler_module, replay_table)
from inductor_handlers import DECIDING, installed_decide  # noqa: E402 - one owner each
from inductor_gemms import handler_features  # noqa: E402
from inductor_results import SLOW_FLAG, geomean, spent_any  # noqa: E402

# Bands of cuBLAS's compiled run time, ms: a few microseconds, where Inductor's benchmark
# misreads cuBLAS (docs/inductor.md), up to GEMMs of milliseconds.
BANDS_MS = (0.0, 0.01, 0.05, 0.1, 1.0, math.inf)


def twins_line(recs):
    """A handler's own noise floor: the GEMMs two handlers decided alike, compiled twice in one
    process, and how often the two results lie more than the bound apart."""
    twins = [r["twin"] for r in recs if r.get("twin")]
    if not twins:
        return "No run measured two handlers that decided a GEMM alike."
    parts = []
    for kind, words in (("extern", "cuBLAS only"), ("default", "the full list")):
        ratios = [x for k, x in twins if k == kind]
        if ratios:
            parts.append(f"{words}: {sum(x > SLOW_FLAG for x in ratios)} of {len(ratios)} more "
                         f"than 3 % apart (worst {max(ratios):.3f}x)")
    return (f"On {len(twins)} GEMMs two handlers of one run decided alike and were compiled "
            f"twice: " + "; ".join(parts) + ". The same decision, compiled again, lands more "
            "than 3 % away this often: a handler's own noise floor.")


def is_cublas(picked):
    """Whether a setting's recorded picks are cuBLAS (ATen's extern kernels) alone."""
    return bool(picked) and all(name.startswith("extern") for name in picked)


def same_kernel(recs):
    """The runs where cuBLAS only, ours and max-autotune all ran cuBLAS: one kernel thrice."""
    return [r for r in recs if r["run_ms"].get("ours")
            and all(is_cublas(r["picked"].get(s)) for s in ("none", "ours", "max_autotune"))]


def same_kernel_line(recs):
    alike = same_kernel(recs)
    if not alike:
        return "No run had cuBLAS only, ours and max-autotune all on cuBLAS."
    ours, none = tally(alike, "ours"), tally(alike, "none")
    gm = geomean([r["run_ms"]["ours"] / r["run_ms"]["none"] for r in alike])
    return (f"On {len(alike)} GEMMs cuBLAS only, ours and max-autotune all ran cuBLAS, one kernel: "
            f"over the bound by measurement alone, ours {ours[1]} (worst {ours[3]:.3f}x), "
            f"cuBLAS only {none[1]} (worst {none[3]:.3f}x); ours / cuBLAS only {gm:.4f} (gmean).")


def band_of(r):
    ms = r["run_ms"]["none"]
    return next(i for i, hi in enumerate(BANDS_MS[1:]) if ms < hi)


def band_label(i):
    lo, hi = BANDS_MS[i], BANDS_MS[i + 1]
    us = lambda ms: f"{ms * 1000:g} us"  # noqa: E731
    return f">= {us(lo)}" if hi == math.inf else f"{us(lo)} - {us(hi)}"


def noise_table(recs):
    """How often default max-autotune's second search of its own list lands over the bound: its
    run-to-run noise, beside every setting on the same GEMMs. One line where no run searched
    twice."""
    both, alike = twice(recs)
    if not both:
        return "No run searched default max-autotune's full list twice (its run-to-run noise)."
    lines = [f"Runs that searched default max-autotune's full list twice: {len(both)} GEMMs; "
             f"the two searches picked the same choice on {alike}.", "",
             "| setting | over the bound (3 %) | run / max-autotune's (gmean) |", "|---|---|---|"]
    for s in shown_settings(recs):
        gm = geomean([r["run_ms"][s] / r["run_ms"]["max_autotune"] for r in both if r["run_ms"].get(s)])
        lines.append(f"| {LABELS[s]} | {fmt_tally(tally(both, s))} | {'-' if gm is None else f'{gm:.3f}'} |")
    return "\n".join(lines)


def failed_line(recs):
    """The compiles that failed, by setting: the bound's tallies leave them out (no run time),
    and a failed compile is worse than any miss."""
    failed = {}
    for r in recs:
        for s in r["errors"]:
            failed.setdefault(s, []).append(f"{shape_of(r['gemm'])} ({os.path.basename(r['source'])})")
    if not failed:
        return "No compile failed."
    return "Compiles that failed (left out of the tallies): " + "; ".join(
        f"{LABELS.get(s, s)} {len(v)}: {', '.join(v)}" for s, v in failed.items())


def measured_both(recs):
    """The records whose runs measured the autotuning of both ours and max-autotune."""
    return [r for r in recs if {"ours", "max_autotune"} <= set(r.get("autotune_s", {}))]


def autotuning_sums(both):
    """Ours' and max-autotune's autotuning seconds summed over `both`, and the words for how
    many times less ours spent."""
    ours, ma = (sum(r["autotune_s"][s] for r in both) for s in ("ours", "max_autotune"))
    return ours, ma, (f"{ma / ours:.1f}x less" if spent_any(ours, len(both)) else "ours spent none")


def autotuning_line(recs):
    """Autotuning seconds (compile time over cuBLAS only's) summed over the GEMMs whose runs
    measured both ours and max-autotune, and how many times less ours spent."""
    both = measured_both(recs)
    if not both:
        return "No run measured the autotuning of both ours and max-autotune."
    ours, ma, less = autotuning_sums(both)
    again = [r["autotune_s"][SECOND] for r in both if SECOND in r["autotune_s"]]
    retimed = [r["autotune_s"][RETIMED] for r in both if RETIMED in r["autotune_s"]]
    retimed = f"; re-timed {sum(retimed):.1f} s on {len(retimed)}" if retimed else ""
    return (f"Autotuning on the {len(both)} GEMMs whose runs measured ours and max-autotune: "
            f"ours {ours:.1f} s, max-autotune {ma:.1f} s ({less}); max-autotune again (one ptxas) "
            f"{sum(again):.1f} s on {len(again)} of them{retimed}.")


def band_table(recs):
    shown = shown_settings(recs)
    lines = ["| cuBLAS run time | GEMMs | " + " | ".join(LABELS[s] for s in shown) + " |",
             "|---|---|" + "---|" * len(shown)]
    for i in range(len(BANDS_MS) - 1):
        inside = [r for r in recs if band_of(r) == i]
        if inside:
            cells = [fmt_tally(tally(inside, s)) for s in shown]
            lines.append(f"| {band_label(i)} | {len(inside)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Records whose lowerings the handler decided differently (a long contraction's `decompose_k`
# splits lower inner `bmm`s, each decided apart) or that recorded no decision.
MIXED = "mixed or unrecorded"


def decision_table(recs):
    """Question 2 by what ours decided (`decided`; kept lists of any length together): how
    many of those GEMMs each setting leaves over the bound, and where ours' autotuning went
    (summed over the GEMMs of the decision whose runs measured both ours and max-autotune)."""
    groups = {}
    for r in recs:
        if r["run_ms"].get("ours"):
            word = decided(r)
            word = "kept list" if word.startswith("kept") else word
            groups.setdefault(MIXED if word == "-" else word, []).append(r)
    shown = ("none", "ours", "max_autotune")
    lines = ["| ours decided | GEMMs | " + " | ".join(LABELS[s] for s in shown)
             + " | autotuning s: ours / max-autotune |", "|---|---|" + "---|" * (len(shown) + 1)]
    for word, inside in sorted(groups.items()):
        cells = [fmt_tally(tally(inside, s)) for s in shown] + [autotuning_cell(inside)]
        lines.append(f"| {word} | {len(inside)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def autotuning_cell(recs):
    """`ours / max-autotune (N x less)` over those of `recs` that measured both, on how many."""
    both = measured_both(recs)
    if not both:
        return "-"
    ours, ma, less = autotuning_sums(both)
    return f"{ours:.1f} / {ma:.1f} ({less}; {len(both)} GEMM{'' if len(both) == 1 else 's'})"


def listed_files(path):
    """The result files named in list file `path`: one per line, relative to the list's folder;
    blank lines and lines starting with # are left out."""
    try:
        with open(path) as f:
            lines = [line.strip() for line in f]
    except OSError as e:
        raise PoolError(f"--files-from {path}: {e.strerror}") from None
    base = os.path.dirname(path)
    names = [line for line in lines if line and not line.startswith("#")]
    if not names:
        raise PoolError(f"--files-from {path}: names no result file (one per line, # for comments)")
    return [os.path.join(base, name) for name in names]


# `--only NAME`: the GEMMs every question is asked of (a GEMM's fields are named as the
# handler's features are).
SPLIT_THRESHOLD = 32  # PyTorch 2.11's config.triton.decompose_k_threshold


def long_contraction(f):
    """Whether features `f` are an `mm` that Inductor offers `decompose_k`'s splits for."""
    return f["op"] == "mm" and f["k"] >= SPLIT_THRESHOLD * max(f["m"], f["n"])


# A decode step's attention context (probs @ V): one query per matrix over a long cache, to a
# head's width. The forty-second session's definition of `decode_search`'s GEMMs.
DECODE_MIN_K, DECODE_MAX_N = 1024, 256


def decode_context(f):
    """Whether features `f` are a decode step's attention context `bmm`: m <= 1 per matrix,
    k >= DECODE_MIN_K, n <= DECODE_MAX_N."""
    return f["op"] == "bmm" and f["m"] <= 1 and f["k"] >= DECODE_MIN_K and f["n"] <= DECODE_MAX_N


def biased_head(g):
    """Whether GEMM `g` (a result file's description) is a half-precision biased head
    (choices.bias_head, which reads the handler's features)."""
    return bias_head(handler_features(g))


# MoE experts run as one half-precision `bmm` over 65-256 tokens each, just past `small_side_bmm`:
# what `install(expert_bmm_search=True)` searched until its blind check failed and it was removed
# (docs/results.md, fifty-third session).
EXPERT_MIN_M, EXPERT_MAX_M, EXPERT_MIN_KN = 65, 256, 512


def experts_bmm(g):
    """Whether GEMM `g` (a result file's description) is a half-precision `bmm` of EXPERT_MIN_M
    to EXPERT_MAX_M rows with k and n of at least EXPERT_MIN_KN."""
    return (g["op"] == "bmm" and g["dtype"] in ("float16", "bfloat16")
            and EXPERT_MIN_M <= g["m"] <= EXPERT_MAX_M and min(g["k"], g["n"]) >= EXPERT_MIN_KN)


SUBSETS = {"narrow-linears": narrow_linear, "long-contractions": long_contraction,
           "decode-contexts": decode_context, "small-bmm": small_side_bmm, "bias-heads": biased_head,
           "expert-bmm": experts_bmm}


def replay_options(on, off):
    """The replayed handler's install() options of `--with on` and `--without off` (either
    None), or None when neither is given."""
    options = {}
    for flag, option, value in (("--with", on, True), ("--without", off, False)):
        if option is None:
            continue
        if option not in DECIDING:
            raise PoolError(f"{flag} {option}: give one of {', '.join(DECIDING)}")
        options[option] = value
    if on is not None and on == off:
        raise PoolError(f"--with and --without both name {on}: give it to one of them")
    return options or None


def parse(argv):
    """(handler, measured handler, handler to compare against, the setting counted as ours,
    the subset's predicate or None, the replayed handler's install() options or None, result
    files) of the command line."""
    modules = {"--handler": None, "--measured": None, "--against": None, "--ours": "ours",
               "--only": None, "--files-from": None, "--with": None, "--without": None}
    while argv[:1] and argv[0] in modules:
        if len(argv) < 2:
            raise PoolError(f"{argv[0]} needs a value")
        modules[argv[0]], argv = argv[1], argv[2:]
    if modules["--files-from"]:
        argv = listed_files(modules["--files-from"]) + argv
    for needs in ("--measured", "--against", "--with", "--without"):
        if modules[needs] and not modules["--handler"]:
            raise PoolError(f"{needs} needs --handler (the handler to replay)")
    if modules["--ours"] not in ("ours", "candidate"):
        raise PoolError(f"--ours {modules['--ours']}: give ours or candidate")
    options = replay_options(modules["--with"], modules["--without"])
    only = modules["--only"]
    if only is not None and only not in SUBSETS:
        raise PoolError(f"--only {only}: give one of {', '.join(SUBSETS)}")
    if not argv:
        raise PoolError("name the result files, or a list of them with --files-from (see --help)")
    return (modules["--handler"], modules["--measured"], modules["--against"], modules["--ours"],
            SUBSETS.get(only), options, argv)


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    try:
        handler, measured, against, ours, only, options, paths = parse(argv)
        recs = [r for r in records(paths, ours) if only is None or only(r["gemm"])]
        module = handler_module(handler) if handler else None
        decide = installed_decide(module, options) if module else None
        measured = handler_decide(measured) if measured else None
        replay = replay_table(recs, decide, measured, handler_keeps(module)) if module else None
        other = handler_module(against) if against else None
        versus = (against_table(recs, decide, installed_decide(other), measured,
                                (handler_keeps(module), handler_keeps(other))) if other else None)
    except PoolError as e:
        print(f"holdout_pool: {e}", file=sys.stderr)
        return 2
    print(f"{len(recs)} measured GEMMs from {len(paths)} result files. A cell: GEMMs over the "
          f"bound / GEMMs measured.\n")
    print(noise_table(recs))
    print()
    print(failed_line(recs))
    print()
    print(autotuning_line(recs))
    print()
    print(same_kernel_line(recs))
    print()
    print(twins_line(recs))
    print()
    print(band_table(recs))
    print()
    print(decision_table(recs))
    print()
    print(misses_table(recs))
    for section in (replay, versus):
        if section:
            print()
            print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
