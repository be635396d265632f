#!/usr/bin/env python3
"""Checks the `mm` AutoHeuristic artifact inside real PyTorch (run once on the GPU machine).

Usage (one CUDA GPU, PyTorch with Inductor and Triton; from the repository root):
  python3 scripts/check_mm_artifact_in_pytorch.py --out $OUT/mm_artifact_check.json \
      [--gemms FILE.jsonl ...] [--no-llama] [--limit N] [--budget-s S] \
      [--artifact generated/python/_InductorMMH100.py] \
      [--handler generated/python/inductor_mmh100_choices.py]

Copies the artifact into the installed torch's torch/_inductor/autoheuristic/artifacts/ (removed
again at the end, so the machine is left as found) and makes PyTorch's LearnedHeuristicController
find it. Then, for every `mm` GEMM of the GEMM files (default: data/inductor_holdout{2..6}_gemms.jsonl;
the hook sees only mm) and the LLaMA workloads' distinct mm shapes, operands laid out as
scripts/inductor_eval.py lays them out: compiles the GEMM with max_autotune_gemm and
autoheuristic_use="mm" (fresh caches, dynamo reset between GEMMs) and records
  - the choices Inductor offered the hook (`tuned_mm` -> `mm_autoheuristic`) and those it ranked,
  - what the artifact's `get_best_choices` returned, and the features it read,
  - the choices that reached Inductor's autotuning (AlgorithmSelectorCache) and how many were
    benchmarked,
and compares them with the handler's decision for the same GEMM (computed as
`inductor_eval.py --dry-run --handler` computes it). Verdict per GEMM:
  extern  -> only extern_mm reached autotuning, nothing benchmarked;
  keep    -> extern_mm plus the kept configs as PyTorch names them (GROUP_M collapsed,
             naming.pytorch_mm_id), of those PyTorch offered; when it offered none of them the
             handler keeps Inductor's whole list (choices.py), so the artifact should too;
  default -> no ranking: Inductor's whole list (what it had before adding the hook's extras).
Prints a table (stdout), progress (stderr), and writes everything to --out, rewritten after
every GEMM. Checks decisions, not speed: nothing is timed but the compiles.
"""

import argparse
import contextlib
import importlib
import importlib.util
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import inductor_eval as ie  # noqa: E402  (the GEMM's function; imports no torch; puts python/ on sys.path)
import inductor_gemms as G  # noqa: E402  (GEMM files, a GEMM in words, its features)
import inductor_harness as H  # noqa: E402  (the warm process)
from inductor_handlers import load_handler  # noqa: E402
from inductor_workloads import llama_gemms  # noqa: E402
from ah_inductor.naming import caller_name, pytorch_mm_id  # noqa: E402

PROG = "check_mm_artifact_in_pytorch"
ARTIFACT = "generated/python/_InductorMMH100.py"
HANDLER = "generated/python/inductor_mmh100_choices.py"
DEFAULT_GEMMS = [f"data/inductor_holdout{i}_gemms.jsonl" for i in range(2, 7)]
ARTIFACTS_PACKAGE = "torch._inductor.autoheuristic.artifacts"
NEEDS = f"{PROG}: needs PyTorch (2.11, with Inductor and Triton) and a CUDA GPU (the H100 the artifact is for)"
EXTERN = "extern_mm"


# -- GEMMs and the handler's decisions (no torch) ------------------------------------------------


