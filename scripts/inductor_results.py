#!/usr/bin/env python3
"""The result file of scripts/inductor_eval.py and what is read from it: the file rewritten after
every item, its summary, issue 26's bound (`best_ms`, `SLOW_FLAG`), several files merged into
one, and the Markdown report. No torch.
"""

import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from inductor_gemms import describe  # noqa: E402 - a GEMM in words has one owner
from inductor_settings import HANDLED, LEARNED, SETTINGS  # noqa: E402


SLOW_FLAG = 1.03  # a GEMM of ours more than 3 % slower than the faster of max-autotune and cuBLAS
# A GEMM decided cuBLAS only compiles within about half a second of the plain compile, either way
# (-0.68 to +0.61 s over both GPUs' pools); a sum of such differences is no autotuning, and a ratio
# over it (once 21913x, over 14 GEMMs that spent 0.01 s in all) says nothing.
SPENT_NONE_S_PER_GEMM = 0.1


def spent_any(seconds, gemms):
    """Whether `seconds` of autotuning summed over `gemms` GEMMs is more than compile-time noise."""
    return seconds > SPENT_NONE_S_PER_GEMM * max(gemms, 1)


class Results:
    """All numbers, rewritten to `path` after every item (a cut run keeps what it measured)."""

    def __init__(self, path, meta):
        self.path = path
        self.data = {"meta": meta, "gemms": [], "e2e": {}, "skipped": [], "summary": {}}

    def save(self):
        self.data["summary"] = summarize(self.data)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, default=json_default)
        os.replace(tmp, self.path)


