"""`scripts/sidecar.py` and its readers: a sidecar is read from its plain file, else from its
`.gz`, never from both; `never_near.py` and `compare_pytorch_pad_mm.py` read a compressed
sidecar as the plain one."""

import gzip
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import compare_pytorch_pad_mm  # noqa: E402
import never_near  # noqa: E402
import sidecar  # noqa: E402

LOG = "{}\nm,k,choice,feedback\n1,2,orig,0.5\n1,2,pad,0.25\n3,4,orig,1.0\n3,4,pad,2.0\n"
GEMM = json.dumps({"gemm": {"dtype": "bfloat16"}, "choices": [{"name": "extern_mm", "bench_ms": 1.0}]})


def write(path, text, compressed=False):
    with (gzip.open(path + ".gz", "wt") if compressed else open(path, "w")) as f:
        f.write(text)


class SidecarTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.plain = os.path.join(self.dir, "x.txt.extras.jsonl")

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_plain_file_else_the_gz_one_else_none(self):
        self.assertIsNone(sidecar.to_read(self.plain))
        with self.assertRaises(FileNotFoundError) as e:
            sidecar.open_text(self.plain)
        self.assertIn("x.txt.extras.jsonl", str(e.exception))
        write(self.plain, "gz\n", compressed=True)
        self.assertEqual(sidecar.to_read(self.plain), self.plain + ".gz")
        with sidecar.open_text(self.plain) as f:
            self.assertEqual((f.read(), f.name), ("gz\n", self.plain + ".gz"))
        os.unlink(self.plain + ".gz")
        write(self.plain, "plain\n")
        with sidecar.open_text(self.plain) as f:
            self.assertEqual((f.read(), f.name), ("plain\n", self.plain))

    def test_both_files_are_an_error_naming_both(self):
        write(self.plain, "a\n")
        write(self.plain, "a\n", compressed=True)
        with self.assertRaises(sidecar.SidecarError) as e:
            sidecar.open_text(self.plain)
        self.assertIn(f"{self.plain} and {self.plain}.gz both exist", str(e.exception))

    def test_find_names_each_sidecar_once_by_its_plain_name(self):
        for name, compressed in (("a", False), ("b", True), ("c", False)):
            write(os.path.join(self.dir, f"{name}.txt.extras.jsonl"), "", compressed)
        write(os.path.join(self.dir, "d.txt.medians.txt"), "", True)
        got = sidecar.find(os.path.join(self.dir, "*.txt.extras.jsonl"))
        self.assertEqual([os.path.basename(p) for p in got],
                         ["a.txt.extras.jsonl", "b.txt.extras.jsonl", "c.txt.extras.jsonl"])

    def test_never_near_reads_a_compressed_extras_sidecar_as_the_plain_one(self):
        text = GEMM + "\n" + GEMM + "\n"
        write(self.plain, text)
        plain = never_near.read_extras([self.plain])
        os.unlink(self.plain)
        write(self.plain, text, compressed=True)
        self.assertEqual(never_near.read_extras([self.plain]), plain)
        self.assertEqual(len(plain), 2)
        write(self.plain, GEMM + "\n{oops\n", compressed=True)
        with self.assertRaises(SystemExit) as e:
            never_near.read_extras([self.plain])
        self.assertIn(f"{self.plain}.gz:2: not JSON", str(e.exception))
        write(self.plain, text)
        with self.assertRaises(SystemExit) as e:
            never_near.read_extras([self.plain])
        self.assertIn("both exist", str(e.exception))

    def test_compare_pytorch_pad_mm_reads_a_compressed_medians_sidecar(self):
        med = os.path.join(self.dir, "x.txt.medians.txt")
        write(med, LOG)
        plain = compare_pytorch_pad_mm.read_log(med)
        os.unlink(med)
        write(med, LOG, compressed=True)
        self.assertEqual(compare_pytorch_pad_mm.read_log(med), plain)
        self.assertEqual(plain[0], ["m", "k"])
        with self.assertRaises(FileNotFoundError):
            compare_pytorch_pad_mm.read_log(os.path.join(self.dir, "y.txt.medians.txt"))


if __name__ == "__main__":
    unittest.main()
