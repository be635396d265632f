#!/usr/bin/env python3
"""Module cycles: inside a crate, modules import one way (a module and its helper do not import
each other).

    scripts/module_cycles.py            every crate under crates/ and generated/, with the
                                        exceptions of scripts/module_cycles.allow
    scripts/module_cycles.py CRATE...   the given crate folders (each with a Cargo.toml and src/)
    scripts/module_cycles.py --allow FILE [CRATE...]   with the exceptions of FILE

An exception is a line of the allow file, a file or a folder (ending in `/`) relative to the
repository (to the current folder with CRATE), then ` # why`: a cycle all of whose files lie
under exceptions is listed as allowed and does not fail; an exception that no cycle needs any
more fails, so that the list stays the list of the cycles left.

For every crate target (the library src/lib.rs, the binaries src/main.rs, src/bin/NAME.rs and
src/bin/NAME/main.rs) it follows the `mod` declarations from the root to the module files and
builds the graph of which file refers to which other file of the same target. An edge is:
- a `mod child;` declaration (parent -> child);
- a path through `crate::`, `super::` (chains included), `self::`, or through a name the module
  declares (`mod x;`) or imports, in a `use` (brace groups, `self`, `as` and globs included) or
  in code (expressions, types, patterns, macro calls);
- a glob import (`use super::*`): every identifier of the importing module that the glob's
  module provides (an item, a child module or an import of its own) is a reference to it.
A path resolves to the file that defines the item: through the child modules, the imports
(`use`, `pub use` or private, glob re-exports included) and the items of each module on the way.
So `crate::X`, where lib.rs has `pub use error::X`, is an edge to error.rs, not to lib.rs; and a
child that names an item its parent defines is the child -> parent edge, which with the parent's
`mod child;` is a cycle. Every strongly connected component of more than one file is reported,
with one line number for each edge inside it.

Ignored: comments (doc comments included), string and char literals, items under `#[cfg(test)]`
or `#[cfg(all(test, ...))]` (test modules, inline or in files), files no `mod` declaration
reaches (tests/, benches/, examples/), `pub(in PATH)` visibilities and `$crate` paths in macros.

Limitations (a scan of tokens, not a compiler):
- every `cfg` other than the test ones counts as on: a module declared twice under opposite
  cfgs (one with `#[path]`) is both files;
- a name that no module on the way defines, imports or declares (an item made by a macro)
  resolves to the module reached so far;
- a name a module imports from outside the crate (`use std::fmt::Result`), named by another
  module through it (`super::Result`), is no edge;
- names are not scoped below the module: an import inside a function counts as a reference
  where it is written but resolves nothing else, and a local variable named like an item of a
  glob-imported module counts as a reference to that item.

Exit status: 0 (no cycle beyond the exceptions: a summary line), 1 (the cycles, or a stale
exception, reported), 2 (bad usage).
"""

import argparse
import os
import re
import sys
from collections import defaultdict

ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}
KEYWORDS = ITEM_KEYWORDS | {
    "as", "async", "await", "break", "continue", "crate", "dyn", "else", "extern", "false", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "super", "true", "unsafe", "use", "where", "while", "macro_rules",
}
TEST_CFG = re.compile(r"^#!?\[cfg\((test|all\(test\b)")
ALLOW_FILE = os.path.join("scripts", "module_cycles.allow")
PREFIXED_STRING = re.compile(r'(?:[bc]?r(#*)|[bc])"')  # r"..", r#".."#, b"..", br"..", c".."


# ---------------------------------------------------------------------------------------------
# Lexing: code without comments and literals, then tokens with their line numbers.


def strip(text):
    """The text with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)

    def blank(j, k):
        out.append(re.sub(r"[^\n]", " ", text[j:k]))

    while i < n:
        c, c2 = text[i], text[i:i + 2]
        if c2 == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c2 == "/*":
            j, depth = i + 2, 1
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rbc" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = PREFIXED_STRING.match(text, i)
            if m:
                hashes = m.group(1)
                if hashes is not None:  # a raw string: no escapes, ends at `"` and its hashes
                    end = text.find('"' + hashes, m.end())
                    j = n if end < 0 else end + 1 + len(hashes)
                else:
                    j = skip_string(text, m.end())
                blank(i, j)
                i = j
            elif text.startswith("b'", i):
                j = skip_char(text, i + 1)
                blank(i, j)
                i = j
            else:
                out.append(c)
                i += 1
        elif c == '"':
            j = skip_string(text, i + 1)
            blank(i, j)
            i = j
        elif c == "'":
            j = skip_char(text, i)
            if j > i + 1:
                blank(i, j)
            else:
                out.append(c)  # a lifetime
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_string(text, i):
    """The index after the closing quote of a string whose body starts at `i`."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return i


