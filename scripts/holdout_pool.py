#!/usr/bin/env python3
"""Pools the held-out evaluations of scripts/inductor_eval.py and asks them five questions
(and sums their autotuning: ours against max-autotune, over the GEMMs that measured both).

1. How reachable is issue 26's bound? (And how much of a miss is measurement alone: on GEMMs
   where cuBLAS only, ours and max-autotune all ran a cuBLAS kernel, each setting ran the same
   kernel, so any distance between them is run-to-run spread, not a decision.) A GEMM is over it when its compiled truth is more than 3 %
   slower than the faster of cuBLAS and default max-autotune's pick (`inductor_eval.best_ms`).
   Runs that measured `max_autotune_ptxas` beside `max_autotune` compiled each GEMM under default
   max-autotune twice in one process: the same choice list, searched again with one ptxas, which
   changes what compiling costs and not what is offered. How often that second search lands over
   the bound set by the first is the bound's noise floor: what default max-autotune itself
   scores against its own pick. Runs that measured two handlers (`--candidate`) give the
   handlers' own floor: on the GEMMs both decided alike (cuBLAS only, or the full list), how
   often the two compiled results lie more than 3 % apart.
2. Where do the misses lie? Per band of cuBLAS's run time, how many GEMMs each setting leaves over
   the bound (every run that measured `none` and `max_autotune`; `ours` is whichever handler that
   run measured).
3. Which are ours at and above 100 us, where max-autotune's two searches agree? One line each
   (and, with `--handler`, the replayed handler's too):
   the file, the GEMM, what the handler decided (`ours_decisions`: cuBLAS only, a kept list of
   how many choices, or the full list), and ours, cuBLAS and max-autotune over the bound's best.
4. With `--handler MODULE.py`: what would another handler have done on these GEMMs, without a
   GPU? Its decisions are replayed on the runs that searched the full list twice, where each
   outcome was measured: `extern` ran as `none` (cuBLAS, the one choice Inductor then takes;
   for an addmm where the handler's runtime keeps the expanded-bias call instead of the 1-D
   one `none` ran, `none` scaled by the two calls' eager twins in data/addmm_bias_*.jsonl, and
   not replayed where they were not timed),
   `default` as the second search, `max_autotune_ptxas` (the full list with ptxas aligned, as
   the handler's install() runs it; an outcome measured apart from the bound's). A `keep` list
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
   GEMMs where one is over the bound and the other is not; then again with the unmeasured kept
   lists estimated from the recorded benchmark as in 4, where that adds GEMMs (a candidate that
   turns full lists into kept lists is otherwise scored only where it did not).

`--ours candidate` counts the second handler of runs that measured one (`inductor_eval.py
--candidate`) as `ours` in all five (its run time, autotuning, stats and recorded decisions);
other runs keep their `ours`. A handler those runs measured as `candidate` and then shipped is
then the `--measured` one.

Where a run recorded the features its handler decided on (`ours_decisions`, since the
fifteenth session), replayed handlers decide on those, not on the preview's: Inductor may
rewrite a GEMM (pad_mm) before the handler sees it.

Reads only the result files (no torch, no GPU). Every run is one record: a GEMM measured in two
runs counts twice, as the two measurements it is.

Usage: scripts/holdout_pool.py [--handler MODULE.py [--measured MEASURED.py] [--against OTHER.py]]
                               [--ours ours|candidate] RESULT.json ... > pooled.md
"""

import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from inductor_eval import (  # noqa: E402 - the bound, the features and the loader have one owner
    SLOW_FLAG, best_ms, geomean, handler_features, load_handler)

# Bands of cuBLAS's compiled run time, ms: a few microseconds, where Inductor's benchmark
# misreads cuBLAS (docs/inductor.md), up to GEMMs of milliseconds.
BANDS_MS = (0.0, 0.01, 0.05, 0.1, 1.0, math.inf)
FAR = 1.10  # a miss past this is no run-to-run wobble
SECOND = "max_autotune_ptxas"
# Eager twins of addmm's two cuBLAS calls (scripts/probe_addmm_bias.py): how a handler that keeps
# the expanded-bias call where `none` ran the 1-D one is replayed (`expanded_ms`).
ADDMM_PROBES = tuple(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", f)
                     for f in ("addmm_bias_h100.jsonl", "addmm_bias_longk_h100.jsonl"))
