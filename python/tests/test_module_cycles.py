"""`scripts/module_cycles.py`: the cycles of module imports inside a crate, on fixture crates
written to a temporary folder (a crate with a cycle is reported with exit 1, one without passes
with exit 0, bad usage exits 2)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "module_cycles.py")


def write_crate(folder, files):
    """A crate in `folder`: a Cargo.toml and the given files (relative path -> Rust source)."""
    with open(os.path.join(folder, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "fixture"\nversion = "0.1.0"\nedition = "2021"\n')
    for rel, text in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).lstrip())


def check(files, allow=None):
    """(exit status, output) of the checker on a crate made of `files`, with the allow file
    `allow` (its lines) when given."""
    with tempfile.TemporaryDirectory() as d:
        write_crate(d, files)
        extra = []
        if allow is not None:
            with open(os.path.join(d, "allow.txt"), "w") as f:
                f.write("\n".join(allow) + "\n")
            extra = ["--allow", "allow.txt"]
        proc = subprocess.run([sys.executable, SCRIPT, *extra, "."], capture_output=True,
                              text=True, cwd=d)
        return proc.returncode, proc.stdout + proc.stderr


class CycleTest(unittest.TestCase):
    def test_two_siblings_that_import_each_other_are_reported(self):
        rc, out = check({
            "src/lib.rs": "pub mod a;\npub mod b;\n",
            "src/a.rs": "use crate::b::B;\npub struct A(pub B);\n",
            "src/b.rs": "pub struct B;\n\npub fn make() -> crate::a::A {\n    crate::a::A(B)\n}\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("a cycle of 2 files", out)
        self.assertIn(os.path.join("src", "a.rs") + ":1 -> " + os.path.join("src", "b.rs"), out)
        self.assertIn(os.path.join("src", "b.rs") + ":3 -> " + os.path.join("src", "a.rs"), out)

    def test_a_longer_cycle_through_brace_groups_and_super_chains(self):
        rc, out = check({
            "src/lib.rs": "mod a;\nmod x;\n",
            "src/a.rs": "use crate::{x::y::Y, x::z};\npub struct A;\n",
            "src/x/mod.rs": "pub mod y;\npub mod z;\n",
            "src/x/y.rs": "pub struct Y;\n",
            "src/x/z.rs": "pub fn z() -> super::super::a::A {\n    todo!()\n}\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn("a cycle of 2 files", out)
        self.assertIn(os.path.join("src", "x", "z.rs") + ":1 -> ", out)
        self.assertNotIn(os.path.join("src", "x", "y.rs") + ":", out)

    def test_a_child_naming_its_parents_own_item_is_a_cycle(self):
        rc, out = check({
            "src/lib.rs": "mod m;\n",
            "src/m/mod.rs": "mod child;\npub struct Shared;\n",
            "src/m/child.rs": "use super::Shared;\n",
        })
        self.assertEqual(rc, 1, out)
        self.assertIn(os.path.join("src", "m", "child.rs") + ":1 -> "
                      + os.path.join("src", "m", "mod.rs") + "  (super::Shared)", out)

    def test_a_glob_import_counts_the_names_it_brings(self):
        files = {
            "src/lib.rs": "mod m;\n",
            "src/m/mod.rs": "mod child;\npub struct Shared;\n",
            "src/m/child.rs": "use super::*;\n\npub fn f() {}\n",
        }
        self.assertEqual(check(files)[0], 0)
        files["src/m/child.rs"] = "use super::*;\n\npub fn f(_: Shared) {}\n"
        rc, out = check(files)
        self.assertEqual(rc, 1, out)
        self.assertIn("child.rs:3 -> ", out)


class NoCycleTest(unittest.TestCase):
    def test_items_reexported_by_the_parent_resolve_to_their_file(self):
        rc, out = check({
            "src/lib.rs": "pub mod error;\npub mod m;\npub use error::Error;\n",
            "src/error.rs": "pub struct Error;\n",
            "src/m/mod.rs": "mod child;\nmod types;\npub use types::Shared;\n"
                            "pub fn run() -> crate::Error {\n    child::go()\n}\n",
            "src/m/types.rs": "pub struct Shared;\n",
            "src/m/child.rs": "use super::Shared;\nuse crate::Error;\n\n"
                              "pub fn go() -> Error {\n    let _ = Shared;\n    Error\n}\n",
        })
        self.assertEqual(rc, 0, out)
        self.assertIn("no module cycles (1 crate targets, 5 module files)", out)

    def test_comments_strings_and_test_modules_are_no_references(self):
        rc, out = check({
            "src/lib.rs": "pub mod a;\npub mod b;\n",
            "src/a.rs": "//! See [`crate::b::B`].\nuse crate::b::B;\npub struct A(pub B);\n",
            "src/b.rs": """
                /// Made from a [`crate::a::A`]; not `use crate::a::A;`.
                pub struct B;
                // crate::a::A
                /* use crate::a::A; /* nested */ crate::a::A */
                pub const NAME: &str = "crate::a::A";
                pub const RAW: &str = r#"use crate::a::A;"#;
                pub const QUOTE: char = '"';

                #[cfg(test)]
                mod tests {
                    use crate::a::A;
                }

                #[cfg(test)]
                mod more_tests;
            """,
        })
        self.assertEqual(rc, 0, out)

    def test_binaries_are_their_own_targets(self):
        rc, out = check({
            "src/lib.rs": "pub mod a;\n",
            "src/a.rs": "pub struct A;\n",
            "src/main.rs": "mod cli;\nfn main() {}\n",
            "src/cli.rs": "pub use fixture::a::A;\n",
            "src/bin/tool.rs": "fn main() {}\n",
        })
        self.assertEqual(rc, 0, out)
        self.assertIn("(3 crate targets, 5 module files)", out)


class AllowTest(unittest.TestCase):
    FILES = {
        "src/lib.rs": "mod m;\nmod other;\n",
        "src/m/mod.rs": "mod child;\npub struct Shared;\n",
        "src/m/child.rs": "use super::Shared;\n",
        "src/other.rs": "pub struct Other;\n",
    }

    def test_a_cycle_under_an_exception_is_listed_and_passes(self):
        rc, out = check(self.FILES, allow=["# why", "src/m/  # being reworked"])
        self.assertEqual(rc, 0, out)
        self.assertIn("allowed (src/m/): ", out)
        self.assertIn("no module cycles beyond allow.txt", out)

    def test_a_cycle_partly_outside_the_exceptions_fails(self):
        rc, out = check(self.FILES, allow=["src/m/child.rs"])
        self.assertEqual(rc, 1, out)
        self.assertIn("a cycle of 2 files", out)

    def test_an_exception_no_cycle_needs_fails(self):
        rc, out = check(self.FILES, allow=["src/m/", "src/other.rs"])
        self.assertEqual(rc, 1, out)
        self.assertIn("src/other.rs is in no cycle now", out)


class UsageTest(unittest.TestCase):
    def test_a_folder_that_is_not_a_crate_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            proc = subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("is not a crate folder", proc.stderr)

    def test_a_missing_allow_file_exits_2(self):
        proc = subprocess.run([sys.executable, SCRIPT, "--allow", "no-such-file"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no such file", proc.stderr)

    def test_an_unknown_option_exits_2(self):
        proc = subprocess.run([sys.executable, SCRIPT, "--frobnicate"], capture_output=True,
                              text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("usage:", proc.stderr)


if __name__ == "__main__":
    unittest.main()
