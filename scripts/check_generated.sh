#!/usr/bin/env bash
# Fails when the committed generated heuristics differ from what ah-codegen makes of the
# committed models (someone edited generated code by hand, or changed the templates).
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
$CARGO run --quiet --locked -p ah-codegen -- generated/ah-heuristics/models --rust generated/ah-heuristics --check
echo "generated heuristics are up to date"