# Inductor's two ATen choices for addmm: the expanded-bias call, the 1-D one.
ADDMM_CALLS = ("extern_addmm", "extern_bias_addmm")
SETTINGS = ("none", "ours", "max_autotune", SECOND)
LABELS = {"none": "cuBLAS only", "ours": "ours", "max_autotune": "max-autotune",
          SECOND: "max-autotune again (one ptxas)"}


class PoolError(Exception):
    """A file that is not a result of inductor_eval.py (named in the message)."""


def records(paths, ours="ours", probes=ADDMM_PROBES):
    """Every measured GEMM of every run: dicts with `run_ms`, `picked`, `source` and, for an
    addmm the probes timed, its run ms with the expanded-bias call (`expanded_ms`). With `ours`
    another handler setting (`candidate`), a run that measured it counts that handler as ours."""
    timed = addmm_probe(probes)
    out = []
    for path in paths:
        try:
            with open(path) as f:
                gemms = json.load(f)["gemms"]
            for r in gemms:
                run = r.get("run_ms", {})
                if {"none", "max_autotune"} <= set(run):
                    out.append(as_ours({"gemm": r["gemm"], "run_ms": run, "picked": r.get("picked", {}),
                                        "autotune_s": r.get("autotune_s", {}), "source": path,
                                        "bench_ms": r.get("bench_ms"), "twin": twin_of(r),
                                        "expanded_ms": expanded_ms(r["gemm"], run, timed)}, r, ours))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise PoolError(f"{path}: not a result file of inductor_eval.py ({type(e).__name__}: {e})") from e
    return out


def probe_key(g):
    """What identifies an addmm GEMM in the probe files and the result files alike."""
    return (g["m"], g["k"], g["n"], g["dtype"], bool(g.get("tf32")), bool(g.get("trans_a")),
            bool(g.get("trans_b")))


def addmm_probe(paths):
    """{`probe_key`: (ms of the 1-D bias call, ms of the expanded call)} of the probe files
    that exist (scripts/probe_addmm_bias.py's JSON lines)."""
    timed = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        at = 0
        try:
            with open(path) as f:
                for at, line in enumerate(f, 1):
                    row = json.loads(line)
                    timed[probe_key(row)] = (float(row["ms_bias"]), float(row["ms_expanded"]))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise PoolError(f"{path}:{at}: not a line of probe_addmm_bias.py ({type(e).__name__}: {e}); "
                            "rerun the probe or remove the file") from e
    return timed


def expanded_ms(g, run, timed):
    """An addmm's run ms with the expanded-bias call: `none` (which ran the 1-D call, as
    Inductor does without max-autotune) scaled by the probe's ratio of the two eager calls;
    None for another op or a GEMM the probe did not time."""
    pair = timed.get(probe_key(g)) if g.get("op") == "addmm" else None
    return run["none"] * pair[1] / pair[0] if pair else None


def as_ours(out, r, setting):
    """`out` with setting `setting` of result record `r` (where `r` measured it) as `ours`:
    its run time, autotuning, stats and recorded decisions."""
    setting = setting if setting in r.get("run_ms", {}) else "ours"
    out["run_ms"], out["autotune_s"] = dict(out["run_ms"]), dict(out["autotune_s"])
    for key in ("run_ms", "autotune_s"):
        out[key].pop("ours", None)
        if setting in r.get(key, {}):
            out[key]["ours"] = r[key][setting]
    out["ours_stats"] = r.get(f"{setting}_stats", {})
    out["ours_decisions"] = r.get(f"{setting}_decisions")
    return out


