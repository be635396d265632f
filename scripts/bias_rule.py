#!/usr/bin/env python3
"""How often the handler's pick between Inductor's two cuBLAS calls for addmm is slow.

For addmm the handler keeps one cuBLAS call (`expanded_bias_call` in
python/ah_inductor/choices.py): the 1-D bias (cuBLASLt's epilogue) or, for fp32 GEMMs whose k is
long for their output, the bias expanded to 2-D. This reads probe_addmm_bias.py's JSON lines,
which time both calls of each GEMM, and counts the fp32 GEMMs where the kept call runs more than
3 % (inductor_eval's SLOW_FLAG) behind the faster one: for the shipped rule (`k > bound`, since
the thirty-fifth session), the one before it (`k >= bound`), and the two rules without a bound
that the shipped one must beat (always the 1-D call, as Inductor does without max-autotune;
always the expanded call); then for the shipped rule with its bound times each of MULTIPLES,
with TF32 and without; then with each of MIN_M_CANDIDATES as its smallest m; then it lists the
GEMMs that sit exactly on the bound, where the first two differ. For the files' bf16 and fp16
GEMMs it then judges `install(half_unaligned_bias=True)` (the default now: the expanded call for
`half_unaligned_addmm`, m of at least 32 and k not a multiple of 8 and at least 4097) against
the 1-D call always, by the rule registered for it (docs/results.md, sixty-first session): it
is met with fewer slow picks than the 1-D call always and new slow picks (slow with it, not
without) on no more than a tenth of its corner's GEMMs.
Usage: bias_rule.py FILE.jsonl [FILE.jsonl ...]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ah_inductor.choices import (EXPANDED_BIAS_K_PER_TILE, expanded_bias_call,  # noqa: E402  (the rule has one owner)
                                 half_unaligned_addmm)
from inductor_results import SLOW_FLAG  # noqa: E402  (the bound has one owner)

FIELDS = ("m", "k", "n", "dtype", "tf32", "ms_bias", "ms_expanded")


def read(paths, dtypes=("float32",)):
    """The rows of probe_addmm_bias.py's files whose dtype is one of `dtypes`; ValueError naming
    the file and line of a line that is not one of its rows."""
    rows = []
    for path in paths:
        with open(path) as f:
            for no, line in enumerate(f, 1):
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{no}: not JSON ({e.msg})") from None
                missing = [k for k in FIELDS if k not in r] if isinstance(r, dict) else FIELDS
                if missing:
                    raise ValueError(f"{path}:{no}: not a line of probe_addmm_bias.py "
                                     f"(missing {', '.join(missing)})")
                if not all(number(r[k]) for k in ("m", "k", "n", "ms_bias", "ms_expanded")):
                    raise ValueError(f"{path}:{no}: m, k, n and the two times must be positive "
                                     "numbers")
                if r["dtype"] in dtypes:
                    rows.append(r)
    return rows


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def features(r, k=None):
    """The handler's features of probe row `r` (with `k` in place of its own, if given)."""
    return {"op": "addmm", "mat1_dtype": f"torch.{r['dtype']}", "using_tf32": bool(r["tf32"]),
            "m": r["m"], "k": r["k"] if k is None else k, "n": r["n"]}


def shipped(r):
    return expanded_bias_call(features(r))


def inclusive(r):
    """The rule as shipped before the thirty-fifth session, `k >= bound`: k + 1 meets
    `k + 1 > bound` exactly when k >= bound, and nothing else the rule reads depends on k."""
    return expanded_bias_call(features(r, r["k"] + 1))


def scaled(tf32, multiple):
    """The shipped rule with the bound of GEMMs with TF32 `tf32` times `multiple`."""
    per_tile = dict(EXPANDED_BIAS_K_PER_TILE)
    per_tile[tf32] = multiple * per_tile[tf32]
    return lambda r: expanded_bias_call(features(r), per_tile)


def min_m(value):
    """The shipped rule with EXPANDED_BIAS_MIN_M `value`."""
    return lambda r: expanded_bias_call(features(r), min_m=value)


def one_d(r):
    """The 1-D call always: Inductor without max-autotune, and install(half_unaligned_bias=False)
    for bf16 and fp16."""
    return False


RULES = (("shipped (`k > bound`)", shipped), ("inclusive (`k >= bound`)", inclusive),
         ("1-D call always", one_d), ("expanded call always", lambda r: True))
# The multiples of the bound scanned, with TF32 and without (probe_addmm_bias.py's per-tile grid).
MULTIPLES = (1, 1.5, 2, 3, 4, 6, 8)
# The smallest m given the expanded call, scanned (probe_addmm_bias.py's small-m grid).
MIN_M_CANDIDATES = (16, 24, 32, 48, 64)


