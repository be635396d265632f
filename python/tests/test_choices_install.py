"""Tests of installing the InductorChoices handler runtime without PyTorch (`install()` and
`uninstall()`, a user's own handler kept underneath, pickling for Inductor's workers), the
generated module that embeds it, and its fingerprint. The stubs and the fake `torch` are
inductor_stubs.py's; the runtime's decisions: test_choices.py."""

import importlib.util
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import textwrap
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "..", "ah_inductor")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from ah_inductor import choices  # noqa: E402
from inductor_stubs import (  # noqa: E402
    TILE_NAME, HEURISTIC, mm_choices, templates_of, mm_inputs, FakeInductorChoices, fake_torch,
    decide_by_m, names)


class UserHandler(FakeInductorChoices):
    """A handler the user already has: drops the BLOCK_M=128 config and records its calls."""

    def __init__(self):
        self.calls = []

    def _finalize_template_configs(self, template_choices, kernel_inputs, templates, op_name, kwarg_overrides=None):
        self.calls.append(sorted(template_choices))
        out = super()._finalize_template_configs(template_choices, kernel_inputs, templates, op_name, kwarg_overrides)
        return [c for c in out if c.params.to_kwargs().get("BLOCK_M") != 128]


def user_factory():
    return UserHandler()


def call_handler(handler, ki, tc=None, op="mm"):
    tc = tc if tc is not None else mm_choices()
    return handler._finalize_template_configs(tc, ki, templates_of(tc), op, {})


# The install() options that change what a decision searches or keeps (the runtime's table),
# each with its own key suffix (the option's name with dashes), and all of them off: the plain
# install the test keys against. Those of OFF_BY_DEFAULT are off unless given True.
SEARCH_OPTIONS = choices.SEARCH_OPTIONS
OFF_BY_DEFAULT = choices.OFF_BY_DEFAULT


# A GEMM `decide_by_m` gives cuBLAS alone that no search install() turns on by default takes
# back: bf16, 16 rows, over 2**31 multiply-adds (not `half_few_rows`), wide (not narrow).
EXTERN_MM = (16, 16384, 16384)


def searches_off(**on):
    """install()'s keyword arguments with every option of SEARCH_OPTIONS off but those in `on`."""
    return dict(dict.fromkeys(SEARCH_OPTIONS, False), **on)