def skip_char(text, i):
    """The index after the char literal at `i` (a quote), or `i + 1` for a lifetime."""
    if text.startswith("\\", i + 1):
        j = text.find("'", i + 3)  # after the escaped character (`'\''`)
        return i + 1 if j < 0 else j + 1
    if i + 2 < len(text) and text[i + 2] == "'":
        return i + 3
    return i + 1


TOKEN = re.compile(r"(r#)?[A-Za-z_][A-Za-z0-9_]*|::|\d[\w.]*|\S")


def tokenize(code):
    """(text, line) pairs of the stripped code."""
    tokens = []
    for line_no, line in enumerate(code.split("\n"), 1):
        for m in TOKEN.finditer(line):
            tok = m.group(0)
            tokens.append((tok[2:] if tok.startswith("r#") else tok, line_no))
    return tokens


def is_ident(tok):
    return (tok[0].isalpha() or tok[0] == "_") and tok not in KEYWORDS


# ---------------------------------------------------------------------------------------------
# Modules: what each declares, imports, defines and refers to.


class Module:
    """One module: a file, or an inline `mod x { ... }` inside one."""

    def __init__(self, path, file, parent):
        self.path = path  # names from the crate root
        self.file = file
        self.parent = parent
        self.children = defaultdict(list)  # name -> [Module] (more than one under cfgs)
        self.decls = []  # (child Module, line)
        self.imports = defaultdict(list)  # name -> [(segments, line)]
        self.globs = []  # (segments, line)
        self.items = set()
        self.refs = []  # (segments, line): paths in code and leaves of `use` trees
        self.idents = []  # (name, line): identifiers that may come from a glob import