def twin_of(r):
    """For a run that measured two handlers (`ours` and `candidate`) and saw both decide this
    GEMM alike, cuBLAS only or the full list: (that decision, the slower's run time over the
    faster's). None otherwise (a kept list may keep other choices under the same count)."""
    run, a, b = r.get("run_ms", {}), r.get("ours_decisions"), r.get("candidate_decisions")
    if not (run.get("ours") and run.get("candidate") and a and a == b):
        return None
    kinds = {d.get("decision") for d in a}
    if len(kinds) != 1 or kinds & {"keep"}:
        return None
    return kinds.pop(), max(run["ours"], run["candidate"]) / min(run["ours"], run["candidate"])


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


def tally(recs, setting):
    """(measured, over the bound, over FAR, worst ratio to the bound) of one setting."""
    rel = [r["run_ms"][setting] / best_ms(r) for r in recs if r["run_ms"].get(setting)]
    return (len(rel), sum(x > SLOW_FLAG for x in rel), sum(x > FAR for x in rel),
            max(rel, default=None))


def twice(recs):
    """The runs that searched the full list twice, and how often the two searches picked alike."""
    both = [r for r in recs if r["run_ms"].get(SECOND)]
    alike = sum(1 for r in both
                if r["picked"].get("max_autotune") and r["picked"].get("max_autotune") == r["picked"].get(SECOND))
    return both, alike


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


def fmt_tally(t):
    n, over, far, worst = t
    return "-" if not n else f"{over} / {n} ({far} past {FAR:.2f}x; worst {worst:.2f}x)"


def noise_table(recs):
    both, alike = twice(recs)
    lines = [f"Runs that searched default max-autotune's full list twice: {len(both)} GEMMs; "
             f"the two searches picked the same choice on {alike}.", "",
             "| setting | over the bound (3 %) | run / max-autotune's (gmean) |", "|---|---|---|"]
    for s in SETTINGS:
        gm = geomean([r["run_ms"][s] / r["run_ms"]["max_autotune"] for r in both if r["run_ms"].get(s)])
        lines.append(f"| {LABELS[s]} | {fmt_tally(tally(both, s))} | {'-' if gm is None else f'{gm:.3f}'} |")
    return "\n".join(lines)


def autotuning_line(recs):
    """Autotuning seconds (compile time over cuBLAS only's) summed over the GEMMs whose runs
    measured both ours and max-autotune, and how many times less ours spent."""
    both = [r for r in recs if {"ours", "max_autotune"} <= set(r.get("autotune_s", {}))]
    if not both:
        return "No run measured the autotuning of both ours and max-autotune."
    ours, ma = (sum(r["autotune_s"][s] for r in both) for s in ("ours", "max_autotune"))
    again = [r["autotune_s"][SECOND] for r in both if SECOND in r["autotune_s"]]
    less = f"{ma / ours:.1f}x less" if ours > 0 else "ours spent none"
    return (f"Autotuning on the {len(both)} GEMMs whose runs measured ours and max-autotune: "
            f"ours {ours:.1f} s, max-autotune {ma:.1f} s ({less}); max-autotune again (one ptxas) "
            f"{sum(again):.1f} s on {len(again)} of them.")


