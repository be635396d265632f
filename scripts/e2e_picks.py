#!/usr/bin/env python3
"""Which lowerings (GEMMs, convolutions) two compiles of one workload picked differently.

    python3 scripts/e2e_picks.py A.json:SETTING B.json:SETTING [--workload NAME]

Each argument names a result file of `scripts/inductor_eval.py` and one of its settings (`ours`,
`max_autotune`, ...); the two may be one file's two settings or two files' one. For every
end-to-end workload both measured (or only `--workload`), prints the step times and, as a
markdown table, the lowerings (grouped by their inputs' sizes, `picked_by_shape`) whose picks
differ: where a step time moved between two compiles, the rows say which choices moved with it.
Result files written before the forty-second session have no `picked_by_shape`: named, exit 2.
"""

import argparse
import json
import sys


def parse_ref(text):
    """'FILE.json:SETTING' as (file, setting); raises ValueError naming the expected form."""
    path, sep, setting = text.rpartition(":")
    if not sep or not path or not setting:
        raise ValueError(f"{text!r}: give FILE.json:SETTING, e.g. results.json:ours")
    return path, setting


def load(path):
    """Result file `path`'s end-to-end records (workload -> record); raises ValueError (or
    OSError) naming the file when it holds none in the form inductor_eval writes."""
    with open(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None
    e2e = data.get("e2e") if isinstance(data, dict) else None
    if not isinstance(e2e, dict) or not all(isinstance(r, dict) for r in e2e.values()):
        raise ValueError(f"{path}: not a result file of scripts/inductor_eval.py (no end-to-end records)")
    return e2e


def workload_picks(e2e, path, setting, workload):
    """(step ms, picked_by_shape) of `setting` in workload `workload` of records `e2e`."""
    record = e2e.get(workload)
    if record is None:
        raise ValueError(f"{path}: no end-to-end workload {workload!r}")
    picks = record.get("picked_by_shape", {})
    if setting not in picks:
        have = ", ".join(sorted(picks)) or "none: written before picked_by_shape was recorded"
        raise ValueError(f"{path}: {workload} has no picks by shape for setting {setting!r} (it has {have})")
    return record.get("step_ms", {}).get(setting), picks[setting]


def moved(a, b):
    """The shapes whose {choice: count} differ between picks `a` and `b`, as (shape, a's, b's)."""
    return [(s, a.get(s, {}), b.get(s, {})) for s in sorted(set(a) | set(b)) if a.get(s) != b.get(s)]


def counts_text(counts):
    return "; ".join(f"{name} x{n}" for name, n in counts.items()) or "-"


def report(workload, refs, steps, rows):
    (pa, sa), (pb, sb) = refs
    fmt = lambda ms: "-" if ms is None else f"{ms:.3f} ms"  # noqa: E731
    lines = [f"{workload}: A = {pa}:{sa} ({fmt(steps[0])}), B = {pb}:{sb} ({fmt(steps[1])}); "
             f"{len(rows)} lowering shape(s) picked differently", ""]
    if rows:
        lines += ["| inputs | A picked | B picked |", "|---|---|---|"]
        lines += [f"| {s} | {counts_text(a)} | {counts_text(b)} |" for s, a, b in rows]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A.json:SETTING")
    p.add_argument("b", metavar="B.json:SETTING")
    p.add_argument("--workload", help="only this end-to-end workload (default: every one both measured)")
    args = p.parse_args(argv)
    try:
        refs = [parse_ref(args.a), parse_ref(args.b)]
        data = [load(path) for path, _ in refs]
        names = [args.workload] if args.workload else sorted(set(data[0]) & set(data[1]))
        if not names:
            raise ValueError(f"{refs[0][0]} and {refs[1][0]} share no end-to-end workload")
        out = []
        for w in names:
            (sa, pa), (sb, pb) = (workload_picks(d, path, s, w) for d, (path, s) in zip(data, refs))
            out.append(report(w, refs, (sa, sb), moved(pa, pb)))
    except (OSError, ValueError) as e:
        print(f"e2e_picks: {e}", file=sys.stderr)
        return 2
    print("\n\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
