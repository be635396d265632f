#!/usr/bin/env python3
"""docs/tutorial.md as a program: its code blocks are files, its `sh` blocks the commands.

A fenced block's info string says what the block is (the first word is the language, as
Markdown renderers read it; the words after it are ours, invisible when rendered):

    ```rust file=PATH                     a new file PATH with the block as its content (a
                                          later block of the same PATH is appended to it)
    ```rust file=PATH before="TEXT"       the block inserted before the line holding TEXT
    ```rust file=PATH after="TEXT"        ... after it (TEXT must be on exactly one line)
    ```sh                                 commands, run in order from the repository root
    ```sh slow                            run only by the full check (FULL=1: make test)

Any other block (`console` and `text` for output, a language without `file=`) is prose.

    tutorial.py DOC verify ROOT     every file block applies to the checkout ROOT (each anchor
                                    is on one line); changes nothing
    tutorial.py DOC script [--full] the tutorial as a bash script on stdout: each file block
                                    is a call `tutorial.py DOC apply N`, each sh block its text
    tutorial.py DOC apply N ROOT    applies file block N to the checkout ROOT

scripts/tutorial_check.sh runs the script in a scratch copy of the repository.
"""
import os
import shlex
import sys


class TutorialError(Exception):
    """A block that cannot be read or applied; the message names the doc's line."""


class Block:
    def __init__(self, line, lang, attrs, flags, text):
        self.line = line
        self.lang = lang
        self.attrs = attrs
        self.flags = flags
        self.text = text

    @property
    def is_file(self):
        return "file" in self.attrs

    @property
    def is_command(self):
        return self.lang == "sh" and not self.is_file


def parse(path):
    """The doc's fenced blocks that are files or commands, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        info = stripped[len(fence):].strip()
        # CommonMark: three or more backticks, an info string without backticks (else it is
        # inline code at the start of a line).
        if len(fence) < 3 or "`" in info:
            i += 1
            continue
        indent = len(lines[i]) - len(stripped)
        start = i + 1
        j = start
        while j < len(lines) and not is_closing(lines[j], fence):
            j += 1
        if j == len(lines):
            raise TutorialError(f"{path}:{i + 1}: a fenced block that is never closed")
        body = [line[indent:] if line[:indent].strip() == "" else line for line in lines[start:j]]
        block = read_info(path, i + 1, info, "\n".join(body) + "\n")
        if block and (block.is_file or block.is_command):
            blocks.append(block)
        i = j + 1
    return blocks


def is_closing(line, fence):
    stripped = line.strip()
    return stripped.startswith(fence) and stripped.strip("`") == ""


def read_info(path, line, info, text):
    try:
        words = shlex.split(info)
    except ValueError as e:
        raise TutorialError(f"{path}:{line}: info string `{info}`: {e}") from None
    if not words:
        return None
    attrs, flags = {}, set()
    for w in words[1:]:
        if "=" in w:
            key, value = w.split("=", 1)
            attrs[key] = value
        else:
            flags.add(w)
    unknown = set(attrs) - {"file", "before", "after"}
    if unknown or ("before" in attrs and "after" in attrs):
        raise TutorialError(f"{path}:{line}: info string `{info}`: give file= and at most one of before=/after=")
    if ("before" in attrs or "after" in attrs) and "file" not in attrs:
        raise TutorialError(f"{path}:{line}: before=/after= need file=")
    return Block(line, words[0], attrs, flags, text)


def continues(blocks, n):
    """Whether block `n` continues a new file begun by an earlier block (no anchor): then it
    is appended to it, so that a long file can be shown in parts with prose between."""
    block = blocks[n]
    if "before" in block.attrs or "after" in block.attrs:
        return False
    return any(
        b.attrs.get("file") == block.attrs["file"] and "before" not in b.attrs and "after" not in b.attrs
        for b in blocks[:n]
    )


def applied(doc, blocks, n, root, dry=False):
    """The file's new content once block `n` is applied under `root`, and its path. With
    `dry`, the parts of new files are not read back (they were never written)."""
    block = blocks[n]
    rel = block.attrs["file"]
    path = os.path.join(root, rel)
    anchor = block.attrs.get("before") or block.attrs.get("after")
    where = f"{doc}:{block.line}"
    if continues(blocks, n):
        if dry:
            return path, block.text
        with open(path, encoding="utf-8") as f:
            return path, f.read() + block.text
    if anchor is None:
        # Verifying a checkout where the tutorial was followed, the file is there: fine.
        if os.path.exists(path) and not dry:
            raise TutorialError(f"{where}: {rel} exists already; the block writes a new file")
        return path, block.text
    if not os.path.isfile(path):
        raise TutorialError(f"{where}: {rel} does not exist; the block inserts into it")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    hits = [k for k, line in enumerate(lines) if anchor in line]
    if len(hits) != 1:
        raise TutorialError(
            f"{where}: `{anchor}` is on {len(hits)} lines of {rel}, not one: update the doc's anchor"
        )
    at = hits[0] + (1 if "after" in block.attrs else 0)
    new = block.text.rstrip("\n").split("\n")
    return path, "\n".join(lines[:at] + new + lines[at:])


def verify(doc, root):
    blocks = parse(doc)
    for n, block in enumerate(blocks):
        if block.is_file:
            applied(doc, blocks, n, root, dry=True)


def apply(doc, n, root):
    blocks = parse(doc)
    block = blocks[n]
    path, text = applied(doc, blocks, n, root)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"tutorial: wrote {block.attrs['file']} ({os.path.relpath(doc, root)}:{block.line})", file=sys.stderr)


def script(doc, full):
    me = shlex.quote(os.path.abspath(__file__))
    doc_path = shlex.quote(os.path.abspath(doc))
    out = ["set -euo pipefail", 'TUTORIAL_ROOT=$(pwd)']
    for n, block in enumerate(parse(doc)):
        if block.is_file:
            out.append(f'python3 {me} {doc_path} apply {n} "$TUTORIAL_ROOT"')
        elif "slow" in block.flags and not full:
            out.append(f"echo {shlex.quote(f'== {doc}:{block.line}: slow, run with FULL=1')} >&2")
        else:
            shown = "".join(f"$ {line}\n" for line in block.text.rstrip("\n").split("\n"))
            out.append(
                f"printf '\\n== %s (at %d s)\\n%s' {shlex.quote(f'{doc}:{block.line}')} \"$SECONDS\" {shlex.quote(shown)} >&2"
            )
            out.append(block.text.rstrip("\n"))
    print("\n".join(out))


def main(argv):
    if len(argv) < 3 or argv[2] not in ("verify", "script", "apply"):
        print(__doc__, file=sys.stderr)
        return 2
    doc, command = argv[1], argv[2]
    try:
        if command == "verify" and len(argv) == 4:
            verify(doc, argv[3])
            print(f"{doc}: every file block applies to {argv[3]}")
        elif command == "script":
            script(doc, "--full" in argv[3:])
        elif command == "apply" and len(argv) == 5:
            apply(doc, int(argv[3]), argv[4])
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except TutorialError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