def band_table(recs):
    lines = ["| cuBLAS run time | GEMMs | " + " | ".join(LABELS[s] for s in SETTINGS) + " |",
             "|---|---|" + "---|" * len(SETTINGS)]
    for i in range(len(BANDS_MS) - 1):
        inside = [r for r in recs if band_of(r) == i]
        if inside:
            cells = [fmt_tally(tally(inside, s)) for s in SETTINGS]
            lines.append(f"| {band_label(i)} | {len(inside)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


MISS_MIN_MS = 0.1  # the misses listed one by one: at and above 100 us of cuBLAS


def decided(r):
    """What the handler of record `r` decided, in words: as recorded with its features
    (`ours_decisions`, with the kept list's length), else as its stats counted it."""
    seen = r.get("ours_decisions") or []
    kinds = {(d.get("decision"), d.get("kept")) for d in seen}
    kind, kept = kinds.pop() if len(kinds) == 1 else (measured_kind(r), None)
    return in_words(kind, kept)


def replay_decided(r):
    """What a replayed handler decided on row `r` of `replayed`, in words."""
    return in_words(r["kind"], len(r["names"]))


def in_words(kind, kept=None):
    """A decision in words: its kind, and for a kept list how many choices (when known)."""
    if kind == "keep":
        return "kept list" if kept is None else f"kept {kept}"
    return {"extern": "cuBLAS only", "default": "full list"}.get(kind, "-")


def shape_of(g):
    """A GEMM of a result file in words: op batch x m x k x n, dtype (+tf32), layout."""
    tf32 = "+tf32" if g.get("tf32") else ""
    layout = ("T" if g.get("trans_a") else "N") + ("T" if g.get("trans_b") else "N")
    return f"{g['op']} {g['batch']}x{g['m']}x{g['k']}x{g['n']} {g['dtype']}{tf32} {layout}"


def misses_table(recs, min_ms=MISS_MIN_MS, setting="ours", how=decided):
    """`setting` (ours, or `replay` on rows of `replayed`, decided as `how` says) over the bound
    where cuBLAS takes at least `min_ms`, one line per GEMM."""
    who = "Ours" if setting == "ours" else "The replayed handler"
    lines = [f"| file | GEMM (op batch x m x k x n, dtype, layout) | decided | {setting} | cuBLAS | max-autotune |",
             "|---|---|---|---|---|---|"]
    for r in recs:
        run, best = r["run_ms"], best_ms(r)
        if run["none"] < min_ms or not run.get(setting) or run[setting] <= SLOW_FLAG * best:
            continue
        cells = [f"{run[s] / best:.3f}x" for s in (setting, "none", "max_autotune")]
        lines.append(f"| {os.path.basename(r['source'])} | {shape_of(r['gemm'])} | {how(r)} | " + " | ".join(cells) + " |")
    if len(lines) == 2:
        return f"No GEMM of at least {min_ms * 1000:g} us is over the bound for {who.lower()}."
    return f"{who} over the bound at and above {min_ms * 1000:g} us of cuBLAS:\n\n" + "\n".join(lines)


def features_of(r):
    """The features a handler decides record `r`'s GEMM on: those its run's handler recorded
    (`ours_decisions`, since the fifteenth session), which are the GEMM as Inductor handed it over
    after its own rewrites (pad_mm pads a misaligned width first), else the preview's."""
    seen = r.get("ours_decisions") or []
    if len(seen) == 1:  # one GEMM compiled alone: one lowering, one decision
        return {k: v for k, v in seen[0].items() if k not in ("decision", "kept")}
    return handler_features(r["gemm"])


def decision(decide, r, what):
    """`decide`'s (kind, kept names) for record `r`'s GEMM; `what` names the handler in errors."""
    try:
        kind, names = decide(features_of(r))
        return kind, tuple(names)
    except (KeyError, TypeError, ValueError) as e:
        raise PoolError(f"{r['source']}: {what} cannot decide {r['gemm'].get('name', r['gemm'])!r} "
                        f"({type(e).__name__}: {e})") from e


def measured_kind(r):
    """The decision `ours` recorded for record `r` (its handler's stats), or None."""
    kinds = [k for k in ("extern", "keep", "default") if r.get("ours_stats", {}).get(k)]
    return kinds[0] if len(kinds) == 1 else None


def replayed(recs, decide, measured=None):
    """The records that searched the full list twice, each with the replayed decision's `kind`,
    its run ms (`run_ms["replay"]`) and autotuning s (`replay_s`), None where not measured, and
    `as_measured` (the decision equals `measured`'s, so `ours` measured it)."""
    out = []
    for r in twice(recs)[0]:
        kind, names = decision(decide, r, "the handler")
        cublas = cublas_ms(r, decide)
        same = False
        if measured is not None and "ours" in r["run_ms"]:
            was = decision(measured, r, "the measured handler")
            if was[0] != measured_kind(r):
                raise PoolError(f"{r['source']}: {r['gemm'].get('name')!r}: the measured handler decides "
                                f"{was[0]}, the run's handler decided {measured_kind(r)}; give the module "
                                f"that run measured")
            same = was == (kind, names) and (kind == "default" or same_aten_call(r, decide))
        if same:
            run, cost = r["run_ms"]["ours"], max(r["autotune_s"].get("ours", 0.0), 0.0)
        else:
            run = {"extern": cublas, "default": r["run_ms"][SECOND]}.get(kind)
            cost = {"extern": 0.0, "default": r["autotune_s"].get(SECOND)}.get(kind)
        out.append(dict(r, kind=kind, names=names, as_measured=same, run_ms=dict(r["run_ms"], replay=run),
                        replay_s=None if run is None else cost, cublas_ms=cublas,
                        aten_call=aten_call(r, decide)))
    return out


def keeps_expanded(decide, f):
    """Whether the handler of `decide` keeps addmm's expanded-bias call for features `f` where
    Inductor offers both (its runtime's `expanded_bias_call`; a module without one keeps the
    1-D call, as Inductor without max-autotune)."""
    rule = (getattr(decide, "__globals__", None) or {}).get("expanded_bias_call")
    return bool(callable(rule) and f.get("op") == "addmm" and rule(f))


def cublas_ms(r, decide):
    """Record `r`'s run ms with the one cuBLAS call the handler of `decide` keeps: `none`, or
    where it keeps the expanded-bias call, `expanded_ms` (None where no probe timed it)."""
    return r.get("expanded_ms") if keeps_expanded(decide, features_of(r)) else r["run_ms"]["none"]


def aten_call(r, decide):
    """The ATen choice the handler of `decide` keeps of record `r`'s addmm (`extern_addmm`, the
    expanded-bias call, or `extern_bias_addmm`); None for other ops."""
    f = features_of(r)
    if f.get("op") != "addmm":
        return None
    return ADDMM_CALLS[0] if keeps_expanded(decide, f) else ADDMM_CALLS[1]


def same_aten_call(r, decide):
    """Whether the handler of `decide` keeps the ATen addmm call record `r`'s `ours` picked (a
    handler measured before its runtime changed which one it keeps did not run as it would)."""
    call = aten_call(r, decide)
    return call is None or not set(r.get("picked", {}).get("ours", {})) & (set(ADDMM_CALLS) - {call})


def kept_estimate(r, names, keeps):
    """Run ms of kept list `names` on record `r`, estimated as the trainer scores a kept list
    (`kept_outcome` in crates/ah-train/src/prune/policy.rs) from default max-autotune's benchmark
    of the GEMM (`bench_ms`, recorded since the nineteenth session): Inductor picks the fastest
    benchmarked of cuBLAS and the kept templates; cuBLAS (for addmm the one call the handler
    keeps, `aten_call`) runs as the replay says (`cublas_ms`), max-autotune's own pick as it
    ran, another template at its benchmark scaled by the pick's truth over its benchmark.
    `keeps(names, features)` is the handler's set of kept config names as sized to the GEMM.
    None without a benchmark or a single pick to scale by. A `decompose_k` pick's own kernels
    (the batched GEMM inside its subgraph, `extern_bmm_dtype`) were never benchmarked as
    choices: the pick is the one picked kernel the benchmark names."""
    bench = r.get("bench_ms")
    picked = [c for c in r.get("picked", {}).get("max_autotune", {}) if bench and c in bench]
    if not bench or len(picked) != 1:
        return None
    allowed, call = keeps(names, features_of(r)), r.get("aten_call")
    kept = {c: t for c, t in bench.items()
            if (c.startswith("extern_") and call in (None, c)) or allowed(c)}
    if not kept:
        return None
    pick = min(kept, key=kept.get)
    run = r["run_ms"]
    if pick.startswith("extern_"):
        return r.get("cublas_ms", run["none"])
    return run["max_autotune"] * (1.0 if pick == picked[0] else kept[pick] / bench[picked[0]])


def kept_line(rows, keeps):
    """The replayed kept lists that a recorded benchmark lets us estimate, apart from the
    measured outcomes (an estimate from the first search cannot carry a second search's noise)."""
    est = [(r, kept_estimate(r, r["names"], keeps)) for r in rows
           if r["kind"] == "keep" and r["run_ms"]["replay"] is None]
    est = [(r, ms) for r, ms in est if ms is not None]
    if not est:
        return None
    over = [ms / best_ms(r) for r, ms in est if ms > SLOW_FLAG * best_ms(r)]
    worst = f"; worst {max(over):.2f}x" if over else ""
    return (f"Kept lists estimated from default max-autotune's recorded benchmark (`bench_ms`): "
            f"{len(est)}, over the bound on {len(over)}{worst}.")


def unreplayed_keeps(rows, keeps):
    """The kept lists of `replayed` rows that neither a run measured nor a recorded benchmark
    lets us estimate, and of them the likely misses: max-autotune's pick is not kept and cuBLAS
    alone is over the bound, so the list wins only if a kept template does what max-autotune's
    pick did. (n, likely, likely at 100 us or more)."""
    left = [r for r in rows if r["kind"] == "keep" and r["run_ms"]["replay"] is None
            and kept_estimate(r, r["names"], keeps) is None]
    likely = []
    for r in left:
        allowed = keeps(r["names"], features_of(r))
        picks = list(r["picked"].get("max_autotune", {}))
        if (picks and not any(p.startswith("extern") or allowed(p) for p in picks)
                and r["run_ms"]["none"] > SLOW_FLAG * best_ms(r)):
            likely.append(r)
    return len(left), len(likely), sum(r["run_ms"]["none"] >= MISS_MIN_MS for r in likely)


def unreplayed_line(label, rows, keeps):
    n, likely, big = unreplayed_keeps(rows, keeps)
    if not n:
        return None
    return (f"{label}: {n} kept lists neither replayed nor estimated; on {likely} of them "
            f"max-autotune's pick is not kept and cuBLAS alone is over the bound (likely misses; "
            f"{big} at 100 us or more).")


def replay_table(recs, decide, measured=None, keeps=None):
    rows = replayed(recs, decide, measured)
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("extern", "default", "keep")}
    known = [r for r in rows if r["run_ms"]["replay"] is not None]
    kept = sum(r["kind"] == "keep" and r["run_ms"]["replay"] is None for r in rows)
    priced = [r for r in known if r["replay_s"] is not None
              and all(r["autotune_s"].get(k) is not None for k in ("ours", "max_autotune", SECOND))]
    cost = lambda rs, key: sum(max(r["autotune_s"][key], 0.0) for r in rs)  # noqa: E731
    same = f"; {sum(r['as_measured'] for r in rows)} decided as the measured handler did" if measured else ""
    lines = [f"Replayed on the {len(rows)} GEMMs searched twice: {kinds['extern']} cuBLAS only, {kinds['default']} full list, "
             f"{kinds['keep']} kept lists ({kept} not replayed){same}.", "",
             "| on the replayed GEMMs | over the bound (3 %) | run / max-autotune's (gmean) |",
             "|---|---|---|"]
    for s, label in (("replay", "replayed handler"), ("ours", "the handler each run measured"),
                     ("max_autotune", LABELS["max_autotune"])):
        gm = geomean([r["run_ms"][s] / r["run_ms"]["max_autotune"] for r in known if r["run_ms"].get(s)])
        lines.append(f"| {label} | {fmt_tally(tally(known, s))} | {'-' if gm is None else f'{gm:.3f}'} |")
    if priced:
        lines += ["", f"Autotuning on the {len(priced)} replayed GEMMs whose runs measured both handlers' "
                  f"costs: replayed {sum(r['replay_s'] for r in priced):.1f} s, the measured handler "
                  f"{cost(priced, 'ours'):.1f} s, {LABELS['max_autotune']} {cost(priced, 'max_autotune'):.1f} s, "
                  f"{LABELS[SECOND]} {cost(priced, SECOND):.1f} s."]
    estimated = kept_line(rows, keeps) if keeps else None
    if estimated:
        lines += ["", estimated]
    unreplayed = unreplayed_line("The replayed handler", rows, keeps) if keeps else None
    if unreplayed:
        lines += ["", unreplayed]
    lines += ["", misses_table(known, setting="replay", how=replay_decided)]
    return "\n".join(lines)


