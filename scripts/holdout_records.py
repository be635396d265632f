#!/usr/bin/env python3
"""The held-out result files of scripts/inductor_eval.py as records, and what the pooled tables
(scripts/holdout_pool.py) and the replay of a handler (scripts/holdout_replay.py) share: the
bound's tallies, a GEMM and a decision in words, the features a handler decides on, and how an
addmm ran with the other ATen call (the addmm probe). Reads result files only (no torch, no GPU).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from inductor_gemms import handler_features  # noqa: E402 - the features have one owner
from inductor_results import SLOW_FLAG, best_ms, device_of, one_device  # noqa: E402 - and so has the bound

FAR = 1.10  # a miss past this is no run-to-run wobble
SECOND = "max_autotune_ptxas"
SETTINGS = ("none", "ours", "max_autotune", SECOND)
# Default max-autotune's full list searched with one ptxas and its choices re-timed by CUDA graph
# (python/ah_inductor/retime.py): tabled beside the others where a run measured it.
RETIMED = "max_autotune_retime"
LABELS = {"none": "cuBLAS only", "ours": "ours", "max_autotune": "max-autotune",
          SECOND: "max-autotune again (one ptxas)", RETIMED: "max-autotune again, re-timed (one ptxas)"}
# Eager twins of addmm's two cuBLAS calls (scripts/probe_addmm_bias.py): how a handler that keeps
# the expanded-bias call where `none` ran the 1-D one is replayed (`expanded_ms`).
ADDMM_PROBES = tuple(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", f)
                     for f in ("addmm_bias_h100.jsonl", "addmm_bias_longk_h100.jsonl"))
# The GPU the probes timed (their provenance sidecars): they replay only results of that GPU, and
# of files that do not name theirs (all measured on it before result files named the GPU).
PROBES_DEVICE = "NVIDIA H100 80GB HBM3"
# Inductor's two ATen choices for addmm: the expanded-bias call, the 1-D one.
ADDMM_CALLS = ("extern_addmm", "extern_bias_addmm")
MISS_MIN_MS = 0.1  # the misses listed one by one: at and above 100 us of cuBLAS


class PoolError(Exception):
    """A file that is not a result of inductor_eval.py (named in the message)."""


def records(paths, ours="ours", probes=ADDMM_PROBES):
    """Every measured GEMM of every run: dicts with `run_ms`, `picked`, `source` and, for an
    addmm the probes timed, its run ms with the expanded-bias call (`expanded_ms`). With `ours`
    another handler setting (`candidate`), a run that measured it counts that handler as ours.
    Files of different GPUs are refused (`one_device`)."""
    timed = addmm_probe(probes)
    out, devices = [], []
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
            gemms = data["gemms"]
            devices.append((path, device_of(data)))
            one_device(devices, PoolError)
            probed = timed if devices[-1][1] in (None, PROBES_DEVICE) else {}
            for r in gemms:
                run = r.get("run_ms", {})
                if {"none", "max_autotune"} <= set(run):
                    out.append(as_ours({"gemm": r["gemm"], "run_ms": run, "picked": r.get("picked", {}),
                                        "autotune_s": r.get("autotune_s", {}), "source": path,
                                        "bench_ms": r.get("bench_ms"), "twin": twin_of(r),
                                        "errors": r.get("errors", {}),
                                        "expanded_ms": expanded_ms(r["gemm"], run, probed)}, r, ours))
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
    its run time, autotuning, failure, stats and recorded decisions."""
    setting = setting if setting in r.get("run_ms", {}) else "ours"
    out["run_ms"], out["autotune_s"], out["errors"] = dict(out["run_ms"]), dict(out["autotune_s"]), dict(out["errors"])
    for key in ("run_ms", "autotune_s", "errors"):
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


def shown_settings(recs):
    """The settings the tables show: SETTINGS, and RETIMED where a run measured it."""
    return SETTINGS + ((RETIMED,) if any(r["run_ms"].get(RETIMED) for r in recs) else ())


def fmt_tally(t):
    n, over, far, worst = t
    return "-" if not n else f"{over} / {n} ({far} past {FAR:.2f}x; worst {worst:.2f}x)"


def features_of(r):
    """The features a handler decides record `r`'s GEMM on: those its run's handler recorded
    (`ours_decisions`, since the fifteenth session), which are the GEMM as Inductor handed it over
    after its own rewrites (pad_mm pads a misaligned width first), else the preview's."""
    seen = r.get("ours_decisions") or []
    if len(seen) == 1:  # one GEMM compiled alone: one lowering, one decision
        return {k: v for k, v in seen[0].items() if k not in ("decision", "kept")}
    return handler_features(r["gemm"])


def measured_kind(r):
    """The decision `ours` recorded for record `r` (its handler's stats), or None."""
    kinds = [k for k in ("extern", "keep", "default", "drop") if r.get("ours_stats", {}).get(k)]
    return kinds[0] if len(kinds) == 1 else None


def decided(r):
    """What the handler of record `r` decided, in words: as recorded with its features
    (`ours_decisions`, with the kept list's length), else as its stats counted it."""
    seen = r.get("ours_decisions") or []
    kinds = {(d.get("decision"), d.get("kept")) for d in seen}
    kind, kept = kinds.pop() if len(kinds) == 1 else (measured_kind(r), None)
    return in_words(kind, kept)


def in_words(kind, kept=None):
    """A decision in words: its kind, and for a kept list how many choices (when known)."""
    if kind == "keep":
        return "kept list" if kept is None else f"kept {kept}"
    return {"extern": "cuBLAS only", "default": "full list", "drop": "full list trimmed"}.get(kind, "-")


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
