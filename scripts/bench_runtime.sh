#!/usr/bin/env bash
# The multi-kernel runtime's first call with the learned reduction heuristic, without a GPU
# (docs/reduction.md): ReductionH100 on the logged times of the fresh H100 shapes, the time of
# `decide`, and the time of a whole use-mode first call (`MultiKernel::pick`) warm and with the
# CPU caches flushed (64 MiB written before each pick). Printed as a table.
#
#   make bench-runtime        (or: bash scripts/bench_runtime.sh)
set -euo pipefail

CARGO=${CARGO:-cargo}
SHAPES=${SHAPES:-data/reduction_h100_fresh.txt}
"$CARGO" build --release --quiet -p ah-cases --example reduction_multi_kernel
json=$(target/release/examples/reduction_multi_kernel eval --shapes "$SHAPES")
python3 - "$json" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
rows = [
    ("shapes (decided by the heuristic)", f"{d['inputs']} ({d['sure']})"),
    ("runtime pick, share of the oracle", f"{100 * d['runtime']['share_of_oracle']:.2f} %"),
    ("runtime pick, more than 10% slower", f"{d['runtime']['over_10pct']}"),
    ("speedup over always persistent-512", f"{d['fixed_baselines']['persistent-512']['runtime_speedup']:.3f}x"),
    ("speedup over always looped-512", f"{d['fixed_baselines']['looped-512']['runtime_speedup']:.3f}x"),
    ("decide, in a loop", f"{d['decide_ns']:.1f} ns"),
    ("first call (pick), warm: median / p90", f"{d['runtime_pick_ns']['median']:.0f} / {d['runtime_pick_ns']['p90']:.0f} ns"),
    ("first call (pick), caches flushed: median / p90", f"{d['runtime_pick_cold_ns']['median']:.0f} / {d['runtime_pick_cold_ns']['p90']:.0f} ns"),
]
w = max(len(r[0]) for r in rows)
print(f"| {'ReductionH100 on ' + d['log']:<{w}} | value |")
print(f"| {'-' * w} | --- |")
for k, v in rows:
    print(f"| {k:<{w}} | {v} |")
PY