def known_or_estimated(r, keeps):
    """A replayed record's run ms: as replayed, or for a kept list no run measured, estimated
    from the recorded benchmark (`kept_estimate`; needs the handler's `keeps`). None: neither."""
    ms = r["run_ms"]["replay"]
    if ms is None and r["kind"] == "keep" and keeps:
        ms = kept_estimate(r, r["names"], keeps)
    return ms


def estimated_against(pairs, keeps):
    """A and B again, with the kept lists no run measured estimated (`known_or_estimated`),
    on the GEMMs where both are known or estimated; None where that adds no GEMM. A candidate
    that turns full lists into kept lists is otherwise compared only where it did not."""
    rows = [(a, b, known_or_estimated(a, keeps[0]), known_or_estimated(b, keeps[1])) for a, b in pairs]
    rows = [(a, b, x, y) for a, b, x, y in rows if x is not None and y is not None]
    if sum(a["run_ms"]["replay"] is None or b["run_ms"]["replay"] is None for a, b, _, _ in rows) == 0:
        return None
    lines = [f"With the kept lists no run measured estimated from the recorded benchmark, on the {len(rows)} "
             f"GEMMs where both are known or estimated (autotuning not estimated):", "",
             "| handler | over the bound (3 %) | of them at 100 us or more | run / max-autotune's (gmean) |",
             "|---|---|---|---|"]
    for label, col in (("A", 2), ("B", 3)):
        ratios = [(r[col] / best_ms(r[0]), r[0]["run_ms"]["none"]) for r in rows]
        over = [x for x, _ in ratios if x > SLOW_FLAG]
        big = sum(x > SLOW_FLAG and none >= MISS_MIN_MS for x, none in ratios)
        gm = geomean([r[col] / r[0]["run_ms"]["max_autotune"] for r in rows])
        worst = f"; worst {max(over):.2f}x" if over else ""
        lines.append(f"| {label} | {len(over)} / {len(rows)}{worst} | {big} | {'-' if gm is None else f'{gm:.3f}'} |")
    return "\n".join(lines)


