#!/usr/bin/env python3
"""Replays a handler on the pooled held-out records (scripts/holdout_pool.py's questions 4 and
5): its decisions, the outcomes they were measured as, the kept lists estimated from the
recorded benchmark, and two handlers side by side on the same GEMMs. Reads result files and
handler modules only (no torch, no GPU).
"""

import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from holdout_records import (  # noqa: E402 - shared with the pooled tables
    ADDMM_CALLS, LABELS, MISS_MIN_MS, RETIMED, SECOND, PoolError, features_of, fmt_tally, in_words, measured_kind,
    misses_table, shape_of, tally, twice)
from inductor_handlers import load_handler  # noqa: E402 - one owner each
from inductor_results import SLOW_FLAG, best_ms, geomean  # noqa: E402



def decision(decide, r, what):
    """`decide`'s (kind, kept names) for record `r`'s GEMM; `what` names the handler in errors."""
    try:
        kind, names = decide(features_of(r))
        return kind, tuple(names)
    except (KeyError, TypeError, ValueError) as e:
        raise PoolError(f"{r['source']}: {what} cannot decide {r['gemm'].get('name', r['gemm'])!r} "
                        f"({type(e).__name__}: {e})") from e


def replay_decided(r):
    """What a replayed handler decided on row `r` of `replayed`, in words."""
    return in_words(r["kind"], len(r["names"]))


def replayed(recs, decide, measured=None):
    """The records that searched the full list twice, each with the replayed decision's `kind`,
    its run ms (`run_ms["replay"]`) and autotuning s (`replay_s`), None where not measured, and
    `as_measured` (the decision equals `measured`'s, so `ours` measured it)."""
    out = []
    for r in twice(recs)[0]:
        kind, names = decision(decide, r, "the handler")
        call = aten_call(r, decide)
        cublas = cublas_ms(r, call)
        same = False
        if measured is not None and "ours" in r["run_ms"]:
            was = decision(measured, r, "the measured handler")
            if was[0] != measured_kind(r):
                raise PoolError(f"{r['source']}: {r['gemm'].get('name')!r}: the measured handler decides "
                                f"{was[0]}, the run's handler decided {measured_kind(r)}; give the module "
                                f"that run measured")
            same = was == (kind, names) and (kind == "default" or same_aten_call(r, call))
        if same:
            run, cost = r["run_ms"]["ours"], max(r["autotune_s"].get("ours", 0.0), 0.0)
        else:
            search = full_list_search(r)
            run = {"extern": cublas, "default": r["run_ms"][search]}.get(kind)
            cost = {"extern": 0.0, "default": r["autotune_s"].get(search)}.get(kind)
            if kind == "drop" and not drops_pick(r, names, decide, search):
                # The search picks as it did; its price is the whole list's, an upper bound.
                run, cost = r["run_ms"][search], r["autotune_s"].get(search)
        out.append(dict(r, kind=kind, names=names, as_measured=same, run_ms=dict(r["run_ms"], replay=run),
                        replay_s=None if run is None else cost, cublas_ms=cublas, aten_call=call))
    return out


def module_globals(decide):
    """The globals of the handler module `decide` comes from, read through a wrapper
    (`inductor_handlers.installed_decide` wraps it with `functools.wraps`, which sets `__wrapped__`):
    the runtime's own rules there (`config_name`, `expanded_bias_call`) are what the replay
    applies. Empty for a callable with no module."""
    return getattr(inspect.unwrap(decide), "__globals__", None) or {}


def drops_pick(r, names, decide, search):
    """Whether a full list without `names` (a "drop" decision of the handler of `decide`, names
    read by its module's `config_name`) drops what the full-list search `search` of record `r`
    picked; True where the record names no pick (the trimmed list is then not replayed)."""
    name_of = module_globals(decide).get("config_name") or (lambda n: n)
    picks = r.get("picked", {}).get(search, {})
    return not picks or any(name_of(p) in names for p in picks)


def full_list_search(r):
    """The measured outcome a full-list decision is replayed as: the second search re-timed
    where the run measured it (what a handler's install() does since the re-timing is on by
    default), else the second search."""
    return RETIMED if RETIMED in r["run_ms"] else SECOND


def keeps_expanded(decide, f):
    """Whether the handler of `decide` keeps addmm's expanded-bias call for features `f` where
    Inductor offers both (its runtime's `expanded_bias_call`; a module without one keeps the
    1-D call, as Inductor without max-autotune)."""
    rule = module_globals(decide).get("expanded_bias_call")
    return bool(callable(rule) and f.get("op") == "addmm" and rule(f))


