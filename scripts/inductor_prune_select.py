#!/usr/bin/env python3
"""The selection rule of the ah-prune grid (scripts/inductor_prune_grid.sh), on its score lines.

Reads lines `leaf|depth|support|list|gemms|autotune_s|run_vs_ma|run_vs_best|harmful|default_s`
with an optional 11th field `max_keep` (default 8) and 12th `harm_price` (seconds, default
`inf`; one line per setting, `list` is `full` or `capped`) from a file or stdin, prints the grid as a markdown table and the setting the rule
chooses.

The rule (the one-standard-error rule of CART, Breiman et al. 1984, section 3.4.3): among the
settings with at least 10x less autotuning than default max-autotune, h is the fewest
cross-validated harmful picks; a setting with at most h + sqrt(h * (1 - h / N)) harmful picks
over N GEMMs (the binomial standard error of a count of h in N) is as good as the data can tell,
and of those the rule takes the one with the least autotuning (ties: fewer harmful, then the
order of the table).

    python3 scripts/inductor_prune_select.py SCORES      # or: ... | python3 scripts/inductor_prune_select.py -
"""

import math
import sys
from typing import List, NamedTuple, Optional, Tuple


# ah-prune's default --max-keep and --harm-price.
DEFAULT_MAX_KEEP = 8
DEFAULT_HARM_PRICE = math.inf


class Setting(NamedTuple):
    leaf: int
    depth: int
    support: int
    full_list: bool
    gemms: int
    autotune_s: float
    run_vs_ma: float
    run_vs_best: float
    harmful: float
    default_s: float
    max_keep: int = DEFAULT_MAX_KEEP
    harm_price: float = DEFAULT_HARM_PRICE

    def flags(self) -> str:
        capped = "" if self.full_list else " --no-full-list"
        keep = "" if self.max_keep == DEFAULT_MAX_KEEP else f" --max-keep {self.max_keep}"
        price = "" if math.isinf(self.harm_price) else f" --harm-price {fmt_count(self.harm_price)}"
        return (f"--min-leaf {self.leaf} --max-depth {self.depth} --min-support {self.support}"
                f"{capped}{keep}{price}")


class BadLine(ValueError):
    pass


def parse(lines, source: str) -> List[Setting]:
    """The settings of score lines; a malformed line raises BadLine naming it."""
    out = []
    for i, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        f = line.split("|")
        try:
            if len(f) not in (10, 11, 12) or f[3] not in ("full", "capped"):
                raise ValueError("expected 10 to 12 fields, the 4th 'full' or 'capped'")
            keep = int(f[10]) if len(f) > 10 else DEFAULT_MAX_KEEP
            price = float(f[11]) if len(f) > 11 else DEFAULT_HARM_PRICE
            if not price >= 0:
                raise ValueError("harm_price must be 0 or more, or inf")
            out.append(Setting(int(f[0]), int(f[1]), int(f[2]), f[3] == "full", int(f[4]),
                               float(f[5]), float(f[6]), float(f[7]), float(f[8]), float(f[9]), keep,
                               price))
        except ValueError as e:
            raise BadLine(f"{source}:{i}: not a score line ({e}): {line[:120]!r}; "
                          "a setting whose ah-prune run failed leaves a short line: "
                          "run that setting alone to see why") from None
    return out


def standard_error(harmful: float, gemms: int) -> float:
    """The binomial standard error of a count of `harmful` picks in `gemms` GEMMs."""
    p = min(max(harmful / gemms, 0.0), 1.0) if gemms else 0.0
    return math.sqrt(harmful * (1.0 - p))


def choose(settings: List[Setting]) -> Tuple[Optional[Setting], float, float]:
    """The rule's choice (None if no setting has 10x less autotuning), the fewest harmful
    picks among the eligible settings and the bound within one standard error of it."""
    eligible = [s for s in settings if s.autotune_s * 10 <= s.default_s]
    if not eligible:
        return None, math.nan, math.nan
    best = min(s.harmful for s in eligible)
    bound = best + standard_error(best, eligible[0].gemms)
    within = [s for s in eligible if s.harmful <= bound + 1e-9]
    return min(within, key=lambda s: (s.autotune_s, s.harmful)), best, bound


def fmt_count(x: float) -> str:
    return f"{x:.0f}" if x == int(x) else f"{x:.1f}"


def render(settings: List[Setting]) -> str:
    rows = sorted(settings, key=lambda s: (s.full_list is False, s.leaf, s.depth, s.support, -s.max_keep,
                                           s.harm_price))
    out = ["| min-leaf | max-depth | min-support | full list | max-keep | harm price s | autotuning s | run vs max-autotune | run vs best | harmful |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for s in rows:
        price = "inf" if math.isinf(s.harm_price) else fmt_count(s.harm_price)
        out.append(f"| {s.leaf} | {s.depth} | {s.support} | {'yes' if s.full_list else 'no'} | {s.max_keep} | {price} | "
                   f"{s.autotune_s:.1f} | {s.run_vs_ma:.4f} | {s.run_vs_best:.4f} | {fmt_count(s.harmful)} |")
    chosen, best, bound = choose(settings)
    if chosen is None:
        out.append("\nno setting has 10x less autotuning than default max-autotune")
    else:
        out.append(f"\nfewest harmful with 10x less autotuning: {fmt_count(best)}; within one standard "
                   f"error: at most {bound:.1f}")
        out.append(f"chosen by the rule: {chosen.flags()} ({fmt_count(chosen.harmful)} harmful, "
                   f"{chosen.autotune_s:.1f} s of autotuning; default max-autotune {chosen.default_s:.1f} s)")
    return "\n".join(out)


def main(argv) -> int:
    if len(argv) != 2:
        print("usage: inductor_prune_select.py SCORES|-", file=sys.stderr)
        return 2
    try:
        if argv[1] == "-":
            settings = parse(sys.stdin, "<stdin>")
        else:
            with open(argv[1], encoding="utf-8") as f:
                settings = parse(f, argv[1])
    except (OSError, BadLine) as e:
        print(f"inductor_prune_select.py: {e}", file=sys.stderr)
        return 2
    if not settings:
        print("inductor_prune_select.py: no score lines: every ah-prune run of the grid failed?",
              file=sys.stderr)
        return 2
    print(render(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