def against_table(recs, decide, other, measured=None, keeps=(None, None)):
    """The replayed handler (A) against another (B, `other`'s decide) on the GEMMs where both
    outcomes are known, so that the two are scored on the same GEMMs, and the GEMMs where one is
    over the bound and the other is not. Each is replayed as `replayed` replays it."""
    pairs = list(zip(replayed(recs, decide, measured), replayed(recs, other, measured)))
    differ = sum((a["kind"], a["names"]) != (b["kind"], b["names"]) for a, b in pairs)
    both = [(a, b) for a, b in pairs if a["run_ms"]["replay"] is not None and b["run_ms"]["replay"] is not None]
    priced = all(a["replay_s"] is not None and b["replay_s"] is not None for a, b in both)
    lines = [f"The replayed handler (A) against `--against` (B): {differ} of {len(pairs)} decisions differ; "
             f"both replayed on {len(both)} GEMMs:", "",
             "| handler | over the bound (3 %) | of them at 100 us or more | run / max-autotune's (gmean) "
             "| autotuning s |", "|---|---|---|---|---|"]
    for label, rows in (("A", [a for a, _ in both]), ("B", [b for _, b in both])):
        over = [r for r in rows if r["run_ms"]["replay"] > SLOW_FLAG * best_ms(r)]
        big = sum(r["run_ms"]["none"] >= MISS_MIN_MS for r in over)
        gm = geomean([r["run_ms"]["replay"] / r["run_ms"]["max_autotune"] for r in rows])
        cost = f"{sum(r['replay_s'] for r in rows):.1f}" if priced else "-"
        lines.append(f"| {label} | {fmt_tally(tally(rows, 'replay'))} | {big} | "
                     f"{'-' if gm is None else f'{gm:.3f}'} | {cost} |")
    for label, rows, k in (("A", [a for a, _ in pairs], keeps[0]), ("B", [b for _, b in pairs], keeps[1])):
        line = unreplayed_line(label, rows, k) if k else None
        if line:
            lines += ["", line]
    estimated = estimated_against(pairs, keeps)
    if estimated:
        lines += ["", estimated]
    flips = [(a, b) for a, b in both
             if (a["run_ms"]["replay"] > SLOW_FLAG * best_ms(a)) != (b["run_ms"]["replay"] > SLOW_FLAG * best_ms(b))]
    if flips:
        lines += ["", "Where one of them is over the bound and the other is not:", "",
                  "| file | GEMM (op batch x m x k x n, dtype, layout) | A decided | A | B decided | B | cuBLAS ms |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {os.path.basename(a['source'])} | {shape_of(a['gemm'])} | {replay_decided(a)} | "
                  f"{a['run_ms']['replay'] / best_ms(a):.3f}x | {replay_decided(b)} | "
                  f"{b['run_ms']['replay'] / best_ms(b):.3f}x | {a['run_ms']['none']:.4f} |" for a, b in flips]
    return "\n".join(lines)