def shown(path):
    """`path` relative to the repository when it lies inside it (results are committed)."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def read_gemm_file(path):
    """The GEMMs of a JSON-lines file (`inductor_eval.read_gemms`), each with its source line."""
    return G.read_gemms(path, source=shown(path))


def gemm_key(gm):
    tf32 = gm["tf32"] and gm["dtype"] == "float32"
    return (gm["op"], gm["batch"], gm["m"], gm["k"], gm["n"], gm["dtype"], tf32, gm["trans_a"], gm["trans_b"])


def plan(paths, llama=True):
    """(distinct mm GEMMs, names of the GEMMs that are not mm): duplicates of a GEMM (same shape,
    layout, dtype) are listed in its `also`."""
    gemms = [gm for p in paths for gm in read_gemm_file(p)]
    if llama:
        for w in ("llama_train", "llama_infer"):
            gemms += [dict(gm, source=w) for gm in llama_gemms(w)]
    distinct, not_mm = {}, []
    for gm in gemms:
        if gm["op"] != "mm":
            not_mm.append(f"{gm['source']}: {gm['name']} ({gm['op']})")
            continue
        key = gemm_key(gm)
        if key in distinct:
            distinct[key]["also"].append(gm["name"])
        else:
            distinct[key] = dict(gm, also=[])
    return list(distinct.values()), not_mm


def expected_ids(names):
    """extern_mm, then PyTorch's ids (`pytorch_mm_id`) of the kept config names, each once."""
    out = [EXTERN]
    for name in names:
        i = pytorch_mm_id(name)
        if i is not None and i not in out:
            out.append(i)
    return out


def order(gemms, decisions):
    """The GEMMs that exercise the ranking (keep, default) first, then extern: a budget cuts the
    least informative ones."""
    rank = {"keep": 0, "default": 1, "drop": 1, "extern": 2}
    idx = sorted(range(len(gemms)), key=lambda i: (rank.get(decisions[i][0], 3), i))
    return [gemms[i] for i in idx], [decisions[i] for i in idx]


# -- the verdict (no torch) ----------------------------------------------------------------------


def judge(decision, kept, ranked=None, offered=None, benchmarked=0, consulted=True):
    """Whether PyTorch kept what the handler decides.

    decision: the handler's (kind, names); kept: PyTorch ids of the choices that reached
    Inductor's autotuning (None: no autotuning call for this GEMM); ranked: the ids the artifact's
    get_best_choices ranked (None: no ranking); offered: the ids offered to the hook (None: not
    seen); benchmarked: how many choices were benchmarked; consulted: whether the artifact was
    asked. Returns a dict with `ok`, `verdict` (text) and what was expected."""
    kind, names = decision[0], tuple(decision[1])
    out = {"handler": kind, "effective": kind}
    if kind == "drop":
        # A trimmed full list: the artifact is unsure (PyTorch's hook cannot trim), as for default.
        kind = out["effective"] = "default"
    if kept is None:
        return dict(out, ok=False, verdict="no autotuning call: the hook was not reached")
    kept_set = set(kept)
    if kind == "keep":
        want = expected_ids(names)
        out["expected"] = want
        if offered is not None:
            out["not_offered"] = [i for i in want if i not in offered]
            want = [i for i in want if i in offered or i == EXTERN]
            if want == [EXTERN]:
                # None of the kept configs is offered (Inductor sizes configs to the GEMM): the
                # handler keeps cuBLAS alone (choices.py), so the artifact ranks extern_mm alone.
                kind = out["effective"] = "extern"
    if kind != "default" and not consulted:
        return dict(out, ok=False, verdict="MISMATCH: the artifact was not consulted")
    if kind == "extern":
        out["expected"] = [EXTERN]
        if ranked is not None and list(ranked) != [EXTERN]:
            return dict(out, ok=False, verdict=f"MISMATCH: the artifact ranked {len(ranked)}: {short(ranked)}")
        if list(kept) != [EXTERN] or benchmarked:
            return dict(out, ok=False, verdict=f"MISMATCH: kept {len(kept)} ({short(kept)}), benchmarked {benchmarked}")
        return dict(out, ok=True, verdict="ok")
    if kind == "keep":
        if ranked is not None and set(ranked) != set(out["expected"]):
            extra = [i for i in ranked if i not in out["expected"]]
            missing = [i for i in out["expected"] if i not in ranked]
            return dict(out, ok=False, verdict=f"MISMATCH: the artifact ranked otherwise (missing {short(missing)}; extra {short(extra)})")
        if kept_set != set(want) or len(kept) != len(kept_set):
            missing = [i for i in want if i not in kept_set]
            extra = sorted(kept_set - set(want))
            dup = len(kept) - len(kept_set)
            return dict(out, ok=False, verdict=f"MISMATCH: missing {short(missing)}; extra {short(extra)}" + (f"; {dup} repeated" if dup else ""))
        n = len(out.get("not_offered", ()))
        return dict(out, ok=True, verdict=f"ok ({n} kept config{'s' if n != 1 else ''} not offered by PyTorch)" if n else "ok")
    # default: no ranking, and Inductor's list as it was before the hook's extra configs: a
    # prefix of what the hook was offered, the rest being Triton mm configs (tuned_mm appends
    # its "mm-ah" configs of the mm template, and drops them again when nothing is ranked).
    if ranked is not None:
        return dict(out, ok=False, verdict=f"MISMATCH: the artifact ranked {len(ranked)} ({short(ranked)}), expected no ranking")
    if len(kept) < 2 or (offered is not None and (
            list(offered[: len(kept)]) != list(kept)
            or not all(str(i).startswith("type=triton_") for i in offered[len(kept):]))):
        return dict(out, ok=False, verdict=f"MISMATCH: kept {len(kept)} ({short(kept)}), not Inductor's whole list")
    verdict = {"default": "ok", "drop": "ok (a trimmed full list: unsure in PyTorch)"}.get(
        out["handler"], "ok (no kept config offered: whole list)")
    return dict(out, ok=True, verdict=verdict)


