"""`scripts/pool_log.py`: pooled held-out records written as an `inductor_mm` log with its
extras sidecar, each feature row once, choice costs imputed from other logs' extras; records
that lack what a log needs are left out and counted; bad lists are named and exit 2, writing
nothing."""

import gzip
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import pool_log  # noqa: E402

TRITON = "triton_mm_BLOCK-M=32_BLOCK-K=32_BLOCK-N=64_numstages=5_numwarps=4_GROUP-M=8"


def decision(m, op="mm"):
    return {"m": m, "k": 64, "n": 32, "batch": 1, "op": op, "mat1_dtype": "torch.bfloat16",
            "mat2_dtype": "torch.bfloat16", "mat1_stride_0": 64, "mat1_stride_1": 1, "mat2_stride_0": 1,
            "mat2_stride_1": 64, "mat1_iscontig": True, "mat2_iscontig": False,
            "using_tf32": "not_float_32", "decision": "extern", "kept": 0}


def rec(m, bench=True, decisions=None):
    r = {"gemm": {"name": f"g{m}", "op": "mm", "batch": 1, "m": m, "k": 64, "n": 32, "dtype": "bfloat16",
                  "tf32": False, "trans_a": False, "trans_b": True},
         "compile_s": {"none": 0.3, "ours": 0.3, "max_autotune": 2.3},
         "run_ms": {"none": 0.010, "max_autotune": 0.008},
         "picked": {"max_autotune": {TRITON: 1}},
         "ours_decisions": [decision(m)] if decisions is None else decisions}
    if bench:
        r["bench_ms"] = {"extern_mm": 0.012, TRITON: 0.009, "triton_mm_unseen": 0.011,
                         "triton_mm_failed": float("inf")}
    return r


class PoolLogTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.addCleanup(self.tmp.cleanup)
        costs = os.path.join(self.dir, "costs.txt")
        open(costs, "w").close()
        extras = [{"features": "x", "choices": [{"name": TRITON, "gen_s": g, "precompile_s": p}]}
                  for g, p in ((0.01, 0.5), (0.03, 0.7), (0.02, 0.9))]
        with gzip.open(costs + ".extras.jsonl.gz", "wt") as f:
            f.write("\n".join(json.dumps(x) for x in extras) + "\n")
        self.costs = costs

    def pool(self, *files):
        names = []
        for i, recs in enumerate(files):
            name = f"r{i}.json"
            with open(os.path.join(self.dir, name), "w") as f:
                json.dump({"gemms": recs}, f)
            names.append(name)
        lst = os.path.join(self.dir, "pool.txt")
        with open(lst, "w") as f:
            f.write("# the pool\n" + "\n".join(names) + "\n")
        return lst

    def run_main(self, lst, out):
        err = io.StringIO()
        with redirect_stderr(err):
            rc = pool_log.main(["--files-from", lst, "--costs-from", self.costs, "--out", out])
        return rc, err.getvalue()

    def test_writes_each_feature_row_once_with_imputed_costs(self):
        lst = self.pool([rec(8), rec(16, bench=False), rec(24, decisions=[decision(24, op="bmm")])],
                        [rec(8), rec(40)])
        out = os.path.join(self.dir, "log.txt")
        rc, err = self.run_main(lst, out)
        self.assertEqual(rc, 0)
        with open(out) as f:
            lines = f.read().splitlines()
        self.assertEqual(json.loads(lines[0])["name"], "inductor_mm")
        self.assertTrue(lines[1].endswith("using_tf32,choice,feedback"))
        self.assertEqual(len(lines), 2 + 6)  # two GEMMs, three finite choices each
        self.assertTrue(lines[2].startswith("8,64,32,1,mm,torch.bfloat16,"))
        self.assertTrue(lines[3].endswith(f",{TRITON},0.009"))
        with gzip.open(out + ".extras.jsonl.gz", "rt") as f:
            extras = [json.loads(x) for x in f if x.strip()]
        self.assertEqual([x["gemm"]["m"] for x in extras], [8, 40])
        first = extras[0]
        self.assertEqual(first["features"], lines[2].rsplit(",", 2)[0])
        self.assertEqual(first["truth_ms"], {"default": 0.010, "max_autotune": 0.008})
        self.assertEqual(first["compile_s"], {"default": 0.3, "max_autotune": 2.3})
        costs = {c["name"]: (c["gen_s"], c["precompile_s"]) for c in first["choices"]}
        self.assertEqual(costs["extern_mm"], (0.0, 0.0))
        self.assertEqual(costs[TRITON], (0.02, 0.7))  # the medians of the costs log
        self.assertNotIn("triton_mm_failed", costs)  # inf: it did not benchmark
        self.assertEqual(costs["triton_mm_unseen"], (0.02, 0.7))  # the op's Triton median
        self.assertIn("1 left out: no benchmark", err)
        self.assertIn("1 left out: no handler features", err)
        self.assertIn("1 left out: its feature row was written already", err)
        with open(out + ".provenance.json") as f:
            prov = json.load(f)
        self.assertEqual(prov["gemms"], 2)
        self.assertEqual(prov["result_files"], ["r0.json", "r1.json"])
        self.assertIn("--files-from", prov["command_line"])

    def test_a_bad_list_exits_2_and_writes_nothing(self):
        lst = os.path.join(self.dir, "empty.txt")
        with open(lst, "w") as f:
            f.write("# nothing\n")
        out = os.path.join(self.dir, "log.txt")
        rc, err = self.run_main(lst, out)
        self.assertEqual(rc, 2)
        self.assertIn("names no result file", err)
        self.assertFalse(os.path.exists(out))

    def test_a_missing_output_folder_is_made(self):
        out = os.path.join(self.dir, "no", "such", "log.txt")
        rc, _ = self.run_main(self.pool([rec(8)]), out)
        self.assertEqual(rc, 0)
        self.assertTrue(os.path.exists(out))

    def test_an_output_folder_that_cannot_be_made_is_an_error_not_a_traceback(self):
        blocker = os.path.join(self.dir, "a_file")
        with open(blocker, "w") as f:
            f.write("not a folder\n")
        rc, err = self.run_main(self.pool([rec(8)]), os.path.join(blocker, "log.txt"))
        self.assertEqual(rc, 2)
        self.assertIn("pool_log:", err)


if __name__ == "__main__":
    unittest.main()