class Install(unittest.TestCase):
    def setUp(self):
        self.rt = choices.Runtime(HEURISTIC, decide_by_m)
        self.addCleanup(self.rt.uninstall)

    def test_wraps_the_current_threads_handler(self):
        with fake_torch() as torch:
            slot = torch._inductor.virtualized._choices
            user = UserHandler()
            slot._set_handler(user)
            self.assertTrue(self.rt.install())
            self.assertIs(slot._get_handler(), user)
            self.assertEqual(names(call_handler(user, mm_inputs(*EXTERN_MM))), ["extern_mm"])
            self.assertEqual(user.calls[-1], ["aten::mm"])  # the inner handler saw only ATen
            out = call_handler(user, mm_inputs(8192, 64, 64))  # default: the user's own list
            self.assertEqual(names(out), ["extern_mm", TILE_NAME, "subgraph_decompose_k_ksplit=4"])
            self.rt.uninstall()
            self.assertNotIn("_finalize_template_configs", user.__dict__)
            self.assertEqual(len(call_handler(user, mm_inputs(*EXTERN_MM))), 3)

    def test_retime_registers_a_saver_first_and_keys_the_cache_apart(self):
        with fake_torch() as torch:
            savers = torch._inductor.select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
            savers.append("a recorder of picks")
            config = torch._inductor.config
            self.assertTrue(self.rt.install(retime=False, **searches_off()))
            plain_key = config.inductor_choices_class.key
            self.assertEqual(savers, ["a recorder of picks"])
            self.assertFalse(any(getattr(self.rt, option) for option in SEARCH_OPTIONS))
            self.rt.uninstall()
            self.assertTrue(self.rt.install())  # re-timed, splits and mm / bmm warm, searched, by default
            self.assertEqual(config.inductor_choices_class.key,
                             f"{plain_key}-retime-warm-splits-warm-no-bias-narrow-search-small-bmm-search"
                             "-one-aten-search-bias-head-search-half-unaligned-bias-fp32-small-search")
            for option in SEARCH_OPTIONS:
                self.assertEqual(getattr(self.rt, option), option not in OFF_BY_DEFAULT, option)
            self.assertEqual(savers[1:], ["a recorder of picks"])
            self.assertEqual(type(savers[0]).__name__, "Retimer")
            saver = savers[0]
            self.assertTrue(saver.warm and saver.warm_no_bias)
            self.rt.uninstall()
            self.assertEqual(savers, ["a recorder of picks"])
            self.assertFalse(saver.active)
            self.assertIsNone(config.inductor_choices_class)
            self.assertTrue(self.rt.install(warm_splits=False, warm_no_bias=False, **searches_off()))
            self.assertEqual(config.inductor_choices_class.key, f"{plain_key}-retime")
            self.assertFalse(savers[0].warm or savers[0].warm_no_bias)
            self.rt.uninstall()
            self.assertTrue(self.rt.install(warm_no_bias=False, **searches_off()))
            self.assertEqual(config.inductor_choices_class.key, f"{plain_key}-retime-warm-splits")
            self.assertTrue(savers[0].warm and not savers[0].warm_no_bias)
            self.rt.uninstall()
            self.assertTrue(self.rt.install(warm_splits=False, **searches_off()))
            self.assertEqual(config.inductor_choices_class.key, f"{plain_key}-retime-warm-no-bias")
            self.rt.uninstall()
            self.assertTrue(self.rt.install(retime=False, warm_splits=True, **searches_off()))  # nothing to re-time
            self.assertEqual((config.inductor_choices_class.key, savers), (plain_key, ["a recorder of picks"]))
            self.rt.uninstall()
            for option in SEARCH_OPTIONS:  # each alone: its own key suffix, on while installed
                self.assertFalse(getattr(self.rt, option), option)  # off until install() turns it on
                self.assertTrue(self.rt.install(retime=False, **searches_off(**{option: True})))
                self.assertEqual(config.inductor_choices_class.key,
                                 f"{plain_key}-{option.replace('_', '-')}")
                self.assertTrue(getattr(self.rt, option), option)
                self.rt.uninstall()
                self.assertFalse(getattr(self.rt, option), option)

    def test_streamed_few_rows_hands_the_re_timing_its_test_and_keys_the_cache_apart(self):
        with fake_torch() as torch:
            savers = torch._inductor.select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
            config = torch._inductor.config
            self.assertTrue(self.rt.install(**searches_off()))
            plain_key = config.inductor_choices_class.key
            self.assertIsNone(savers[0].streamed)  # off by default
            self.rt.uninstall()
            self.assertTrue(self.rt.install(streamed_few_rows=True, **searches_off()))
            self.assertEqual(config.inductor_choices_class.key, f"{plain_key}-streamed-few-rows")
            self.assertIs(savers[0].streamed, choices.few_rows_lowering)
            self.rt.uninstall()
            self.assertTrue(self.rt.install(retime=False, streamed_few_rows=True, **searches_off()))
            self.assertFalse(config.inductor_choices_class.key.endswith("-streamed-few-rows"))  # nothing to re-time

    def test_a_wrapped_handler_has_a_uuid_with_the_heuristics_key(self):
        # PyTorch after 2.11 keys its caches on the configured handler's uuid() and refuses one
        # without it: the wrapper adds it, keeping the inner handler's, and uninstall() removes it.
        with fake_torch() as torch:
            slot = torch._inductor.virtualized._choices
            plain, own = UserHandler(), UserHandler()
            own.uuid = lambda: "user-v1"
            for h in (plain, own):
                slot._set_handler(h)
                self.rt.install()
                self.assertEqual(h.uuid(), ("ah_inductor_choices", self.rt.key,
                                            "user-v1" if h is own else None))
                self.rt.uninstall()
            self.assertNotIn("uuid", plain.__dict__)
            self.assertEqual(own.uuid(), "user-v1")

    def test_new_threads_get_a_wrapped_handler_from_the_previous_factory(self):
        with fake_torch() as torch:
            config = torch._inductor.config
            config.inductor_choices_class = user_factory
            self.assertTrue(self.rt.install())
            self.assertIsInstance(config.inductor_choices_class, choices.ChoicesFactory)
            got = {}

            def backward_thread():
                h = torch._inductor.virtualized._choices._get_handler()
                got["type"] = type(h)
                got["out"] = names(call_handler(h, mm_inputs(*EXTERN_MM)))

            t = threading.Thread(target=backward_thread)
            t.start()
            t.join()
            self.assertEqual(got, {"type": UserHandler, "out": ["extern_mm"]})
            self.rt.uninstall()
            self.assertIs(config.inductor_choices_class, user_factory)

    def test_threads_with_a_handler_made_before_install_are_wrapped(self):
        # Autograd's device thread keeps the handler an earlier compile made there.
        with fake_torch() as torch:
            slot = torch._inductor.virtualized._choices
            ready, go, done = threading.Event(), threading.Event(), {}

            def autograd_thread():
                slot._get_handler()  # an earlier backward compile, before install()
                ready.set()
                go.wait(5)
                done["out"] = names(call_handler(slot._get_handler(), mm_inputs(*EXTERN_MM)))

            t = threading.Thread(target=autograd_thread)
            t.start()
            ready.wait(5)
            self.rt.install()
            go.set()
            t.join()
            self.assertEqual(done["out"], ["extern_mm"])

    def test_idempotent_and_stacking_free(self):
        with fake_torch() as torch:
            self.assertTrue(self.rt.install())
            factory = torch._inductor.config.inductor_choices_class
            self.assertTrue(self.rt.install())
            self.assertIs(torch._inductor.config.inductor_choices_class, factory)
            h = torch._inductor.virtualized._choices._get_handler()
            call_handler(h, mm_inputs(*EXTERN_MM))
            self.assertEqual(self.rt.stats()["extern"], 1)  # one wrapper, one decision
            self.rt.uninstall()
            self.rt.uninstall()
            self.assertIsNone(torch._inductor.config.inductor_choices_class)
            self.assertNotIn("_get_handler", torch._inductor.virtualized._choices.__dict__)

    def test_a_second_runtime_of_the_same_heuristic_replaces_the_first_factory_not_stacks(self):
        # A module imported twice (or a notebook cell run again) makes a second runtime of the
        # same heuristic; its install() with other options must not wrap the first's factory.
        with fake_torch() as torch:
            torch._inductor.config.inductor_choices_class = user_factory
            self.assertTrue(self.rt.install())
            again = choices.Runtime(HEURISTIC, decide_by_m)
            self.addCleanup(again.uninstall)
            self.assertTrue(again.install(retime=False, narrow_search=False))
            factory = torch._inductor.config.inductor_choices_class
            self.assertTrue(factory.key.endswith("-small-bmm-search-one-aten-search-bias-head-search"
                                                 "-half-unaligned-bias-fp32-small-search"))
            self.assertIs(factory.prev, user_factory)

    def test_an_unknown_option_is_refused_before_anything_changes(self):
        with fake_torch() as torch:
            with self.assertRaisesRegex(TypeError, r"unknown option\(s\) narow_search \(known: warm_splits"):
                self.rt.install(narow_search=False)
            self.assertIsNone(torch._inductor.config.inductor_choices_class)
            self.assertFalse(self.rt.active)
        with self.assertRaisesRegex(TypeError, "unknown option.s. one_aten_search"):
            choices.installed("extern", frozenset(), {"op": "mm"}, one_aten_search=False)  # not a search of a kind

    def test_factory_pickles_by_name(self):
        with fake_torch() as torch:
            torch._inductor.config.inductor_choices_class = user_factory
            self.rt.install()
            factory = torch._inductor.config.inductor_choices_class
            again = pickle.loads(pickle.dumps(factory))
            self.assertEqual(again, factory)
            self.assertIsInstance(again(), UserHandler)

    def test_refuses_on_another_gpu_and_warns_once(self):
        with fake_torch(capa=(8, 0)) as torch, warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertFalse(self.rt.install())
            self.assertFalse(self.rt.install())
            self.assertIsNone(torch._inductor.config.inductor_choices_class)
        self.assertEqual(len(w), 1)
        msg = str(w[0].message)
        self.assertIn("(9, 0)", msg)
        self.assertIn("(8, 0)", msg)
        self.assertIn("default GEMM autotuning stays", msg)
        self.assertIn(choices.FORCE_ENV, msg)

    def test_refuses_on_another_torch_and_without_cuda(self):
        with fake_torch(version="2.10.1"), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertFalse(self.rt.install())
        self.assertIn("PyTorch 2.10", str(w[0].message))
        with fake_torch(cuda=False), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertFalse(choices.Runtime(HEURISTIC, decide_by_m).install())
        self.assertIn("no CUDA device", str(w[0].message))

    def test_force_installs_anyway(self):
        os.environ[choices.FORCE_ENV] = "1"
        self.addCleanup(os.environ.pop, choices.FORCE_ENV, None)
        with fake_torch(capa=(8, 0)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assertTrue(self.rt.install())


class GeneratedModule(unittest.TestCase):
    """naming.py + choices.py + a tree, concatenated: how ah-codegen makes the handler module."""

    def make(self):
        parts = ['"""Generated: test handler."""\n']
        for name in ("naming.py", "ptxas.py", "choices.py"):
            with open(os.path.join(PKG, name)) as f:
                parts.append(f.read())
        parts.append(
            "\nHEURISTIC = {'name': 'Tiny', 'device_capa': (9, 0), 'torch': '2.11', 'ops': ('mm',)}\n\n"
            "def decide(f):\n"
            "    return ('extern', ()) if f['m'] <= 64 else ('default', ())\n"
        )
        d = tempfile.mkdtemp()
        path = os.path.join(d, "ah_generated_tiny.py")
        with open(path, "w") as f:
            f.write("\n".join(parts))
        spec = importlib.util.spec_from_file_location("ah_generated_tiny", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["ah_generated_tiny"] = mod
        self.addCleanup(sys.modules.pop, "ah_generated_tiny", None)
        spec.loader.exec_module(mod)
        self.addCleanup(mod.uninstall)
        return mod

    def test_concatenated_module_installs_and_decides(self):
        mod = self.make()
        self.assertIs(mod.ktc_name.__module__, "ah_generated_tiny")  # naming's own, pasted
        self.assertIs(mod.ptxas_align.__module__, "ah_generated_tiny")  # ptxas.py's, pasted
        with fake_torch() as torch:
            self.assertTrue(mod.install())
            factory = torch._inductor.config.inductor_choices_class
            self.assertEqual(type(factory).__module__, "ah_generated_tiny")
            pickle.dumps(factory)
            h = torch._inductor.virtualized._choices._get_handler()
            self.assertEqual(names(call_handler(h, mm_inputs(*EXTERN_MM))), ["extern_mm"])
            self.assertEqual(len(call_handler(h, mm_inputs(512, 64, 64))), 4)
            self.assertEqual(len(call_handler(h, mm_inputs(*EXTERN_MM), op="addmm")), 4)
            s = mod.stats()
            self.assertEqual((s["extern"], s["default"], s["other_op"]), (1, 1, 1))
            self.assertEqual([(d["m"], d["decision"]) for d in mod.decisions()], [(16, "extern"), (512, "default")])
            mod.reset_stats()
            self.assertEqual(sum(mod.stats().values()), 0)
            self.assertEqual(mod.decisions(), [])
            mod.uninstall()
            self.assertIsNone(torch._inductor.config.inductor_choices_class)

    def test_package_module_without_a_tree_says_so(self):
        with self.assertRaises(RuntimeError):
            choices.install()



class FingerprintTests(unittest.TestCase):
    """The cache key's fingerprint covers what decides the compiled kernels, the same everywhere."""

    SOURCE = textwrap.dedent("""
        SHARED = ("a", "b")
        BOUNDS = {False: 16, True: 128}


        def rule(op):
            return op in {"mm", "addmm", "bmm", "baddbmm"}


        def decide(f):
            return ("keep", SHARED) if rule(f["op"]) else ("extern", ())
    """)

    @staticmethod
    def decide(source):
        env = {"__name__": "fake_handler"}
        exec(source, env)
        return env["decide"]

    def test_it_covers_the_module_around_decide(self):
        base = choices.fingerprint(HEURISTIC, self.decide(self.SOURCE))
        self.assertEqual(base, choices.fingerprint(HEURISTIC, self.decide(self.SOURCE)))
        for old, new in (('("a", "b")', '("a", "c")'), ("True: 128", "True: 64"), ('"baddbmm"}', '"int_mm"}')):
            changed = self.decide(self.SOURCE.replace(old, new))
            self.assertNotEqual(base, choices.fingerprint(HEURISTIC, changed), new)
        self.assertEqual(choices.fingerprint(dict(HEURISTIC, fingerprint="v1"), self.decide(self.SOURCE)), "v1")

    def test_it_is_the_same_in_every_process(self):
        code = (f"import sys; sys.path.insert(0, {os.path.join(HERE, '..')!r}); "
                "from ah_inductor import choices; env = {'__name__': 'fake_handler'}; "
                f"exec({self.SOURCE!r}, env); print(choices.fingerprint({HEURISTIC!r}, env['decide']))")
        outs = {subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONHASHSEED=str(seed)),
                               capture_output=True, text=True, check=True).stdout for seed in (1, 2, 3, 4)}
        self.assertEqual(len(outs), 1, outs)


if __name__ == "__main__":
    unittest.main()