def short(ids, n=3):
    ids = list(ids)
    s = ", ".join(str(i).replace("type=triton_", "") for i in ids[:n])
    return f"[{s}{', ...' if len(ids) > n else ''}]"


# -- PyTorch ---------------------------------------------------------------------------------------


def need_torch():
    """None when PyTorch and Triton are installed here; else which is missing. Nothing is
    imported: inductor_harness.Inductor imports torch after pointing its caches at fresh folders."""
    for name in ("torch", "triton"):
        try:
            if importlib.util.find_spec(name) is None:
                return f"{name} is not installed here"
        except (ImportError, ValueError) as e:
            return f"{name} is not importable here ({e})"
    return None


def start_inductor():
    """inductor_eval's warm process (fresh caches, caches disabled, start-up paid), or what is
    missing (no CUDA device, torch not importable)."""
    try:
        return H.Inductor({}, rounds=1), None
    except SystemExit as e:  # Inductor's "PyTorch sees no CUDA device"
        return None, str(e).replace("inductor_eval: ", "")
    except ImportError as e:
        return None, f"torch is not importable here ({e})"


def controller_class():
    from torch._inductor.autoheuristic.learned_heuristic_controller import LearnedHeuristicController

    return LearnedHeuristicController


def forget_heuristics():
    """Makes the controller look for artifacts again at its next question."""
    c = controller_class()
    c.existing_heuristics.clear()
    c.heuristics_initialized = False


@contextlib.contextmanager
def installed(src):
    """The artifact copied into torch's artifacts folder (or, where that folder cannot be
    written, into a folder added to the package's path), found by the controller; the machine is
    left as found afterwards (copy and bytecode removed, a file it replaced restored)."""
    pkg = importlib.import_module(ARTIFACTS_PACKAGE)
    art_dir = list(pkg.__path__)[0]
    base = os.path.basename(src)
    module = f"{ARTIFACTS_PACKAGE}.{os.path.splitext(base)[0]}"
    dst = os.path.join(art_dir, base)
    previous = open(dst, "rb").read() if os.path.exists(dst) else None
    pyc = importlib.util.cache_from_source(dst)
    pyc_existed, pyc_dir_existed = os.path.exists(pyc), os.path.isdir(os.path.dirname(pyc))
    extra_dir = None
    try:
        try:
            shutil.copyfile(src, dst)
            how = "copied into torch's artifacts folder"
        except OSError as e:
            extra_dir = tempfile.mkdtemp(prefix="ah-mm-artifact-")
            dst = os.path.join(extra_dir, base)
            shutil.copyfile(src, dst)
            pkg.__path__.append(extra_dir)
            how = f"artifacts folder not writable ({e}): added {extra_dir} to the package's path"
        importlib.invalidate_caches()
        sys.modules.pop(module, None)
        forget_heuristics()
        yield {"path": dst, "module": module, "how": how}
    finally:
        sys.modules.pop(module, None)
        if extra_dir is not None:
            with contextlib.suppress(ValueError):
                pkg.__path__.remove(extra_dir)
            shutil.rmtree(extra_dir, ignore_errors=True)
        elif previous is not None:
            with open(dst, "wb") as f:
                f.write(previous)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(dst)
        if not pyc_existed:
            with contextlib.suppress(FileNotFoundError):
                os.remove(pyc)
        if not pyc_dir_existed:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(pyc))
        importlib.invalidate_caches()
        forget_heuristics()


