"""Tests of the Inductor worker without PyTorch: names, request checks, the protocol (fake
engine) and how one compile's records become an answer (stub Inductor objects)."""

import io
import json
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from ah_inductor import naming, worker  # noqa: E402


def ktc(uid, **kwargs):
    """A stub of Inductor's lazy KernelTemplateChoice."""
    return types.SimpleNamespace(
        template=types.SimpleNamespace(uid=uid),
        params=types.SimpleNamespace(to_kwargs=lambda: dict(kwargs)),
    )


class Names(unittest.TestCase):
    def test_extern_triton_subgraph(self):
        self.assertEqual(naming.choice_name("aten::mm", {}), "extern_mm")
        self.assertEqual(naming.choice_name("aten::bias_addmm", {"beta": 1}), "extern_bias_addmm")
        tile = dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=32, num_stages=3, num_warps=4, GROUP_M=8)
        self.assertEqual(
            naming.choice_name("triton::mm", tile),
            "triton_mm_BLOCK-M=64_BLOCK-K=32_BLOCK-N=128_numstages=3_numwarps=4_GROUP-M=8",
        )
        self.assertEqual(naming.choice_name("decompose_k", {"k_split": 4}), "subgraph_decompose_k_ksplit=4")

    def test_hostile_characters_are_replaced(self):
        name = naming.choice_name('triton::mm,"\n', {"BLOCK_M": "1,2\n"})
        self.assertRegex(name, r"^[A-Za-z0-9_=.-]+$")

    def test_ktc_and_caller_agree(self):
        k = ktc("triton::mm_persistent_tma", BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_stages=4, num_warps=8)
        caller = types.SimpleNamespace(annotations={"ktc": k})
        self.assertEqual(naming.caller_name(caller), naming.ktc_name(k))
        plain = types.SimpleNamespace(annotations=None, autoheuristic_id=lambda: "extern_mm")
        self.assertEqual(naming.caller_name(plain), "extern_mm")


class Requests(unittest.TestCase):
    def test_defaults_and_refusals(self):
        g = worker.check_gemm({"op": "mm", "m": 8, "k": 16, "n": 32, "dtype": "bfloat16"})
        self.assertEqual((g["batch"], g["tf32"], g["trans_a"]), (1, False, False))
        for bad in (
            {"op": "conv", "m": 1, "k": 1, "n": 1, "dtype": "float16"},
            {"op": "mm", "m": 0, "k": 1, "n": 1, "dtype": "float16"},
            {"op": "mm", "m": 1.5, "k": 1, "n": 1, "dtype": "float16"},
            {"op": "mm", "m": 1, "k": 1, "n": 1, "dtype": "int8"},
            {"op": "mm", "batch": 2, "m": 1, "k": 1, "n": 1, "dtype": "float16"},
            "mm",
        ):
            with self.assertRaises(worker.BadRequest, msg=repr(bad)):
                worker.check_gemm(bad)


class Protocol(unittest.TestCase):
    def run_lines(self, requests):
        out = io.StringIO()
        worker.serve(worker.FakeEngine(), [json.dumps(r) for r in requests], out)
        return [json.loads(line) for line in out.getvalue().splitlines()]

    def test_hello_then_one_answer_per_request(self):
        gemm = {"op": "addmm", "m": 30, "k": 64, "n": 64, "dtype": "float16"}
        lines = self.run_lines([{"id": 1, "gemm": gemm}, {"id": 2, "gemm": dict(gemm, m=13, k=13)},
                                {"id": 3, "gemm": {"op": "nope"}}, {"op": "quit"}, {"id": 4, "gemm": gemm}])
        self.assertEqual(lines[0]["hello"]["engine"], "fake")
        self.assertEqual([a["id"] for a in lines[1:]], [1, 2, 3])
        ok, failed, bad = lines[1:]
        self.assertTrue(ok["ok"])
        self.assertEqual(ok["winner"], ok["choices"][2]["name"])  # m % 3 == 0: Triton wins
        self.assertFalse(failed["ok"])
        self.assertIn("13x13", failed["error"])
        self.assertIn("BadRequest", bad["error"])

    def test_garbage_line_is_an_error_not_a_crash(self):
        out = io.StringIO()
        worker.serve(worker.FakeEngine(), ["{not json"], out)
        answer = json.loads(out.getvalue().splitlines()[1])
        self.assertFalse(answer["ok"])


