"""`scripts/probe_subgraph_lowering.py`: what its recording handler writes for a lowering it is
asked about (and that it hands the inner handler's result back unchanged), on a stub Inductor."""

import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)

import probe_subgraph_lowering as probe  # noqa: E402
from inductor_stubs import fake_torch, mm_choices, mm_inputs, templates_of  # noqa: E402


class Spy(unittest.TestCase):
    def test_records_the_graph_the_options_and_the_operands(self):
        with fake_torch() as torch:
            graph = types.SimpleNamespace(name="benchmark_decompose_k_mm_2_split_0")
            sys.modules["torch._inductor.virtualized"].V = types.SimpleNamespace(graph=graph)
            config = torch._inductor.config
            config.max_autotune, config.max_autotune_gemm = False, False
            config.max_autotune_gemm_backends = "ATEN"
            log = []
            choices = mm_choices()
            result = probe.spy_factory(log)()._finalize_template_configs(
                choices, mm_inputs(64, 9600, 54), templates_of(choices), "bmm")
        self.assertEqual(len(result), 4)  # cuBLAS, two Triton configs, one split: all kept
        self.assertEqual(len(log), 1)
        self.assertEqual(
            log[0],
            "op=bmm graph=SimpleNamespace name='benchmark_decompose_k_mm_2_split_0' "
            "templates=['aten::mm', 'triton::mm', 'decompose_k'] "
            "inputs=[((64, 9600), (9600, 1), 'torch.bfloat16'), ((9600, 54), (54, 1), 'torch.bfloat16')] "
            "max_autotune=False max_autotune_gemm=False backends='ATEN'")

    def test_says_when_this_pytorch_has_no_subgraph_choices(self):
        with fake_torch():
            (line,) = probe.sources()
        self.assertTrue(line.startswith("no SubgraphChoiceCaller"), line)


if __name__ == "__main__":
    unittest.main()