def ah_id(choice):
    try:
        return str(choice.autoheuristic_id())
    except Exception as e:  # noqa: BLE001 - a choice without an id is named by its type
        return f"?{type(choice).__name__}: {type(e).__name__}"


def described(choices):
    return {"ids": [ah_id(c) for c in choices], "names": [caller_name(c) for c in choices]}


class Observer:
    """What one compile showed: the hook's calls (offered, ranked), the artifact's answers
    (features, ranking, precondition), autotuning calls (choices) and benchmarked counts."""

    def __init__(self, torch, module, class_name):
        self.torch = torch
        self.clear()
        self._wrap_artifact(getattr(module, class_name), module)
        self._wrap_hook()
        self._watch_selector()

    def clear(self):
        self.hook, self.artifact, self.precondition, self.selector, self.benchmarked = [], [], [], [], []

    def _wrap_artifact(self, cls, module):
        best, pre = cls.get_best_choices, cls.check_precondition
        features = getattr(module, "mm_features", None)
        names = getattr(module, "FEATURES", ())
        obs = self

        def get_best_choices(self, context):
            r = best(self, context)
            f = features(context, names) if features else None
            obs.artifact.append({"features": f, "ranking": None if r is None else [self.get_choice(i) for _, i in r]})
            return r

        def check_precondition(self, metadata, context):
            ok = pre(self, metadata, context)
            obs.precondition.append(bool(ok))
            return ok

        cls.get_best_choices, cls.check_precondition = get_best_choices, check_precondition

    def _wrap_hook(self):
        import torch._inductor.kernel.mm as mm

        orig = getattr(mm, "mm_autoheuristic", None)
        if orig is None:
            return

        def mm_autoheuristic(mat1, mat2, m, n, k, choices, *args, **kwargs):
            offered = described(choices)
            r = orig(mat1, mat2, m, n, k, choices, *args, **kwargs)
            self.hook.append({"offered": offered, "ranked": None if r is None else described(r)})
            return r

        mm.mm_autoheuristic = mm_autoheuristic

    def _watch_selector(self):
        from torch._inductor import select_algorithm as sa

        def seen(choices):
            self.selector.append(described(choices))
            return choices

        def feedback(timings, *args, **kwargs):
            self.benchmarked.append(sum(1 for t in timings.values() if isinstance(t, float) and math.isfinite(t)))

        self._seen = seen
        self._sa = sa
        sa.add_feedback_saver(feedback)
        self.ensure()

    def ensure(self):
        """(Re-)registers the choice hook, should clearing Inductor's caches have dropped it."""
        cache = self._sa.get_algorithm_selector_cache()
        if self._seen not in getattr(cache, "preprocessing_fns", []):
            cache.add_preprocessing_fn(self._seen)


