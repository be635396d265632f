#!/usr/bin/env bash
# Size audit of the hand-written Rust and Python: files over 800 lines and functions over 100
# lines (issue 23: "no hand-written file over ~800 lines that is more than one idea; no function
# over ~100 lines").
#   scripts/size_audit.sh          list every file and function over the limits
#   scripts/size_audit.sh --check  the same, and fail on any not in scripts/size_audit.allow
#                                  (`make lint` runs this)
# Hand-written is every tracked .rs and .py file outside generated/ (ah-codegen's output); test
# corpora and snapshots are neither. A justified exception is a line of scripts/size_audit.allow:
# `PATH` (a file) or `PATH:FN` (a function), then ` # why`.
#
# Function lengths are approximate: a scan that skips comments, strings (raw ones included) and
# char literals and counts braces from a line holding `fn NAME` to the brace that closes its
# body. A function is counted from its `fn` line to its closing brace (doc comments and
# attributes not included); a nested `fn` counts in its own right and in its parent's length.
# Python's are exact: python3's own parser, from a `def` line (decorators not included) to the
# body's last line; a nested `def` counts as Rust's nested `fn` does. Without python3 the Python
# functions are not scanned, with a message (--check then fails: CI has python3).
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_FILE=${MAX_FILE:-800}
MAX_FN=${MAX_FN:-100}
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: scripts/size_audit.sh [--check]" >&2; exit 2 ;;
esac

files=$(git ls-files -- '*.rs' | grep -v '^generated/' || true)
pyfiles=$(git ls-files -- '*.py' | grep -v '^generated/' || true)

# `fn PATH:NAME LINES START` for each Python function over MAX_FN lines, from python3's parser.
python_functions() {
  if ! command -v python3 >/dev/null 2>&1; then
    echo "warning: python3 is not on PATH: the Python functions were not scanned" >&2
    echo "nopython python3 0"
    return
  fi
  # shellcheck disable=SC2086
  python3 - "$MAX_FN" $pyfiles <<'PY'
import ast
import sys

limit = int(sys.argv[1])
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                print(f"fn {path}:{node.name} {length} {node.lineno}")
PY
}

# One line per offender: `file PATH LINES` or `fn PATH:NAME LINES START`.
report=$(
  for f in $files $pyfiles; do
    n=$(wc -l <"$f")
    if [ "$n" -gt "$MAX_FILE" ]; then echo "file $f $n"; fi
  done
  # shellcheck disable=SC2086
  awk -v max="$MAX_FN" '
    function lost(file) {
      if (depth != 0 || blk || str || raw >= 0)
        printf "warning: the scan of %s ends out of step (braces %d); its lengths are off\n", file, depth > "/dev/stderr"
    }
    FNR == 1 { if (NR > 1) lost(last); depth = 0; top = 0; blk = 0; str = 0; raw = -1; last = FILENAME }
    END { lost(last) }
    {
      line = $0; code = ""; n = length(line); i = 1
      while (i <= n) {
        c = substr(line, i, 1); c2 = substr(line, i, 2)
        if (blk > 0) {
          if (c2 == "*/") { blk--; i += 2 } else if (c2 == "/*") { blk++; i += 2 } else i++
          continue
        }
        if (str) {
          if (c == "\\") i += 2
          else { if (c == "\"") str = 0; i++ }
          continue
        }
        if (raw >= 0) {
          if (c == "\"" && substr(line, i + 1, raw) == substr("################", 1, raw)) {
            i += 1 + raw; raw = -1
          } else i++
          continue
        }
        if (c2 == "//") break
        if (c2 == "/*") { blk = 1; i += 2; continue }
        prev = (i > 1) ? substr(line, i - 1, 1) : " "
        if ((c == "r" || c2 == "br") && prev !~ /[A-Za-z0-9_]/) {
          j = i + (c == "r" ? 1 : 2); h = 0
          while (substr(line, j, 1) == "#") { j++; h++ }
          if (substr(line, j, 1) == "\"") { raw = h; i = j + 1; code = code " "; continue }
        }
        if (c == "\"") { str = 1; i++; code = code " "; continue }
        if (c == "\047") {
          # A char literal (`x`, an escape); otherwise a lifetime, kept as code.
          if (substr(line, i + 1, 1) == "\\") {
            j = index(substr(line, i + 2), "\047")
            if (j > 0) { i = i + 2 + j; code = code " "; continue }
          } else if (substr(line, i + 2, 1) == "\047") { i += 3; code = code " "; continue }
        }
        code = code c; i++
      }
      # A function item starts on this line: note it before its braces are counted.
      if (match(code, /(^|[^A-Za-z0-9_])fn[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) {
        name = substr(code, RSTART, RLENGTH); sub(/^.*fn[ \t]+/, "", name)
        top++; fname[top] = name; fstart[top] = FNR; fdepth[top] = depth; fopen[top] = 0
      }
      m = length(code)
      for (k = 1; k <= m; k++) {
        c = substr(code, k, 1)
        if (c == "{") {
          depth++
          if (top > 0 && !fopen[top] && depth == fdepth[top] + 1) fopen[top] = 1
        } else if (c == "}") {
          depth--
          if (top > 0 && fopen[top] && depth == fdepth[top]) {
            len = FNR - fstart[top] + 1
            if (len > max) printf "fn %s:%s %d %d\n", FILENAME, fname[top], len, fstart[top]
            top--
          }
        } else if (c == ";" && top > 0 && !fopen[top] && depth == fdepth[top]) {
          top--  # a declaration without a body (a trait method)
        }
      }
    }
  ' $files
  python_functions
)

allowed() {
  grep -v '^[[:space:]]*#' scripts/size_audit.allow 2>/dev/null | sed 's/[[:space:]]*#.*//' |
    grep -qxF -- "$1"
}

bad=0
echo "files over $MAX_FILE lines and functions over $MAX_FN lines (hand-written .rs and .py, outside generated/):"
while read -r kind what len start; do
  [ -n "$kind" ] || continue
  if [ "$kind" = nopython ]; then
    echo "  the Python functions were not scanned: python3 is not on PATH"
    bad=$((bad + 1))
    continue
  fi
  if [ "$kind" = file ]; then where="$what"; else where="${what%%:*}:$start (${what##*:})"; fi
  if allowed "$what"; then
    printf '  %-5s %5d  %s  (allowed: scripts/size_audit.allow)\n' "$kind" "$len" "$where"
  else
    printf '  %-5s %5d  %s\n' "$kind" "$len" "$where"
    bad=$((bad + 1))
  fi
done <<<"$report"
# An exception that no longer applies goes, so that the list stays the list of what is over.
stale=0
while read -r entry; do
  [ -n "$entry" ] || continue
  if ! awk '{print $2}' <<<"$report" | grep -qxF -- "$entry"; then
    echo "  $entry is within the limits now: remove its line from scripts/size_audit.allow"
    stale=$((stale + 1))
  fi
done < <(grep -v '^[[:space:]]*#' scripts/size_audit.allow 2>/dev/null | sed 's/[[:space:]]*#.*//')
if [ "$bad" -gt 0 ]; then
  echo "$bad over the limits and not in scripts/size_audit.allow: split them, or add a line there saying why"
  if $check; then exit 1; fi
else
  echo "none over the limits beyond scripts/size_audit.allow"
fi
if $check && [ "$stale" -gt 0 ]; then exit 1; fi
