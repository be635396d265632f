#!/usr/bin/env bash
# docs/tutorial.md, executed: its code blocks are written into a scratch copy of this checkout
# (HEAD plus the uncommitted changes to tracked files; untracked files are not copied) and its
# `sh` blocks run there in order, from the copy's root; any failing command fails the check.
# The checkout is left as it was. The build cache is shared ($CARGO_TARGET_DIR, else target/),
# so only the workspace's own crates are compiled again (and once more by the checkout's next
# build); the copy is target/tutorial/repo.
#   scripts/tutorial_check.sh            the tutorial (CI; a few minutes on 2 cores)
#   FULL=1 scripts/tutorial_check.sh     ... and its `sh slow` blocks (make test in the copy)
#   scripts/tutorial_check.sh --verify   only check that its code blocks apply to this
#                                        checkout (make test; no copy, no build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
DOC=docs/tutorial.md

if ! command -v python3 >/dev/null 2>&1; then
  if [ -n "${AH_REQUIRE_PYTHON:-}" ]; then
    echo "AH_REQUIRE_PYTHON is set but python3 is not on PATH" >&2
    exit 1
  fi
  echo "skipped: the tutorial check needs python3 (set AH_REQUIRE_PYTHON=1 to make this an error)"
  exit 0
fi

if [ "${1:-}" = "--verify" ]; then
  exec python3 scripts/tutorial.py "$DOC" verify .
fi

status_before=$(git status --porcelain)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
case $CARGO_TARGET_DIR in /*) ;; *) CARGO_TARGET_DIR=$root/$CARGO_TARGET_DIR ;; esac
# The scratch copy lives in the build folder, at the same path every run: its crates then
# replace their previous build instead of adding one more (a path is part of a crate's
# identity for cargo). It is left there for inspection and replaced by the next run.
work=$CARGO_TARGET_DIR/tutorial
rm -rf "$work"
mkdir -p "$work"
# The copy's crates have the build identity of the checkout's (cargo hashes a path dependency by
# its place in the workspace, and judges freshness by file times), so in the shared build folder
# the copy's builds stand in for the checkout's. Afterwards the workspace's own crates are
# therefore marked stale (their fingerprints and the tools removed): the next build of the
# checkout compiles them again, the third-party crates stay built.
forget_workspace_builds() {
  rm -rf "$CARGO_TARGET_DIR"/debug/.fingerprint/ah-*
  rm -f "$CARGO_TARGET_DIR"/debug/{ah-collect,ah-train,ah-prune,ah-codegen,ah-use}
}
trap forget_workspace_builds EXIT
# The working tree's tracked files as a commit (no change to the checkout, its index or its
# stash list), checked out in a clone that borrows this repository's objects.
rev=$(git stash create)
rev=${rev:-$(git rev-parse HEAD)}
git clone -q --shared --no-checkout "$root" "$work/repo"
git -C "$work/repo" checkout -q --detach "$rev"
# ../shared beside the copy too, for the tests that read it (FULL=1).
if [ -d "$root/../shared" ]; then
  ln -s "$(cd "$root/../shared" && pwd)" "$work/shared"
fi

(cd "$work/repo" && python3 scripts/tutorial.py "$DOC" script ${FULL:+--full}) > "$work/tutorial.sh"
start=$SECONDS
(cd "$work/repo" && bash "$work/tutorial.sh")
echo >&2
if [ "$(git status --porcelain)" != "$status_before" ]; then
  echo "tutorial check: FAILED, the checkout changed:" >&2
  git status --porcelain >&2
  exit 1
fi
echo "tutorial check: every command and code block of $DOC ran in $work/repo ($((SECONDS - start)) s); the checkout is unchanged"
