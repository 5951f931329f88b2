"""The compiled-kernel cache folder follows the package's sources (contact_lcp/_numba_cache.py)."""

import os
import subprocess
import sys

from contact_lcp import _numba_cache


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_digest_follows_any_source_file(tmp_path):
    # numba keys a cached kernel on its own file only; a change in a file whose compiled
    # functions it inlines must give a new folder
    write(tmp_path, "a.py", "from numba import njit\nx = 1\n")
    write(tmp_path, "sub/b.py", "import numba\ny = 2\n")
    write(tmp_path, "sub/__pycache__/b.cpython-311.pyc", "junk")
    first = _numba_cache.source_digest(str(tmp_path))
    assert _numba_cache.source_digest(str(tmp_path)) == first
    write(tmp_path, "sub/b.py", "import numba\ny = 3\n")
    second = _numba_cache.source_digest(str(tmp_path))
    assert second != first
    write(tmp_path, "c.py", "z = 1  # plain Python: compiled code cannot inline it\n")
    assert _numba_cache.source_digest(str(tmp_path)) == second
    write(tmp_path, "sub/__pycache__/b.cpython-311.pyc", "other junk")  # not a source
    assert _numba_cache.source_digest(str(tmp_path)) == second
    write(tmp_path, "notes.txt", "not a source either")
    assert _numba_cache.source_digest(str(tmp_path)) == second
    # a file that names numba in prose defines no kernel: editing it recompiles nothing
    write(tmp_path, "d.py", '"""Warms numba\'s cache."""\nimport os\n')
    assert _numba_cache.source_digest(str(tmp_path)) == second
    write(tmp_path, "e.py", "def f():\n    from numba import njit\n    return njit\n")
    assert _numba_cache.source_digest(str(tmp_path)) != second  # an indented import counts


def test_two_clones_of_the_same_sources_get_folders_of_their_own(tmp_path):
    # numba keys a kernel on its file's path and mtime: clones sharing a folder would
    # overwrite each other's entries and recompile in turn
    for clone in ("a", "b"):
        write(tmp_path / clone, "k.py", "from numba import njit\n")
    assert (_numba_cache.source_digest(str(tmp_path / "a"))
            != _numba_cache.source_digest(str(tmp_path / "b")))


def test_old_folders_are_pruned(tmp_path):
    for k in range(5):
        (tmp_path / f"old{k}").mkdir()
        os.utime(tmp_path / f"old{k}", (k, k))  # old4 the most recent
    (tmp_path / "current").mkdir()
    _numba_cache._prune(str(tmp_path), "current")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["current"] + [f"old{k}" for k in range(5 - _numba_cache.KEEP_OTHERS, 5)])


def test_a_process_uses_its_sources_folder_unless_told_otherwise(tmp_path):
    code = "import contact_lcp, os; print(contact_lcp.NUMBA_CACHE, os.environ['NUMBA_CACHE_DIR'])"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    digest = _numba_cache.source_digest(os.path.dirname(_numba_cache.__file__))
    assert out[0] == out[1] == str(tmp_path / "contact_lcp" / "numba" / digest)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "contact_lcp" / "numba" / "0123")  # a parent's
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == str(tmp_path / "contact_lcp" / "numba" / digest)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")  # an explicit folder wins
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["None", str(tmp_path / "mine")]


def test_numba_s_messages_are_plain_unless_the_user_chose(tmp_path):
    # highlighting re-initialises colorama for each of the tens of thousands of typing
    # messages numba builds while compiling (_numba_cache.plain_error_messages)
    code = ("import contact_lcp; from numba.core import errors; "
            "print(type(errors.termcolor()).__name__)")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    env.pop("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert run.stdout.split() == ["NOPColorScheme"]
    try:
        import colorama  # noqa: F401
    except ImportError:
        return  # (numba highlights only with colorama)
    run = subprocess.run([sys.executable, "-c", "import numba; " + code], env=env,
                         capture_output=True, text=True, check=True)
    assert run.stdout.split() != ["NOPColorScheme"]  # numba was there first: its own choice


def test_a_returned_array_is_boxed_without_a_python_frame():
    # numba's compiled code reads the ndarray class through a Python memo function each
    # time it returns an array; the package puts a C-level cache in front of it at import
    # (_numba_cache.cache_array_class), so a kernel's returned arrays cost no Python call
    # (a profiler sees every Python frame, not the cache's C calls)
    import cProfile
    import pstats

    import numpy as np

    from contact_lcp.contact.min_norm_kernel import face_contacts

    args = (np.zeros(6), np.zeros(6), np.zeros(6), np.zeros(2), np.zeros(6), 2, 1e-6, 1e-11)
    face_contacts(*args)
    profile = cProfile.Profile()
    profile.enable()
    S, _ = face_contacts(*args)
    profile.disable()
    names = {key[2] for key in pstats.Stats(profile).stats}
    assert S.tolist() == [0, 1]  # (both touch: an array came back)
    assert "_numba_unpickle" not in names


def test_an_inlined_kernel_s_scope_is_copied_once_per_copy_not_per_block(monkeypatch):
    # numba's inliner deep-copies a callee's IR block by block, and each block's copy
    # copied the function's whole scope again (blocks x variables); the package has the
    # copies of one inlining share a memo (_numba_cache.share_inline_copies): the inliner
    # takes two copies of the callee, so its scope (and the scope's empty parent) is
    # copied twice, whatever its block count (without the hook: once per block of each
    # copy). The compiled result is checked against the Python function.
    import copy

    import numpy as np
    from numba import njit
    from numba.core import ir

    import contact_lcp  # noqa: F401  (installs the hook)

    def branches(x):  # a dozen blocks: loops and branches
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > 1.0:
                s += x[i]
            elif x[i] < -1.0:
                s -= 2.0 * x[i]
            else:
                for j in range(3):
                    s += j * x[i]
        return s

    callee = njit(inline="always")(branches)

    def caller(x):
        return callee(x) + 1.0

    copies = []

    def counted(self, memo):
        copies.append(self)
        out = self.__class__.__new__(self.__class__)
        memo[id(self)] = out
        out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return out

    x = np.array([2.0, -3.0, 0.5, 0.0, 1.5])
    monkeypatch.setattr(ir.Scope, "__deepcopy__", counted, raising=False)
    got = njit(caller)(x)
    monkeypatch.undo()
    assert got == branches(x) + 1.0
    assert len(copies) == 4
