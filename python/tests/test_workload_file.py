"""`scripts/inductor_eval.py --workload-file`: a user's end-to-end workload is registered under
its file's name and run after --workloads (alone when --workloads is not given); the shipped
example follows the contract; a file that cannot be used is named and exits 2 (no torch here:
the model is built only when measured)."""

import importlib
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import inductor_eval  # noqa: E402
import inductor_workloads  # noqa: E402

EXAMPLE = os.path.join(ROOT, "scripts", "example_workload.py")
HANDLER = os.path.join(ROOT, "generated", "python", "inductor_mmh100_choices.py")


class WorkloadFile(unittest.TestCase):
    def setUp(self):
        self.e2e = dict(inductor_workloads.E2E)

    def tearDown(self):
        inductor_workloads.E2E.clear()
        inductor_workloads.E2E.update(self.e2e)
        for name in [m for m in sys.modules if m.startswith("ah_workload_")]:
            del sys.modules[name]

    def run_main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = inductor_eval.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_the_example_is_registered_under_its_name(self):
        self.assertEqual(inductor_workloads.load_workload_file(EXAMPLE), "example_workload")
        build, workload = inductor_workloads.E2E["example_workload"]
        self.assertTrue(callable(build) and callable(workload))

    def test_every_shipped_workload_follows_the_contract(self):
        folder = os.path.join(ROOT, "scripts", "workloads")
        files = sorted(f for f in os.listdir(folder) if f.endswith(".py"))
        self.assertIn("convnext_train.py", files)
        for f in files:
            name = inductor_workloads.load_workload_file(os.path.join(folder, f))
            self.assertEqual(name, f[:-3])
            self.assertTrue(all(callable(fn) for fn in inductor_workloads.E2E[name]))

    def test_the_files_module_is_importable_by_name(self):
        # Dynamo imports the module of a class it traces: an unregistered module failed every
        # setting on the H100 with "No module named 'ah_workload_example_workload'".
        inductor_workloads.load_workload_file(EXAMPLE)
        module = importlib.import_module("ah_workload_example_workload")
        self.assertIs(module.build, inductor_workloads.E2E["example_workload"][0])

    def test_the_report_of_a_workload_alone_says_what_failed_and_has_no_gemm_table(self):
        data = {"gemms": [], "summary": {}, "e2e": {"example_workload": {
            "compile_s": {"none": 8.9}, "step_ms": {"none": 2.3}, "lowerings": {"none": 36},
            "autotuned": {"none": 0}, "timing": {"none": "cuda_graph"},
            "errors": {"ours": "InternalTorchDynamoError: boom"}, "phases_s": {"none": {}, "ours": {}}}}}
        report = inductor_eval.table(data, ["none", "ours"])
        self.assertTrue(report.startswith("| example_workload | compile s |"), report)
        self.assertIn("\n| none | 8.9 | 2.300 | 36 | 0 | cuda_graph |\n", report)
        self.assertIn("\nexample_workload ours failed: InternalTorchDynamoError: boom", report)
        self.assertNotIn("| GEMM |", report)

    def test_alone_unless_workloads_are_named(self):
        code, out, _ = self.run_main(["--dry-run", "--workload-file", EXAMPLE])
        self.assertEqual(code, 0)
        self.assertIn("; workloads example_workload\n", out)
        inductor_workloads.E2E.pop("example_workload")
        code, out, _ = self.run_main(["--dry-run", "--workloads", "gemms,llama_train", "--workload-file", EXAMPLE])
        self.assertEqual(code, 0)
        self.assertIn("; workloads gemms,llama_train,example_workload\n", out)

    def refused(self, argv):
        err = io.StringIO()
        with redirect_stderr(err), self.assertRaises(SystemExit) as exit_:
            inductor_eval.parse(argv)
        self.assertEqual(exit_.exception.code, 2)
        return err.getvalue()

    def test_naming_a_files_workload_in_workloads_says_to_leave_it_out(self):
        # A call with `--workloads convnext_train --workload-file .../convnext_train.py` was
        # refused as an unknown workload on the H100 (forty-second session), naming no way out.
        err = self.refused(["--dry-run", "--workloads", "example_workload", "--workload-file", EXAMPLE])
        self.assertIn(f"workload 'example_workload' is --workload-file {EXAMPLE}'s", err)
        self.assertIn("leave it out of --workloads", err)
        err = self.refused(["--dry-run", "--workloads", "resnet_train"])
        self.assertIn("unknown workload 'resnet_train'", err)
        self.assertIn("runs by --workload-file FILE.py", err)

    def test_a_gemm_file_alone_measures_only_its_gemms(self):
        gemms = os.path.join(ROOT, "data", "inductor_probe_splits_gemms.jsonl")
        self.assertEqual(inductor_eval.parse(["--dry-run", "--gemms", gemms]).workloads, ["gemms"])
        a = inductor_eval.parse(["--dry-run", "--gemms", gemms, "--workload-file", EXAMPLE])
        self.assertEqual(a.workloads, ["gemms"])  # the file's workload is added after these
        a = inductor_eval.parse(["--dry-run", "--gemms", gemms, "--workloads", "gemms,llama_train"])
        self.assertEqual(a.workloads, ["gemms", "llama_train"])
        self.assertEqual(inductor_eval.parse(["--dry-run"]).workloads, list(inductor_eval.WORKLOADS))

    def test_the_preview_says_a_files_gemms_are_known_once_compiled(self):
        code, out, _ = self.run_main(["--dry-run", "--handler", HANDLER, "--workload-file", EXAMPLE])
        self.assertEqual(code, 0)
        self.assertIn("example_workload:\n  (a workload file: its GEMMs are known once Inductor compiles it)", out)

    def test_a_file_that_cannot_be_used_is_named_and_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            files = {
                "no_step.py": "def build(torch):\n    return None\n",
                "broken.py": "def build(torch:\n",
                "raises.py": "import no_such_module_here\n",
                "divides.py": "1 / 0\n",
                "llama_train.py": "def build(torch): pass\ndef workload(torch, model, options): pass\n",
                "my-model.py": "def build(torch): pass\ndef workload(torch, model, options): pass\n",
            }
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            for name in [*files, "missing.py"]:
                path = os.path.join(d, name)
                code, _, err = self.run_main(["--dry-run", "--workload-file", path])
                self.assertEqual(code, 2, name)
                self.assertIn(path, err)
            self.assertNotIn("no_step", inductor_workloads.E2E)
            self.assertNotIn("ah_workload_no_step", sys.modules)


if __name__ == "__main__":
    unittest.main()