class Scanner:
    """Reads one file's tokens into its Module (and the inline modules inside it)."""

    def __init__(self, tree, module, tokens):
        self.tree, self.tokens, self.i = tree, tokens, 0
        self.stack = [("mod", module)]  # one frame per open brace: ("mod", Module) or ("block",)

    def module(self):
        return next(f[1] for f in reversed(self.stack) if f[0] == "mod")

    def at_item_level(self):
        return self.stack[-1][0] == "mod"

    def peek(self, k=0):
        j = self.i + k
        return self.tokens[j][0] if j < len(self.tokens) else ""

    def run(self):
        attrs = []
        while self.i < len(self.tokens):
            tok, line = self.tokens[self.i]
            if tok == "#" and self.peek(1) in ("[", "!"):
                attrs.append(self.attribute())
                continue
            if attrs and any(TEST_CFG.match(a) for a in attrs):
                self.skip_item()
                attrs = []
                continue
            self.token(tok, line, attrs)
            attrs = [] if tok not in ("pub", "(", ")", "crate", "super", "in") else attrs

    def attribute(self):
        """The attribute at the cursor as compact text (`#[cfg(test)]`); the cursor after it."""
        start = self.i
        while self.peek() != "[":
            self.i += 1
        self.skip_balanced()
        return "".join(t for t, _ in self.tokens[start:self.i])

    def skip_balanced(self):
        """Skips the bracketed group at the cursor."""
        depth = 0
        while self.i < len(self.tokens):
            tok = self.peek()
            self.i += 1
            if tok in "([{":
                depth += 1
            elif tok in ")]}":
                depth -= 1
                if depth == 0:
                    return

    def skip_item(self):
        """Skips the item at the cursor: up to a `;` outside brackets or its braced body."""
        while self.i < len(self.tokens):
            tok = self.peek()
            if tok == ";":
                self.i += 1
                return
            if tok == "{":
                self.skip_balanced()
                return
            if tok in "([":
                self.skip_balanced()
            else:
                self.i += 1

    def token(self, tok, line, attrs):
        module = self.module()
        prev = self.tokens[self.i - 1][0] if self.i else ""
        if tok == "{":
            self.stack.append(("block",))
        elif tok == "}":
            if len(self.stack) > 1:
                self.stack.pop()
        elif tok == "pub" and self.peek(1) == "(" and self.peek(2) == "in":
            self.i += 1
            self.skip_balanced()
            return
        elif tok == "mod" and self.at_item_level() and is_ident(self.peek(1)):
            self.declare(module, attrs, line)
            return
        elif tok == "use" and prev != "::":
            self.use(module)
            return
        elif tok in ITEM_KEYWORDS and self.at_item_level() and is_ident(self.peek(1)):
            if not (tok == "const" and self.peek(1) == "fn"):
                module.items.add(self.peek(1))
        elif tok == "macro_rules" and self.peek(1) == "!" and self.at_item_level():
            module.items.add(self.peek(2))
        elif tok in ("crate", "super", "self") and self.peek(1) == "::" and prev not in ("::", "$"):
            module.refs.append((self.path(), line))
            return
        elif is_ident(tok) and prev not in ("::", ".", "'"):
            if self.peek(1) == "::":
                module.refs.append((self.path(), line))
                return
            module.idents.append((tok, line))
        self.i += 1

    def path(self):
        """The path at the cursor (`a::b::c`, stopping at `::<`); the cursor after it."""
        segs = [self.peek()]
        self.i += 1
        while self.peek() == "::" and (is_ident(self.peek(1)) or self.peek(1) in ("self", "super")):
            segs.append(self.peek(1))
            self.i += 2
        return segs

    def declare(self, module, attrs, line):
        """`mod name;` (a child file) or `mod name { ... }` (an inline module)."""
        name = self.peek(1)
        self.i += 2
        child = Module(module.path + [name], module.file, module)
        if self.peek() == "{":
            self.i += 1
            self.stack.append(("mod", child))
        else:
            child.file = self.tree.child_file(module, name, attrs)
            if child.file is None:
                return
            self.tree.pending.append(child)
        module.children[name].append(child)
        module.decls.append((child, line))

    def use(self, module):
        """A `use` declaration: its leaves are references; at item level, imports too."""
        line = self.tokens[self.i][1]
        self.i += 1
        if self.peek() == "::":
            self.i += 1
        leaves = []
        self.use_tree([], leaves)
        while self.i < len(self.tokens) and self.peek() != ";":
            self.i += 1
        self.i += 1
        for segs, name, glob in leaves:
            if glob:
                module.globs.append((segs, line))
                continue
            module.refs.append((segs, line))
            if self.at_item_level() and name != "_":
                module.imports[name].append((segs, line))

    def use_tree(self, prefix, leaves):
        segs = list(prefix)
        while True:
            tok = self.peek()
            if tok == "{":
                self.i += 1
                while self.peek() not in ("}", ""):
                    self.use_tree(segs, leaves)
                    if self.peek() == ",":
                        self.i += 1
                self.i += 1
                return
            if tok == "*":
                self.i += 1
                leaves.append((segs, None, True))
                return
            if tok == "self" and segs:
                self.i += 1
            else:
                segs.append(tok)
                self.i += 1
            if self.peek() == "::":
                self.i += 1
                continue
            name = segs[-1]
            if self.peek() == "as":
                name = self.peek(1)
                self.i += 2
            leaves.append((segs, name, False))
            return


# ---------------------------------------------------------------------------------------------
# A crate target: its module tree, path resolution and file graph.


