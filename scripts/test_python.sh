#!/usr/bin/env bash
# The Python tests (the Inductor worker and handler runtime, against stubs: no PyTorch needed).
# Without python3 they are skipped with a message, or fail when AH_REQUIRE_PYTHON is set (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v python3 >/dev/null 2>&1; then
  if [ -n "${AH_REQUIRE_PYTHON:-}" ]; then
    echo "AH_REQUIRE_PYTHON is set but python3 is not on PATH" >&2
    exit 1
  fi
  echo "skipped: the Python tests need python3 (set AH_REQUIRE_PYTHON=1 to make this an error)"
  exit 0
fi
# The worker's protocol tests print the tracebacks of the failures they provoke: kept out of
# the output; the summary ("Ran N tests ... OK") and any failure are shown.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if python3 -m unittest discover -s python/tests >"$log" 2>&1; then
  tail -n 3 "$log"
else
  cat "$log"
  exit 1
fi