def json_default(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return str(x)


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summarize(data):
    """Totals: autotuning time per setting, max_autotune/ours ratio, run-time geometric means."""
    gemms = [r for r in data["gemms"] if "run_ms" in r]
    out = {"gemms_measured": len(gemms), "autotune_s": {}, "run_rel_max_autotune_geomean": {}}
    for s in SETTINGS:
        have = [r for r in gemms if s in r.get("autotune_s", {})]
        if have:
            out["autotune_s"][s] = sum(r["autotune_s"][s] for r in have)
            rel = [r["run_ms"][s] / r["run_ms"]["max_autotune"] for r in have
                   if s in r["run_ms"] and "max_autotune" in r["run_ms"]]
            out["run_rel_max_autotune_geomean"][s] = geomean(rel)
    for learned in LEARNED:
        if learned != "ours" and not any(learned in r.get("autotune_s", {}) for r in gemms):
            continue  # "ours" is always summarised (the report's line names it)
        for base in ("max_autotune", "max_autotune_ptxas"):
            both = [r for r in gemms if {learned, base} <= set(r.get("autotune_s", {}))]
            if base == "max_autotune" or both:
                spent = sum(max(r["autotune_s"][learned], 0.0) for r in both)
                ma = sum(r["autotune_s"][base] for r in both)
                out[f"autotune_ratio_{base}_over_{learned}"] = (
                    ma / spent if spent_any(spent, len(both)) else None)
        out[f"{learned}_slower_than_best_by_3pct"] = [r["gemm"]["name"] for r in gemms
                                                       if r.get(f"{learned}_flag")]
    out["slower_than_best_by_3pct"], out["worst_rel_best"] = {}, {}
    for s in SETTINGS:
        rel = [r["run_ms"][s] / best_ms(r) for r in gemms if s in r["run_ms"] and best_ms(r)]
        if rel:
            out["slower_than_best_by_3pct"][s] = sum(x > SLOW_FLAG for x in rel)
            out["worst_rel_best"][s] = max(rel)
    return out


def best_ms(rec):
    """The faster of cuBLAS (none) and max-autotune's pick in compiled truth: the bound."""
    run = rec["run_ms"]
    have = [run[s] for s in ("max_autotune", "none") if s in run]
    return min(have) if have else None


def flag_ours(rec):
    """Each handler's run time over the bound (best_ms), flagged past SLOW_FLAG."""
    best = best_ms(rec)
    for s in LEARNED:
        if s in rec["run_ms"] and best:
            rec[f"{s}_rel_best"] = rec["run_ms"][s] / best
            rec[f"{s}_flag"] = rec[f"{s}_rel_best"] > SLOW_FLAG


class MergeError(Exception):
    """A result file that cannot be merged (named in the message)."""


def device_of(data):
    """The GPU a result file was measured on, as PyTorch names it; None where the file does not
    say (a merge of files that did not say). A file whose compiled truth streamed its operands
    from HBM (`--operands streamed`, inductor_operands) names it after the GPU: its run times do
    not compare with warm ones either, so `one_device` keeps the two apart too."""
    meta = data.get("meta") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return None
    device, operands = meta.get("device"), meta.get("operands", "warm")
    return f"{device} (operands {operands})" if device is not None and operands != "warm" else device


def one_device(named, error):
    """The one GPU that files measured on, from (path, `device_of`) pairs; None if none says.
    Raises `error` naming two files of different GPUs: their run times do not compare (an H200's
    memory is about 1.4 times an H100's bandwidth), so they never share a table."""
    seen = {}
    for path, device in named:
        if device is not None:
            seen.setdefault(device, path)
    if len(seen) > 1:
        (d1, p1), (d2, p2) = list(seen.items())[:2]
        raise error(f"{p2}: measured on {d2}, but {p1} on {d1}; "
                    "results of different GPUs are not pooled or merged: give files of one GPU")
    return next(iter(seen), None)


def merge(paths):
    """The GEMMs of several result files as one result, in order of first appearance. A GEMM
    (by name) in several files takes each setting's figures from the last file that measured that
    setting: a re-run of some GEMMs with a new handler (all of `none,ours,max_autotune`, so that
    its figures are alternated in one process) replaces those settings, and the rest is kept (a
    setting that failed, or that the budget cut, in an earlier file and ran in a later one is no
    longer failed or cut). Files of different GPUs are refused (`one_device`); the merged file
    names the GPU."""
    by_name, order, skipped, devices = {}, [], [], []
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
            records = data["gemms"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise MergeError(f"{path}: not a result file of inductor_eval.py ({type(e).__name__}: {e})") from e
        devices.append((path, device_of(data)))
        one_device(devices, MergeError)
        for r in records:
            if "run_ms" not in r:
                continue
            name = r["gemm"]["name"]
            if name not in by_name:
                by_name[name] = {"gemm": r["gemm"]}
                order.append(name)
            rec = by_name[name]
            if rec.get("errors"):  # a setting measured again is no longer failed
                rec["errors"] = {s: e for s, e in rec["errors"].items() if s not in r["run_ms"]}
            for key, value in r.items():
                if key != "gemm":
                    old = rec.get(key)
                    both = isinstance(old, dict) and isinstance(value, dict)
                    rec[key] = {**old, **value} if both else value
            cut = [s for s in rec.pop("not_run", []) if s not in rec["run_ms"]]
            if cut:  # settings the budget cut that no file measured
                rec["not_run"] = cut
        skipped += data.get("skipped", [])
    gemms = [by_name[n] for n in order]
    for r in gemms:
        flag_ours(r)
    measured = set(order)
    meta = {"merged_from": list(paths)}
    device = one_device(devices, MergeError)
    if device is not None:
        meta["device"] = device
    data = {"meta": meta, "gemms": gemms, "e2e": {},
            "skipped": [s for s in dict.fromkeys(skipped) if s not in measured]}
    data["summary"] = summarize(data)
    return data


def write_merged(data, path, inputs):
    """Writes a merged result to `path` (through a temporary file, so that a failed write leaves
    nothing half-written); refuses to replace one of the files it was merged from."""
    if any(os.path.realpath(path) == os.path.realpath(i) for i in inputs):
        raise MergeError(f"{path}: is one of the files being merged; give --out another path")
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, default=json_default)
        os.replace(tmp, path)
    except OSError as e:
        raise MergeError(f"{path}: cannot write the merged result ({e})") from e


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def table(data, settings):
    """The report: the GEMM table and its totals (when GEMMs were measured), then each workload."""
    cols = ["none"] + [s for s in settings if s != "none"]
    lines = gemm_table(data, cols) if data["gemms"] else []
    for w, r in data["e2e"].items():
        lines += [""] + e2e_table(w, r)
    return "\n".join(lines).lstrip("\n")


def gemm_table(data, cols):
    learned = [s for s in LEARNED if s in cols]  # a run without a handler has no such column
    head = (["GEMM"] + [f"compile s {s}" for s in cols] + [f"run ms {s}" for s in cols]
            + [f"{s} / best" for s in learned] + ["picked (max_autotune)"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in data["gemms"]:
        c, t = r.get("compile_s", {}), r.get("run_ms", {})
        picked = ", ".join(r.get("picked", {}).get("max_autotune", {})) or "-"
        cells = ([f"{r['gemm']['name']} ({describe(r['gemm'])})"] + [fmt(c.get(s), ".2f") for s in cols]
                 + [fmt(t.get(s), ".4f") for s in cols]
                 + [fmt(r.get(f"{s}_rel_best")) + (" **slow**" if r.get(f"{s}_flag") else "") for s in learned]
                 + [picked])
        lines.append("| " + " | ".join(cells) + " |")
    sm = data["summary"]
    lines += ["", "| setting | autotuning s (sum) | run time / max_autotune (geomean) |", "|---|---|---|"]
    for s in cols:
        lines.append(f"| {s} | {fmt(sm['autotune_s'].get(s), '.1f')} | "
                     f"{fmt(sm['run_rel_max_autotune_geomean'].get(s), '.4f')} |")
    lines.append("")
    for s in learned:
        ratios = "; ".join(ratio_words(sm.get(f"autotune_ratio_{b}_over_{s}"), b, s)
                           for b in ("max_autotune", "max_autotune_ptxas")
                           if f"autotune_ratio_{b}_over_{s}" in sm)
        lines.append(f"{ratios}; "
                     f"{s} > {SLOW_FLAG:.2f}x the best: {sm.get(f'{s}_slower_than_best_by_3pct') or 'none'}")
    slow = sm.get("slower_than_best_by_3pct", {})
    lines.append(f"GEMMs > {SLOW_FLAG:.2f}x the faster of none and max_autotune: "
                 + ", ".join(f"{s} {slow[s]} (worst {sm['worst_rel_best'][s]:.2f}x)" for s in cols if s in slow))
    return lines + failed_lines(data["gemms"])


def ratio_words(ratio, base, learned):
    """How many times less `learned` autotuned than `base`; no ratio where it spent nothing (each
    GEMM cuBLAS only: its compile time over none's is a few hundredths of a second, either way)."""
    if ratio is None:
        return f"autotuning time {base} / {learned}: {learned} spent none"
    return f"autotuning time {base} / {learned}: {ratio:.1f}x"


def failed_lines(gemms):
    """One line per GEMM and setting whose compile failed: a failure is worse than any miss of the
    bound, and the bound's counts leave it out (it has no run time)."""
    return [f"FAILED: {s} on {describe(r['gemm'])} ({r['gemm']['name'][:60]}): {e.splitlines()[0]}"
            for r in gemms for s, e in r.get("errors", {}).items()]


def e2e_table(w, r):
    """One workload: compile and step time per setting, then what failed, what the handler decided
    and where the compile time went."""
    lines = [f"| {w} | compile s | step ms | GEMM lowerings | autotuned | timing |", "|---|---|---|---|---|---|"]
    for s in r["compile_s"]:
        lines.append(f"| {s} | {r['compile_s'][s]:.1f} | {fmt(r.get('step_ms', {}).get(s))} | "
                     f"{r.get('lowerings', {}).get(s)} | {r.get('autotuned', {}).get(s)} | {r['timing'].get(s)} |")
    failed = [f"{w} {s} failed: {e}" for s, e in r.get("errors", {}).items()]
    if "compiling" in r:
        failed.append(f"{w}: the run was cut inside {r['compiling']}'s compile (no step timed)")
    lines += [""] + failed if failed else []
    for s in HANDLED:
        if r.get(f"{s}_stats"):
            lines.append(f"\n{w}: the handler's decisions ({s}) {r[f'{s}_stats']}")
    for s, phases in r.get("phases_s", {}).items():
        if phases:
            lines.append(f"{w} {s}: seconds inside " + ", ".join(
                f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in phases.items()))
    return lines