def cublas_ms(r, call):
    """Record `r`'s run ms with the one cuBLAS call a handler keeps (`call`, its `aten_call`):
    `none`, or for the expanded-bias call `expanded_ms` (None where no probe timed it)."""
    return r.get("expanded_ms") if call == ADDMM_CALLS[0] else r["run_ms"]["none"]


def aten_call(r, decide):
    """The ATen choice the handler of `decide` keeps of record `r`'s addmm (`extern_addmm`, the
    expanded-bias call, or `extern_bias_addmm`); None for other ops."""
    f = features_of(r)
    if f.get("op") != "addmm":
        return None
    return ADDMM_CALLS[0] if keeps_expanded(decide, f) else ADDMM_CALLS[1]


def same_aten_call(r, call):
    """Whether `call` (a handler's `aten_call`) is the ATen addmm call record `r`'s `ours` picked
    (a handler measured before its runtime changed which one it keeps did not run as it would)."""
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


def cublas_only(recs, decide):
    """The records where the replayed handler decides cuBLAS only and that call was timed, as
    (GEMM, cuBLAS over the bound's best, cuBLAS ms): each call priced as the handler's runtime
    makes it (addmm's call by the bias rule, `cublas_ms`)."""
    out = []
    for r in recs:
        if decision(decide, r, "the handler")[0] != "extern" or not best_ms(r):
            continue
        cublas = cublas_ms(r, aten_call(r, decide))
        if cublas is not None:
            out.append((r["gemm"], cublas / best_ms(r), cublas))
    return out


def extern_line(recs, decide):
    """Where the replayed handler decides cuBLAS only, on every record (cuBLAS alone was measured
    on each, not only on those searched twice): how often that one call is over the bound."""
    rel = [x for _, x, _ in cublas_only(recs, decide)]
    if not rel:
        return "The replayed handler decides cuBLAS only on none of the records with cuBLAS timed."
    return (f"On all {len(recs)} records, the replayed handler decides cuBLAS only on {len(rel)} with "
            f"that call timed; cuBLAS there is over the bound on {sum(x > SLOW_FLAG for x in rel)} "
            f"(worst {max(rel):.3f}x).")


# Rows of one matrix, in the bands `extern_kinds` groups cuBLAS-only decisions by: decode and
# small batches, heads and short sequences, mid-sized, long.
ROW_BANDS = ((16, "m <= 16"), (256, "m 17-256"), (4096, "m 257-4096"), (float("inf"), "m > 4096"))


def precision(g):
    """A GEMM's precision in words: its dtype, and for float32 whether TF32 was on."""
    if g["dtype"] == "float32":
        return "float32+tf32" if g.get("tf32") else "float32"
    return g["dtype"]


def extern_kind(g):
    """The kind `extern_kinds` files a GEMM under: op, precision and band of rows."""
    band = next(label for top, label in ROW_BANDS if g["m"] <= top)
    return f"{g['op']}, {precision(g)}, {band}"


def extern_kinds(recs, decide):
    """Where the replayed handler decides cuBLAS only (`cublas_only`, as `extern_line` scores it),
    by kind (op, precision, band of rows): each kind with a GEMM over the bound, the most over
    first, so that a kind of miss worth a rule (a search instead) shows at a glance. None when no
    cuBLAS-only decision is over."""
    kinds = {}
    for g, x, cublas in cublas_only(recs, decide):
        kinds.setdefault(extern_kind(g), []).append((x, cublas))
    rows = [(k, v, [x for x, _ in v if x > SLOW_FLAG]) for k, v in kinds.items()]
    rows = sorted((row for row in rows if row[2]), key=lambda row: (-len(row[2]), -len(row[1]), row[0]))
    if not rows:
        return None
    lines = ["| cuBLAS only, by kind | decided | over the bound | of them at 100 us or more | worst |",
             "|---|---|---|---|---|"]
    for kind, v, over in rows:
        big = sum(x > SLOW_FLAG and ms >= MISS_MIN_MS for x, ms in v)
        lines.append(f"| {kind} | {len(v)} | {len(over)} | {big} | {max(over):.3f}x |")
    return "\n".join(lines)