def half_unaligned(r):
    """install(half_unaligned_bias=True)'s pick."""
    return expanded_bias_call(features(r), half_unaligned=True)


HALF_RULES = (("1-D call always", one_d), ("half_unaligned_bias (shipped)", half_unaligned),
              ("expanded call always", lambda r: True))
HALF = ("bfloat16", "float16")
# The most new slow picks `half_unaligned_bias` may make, as a share of its corner's GEMMs.
NEW_SLOW_SHARE = 0.1


def kept_ratio(r, rule):
    """The kept call's time over the faster call's."""
    kept = r["ms_expanded"] if rule(r) else r["ms_bias"]
    return kept / min(r["ms_bias"], r["ms_expanded"])


def judged(rows, rule):
    """The rows where `rule` keeps a call more than SLOW_FLAG behind the faster, and the worst
    kept call's ratio over all of `rows`."""
    ratios = [(kept_ratio(r, rule), r) for r in rows]
    return [r for x, r in ratios if x > SLOW_FLAG], max((x for x, _ in ratios), default=1.0)


def rule_line(label, rows, rule):
    """A table line: GEMMs, slow picks, of them TF32, worst."""
    slow, worst = judged(rows, rule)
    return f"| {label} | {len(rows)} | {len(slow)} | {sum(bool(r['tf32']) for r in slow)} | {worst:.2f}x |"


def report(rows):
    lines = ["| rule | fp32 GEMMs | kept call > 3 % slower | of them TF32 | worst |", "|---|---|---|---|---|"]
    lines += [rule_line(name, rows, rule) for name, rule in RULES]
    lines += ["", "| TF32 | bound x | GEMMs | kept call > 3 % slower | worst |", "|---|---|---|---|---|"]
    for tf32 in (True, False):
        part = [r for r in rows if bool(r["tf32"]) == tf32]
        for multiple in MULTIPLES:
            slow, worst = judged(part, scaled(tf32, multiple))
            lines.append(f"| {'on' if tf32 else 'off'} | {multiple} | {len(part)} | {len(slow)} | {worst:.2f}x |")
    lines += ["", "| min m | GEMMs | kept call > 3 % slower | of them TF32 | worst |", "|---|---|---|---|---|"]
    lines += [rule_line(value, rows, min_m(value)) for value in MIN_M_CANDIDATES]
    tied = [r for r in rows if shipped(r) != inclusive(r)]
    lines += ["", f"On the bound, where the rules differ: {len(tied)} (expanded / 1-D bias)"]
    lines += [f"  {r['m']} x {r['k']} x {r['n']} {'TF32' if r['tf32'] else 'fp32'}: "
              f"{r['ms_expanded'] / r['ms_bias']:.3f}" for r in tied]
    return "\n".join(lines)


def half_line(label, rows, rule):
    """A table line: GEMMs, slow picks, of them in the corner, worst."""
    slow, worst = judged(rows, rule)
    corner = sum(half_unaligned_addmm(features(r)) for r in slow)
    return f"| {label} | {len(rows)} | {len(slow)} | {corner} | {worst:.2f}x |"


def half_verdict(rows):
    """The registered judgement of half_unaligned_bias on bf16 and fp16 `rows`: (slow picks with
    it, with the 1-D call always, GEMMs of its corner, new slow picks, whether it passes)."""
    with_it, without = judged(rows, half_unaligned)[0], judged(rows, one_d)[0]
    corner = sum(half_unaligned_addmm(features(r)) for r in rows)
    slow_without = {id(r) for r in without}
    new = sum(id(r) not in slow_without for r in with_it)
    passes = len(with_it) < len(without) and new <= NEW_SLOW_SHARE * corner
    return len(with_it), len(without), corner, new, passes


def half_report(rows):
    """The bf16 and fp16 table: each of HALF_RULES, then half_unaligned_bias's verdict."""
    lines = ["| rule (bf16, fp16) | GEMMs | kept call > 3 % slower | of them in the corner | worst |",
             "|---|---|---|---|---|"]
    lines += [half_line(name, rows, rule) for name, rule in HALF_RULES]
    with_it, without, corner, new, passes = half_verdict(rows)
    lines += ["", f"half_unaligned_bias: {with_it} slow picks against {without} for the 1-D call always; "
              f"{new} new of {corner} GEMMs in its corner (at most {NEW_SLOW_SHARE * corner:g}): "
              + ("meets the registered rule" if passes else "does not meet the registered rule")]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", help="probe_addmm_bias.py's JSON lines")
    a = p.parse_args()
    try:
        rows = read(a.files, ("float32",) + HALF)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    fp32, half = [r for r in rows if r["dtype"] == "float32"], [r for r in rows if r["dtype"] in HALF]
    print("\n\n".join(([report(fp32)] if fp32 or not half else []) + ([half_report(half)] if half else [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
