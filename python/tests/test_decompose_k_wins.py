"""scripts/decompose_k_wins.py: which GEMMs a decompose_k split wins, on a made-up log."""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "decompose_k_wins.py")
spec = importlib.util.spec_from_file_location("decompose_k_wins", SCRIPT)
dk = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dk)

HEAD = ['{"name": "inductor_mm"}\n', "m,k,n,batch,op,mat1_dtype,choice,feedback\n"]


def row(m, k, n, choice, t):
    return f"{m},{k},{n},1,mm,torch.bfloat16,{choice},{t}\n"


class Wins(unittest.TestCase):
    def test_a_split_faster_than_everything_and_cublas_by_the_margin_wins(self):
        lines = HEAD + [
            row(64, 1000, 32, "extern_mm", 1.0),
            row(64, 1000, 32, "subgraph_decompose_k_ksplit=4", 0.9),
            row(64, 1000, 32, "subgraph_decompose_k_ksplit=8", 0.8),
            row(64, 4000, 32, "extern_mm", 1.0),
            row(64, 4000, 32, "subgraph_decompose_k_ksplit=2", 0.99),
            row(64, 2000, 32, "triton_mm_x", 0.5),
            row(64, 2000, 32, "extern_mm", 1.0),
            row(64, 2000, 32, "subgraph_decompose_k_ksplit=2", 0.6),
        ]
        rows = dk.gemms(lines)
        self.assertEqual(len(rows), 3)
        wins = [dk.win(f, ch, 1.02) for f, ch in rows]
        self.assertEqual(wins[0]["split"], 8)
        self.assertEqual(wins[0]["chunk"], 125)
        self.assertAlmostEqual(wins[0]["over_cublas"], 1.25)
        self.assertEqual([s for s, _, _ in wins[0]["splits"]], [4, 8])
        self.assertIsNone(wins[1], "1 % over cuBLAS is under the margin")
        self.assertIsNone(wins[2], "a Triton config is faster than the split")

    def test_a_bad_log_exits_2(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.writelines(HEAD + ["64,1000,32,1,mm,torch.bfloat16,extern_mm,fast\n"])
        try:
            self.assertEqual(dk.main([f.name]), 2)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
