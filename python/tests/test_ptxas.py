"""Tests of ptxas.py (one ptxas for Inductor's compile workers and the compiling process) and of
the handler's use of it, with a fake `torch` (a folder with or without `bin/ptxas`) and a fake
`triton.backends.nvidia.compiler` whose memoised functions count their `cache_clear()` calls."""

import contextlib
import os
import stat
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from ah_inductor import choices, ptxas  # noqa: E402
from inductor_stubs import HEURISTIC, decide_by_m, fake_torch  # noqa: E402


class Memo:
    """A memoised function's `cache_clear`, counted."""

    def __init__(self):
        self.cleared = 0

    def cache_clear(self):
        self.cleared += 1


@contextlib.contextmanager
def fake_triton():
    compiler = types.ModuleType("triton.backends.nvidia.compiler")
    compiler.get_ptxas_version, compiler.get_features = Memo(), Memo()
    compiler.CUDABackend = types.SimpleNamespace(hash=Memo())
    names = ["triton", "triton.backends", "triton.backends.nvidia", "triton.backends.nvidia.compiler"]
    mods = {n: types.ModuleType(n) for n in names[:-1]}
    mods[names[-1]] = compiler
    saved = {n: sys.modules.get(n) for n in names}
    sys.modules.update(mods)
    try:
        yield compiler
    finally:
        for n, old in saved.items():
            if old is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = old


def memos(compiler):
    return [compiler.get_ptxas_version.cleared, compiler.get_features.cleared,
            compiler.CUDABackend.hash.cleared]


@contextlib.contextmanager
def torch_folder(ptxas_file=True, executable=True):
    """A fake torch (inductor_stubs.fake_torch) whose package folder holds bin/ptxas or not."""
    d = tempfile.mkdtemp()
    os.makedirs(os.path.join(d, "bin"))
    path = os.path.join(d, "bin", "ptxas")
    if ptxas_file:
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
        if executable:
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    with fake_torch() as torch:
        torch.__file__ = os.path.join(d, "__init__.py")
        yield path


class Env(unittest.TestCase):
    def setUp(self):
        saved = os.environ.pop(ptxas.PTXAS_ENV, None)

        def put_back():
            os.environ.pop(ptxas.PTXAS_ENV, None)
            if saved is not None:
                os.environ[ptxas.PTXAS_ENV] = saved

        self.addCleanup(put_back)


class Align(Env):
    def test_points_triton_at_the_workers_ptxas_and_forgets_the_old_one(self):
        with torch_folder() as path, fake_triton() as compiler:
            saved = ptxas.ptxas_align()
            self.assertEqual(os.environ[ptxas.PTXAS_ENV], path)
            self.assertEqual(memos(compiler), [1, 1, 1])
            ptxas.ptxas_restore(saved)
            self.assertNotIn(ptxas.PTXAS_ENV, os.environ)
            self.assertEqual(memos(compiler), [2, 2, 2])

    def test_a_ptxas_the_environment_names_is_kept_and_read_again(self):
        # Inductor names PyTorch's ptxas after Triton memoised its own one's version.
        os.environ[ptxas.PTXAS_ENV] = "/opt/cuda/bin/ptxas"
        with torch_folder(), fake_triton() as compiler:
            saved = ptxas.ptxas_align()
            self.assertEqual(os.environ[ptxas.PTXAS_ENV], "/opt/cuda/bin/ptxas")
            self.assertEqual(memos(compiler), [1, 1, 1])
            ptxas.ptxas_restore(saved)
            self.assertEqual(os.environ[ptxas.PTXAS_ENV], "/opt/cuda/bin/ptxas")
            self.assertEqual(memos(compiler), [2, 2, 2])

    def test_nothing_to_align_without_an_executable_bundled_ptxas(self):
        for kwargs in ({"ptxas_file": False}, {"executable": False}):
            with torch_folder(**kwargs), fake_triton() as compiler:
                self.assertIsNone(ptxas.ptxas_align())
                self.assertNotIn(ptxas.PTXAS_ENV, os.environ)
                self.assertEqual(memos(compiler), [0, 0, 0])

    def test_restore_leaves_a_ptxas_set_since(self):
        with torch_folder(), fake_triton():
            saved = ptxas.ptxas_align()
            os.environ[ptxas.PTXAS_ENV] = "/elsewhere/ptxas"
            ptxas.ptxas_restore(saved)
            self.assertEqual(os.environ[ptxas.PTXAS_ENV], "/elsewhere/ptxas")

    def test_another_triton_is_left_alone(self):
        with torch_folder() as path:
            sys.modules["triton"] = types.ModuleType("triton")  # no backends: nothing to forget
            self.addCleanup(sys.modules.pop, "triton", None)
            saved = ptxas.ptxas_align()
            self.assertEqual(os.environ[ptxas.PTXAS_ENV], path)
            ptxas.ptxas_restore(saved)
            self.assertNotIn(ptxas.PTXAS_ENV, os.environ)


class Handler(Env):
    def test_install_aligns_and_uninstall_restores(self):
        rt = choices.Runtime(HEURISTIC, decide_by_m)
        self.addCleanup(rt.uninstall)
        with torch_folder() as path, fake_triton():
            self.assertTrue(rt.install())
            self.assertEqual(os.environ[ptxas.PTXAS_ENV], path)
            rt.uninstall()
            self.assertNotIn(ptxas.PTXAS_ENV, os.environ)

    def test_install_can_leave_triton_alone(self):
        rt = choices.Runtime(HEURISTIC, decide_by_m)
        self.addCleanup(rt.uninstall)
        with torch_folder(), fake_triton() as compiler:
            self.assertTrue(rt.install(align_ptxas=False))
            self.assertNotIn(ptxas.PTXAS_ENV, os.environ)
            self.assertEqual(memos(compiler), [0, 0, 0])

    def test_a_refused_install_changes_nothing(self):
        rt = choices.Runtime(dict(HEURISTIC, device_capa=(8, 0)), decide_by_m)
        with torch_folder(), fake_triton(), self.assertWarns(Warning):
            self.assertFalse(rt.install())
            self.assertNotIn(ptxas.PTXAS_ENV, os.environ)


if __name__ == "__main__":
    unittest.main()