class PtxasMode(unittest.TestCase):
    def test_mode_defaults_to_as_is_and_refuses_typos(self):
        self.assertEqual(worker.ptxas_mode({}), "as-is")
        self.assertEqual(worker.ptxas_mode({"AH_INDUCTOR_PTXAS": "align"}), "align")
        with self.assertRaisesRegex(ValueError, "expected one of as-is, align"):
            worker.ptxas_mode({"AH_INDUCTOR_PTXAS": "aligned"})

    def test_hello_names_the_mode(self):
        old = os.environ.get("AH_INDUCTOR_PTXAS")
        os.environ["AH_INDUCTOR_PTXAS"] = "align"
        try:
            self.assertEqual(worker.FakeEngine().hello()["settings"], {"ah_ptxas": "align"})
        finally:
            if old is None:
                del os.environ["AH_INDUCTOR_PTXAS"]
            else:
                os.environ["AH_INDUCTOR_PTXAS"] = old

    def test_a_bad_mode_is_the_hello_error(self):
        import subprocess

        env = dict(os.environ, AH_INDUCTOR_PTXAS="sometimes")
        script = os.path.join(os.path.dirname(__file__), "..", "ah_inductor", "worker.py")
        p = subprocess.run([sys.executable, script, "--engine", "fake"], input="", env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 3)
        self.assertIn("AH_INDUCTOR_PTXAS='sometimes'", json.loads(p.stdout)["hello_error"])


class Assemble(unittest.TestCase):
    def test_records_become_an_answer(self):
        rec = worker.Recorder()
        rec.calls = [[
            {"name": "extern_mm", "bench_ms": 0.5, "precompile_s": 0.0, "bench_s": 0.1},
            {"name": "triton_mm_BLOCK-M=64", "bench_ms": 0.4, "precompile_s": 0.7, "bench_s": 0.2},
            {"name": "triton_mm_BLOCK-M=128", "bench_ms": float("inf"), "precompile_s": 0.7, "bench_s": 0.0},
        ]]
        rec.gen_s = {"triton_mm_BLOCK-M=64": 0.05}
        rec.seen = [{"op": "mm", "m": 1}]
        g = {"op": "mm"}
        a = worker.TorchEngine.assemble(g, rec, 0.2, 3.0, {"default": 0.5, "max_autotune": 0.45}, 4)
        self.assertEqual(a["winner"], "triton_mm_BLOCK-M=64")
        self.assertIsNone(a["choices"][2]["bench_ms"])
        self.assertEqual(a["choices"][1]["gen_s"], 0.05)
        json.dumps(a, allow_nan=False)

    def test_no_autotuning_logs_cublas_truth(self):
        a = worker.TorchEngine.assemble({"op": "bmm"}, worker.Recorder(), 0.2, 0.25,
                                        {"default": 0.3, "max_autotune": 0.3}, 20)
        self.assertEqual([c["name"] for c in a["choices"]], ["extern_bmm"])
        self.assertEqual(a["choices"][0]["bench_ms"], 0.3)

    def test_duplicate_names_are_refused(self):
        rec = worker.Recorder()
        rec.calls = [[{"name": "x", "bench_ms": 1.0}, {"name": "x", "bench_ms": 2.0}]]
        with self.assertRaises(RuntimeError):
            worker.TorchEngine.assemble({"op": "mm"}, rec, 0, 0, {}, 1)


if __name__ == "__main__":
    unittest.main()
