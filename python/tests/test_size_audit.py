"""`scripts/size_audit.sh`: files over 800 lines and functions over 100 lines, Rust and Python, on
fixture repositories written to a temporary folder (an offender not in the allow file fails
`--check` with exit 1, an allowed one passes, an allow line for what is within the limits now
fails, generated/ is not audited)."""

import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "size_audit.sh")


def python_fn(name, lines):
    """A Python function of `lines` lines, from its `def` to its last body line."""
    return f"def {name}():\n" + "".join(f"    x{i} = {i}\n" for i in range(lines - 1))


def rust_fn(name, lines):
    """A Rust function of `lines` lines, from its `fn` line to its closing brace."""
    return f"fn {name}() {{\n" + "".join(f"    let _x{i} = {i};\n" for i in range(lines - 2)) + "}\n"


def audit(files, allow=""):
    """(exit status, output) of `size_audit.sh --check` in a git repository of `files`
    (relative path -> text) with `allow` as scripts/size_audit.allow."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "scripts"))
        shutil.copy(SCRIPT, os.path.join(d, "scripts", "size_audit.sh"))
        files = dict(files, **{"scripts/size_audit.allow": allow})
        for rel, text in files.items():
            path = os.path.join(d, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        subprocess.run(["git", "init", "-q", d], check=True)
        subprocess.run(["git", "-C", d, "add", "-A"], check=True)
        p = subprocess.run(["bash", os.path.join(d, "scripts", "size_audit.sh"), "--check"],
                           capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


@unittest.skipIf(shutil.which("git") is None or shutil.which("bash") is None, "needs git and bash")
class SizeAudit(unittest.TestCase):
    def test_a_long_python_function_is_named_with_its_line(self):
        code, out = audit({"a.py": "import os\n\n\n" + python_fn("long_one", 101) + python_fn("short", 100)})
        self.assertEqual(code, 1, out)
        self.assertIn("fn      101  a.py:4 (long_one)", out)
        self.assertNotIn("short", out)

    def test_a_nested_python_function_counts_on_its_own(self):
        inner = "".join("    " + line + "\n" for line in python_fn("inner", 101).splitlines())
        code, out = audit({"b.py": "def outer():\n" + inner})
        self.assertEqual(code, 1, out)
        self.assertIn("(inner)", out)
        self.assertIn("(outer)", out)

    def test_a_long_python_or_rust_file_is_named(self):
        code, out = audit({"big.py": "x = 1\n" * 801, "big.rs": "// a line\n" * 801, "ok.py": "x = 1\n" * 800})
        self.assertEqual(code, 1, out)
        self.assertIn("file    801  big.py", out)
        self.assertIn("file    801  big.rs", out)
        self.assertNotIn("ok.py", out)

    def test_a_long_rust_function_is_still_named(self):
        code, out = audit({"c.rs": rust_fn("long_one", 101)})
        self.assertEqual(code, 1, out)
        self.assertIn("c.rs:1 (long_one)", out)

    def test_allowed_offenders_pass(self):
        files = {"big.py": "x = 1\n" * 801, "a.py": python_fn("long_one", 101)}
        code, out = audit(files, "big.py # one idea\na.py:long_one # a table\n")
        self.assertEqual(code, 0, out)
        self.assertIn("(allowed: scripts/size_audit.allow)", out)

    def test_an_allow_line_for_what_is_within_the_limits_fails(self):
        code, out = audit({"a.py": python_fn("short", 10)}, "a.py:short # no longer long\n")
        self.assertEqual(code, 1, out)
        self.assertIn("a.py:short is within the limits now", out)

    def test_generated_code_is_not_audited(self):
        code, out = audit({"generated/big.py": "x = 1\n" * 900 + python_fn("long_one", 150)})
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main()
