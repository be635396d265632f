#!/usr/bin/env bash
# Fails when the committed generated heuristics differ from what ah-codegen makes of the
# committed models (someone edited generated code by hand, or changed the templates): the
# production crate generated/ah-heuristics and the test-only crate of hand-written fixtures,
# generated/ah-heuristics-selftest.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
# The tools as `cargo test --workspace` builds them: the same feature set, so inside `make test`
# nothing is rebuilt (a plain `cargo build -p TOOL` resolves other features of serde and the
# crates under it and rebuilds them: about 5 minutes on 2 cores, measured in `make test`).
$CARGO test --workspace --locked --no-run --quiet
bin=${CARGO_TARGET_DIR:-target}/debug
for krate in generated/ah-heuristics generated/ah-heuristics-selftest; do
  "$bin/ah-codegen" "$krate/models" --rust "$krate" --check
done
# InductorChoices handler modules: each header's third line is the ah-prune command that made it.
for module in generated/python/*_choices.py; do
  [ -e "$module" ] || continue
  read -r -a args <<<"$(sed -n '3s/^#   ah-prune //p' "$module")"
  "$bin/ah-prune" "${args[@]}" --check
done
echo "generated heuristics are up to date"