def handler_module(path):
    """A generated handler module (inductor_eval's loader) that defines `decide`."""
    try:
        module = load_handler(path)
    except (OSError, SyntaxError, ImportError, SystemExit) as e:
        raise PoolError(f"{path}: cannot load the handler module ({e})") from e
    if not callable(getattr(module, "decide", None)):
        raise PoolError(f"{path}: defines no decide(features); give a module that ah-prune generated")
    return module


def handler_decide(path):
    """The `decide` of a generated handler module."""
    return handler_module(path).decide


def handler_keeps(module):
    """`keeps(names, features)` of a handler module: whether a benchmarked choice name is one of
    kept list `names` as the handler sizes them to the GEMM (`choices.py`'s `_keep`)."""
    if not all(callable(getattr(module, fn, None)) for fn in ("sized_configs", "config_name")):
        return None  # not a generated module: its kept lists are not estimated

    def keeps(names, f):
        sized = frozenset(module.sized_configs(names, f["m"], f["n"], f["k"]))
        return lambda choice: module.config_name(choice) in sized
    return keeps


def parse(argv):
    """(handler, measured handler, handler to compare against, the setting counted as ours,
    result files) of the command line."""
    modules = {"--handler": None, "--measured": None, "--against": None, "--ours": "ours"}
    while argv[:1] and argv[0] in modules:
        if len(argv) < 2:
            raise PoolError(f"{argv[0]} needs a value")
        modules[argv[0]], argv = argv[1], argv[2:]
    for needs in ("--measured", "--against"):
        if modules[needs] and not modules["--handler"]:
            raise PoolError(f"{needs} needs --handler (the handler to replay)")
    if modules["--ours"] not in ("ours", "candidate"):
        raise PoolError(f"--ours {modules['--ours']}: give ours or candidate")
    if not argv:
        raise PoolError("name the result files (see --help)")
    return modules["--handler"], modules["--measured"], modules["--against"], modules["--ours"], argv


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    try:
        handler, measured, against, ours, paths = parse(argv)
        recs = records(paths, ours)
        module = handler_module(handler) if handler else None
        measured = handler_decide(measured) if measured else None
        replay = replay_table(recs, module.decide, measured, handler_keeps(module)) if module else None
        other = handler_module(against) if against else None
        versus = (against_table(recs, module.decide, other.decide, measured,
                                (handler_keeps(module), handler_keeps(other))) if other else None)
    except PoolError as e:
        print(f"holdout_pool: {e}", file=sys.stderr)
        return 2
    print(f"{len(recs)} measured GEMMs from {len(paths)} result files. A cell: GEMMs over the "
          f"bound / GEMMs measured.\n")
    print(noise_table(recs))
    print()
    print(autotuning_line(recs))
    print()
    print(same_kernel_line(recs))
    print()
    print(twins_line(recs))
    print()
    print(band_table(recs))
    print()
    print(misses_table(recs))
    for section in (replay, versus):
        if section:
            print()
            print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