class Target:
    def __init__(self, crate_dir, root_file):
        self.crate_dir, self.root_file = crate_dir, root_file
        self.root = Module([], root_file, None)
        self.modules, self.pending = [], [self.root]
        self.missing = []  # (declaring file, name): a `mod name;` whose file is not there
        while self.pending:
            module = self.pending.pop()
            with open(module.file, encoding="utf-8") as f:
                tokens = tokenize(strip(f.read()))
            scanner = Scanner(self, module, tokens)
            scanner.run()
            self.collect(module)

    def collect(self, module):
        self.modules.append(module)
        for kids in module.children.values():
            for kid in kids:
                if kid.file == module.file:
                    self.collect(kid)

    def child_file(self, module, name, attrs):
        """The file of `mod name;` declared in `module`, or None when it is not there."""
        if any(a.startswith("#[path=") for a in attrs):
            return self.path_attribute(module, name)
        owner = self.file_module(module)
        folder = os.path.dirname(module.file)
        stem = os.path.splitext(os.path.basename(module.file))[0]
        if owner is not self.root and stem != "mod":
            folder = os.path.join(folder, stem)  # a.rs: its children live in a/
        folder = os.path.join(folder, *module.path[len(owner.path):])  # inline modules
        for cand in (os.path.join(folder, name + ".rs"), os.path.join(folder, name, "mod.rs")):
            if os.path.isfile(cand):
                return cand
        self.missing.append((module.file, name))
        return None

    @staticmethod
    def file_module(module):
        """The module of the file `module` is written in (itself, or the one around it)."""
        while module.parent is not None and module.parent.file == module.file:
            module = module.parent
        return module

    def path_attribute(self, module, name):
        with open(module.file, encoding="utf-8") as f:
            text = f.read()
        pattern = r'#\[path\s*=\s*"([^"]+)"\]\s*(pub(\([^)]*\))?\s+)?mod\s+' + name + r"\s*;"
        for m in re.finditer(pattern, text):
            cand = os.path.join(os.path.dirname(module.file), m.group(1))
            if os.path.isfile(cand):
                return cand
        return None

    # Path resolution: a set of (Module, is_module) the path names.

    def resolve(self, ctx, segs, seen=frozenset()):
        key = (id(ctx), tuple(segs))
        if key in seen or not segs:
            return set()
        seen = seen | {key}
        first = segs[0]
        if first == "crate":
            return self.walk(self.root, segs[1:], seen)
        if first in ("self", "super"):
            module, rest = ctx, segs
            while rest and rest[0] in ("self", "super"):
                if rest[0] == "super":
                    module = module.parent
                    if module is None:
                        return set()
                rest = rest[1:]
            return self.walk(module, rest, seen)
        if first in ctx.children or first in ctx.imports or first in ctx.items:
            return self.walk(ctx, segs, seen)
        found = set()
        for gsegs, _ in ctx.globs:
            for g, is_mod in self.resolve(ctx, gsegs, seen):
                if is_mod and self.provides(g, first):
                    found |= self.walk(g, segs, seen)
        return found  # empty: outside the crate (std, a dependency)

    def walk(self, module, rest, seen):
        if not rest:
            return {(module, True)}
        name = rest[0]
        if name in module.children:
            return set().union(*(self.walk(k, rest[1:], seen) for k in module.children[name]))
        if name in module.imports:
            found = set()
            for isegs, _ in module.imports[name]:
                found |= self.resolve(module, isegs + rest[1:], seen)
            return found  # empty: an import from outside the crate
        if name in module.items:
            return {(module, False)}
        found = set()
        for gsegs, _ in module.globs:
            for g, is_mod in self.resolve(module, gsegs, seen):
                if is_mod and g is not module and self.provides(g, name):
                    found |= self.walk(g, rest, seen)
        return found or {(module, False)}

    @staticmethod
    def provides(module, name):
        return name in module.children or name in module.imports or name in module.items

    def edges(self):
        """{(from file, to file): (first line, what it names there)}, over every module."""
        edges = {}

        def add(src, dst, line, what):
            if src != dst and ((src, dst) not in edges or line < edges[(src, dst)][0]):
                edges[(src, dst)] = (line, what)

        for m in self.modules:
            for child, line in m.decls:
                add(m.file, child.file, line, "mod " + child.path[-1])
            for segs, line in m.refs:
                for target, _ in self.resolve(m, segs):
                    add(m.file, target.file, line, "::".join(segs))
            local = set(m.imports) | m.items | set(m.children)
            for gsegs, gline in m.globs:
                for g, is_mod in self.resolve(m, gsegs):
                    if not is_mod:  # the variants of an enum
                        add(m.file, g.file, gline, "::".join(gsegs) + "::*")
                        continue
                    for name, line in m.idents:
                        if name not in local and self.provides(g, name):
                            for target, _ in self.walk(g, [name], frozenset()):
                                add(m.file, target.file, line, name + " (a glob import)")
        return edges


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    graph = defaultdict(list)
    for a, b in sorted(edges):
        graph[a].append(b)
        graph.setdefault(b, [])
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        work = [(v, iter(graph[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(graph[nxt])))
            elif nxt in on:
                low[node] = min(low[node], index[nxt])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def shortest_cycle(edges, comp):
    """One shortest cycle inside the component, as a list of nodes (first == last)."""
    members = set(comp)
    best = None
    for start in comp:
        parent, queue = {start: None}, [start]
        for node in queue:
            nexts = sorted(b for (a, b) in edges if a == node and b in members)
            if start in nexts:
                path = [start]
                while node is not None:
                    path.append(node)
                    node = parent[node]
                path = path[::-1]
                if best is None or len(path) < len(best):
                    best = path
                break
            for b in nexts:
                if b not in parent:
                    parent[b] = node
                    queue.append(b)
    return best


# ---------------------------------------------------------------------------------------------
# Crates, targets and the report.


def targets(crate_dir):
    src = os.path.join(crate_dir, "src")
    roots = [os.path.join(src, "lib.rs"), os.path.join(src, "main.rs")]
    bin_dir = os.path.join(src, "bin")
    if os.path.isdir(bin_dir):
        for entry in sorted(os.listdir(bin_dir)):
            path = os.path.join(bin_dir, entry)
            roots.append(os.path.join(path, "main.rs") if os.path.isdir(path) else path)
    return [r for r in roots if r.endswith(".rs") and os.path.isfile(r)]


def default_crates(repo):
    found = []
    for group in ("crates", "generated"):
        folder = os.path.join(repo, group)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            crate = os.path.join(folder, name)
            if os.path.isfile(os.path.join(crate, "Cargo.toml")) and os.path.isdir(
                    os.path.join(crate, "src")):
                found.append(crate)
    return found


def read_allow(path):
    """The entries of an allow file (a file or a folder ending in `/` per line, `#` comments)."""
    if path is None or not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        lines = (line.split("#", 1)[0].strip() for line in f)
        return [line for line in lines if line]


def allowed_by(entries, files):
    """The entries that cover a file of `files`, when every one of `files` is covered (a file
    is covered by itself or a folder above it), else None."""
    def covers(entry, f):
        return f == entry or (entry.endswith("/") and f.startswith(entry))

    if not all(any(covers(e, f) for e in entries) for f in files):
        return None
    return {e for e in entries if any(covers(e, f) for f in files)}


def parse_args(argv, repo):
    """The crate folders, the allow file (or None) and the folder paths are shown from."""
    parser = argparse.ArgumentParser(
        prog="scripts/module_cycles.py",
        description="Report the cycles of module imports inside each crate (exit 1 on any).")
    parser.add_argument("crates", nargs="*", metavar="CRATE",
                        help="crate folders (default: every crate under crates/ and generated/)")
    parser.add_argument("--allow", metavar="FILE",
                        help="cycles allowed for now, one file or folder/ per line, relative to "
                             "the folder paths are shown from (default: "
                             "scripts/module_cycles.allow for the default crates, none for CRATE)")
    args = parser.parse_args(argv)
    for crate in args.crates:
        if not (os.path.isfile(os.path.join(crate, "Cargo.toml"))
                and os.path.isdir(os.path.join(crate, "src"))):
            parser.error(f"{crate} is not a crate folder (a Cargo.toml and a src/)")
    if args.allow is not None and not os.path.isfile(args.allow):
        parser.error(f"--allow {args.allow}: no such file")
    if args.crates:
        return args.crates, args.allow, os.getcwd()
    return default_crates(repo), args.allow or os.path.join(repo, ALLOW_FILE), repo


class Report:
    """The cycles found, those the allow file's entries cover, and the entries used."""

    def __init__(self, entries, rel):
        self.entries, self.rel = entries, rel
        self.failing, self.allowed, self.used = [], [], set()
        self.targets, self.files = 0, 0

    def add_target(self, target):
        rel = self.rel
        self.targets += 1
        self.files += len({m.file for m in target.modules})
        for file, name in target.missing:
            print(f"warning: {rel(file)}: no file for `mod {name};`", file=sys.stderr)
        edges = target.edges()
        for comp in cycles(edges):
            head = (f"{rel(target.root_file)}: a cycle of {len(comp)} files, e.g. "
                    + " -> ".join(rel(f) for f in shortest_cycle(edges, comp)))
            covering = allowed_by(self.entries, [rel(f) for f in comp])
            if covering is not None:
                self.used |= covering
                self.allowed.append(f"allowed ({', '.join(sorted(covering))}): {head}")
                continue
            self.failing.append(head)
            for (a, b), (line, what) in sorted(edges.items()):
                if a in comp and b in comp:
                    self.failing.append(f"  {rel(a)}:{line} -> {rel(b)}  ({what})")

    def stale(self):
        return [e for e in self.entries if e not in self.used]


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    crates, allow_file, base = parse_args(argv, repo)
    report = Report(read_allow(allow_file),
                    lambda p: os.path.relpath(p, base).replace(os.sep, "/"))
    for crate in crates:
        for root in targets(crate):
            report.add_target(Target(crate, root))
    for line in report.allowed:
        print(line)
    failing = report.failing + [f"{e} is in no cycle now: remove its line from the allow file"
                                for e in report.stale()]
    if failing:
        print("\n".join(failing))
        print("Inside a crate, modules import one way: move what both sides need to the module "
              "that owns it, so that one of each cycle's edges goes.")
        return 1
    beyond = f" beyond {report.rel(allow_file)}" if report.allowed else ""
    print(f"no module cycles{beyond} ({report.targets} crate targets, {report.files} module files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
