"""On a cold kernel cache a Simulator starts compiling the shared kernels in a second
process (contact_lcp/sim/compile_ahead); never on a warm cache, a busy machine, a
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
    # (the wait on the kernels' cache lookups is tested on its own below; here it would
    # stay on this test process's kernels)
    monkeypatch.setattr(warm, "_wait_for_shared", lambda proc, lock: None)
    FakePopen.started = []
    return cache


def test_a_cold_cache_starts_one_process_running_this_package(cold, monkeypatch):
    monkeypatch.setattr(warm, "_STATS", {"started": False, "waited_s": 0.0})
    proc = warm.compile_ahead()
    assert proc is FakePopen.started[0] and warm.stats()["started"]
    assert proc.args[:3] == [sys.executable, "-m", "contact_lcp.sim.warm"]
    lock = proc.args[3]
    assert os.path.dirname(lock) == str(cold) and os.path.exists(lock)
    assert proc.env[warm.AHEAD_ENV] == "0"  # its own Simulator starts nothing
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(warm.__file__))))
    assert proc.env["PYTHONPATH"].split(os.pathsep)[0] == root
    assert warm.compile_ahead() is None  # once per process
    assert len(FakePopen.started) == 1


def test_nothing_starts_on_a_warm_cache(cold):
    (cold / "lcp_0123" / f"{warm._SENTINEL}412.py311.nbi").write_bytes(b"")
    assert warm.compile_ahead() is None and not FakePopen.started


def test_a_cache_that_ran_a_contact_solve_is_seen_as_warm():
    # the sentinel is the name numba gives the robust search's cache entry: a cache in
    # which a contact LCP was solved is warm (a stale name would start the second process
    # on every run)
    import numpy as np

    from contact_lcp.lcp import solve

    cache = os.environ.get("NUMBA_CACHE_DIR")
    if not cache or not os.path.isdir(cache):
        pytest.skip("no kernel cache folder in this process")
    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])
    assert solve(M, q, method="robust").status.name == "SOLVED"
    assert warm._cached(cache)


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


def test_the_box_problem_the_process_solves_first_is_a_stepped_problem_in_kernel_types():
    # The process compiles the contact model's kernels first on a box's corners built by
    # hand (no collision kernel). numba compiles one signature per argument types: the
    # hand-built problem must hold the types a stepped scene's problem holds, or what it
    # compiles is not what a first run loads. Its physics: the box's weight, in equal
    # shares (the least-norm forces), the second step solved by the first one's basis.
    import numba
    import numpy as np

    from contact_lcp.contact.islands import solve_islands
    from contact_lcp.contact.models import make_model
    from contact_lcp.sim.scene import model_settings
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.simulator import Simulator
    from contact_lcp.sim.warm import _BOX_SCENE, _box_problem

    scene = scene_from_dict(_BOX_SCENE)
    problem = _box_problem(scene)
    sim = Simulator(scene)
    sim.step()
    stepped = sim.stepper.data.problem
    for name in ("G", "u", "bias", "J", "K", "mu", "R_WC", "p_W", "pair", "v_free", "v"):
        assert numba.typeof(getattr(problem, name)) == numba.typeof(getattr(stepped, name)), name
    assert problem.num_contacts == stepped.num_contacts == 4
    model = make_model(scene.contact.model, model_settings(scene))
    first = solve_islands(model, problem)
    second = solve_islands(model, problem, first.guess)
    assert second.report.info["rungs"] == ("last_basis:solved",)
    weight = scene.bodies[0].mass * 9.81 * scene.time_step  # [N.s] over the step
    np.testing.assert_allclose(second.f[0::3], weight / 4, rtol=1e-9)
    np.testing.assert_allclose(second.f[1::3], 0.0, atol=1e-12 * weight)


def test_an_idle_core_is_seen_now_not_in_the_load_average(monkeypatch):
    # /proc/stat's idle time over a short window decides: a machine whose other core
    # is idle now starts the process even while the 1-minute load average still counts
    # a run that just ended; one core busy (beside this process's) starts none
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.9, 1.0, 0.5))
    samples = iter([(1000, 400), (1200, 600)])  # all 200 jiffies idle: 2 cores' worth
    monkeypatch.setattr(warm, "_cpu_times", lambda: next(samples))
    assert warm._free_core(window=0.0)
    samples = iter([(1000, 400), (1200, 500)])  # half idle: one core busy elsewhere
    monkeypatch.setattr(warm, "_cpu_times", lambda: next(samples))
    assert not warm._free_core(window=0.0)

    def unreadable():
        raise OSError("no /proc")

    monkeypatch.setattr(warm, "_cpu_times", unreadable)  # elsewhere: the load average
    assert not warm._free_core(window=0.0)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert warm._free_core(window=0.0)


class FakeProcess:
    def __init__(self):
        self.ended = None

    def poll(self):
        return self.ended


class FakeCache:
    """A kernel's cache lookup: empty until the other process saved the kernel."""

    def __init__(self):
        self.saved, self.lookups = None, 0

    def load_overload(self, sig, target_context):
        self.lookups += 1
        return self.saved