def replay_table(recs, decide, measured=None, keeps=None):
    rows = replayed(recs, decide, measured)
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("extern", "default", "drop", "keep")}
    known = [r for r in rows if r["run_ms"]["replay"] is not None]
    kept = sum(r["kind"] == "keep" and r["run_ms"]["replay"] is None for r in rows)
    priced = [r for r in known if r["replay_s"] is not None
              and all(r["autotune_s"].get(k) is not None for k in ("ours", "max_autotune", SECOND))]
    cost = lambda rs, key: sum(max(r["autotune_s"][key], 0.0) for r in rs)  # noqa: E731
    same = f"; {sum(r['as_measured'] for r in rows)} decided as the measured handler did" if measured else ""
    trimmed = f"{kinds['drop']} trimmed full lists (priced whole), " if kinds["drop"] else ""
    lines = [f"Replayed on the {len(rows)} GEMMs searched twice: {kinds['extern']} cuBLAS only, {kinds['default']} full list, "
             f"{trimmed}{kinds['keep']} kept lists ({kept} not replayed){same}.", "",
             extern_line(recs, decide), ""]
    by_kind = extern_kinds(recs, decide)
    if by_kind:
        lines += [by_kind, ""]
    lines += ["| on the replayed GEMMs | over the bound (3 %) | run / max-autotune's (gmean) |",
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
             "| handler | over the bound (3 %) | of them at 100 us or more | run / max-autotune's (gmean) "
             "| over the best, ms (sum) |",
             "|---|---|---|---|---|"]
    for label, col in (("A", 2), ("B", 3)):
        ratios = [(r[col] / best_ms(r[0]), r[0]["run_ms"]["none"]) for r in rows]
        over = [x for x, _ in ratios if x > SLOW_FLAG]
        big = sum(x > SLOW_FLAG and none >= MISS_MIN_MS for x, none in ratios)
        gm = geomean([r[col] / r[0]["run_ms"]["max_autotune"] for r in rows])
        worst = f"; worst {max(over):.2f}x" if over else ""
        excess = sum(r[col] - best_ms(r[0]) for r in rows)
        lines.append(f"| {label} | {len(over)} / {len(rows)}{worst} | {big} | {'-' if gm is None else f'{gm:.3f}'} "
                     f"| {excess:.4f} |")
    return "\n".join(lines)


def differ_words(pairs):
    """How many of the (A, B) decision pairs differ, and how many of those only in the configs
    of a kept or trimmed list: a replay scores a trimmed list as the full list's measured search,
    so such pairs come out alike."""
    differ = [(a, b) for a, b in pairs if (a["kind"], a["names"]) != (b["kind"], b["names"])]
    names_only = sum(a["kind"] == b["kind"] for a, b in differ)
    words = f"{len(differ)} of {len(pairs)} decisions differ"
    return words + (f" ({names_only} only in the configs a list keeps)" if names_only else "")


def against_table(recs, decide, other, measured=None, keeps=(None, None)):
    """The replayed handler (A) against another (B, `other`'s decide) on the GEMMs where both
    outcomes are known, so that the two are scored on the same GEMMs, and the GEMMs where one is
    over the bound and the other is not. Each is replayed as `replayed` replays it."""
    pairs = list(zip(replayed(recs, decide, measured), replayed(recs, other, measured)))
    both = [(a, b) for a, b in pairs if a["run_ms"]["replay"] is not None and b["run_ms"]["replay"] is not None]
    priced = all(a["replay_s"] is not None and b["replay_s"] is not None for a, b in both)
    lines = [f"The replayed handler (A) against `--against` (B): {differ_words(pairs)}; "
             f"both replayed on {len(both)} GEMMs:", "",
             "| handler | over the bound (3 %) | of them at 100 us or more | run / max-autotune's (gmean) "
             "| over the best, ms (sum) | autotuning s |", "|---|---|---|---|---|---|"]
    for label, rows in (("A", [a for a, _ in both]), ("B", [b for _, b in both])):
        over = [r for r in rows if r["run_ms"]["replay"] > SLOW_FLAG * best_ms(r)]
        big = sum(r["run_ms"]["none"] >= MISS_MIN_MS for r in over)
        gm = geomean([r["run_ms"]["replay"] / r["run_ms"]["max_autotune"] for r in rows])
        cost = f"{sum(r['replay_s'] for r in rows):.1f}" if priced else "-"
        excess = sum(r["run_ms"]["replay"] - best_ms(r) for r in rows)
        lines.append(f"| {label} | {fmt_tally(tally(rows, 'replay'))} | {big} | "
                     f"{'-' if gm is None else f'{gm:.3f}'} | {excess:.4f} | {cost} |")
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
