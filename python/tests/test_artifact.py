"""The `mm` AutoHeuristic artifact's runtime (python/ah_inductor/artifact.py) and PyTorch's choice
ids (naming.pytorch_mm_id), without PyTorch: a context is anything with `get_value`."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ah_inductor import artifact, naming  # noqa: E402

TILE = "BLOCK-M=64_BLOCK-K=32_BLOCK-N=128_numstages=3_numwarps=4"
TILE_ID = "type=triton_" + TILE


class Context:
    def __init__(self, **values):
        self.values = values

    def get_value(self, name):
        return self.values[name]


class Dtype:
    """Stands for a torch.dtype: not a plain value, read as its text."""

    def __str__(self):
        return "torch.bfloat16"


FEATURES = ("m", "k", "n", "batch", "op", "mat1_dtype")


def ctx(m=64):
    return Context(m=m, k=128, n=256, mat1_dtype=Dtype())


class PytorchIds(unittest.TestCase):
    def test_mm_and_bmm_configs_get_the_tile_id_without_group_m(self):
        self.assertEqual(naming.pytorch_mm_id(f"triton_mm_{TILE}_GROUP-M=8"), TILE_ID)
        self.assertEqual(naming.pytorch_mm_id(f"triton_bmm_{TILE}_GROUP-M=4"), TILE_ID)
        self.assertEqual(naming.pytorch_mm_id("extern_mm"), "extern_mm")

    def test_choices_the_mm_hook_does_not_offer_have_none(self):
        for name in ("extern_addmm", "extern_bias_addmm", "subgraph_decompose_k_ksplit=2",
                     f"triton_mm_persistent_tma_{TILE}", f"triton_mm_{TILE}_ksplit=2",
                     "triton_mm_BLOCK-M=64", "triton_mm_"):
            self.assertIsNone(naming.pytorch_mm_id(name), name)


class BestChoices(unittest.TestCase):
    def run_decide(self, decision, context=None):
        seen = []

        def decide(f):
            seen.append(f)
            return decision

        other = "triton_mm_BLOCK-M=16_BLOCK-K=16_BLOCK-N=16_numstages=1_numwarps=1"
        choices = artifact.mm_choice_ids([f"triton_mm_{TILE}_GROUP-M=8", other])
        out = artifact.mm_best_choices(decide, FEATURES, context or ctx(), choices)
        return out, [choices[i] for _, i in out or []], seen

    def test_features_as_the_handler_computes_them(self):
        _, _, seen = self.run_decide(("extern", ()))
        self.assertEqual(seen, [{"m": 64, "k": 128, "n": 256, "batch": 1, "op": "mm", "mat1_dtype": "torch.bfloat16"}])

    def test_extern_ranks_cublas_alone(self):
        out, names, _ = self.run_decide(("extern", ()))
        self.assertEqual((out[0][0], names), (1.0, ["extern_mm"]))

    def test_keep_ranks_cublas_then_the_kept_configs_once(self):
        kept = (f"triton_mm_{TILE}_GROUP-M=8", f"triton_mm_{TILE}_GROUP-M=4", "subgraph_decompose_k_ksplit=2")
        _, names, _ = self.run_decide(("keep", kept))
        self.assertEqual(names, ["extern_mm", TILE_ID])

    def test_keep_ranks_a_config_as_inductor_sized_it_for_the_gemm(self):
        # m = 8: the 64-row tile is offered as a 16-row one with 2 warps (16 * 128 / 256 = 8 > 4:
        # the warps stay 4); the artifact knows it, ranks it, not the unsized one.
        kept = (f"triton_mm_{TILE}_GROUP-M=8",)
        choices = artifact.mm_known_ids(kept)
        sized = "type=triton_BLOCK-M=16_BLOCK-K=32_BLOCK-N=128_numstages=3_numwarps=4"
        self.assertIn(sized, choices)
        out = artifact.mm_best_choices(lambda f: ("keep", kept), FEATURES, ctx(m=8), choices)
        self.assertEqual([choices[i] for _, i in out], ["extern_mm", sized])
        out = artifact.mm_best_choices(lambda f: ("keep", kept), FEATURES, ctx(m=512), choices)
        self.assertEqual([choices[i] for _, i in out], ["extern_mm", TILE_ID])

    def test_keep_of_configs_that_cannot_run_at_the_width_is_no_ranking(self):
        # 128 x 128 x 128 at 4 stages needs 512 KiB in fp32 (256 KiB in bf16): beyond 227 KiB.
        big = "triton_mm_BLOCK-M=128_BLOCK-K=128_BLOCK-N=128_numstages=4_numwarps=8"
        choices = artifact.mm_choice_ids([big])
        features = FEATURES + ("mat2_dtype",)
        fp32 = Context(m=4096, k=4096, n=4096, mat1_dtype="torch.float32", mat2_dtype="torch.float32")
        best = artifact.mm_best_choices(lambda f: ("keep", (big,)), features, fp32, choices, 232448)
        self.assertIsNone(best)
        unlimited = artifact.mm_best_choices(lambda f: ("keep", (big,)), features, fp32, choices)
        self.assertEqual([choices[i] for _, i in unlimited], choices)

    def test_known_ids_cover_every_sizing_and_stay_bounded(self):
        kept = (f"triton_mm_{TILE}_GROUP-M=8",)
        known = artifact.mm_known_ids(kept)
        self.assertEqual(known[:2], ["extern_mm", TILE_ID])
        # BLOCK-M 16/32/64, BLOCK-K 16/32, BLOCK-N 16..128; warps follow the tile.
        self.assertEqual(len(known), 1 + 3 * 2 * 4)
        huge = ("triton_mm_BLOCK-M=999999999999_BLOCK-K=32_BLOCK-N=64_numstages=3_numwarps=4",)
        self.assertLess(len(artifact.mm_known_ids(huge)), 400)

    def test_default_is_no_ranking(self):
        self.assertIsNone(self.run_decide(("default", ()))[0])

    def test_a_trimmed_full_list_is_no_ranking(self):
        # PyTorch's hook narrows to ranked choices only: a trimmed full list is unsure there.
        self.assertIsNone(self.run_decide(("drop", ("triton_mm_x",)))[0])

    def test_a_missing_feature_is_no_ranking(self):
        out, _, seen = self.run_decide(("extern", ()), Context(m=1))
        self.assertEqual((out, seen), (None, []))


if __name__ == "__main__":
    unittest.main()