def check_gemm(ind, obs, gm, decision, decide=None):
    """Compiles `gm` (max_autotune_gemm, autoheuristic_use="mm") and judges what PyTorch kept."""
    torch = ind.torch
    torch.backends.cuda.matmul.allow_tf32 = bool(gm["tf32"])
    fn, args = ie.gemm_fn(torch, gm)
    ind.fresh()
    obs.ensure()
    obs.clear()
    options = {"max_autotune_gemm": True, "autoheuristic_use": "mm"}
    t0 = time.perf_counter()
    compiled = torch.compile(fn, dynamic=False, fullgraph=True, options=options)
    compiled(*args)
    torch.cuda.synchronize()
    rec = {"compile_s": time.perf_counter() - t0}
    del compiled, args
    ind.fresh()
    hook = obs.hook[-1] if obs.hook else None
    art = obs.artifact[-1] if obs.artifact else None
    sel = obs.selector[-1] if obs.selector else None
    handler_f = G.handler_features(gm)
    rec.update(
        autotuning_calls=len(obs.selector), hook_calls=len(obs.hook), precondition=obs.precondition,
        offered=hook["offered"] if hook else None, hook_ranked=hook["ranked"] if hook else None,
        artifact=art, kept=sel, benchmarked=sum(obs.benchmarked),
    )
    if art and art["features"] is not None:
        rec["feature_differences"] = {k: [art["features"].get(k), v] for k, v in handler_f.items()
                                      if art["features"].get(k, v) != v}
        if rec["feature_differences"] and decide is not None:
            # Inductor changed the GEMM before the hook (shape padding: n 49155 -> 49160, a
            # padded contiguous copy): the handler decides inside the same tuned_mm, on the same
            # nodes, so it is judged on the features PyTorch presented, the preview kept.
            rec["preview_decision"] = [decision[0], list(decision[1])]
            decision = tuple(decide(dict(art["features"])))
            rec["decision"] = [decision[0], list(decision[1])]
    consulted = bool(obs.artifact)
    ranked = art["ranking"] if art else None
    rec.update(judge(decision, sel["ids"] if sel else None, ranked=ranked,
                     offered=hook["offered"]["ids"] if hook else None,
                     benchmarked=rec["benchmarked"], consulted=consulted))
    if rec["verdict"].endswith("not consulted"):
        rec["verdict"] += (" (tuned_mm did not call mm_autoheuristic)" if not obs.hook else
                           " (its precondition was False)" if obs.precondition and not any(obs.precondition) else
                           " (another mm heuristic answered)")
    return rec


# -- main ----------------------------------------------------------------------------------------


