"""scripts/tutorial.py, which runs docs/tutorial.md: which blocks are files and commands, how
they apply, and that a stale anchor or an overwritten file is an error naming the doc's line."""
import importlib.util
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "tutorial.py")
spec = importlib.util.spec_from_file_location("tutorial", SCRIPT)
tutorial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tutorial)

DOC = """# A doc

```` ```rust file=PATH ```` at the start of a line is inline code, not a fence.

```rust file=src/new.rs
fn a() {}
```

Prose between the parts of a file.

```rust file=src/new.rs
fn b() {}
```

```rust file=src/lib.rs after="mod x;"
mod y;
```

```rust
// an example, not a file
```

```sh
echo one
```

```sh slow
make test
```

```console
$ output, not run
```
"""


class TutorialScriptTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.dir.name, "repo")
        os.makedirs(os.path.join(self.root, "src"))
        with open(os.path.join(self.root, "src", "lib.rs"), "w") as f:
            f.write("mod x;\nmod z;\n")
        self.doc = os.path.join(self.dir.name, "doc.md")
        self.write_doc(DOC)

    def tearDown(self):
        self.dir.cleanup()

    def write_doc(self, text):
        with open(self.doc, "w") as f:
            f.write(text)

    def read(self, rel):
        with open(os.path.join(self.root, rel)) as f:
            return f.read()

    def test_files_and_commands_in_order(self):
        blocks = tutorial.parse(self.doc)
        self.assertEqual(
            [(b.lang, b.attrs.get("file"), sorted(b.flags)) for b in blocks],
            [
                ("rust", "src/new.rs", []),
                ("rust", "src/new.rs", []),
                ("rust", "src/lib.rs", []),
                ("sh", None, []),
                ("sh", None, ["slow"]),
            ],
        )

    def test_apply_writes_continues_and_inserts(self):
        for n in range(3):
            tutorial.apply(self.doc, n, self.root)
        self.assertEqual(self.read("src/new.rs"), "fn a() {}\nfn b() {}\n")
        self.assertEqual(self.read("src/lib.rs"), "mod x;\nmod y;\nmod z;\n")

    def test_a_new_file_that_exists_is_refused_but_verifies(self):
        with open(os.path.join(self.root, "src", "new.rs"), "w") as f:
            f.write("mine\n")
        with self.assertRaisesRegex(tutorial.TutorialError, r"doc.md:5: src/new.rs exists already"):
            tutorial.apply(self.doc, 0, self.root)
        tutorial.verify(self.doc, self.root)

    def test_a_stale_anchor_names_the_line(self):
        self.write_doc(DOC.replace('after="mod x;"', 'after="mod gone;"'))
        with self.assertRaisesRegex(tutorial.TutorialError, r"doc.md:15: `mod gone;` is on 0 lines"):
            tutorial.verify(self.doc, self.root)

    def test_script_runs_commands_and_skips_slow_ones(self):
        import contextlib
        import io

        for full, want_make in [(False, False), (True, True)]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                tutorial.script(self.doc, full)
            text = out.getvalue()
            self.assertIn("\necho one\n", text)
            self.assertEqual("\nmake test" in text, want_make, text)
            self.assertNotIn("output, not run", text)
            self.assertEqual(text.count(" apply "), 3)


if __name__ == "__main__":
    unittest.main()