def _kernel():
    pass


def test_a_kernel_the_other_process_is_compiling_is_waited_for_and_loaded(tmp_path,
                                                                          monkeypatch):
    import threading
    import time
    import types

    monkeypatch.setattr(warm, "_STATS", {"started": True, "waited_s": 0.0})
    lock = tmp_path / "compile_ahead.lock"
    cache = FakeCache()
    dispatcher = types.SimpleNamespace(py_func=_kernel, _cache=cache)
    proc = FakeProcess()
    warm._patient(dispatcher, proc, str(lock))
    name = f"{__name__}._kernel"
    lock.write_text(name)  # the other process compiles this kernel

    def finish():  # ... saves it, and moves on to the next one
        time.sleep(0.3)
        cache.saved = "compiled"
        lock.write_text("contact_lcp.other.kernel")

    t0 = time.monotonic()
    threading.Thread(target=finish).start()
    assert dispatcher._cache.load_overload("sig", None) == "compiled"
    assert time.monotonic() - t0 >= 0.25 and cache.lookups == 2
    assert 0.25 <= warm.stats()["waited_s"] <= time.monotonic() - t0  # (bench_start's)
    # another kernel in compilation, or the other process ended: no wait
    cache.saved = None
    t0 = time.monotonic()
    assert dispatcher._cache.load_overload("sig", None) is None
    lock.write_text(name)
    proc.ended = 0
    assert dispatcher._cache.load_overload("sig", None) is None
    assert time.monotonic() - t0 < 0.2
    # wrapped once, however many modules hold the kernel
    lookup = dispatcher._cache.load_overload
    warm._patient(dispatcher, proc, str(lock))
    assert dispatcher._cache.load_overload is lookup


def test_the_other_process_names_each_kernel_it_starts_to_compile(tmp_path):
    from numba import njit
    from numba.core import event

    lock = tmp_path / "compile_ahead.lock"
    lock.write_text("")

    def inner(x):
        return x + 1.0

    def outer(x):
        return inner_jit(x) * 2.0

    inner_jit = njit(inner)
    outer_jit = njit(outer)
    writer = warm.report_progress(str(lock))
    try:
        outer_jit(1.0)  # compiles inner inside outer: the outer one is named
    finally:
        event.unregister("numba:compile", writer)
    assert lock.read_text() == f"{outer.__module__}.{outer.__qualname__}"


@pytest.mark.parametrize("started", [True, False])
def test_a_simulator_compiles_its_integrator_at_load_only_beside_a_second_process(
        monkeypatch, started):
    # The first step needs the integrator after the contact model's solve, whose kernels
    # the second process compiles: with one started, the integrator is compiled (run once,
    # its answer discarded) while the scene loads; the state stays the scene's.
    import numpy as np

    from contact_lcp.dynamics.world import World
    from contact_lcp.sim import simulator
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.warm import _BOX_SCENE

    calls = []
    real = World.integrate_state

    def spy(self, q, v, h, *, trusted=False):
        calls.append((q.copy(), v.copy(), h))
        return real(self, q, v, h, trusted=trusted)

    monkeypatch.setattr(simulator, "compile_ahead", lambda: object() if started else None)
    monkeypatch.setattr(World, "integrate_state", spy)
    sim = simulator.Simulator(scene_from_dict(_BOX_SCENE))
    assert len(calls) == (1 if started else 0)
    if started:
        q, v, h = calls[0]
        assert np.array_equal(q, sim.world.q0) and not v.any() and h == sim.h
    assert np.array_equal(sim.q, sim.world.q0) and np.array_equal(sim.v, sim.world.v0)
    assert sim.t == 0.0
