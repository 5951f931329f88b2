"""On a cold kernel cache a Simulator starts compiling the shared kernels in a second
process (contact_lcp/sim/warm.compile_ahead); never on a warm cache, a busy machine, a
cache another process is filling, or when turned off."""

import os
import sys

import pytest

from contact_lcp.sim import compile_ahead as warm


class FakePopen:
    started = []

    def __init__(self, args, **kwargs):
        self.args, self.env = args, kwargs["env"]
        FakePopen.started.append(self)

    def poll(self):
        return 0


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """An empty cache folder, an idle machine, no process started yet."""
    cache = tmp_path / "cache"
    (cache / "lcp_0123").mkdir(parents=True)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    monkeypatch.delenv(warm.AHEAD_ENV, raising=False)
    monkeypatch.setattr(warm, "_checked", False)
    monkeypatch.setattr(warm, "_free_core", lambda: True)
    monkeypatch.setattr("subprocess.Popen", FakePopen)
    monkeypatch.setattr("atexit.register", lambda *a: None)
    FakePopen.started = []
    return cache


def test_a_cold_cache_starts_one_process_running_this_package(cold):
    proc = warm.compile_ahead()
    assert proc is FakePopen.started[0]
    assert proc.args[:3] == [sys.executable, "-m", "contact_lcp.sim.warm"]
    lock = proc.args[3]
    assert os.path.dirname(lock) == str(cold) and os.path.exists(lock)
    assert proc.env[warm.AHEAD_ENV] == "0"  # its own Simulator starts nothing
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(warm.__file__))))
    assert proc.env["PYTHONPATH"].split(os.pathsep)[0] == root
    assert warm.compile_ahead() is None  # once per process
    assert len(FakePopen.started) == 1


def test_nothing_starts_on_a_warm_cache(cold):
    (cold / "lcp_0123" / "robust._search-412.py311.nbi").write_bytes(b"")
    assert warm.compile_ahead() is None and not FakePopen.started


def test_nothing_starts_when_turned_off_or_busy_or_locked(cold, monkeypatch):
    monkeypatch.setenv(warm.AHEAD_ENV, "0")
    assert warm.compile_ahead() is None
    monkeypatch.delenv(warm.AHEAD_ENV)
    monkeypatch.setattr(warm, "_free_core", lambda: False)
    assert warm.compile_ahead() is None
    monkeypatch.setattr(warm, "_checked", False)
    monkeypatch.setattr(warm, "_free_core", lambda: True)
    (cold / "compile_ahead.lock").write_text("")  # another process is compiling
    assert warm.compile_ahead() is None
    assert not FakePopen.started


def test_a_stale_lock_is_taken_over(cold):
    lock = cold / "compile_ahead.lock"
    lock.write_text("")
    old = os.path.getmtime(lock) - 2 * warm._STALE_LOCK_S
    os.utime(lock, (old, old))
    assert warm.compile_ahead() is not None
    assert os.path.getmtime(lock) > old


def test_no_cache_folder_starts_nothing(cold, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    assert warm.compile_ahead() is None and not FakePopen.started