def parse(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--out", required=True, help="the JSON results file (rewritten after every GEMM)")
    p.add_argument("--gemms", nargs="+", metavar="FILE.jsonl", default=None,
                   help="JSON lines of GEMMs (default: " + " ".join(DEFAULT_GEMMS) + "); only op mm is checked")
    p.add_argument("--no-llama", action="store_true", help="leave out the LLaMA workloads' mm shapes")
    p.add_argument("--artifact", default=ARTIFACT, help=f"the artifact (default {ARTIFACT})")
    p.add_argument("--handler", default=HANDLER, help=f"the handler module deciding the same tree (default {HANDLER})")
    p.add_argument("--limit", type=int, default=None, help="check at most N GEMMs (default all)")
    p.add_argument("--budget-s", type=float, default=None,
                   help="start no GEMM after this many seconds (counted from the start); the rest are listed as skipped")
    return p.parse_args(argv)


def fmt_kept(rec):
    kept = (rec.get("kept") or {}).get("ids")
    if kept is None:
        return "-"
    t = sum(1 for i in kept if i != EXTERN)
    other = f" + {t} triton" if t else ""
    return (EXTERN if EXTERN in kept else "no extern_mm") + other + (f", {rec['benchmarked']} benchmarked" if rec.get("benchmarked") else "")


def fmt_decision(d):
    return f"keep {len(d[1])}" if d[0] == "keep" else d[0]


def table(records):
    lines = [f"{'#':>3}  {'GEMM':46s} {'shape':34s} {'handler':8s} {'kept in PyTorch':36s} verdict"]
    for i, r in enumerate(records, 1):
        gm = r["gemm"]
        lines.append(f"{i:3d}  {gm['name'][:46]:46s} {G.describe(gm)[:34]:34s} {fmt_decision(r['decision']):8s} "
                     f"{fmt_kept(r)[:36]:36s} {r['verdict']}")
    return "\n".join(lines)


def summarized(data, t0):
    """`data` with its summary: GEMMs checked, ok, verdicts by kind, skipped, seconds."""
    kinds = {}
    for r in data["gemms"]:
        k = "ok" if r["ok"] else r["verdict"].split(":")[0]
        kinds[k] = kinds.get(k, 0) + 1
    data["summary"] = {"checked": len(data["gemms"]), "ok": kinds.get("ok", 0), "verdicts": kinds,
                       "skipped": len(data["skipped"]), "elapsed_s": time.perf_counter() - t0}
    return data


def save(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
    os.replace(tmp, path)


def main(argv=None):
    a = parse(argv)
    t0 = time.perf_counter()
    paths = a.gemms or [os.path.join(ROOT, p) for p in DEFAULT_GEMMS]
    try:
        gemms, not_mm = plan(paths, llama=not a.no_llama)
    except (OSError, G.GemmFileError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    a.artifact, a.handler = (os.path.join(ROOT, x) for x in (a.artifact, a.handler))
    handler = load_handler(a.handler)
    decisions = [tuple(handler.decide(G.handler_features(gm))) for gm in gemms]
    gemms, decisions = order(gemms, decisions)
    if a.limit is not None:
        gemms, decisions = gemms[: a.limit], decisions[: a.limit]
    missing, ind = need_torch(), None
    if not missing:
        ind, missing = start_inductor()
    if missing:
        print(f"{NEEDS}; {missing}", file=sys.stderr)
        return 2
    ind.config.autoheuristic_use = "mm"
    # A timeout's SIGTERM unwinds too, so the artifact is removed from torch's folder.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    data = {"meta": dict(ind.meta(), artifact=a.artifact, handler_module=a.handler, args=vars(a),
                         start_up_s=time.perf_counter() - t0),
            "gemms": [], "skipped": [], "errors": [], "not_mm": not_mm, "summary": {}}
    log = lambda s: print(f"[{time.perf_counter() - t0:6.1f}s] {s}", file=sys.stderr, flush=True)  # noqa: E731
    log(f"torch {data['meta']['torch']} on {data['meta']['device']}: {len(gemms)} mm GEMMs to check")
    with installed(a.artifact) as where:
        data["meta"]["installed"] = where
        heuristics = controller_class()(None, None).get_heuristics("mm")
        data["meta"]["mm_heuristics"] = [type(h).__name__ for h in heuristics]
        class_name = os.path.splitext(os.path.basename(a.artifact))[0].lstrip("_")
        log(f"artifact {where['how']}: {where['path']}; mm heuristics in the controller's order: {data['meta']['mm_heuristics']}")
        if class_name not in data["meta"]["mm_heuristics"]:
            try:
                importlib.import_module(where["module"])
                why = "imported, but the controller did not list it"
            except Exception as e:  # noqa: BLE001 - the reason goes into the report
                why = f"{type(e).__name__}: {e}"
            data["errors"].append(f"the controller did not find {class_name}: {why}")
            save(a.out, data)
            print(f"{PROG}: the controller did not find {class_name}: {why}", file=sys.stderr)
            return 1
        obs = Observer(ind.torch, importlib.import_module(where["module"]), class_name)
        for gm, d in zip(gemms, decisions):
            rec = {"gemm": gm, "decision": [d[0], list(d[1])]}
            if a.budget_s is not None and time.perf_counter() - t0 > a.budget_s:
                data["skipped"].append(gm["name"])
                continue
            log(f"{gm['name']}  ({G.describe(gm)}, handler: {fmt_decision(d)})")
            try:
                rec.update(check_gemm(ind, obs, gm, d, handler.decide))
            except Exception as e:  # noqa: BLE001 - recorded; the next GEMM still runs
                ind.fresh()
                rec.update(ok=False, verdict=f"error: {type(e).__name__}: {str(e)[:300]}")
            data["gemms"].append(rec)
            save(a.out, summarized(data, t0))
    save(a.out, summarized(data, t0))
    records = data["gemms"]
    print(table(records))
    if data["skipped"]:
        print(f"skipped (budget): {len(data['skipped'])} GEMMs")
    n_ok = sum(r["ok"] for r in records)
    print(f"{n_ok} of {len(records)} GEMMs: the artifact kept what the handler decides")
    return 0 if n_ok == len(records) else 1


if __name__ == "__main__":
    sys.exit(main())
