"""Compile (or load from numba's on-disk cache) what a simulator's run will execute.

The first use of a kernel compiles it into the cache (about a minute for a robot scene
on a 2-core machine); later processes load it in milliseconds. :func:`warm_up` runs what
a scene's steps and the node's method changes will run, so that nothing compiles later:
the node calls it before it publishes, and ``contact-lcp warm`` (run by the set-up
commands, beside the ROS interface build) calls it on the default scene so that a new
user's first run starts at once.
"""

import numpy as np


def warm_up(sim):
    """Compile (or load) what stepping ``sim`` will run.

    Solves a 2x2 LCP with every method (so a later ``solver_method`` change does not
    stall the physics thread), then takes two steps of ``sim`` (the first solves
    without a warm start; the second, from the first's guess, runs the contact model's
    first rung, which compiles its own kernels) and resets it. Returns
    the step's error message, or ``""``: a scene whose first step fails still loads,
    and the node reports the failure when it steps (ERROR diagnostic, paused).
    """
    from contact_lcp.lcp import METHODS, solve

    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])
    for method in METHODS:
        solve(M, q, method=method)
    try:
        for _ in range(2):
            sim.step()
    except Exception as e:  # reported again (and handled) when the node steps
        return f"{type(e).__name__}: {e}"
    finally:
        sim.reset()
    return ""


#: set to "0" to keep :func:`compile_ahead` from starting its process
AHEAD_ENV = "CONTACT_LCP_COMPILE_AHEAD"
#: a kernel every step with contact runs: the cache has the shared kernels once it has this
_SENTINEL = "robust._search-"
#: what the process of :func:`compile_ahead` simulates: a box resting on the ground
_BOX_SCENE = {"time_step": 0.001, "gravity": [0.0, 0.0, -9.81],
              "ground": {"height": 0.0, "friction": 0.6},
              "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 2.0,
                          "pose": [0, 0, 0.05, 0, 0, 0, 1]}]}
#: a lock older than this is left by processes that were killed: taken over [s]
_STALE_LOCK_S = 600.0
_checked = False


def compile_ahead():
    """On a cold kernel cache, start compiling the kernels that every scene's steps run
    in a process of its own, while this one compiles its scene's.

    A first run compiles about 200 kernels, one after the other, on one core; the LCP
    methods and the contact model's kernels (half of that time) do not depend on the
    scene, so a second process (``python -m contact_lcp.sim.warm``) compiles them into
    the same cache, solving a small LCP with every method and stepping a box resting on
    the ground, and this process loads them when its first step gets there. Nothing is
    started when the cache already holds them, when numba has no cache folder, when no
    core is idle (1-minute load average above the cores less one), when another process
    is compiling them (a lock file in the cache folder) or when
    ``CONTACT_LCP_COMPILE_AHEAD=0``. The process is ended when this one exits. Returns
    it, or None.
    """
    global _checked
    import atexit
    import os
    import subprocess
    import sys
    import time

    if _checked or os.environ.get(AHEAD_ENV, "1") == "0":
        return None
    _checked = True  # once per process: a warm cache stays warm
    cache = os.environ.get("NUMBA_CACHE_DIR", "")
    if not cache or not os.path.isdir(cache) or _cached(cache) or not _free_core():
        return None
    lock = os.path.join(cache, "compile_ahead.lock")
    try:
        if time.time() - os.path.getmtime(lock) > _STALE_LOCK_S:
            os.unlink(lock)
    except OSError:
        pass
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:  # another process compiles them (or the folder is not writable)
        return None
    # its own Simulator starts nothing; it imports this copy of the package
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, **{AHEAD_ENV: "0"})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "contact_lcp.sim.warm", lock],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
    except OSError:
        os.unlink(lock)
        return None
    atexit.register(_end, proc, lock)
    return proc


def _free_core():
    """Whether a core is idle for the second process (on a busy machine it would take
    this one's time, not add its own)."""
    import os

    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 1.0
    except OSError:
        return False


def _cached(cache):
    """Whether the cache folder ``cache`` holds the shared kernels."""
    import os

    try:
        return any(name.startswith(_SENTINEL) and name.endswith(".nbi")
                   for sub in os.scandir(cache) if sub.is_dir()
                   for name in os.listdir(sub.path))
    except OSError:
        return False


def _end(proc, lock):
    """Stop the compile-ahead process if it still runs (what it wrote stays cached)."""
    import os

    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except Exception:
            proc.kill()
    try:
        os.unlink(lock)
    except OSError:
        pass


def _ahead():
    """The compile-ahead process's work (see :func:`compile_ahead`)."""
    from contact_lcp.lcp import METHODS, solve
    from contact_lcp.sim.scene_loader import scene_from_dict
    from contact_lcp.sim.simulator import Simulator

    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])
    for method in METHODS:
        solve(M, q, method=method)
    sim = Simulator(scene_from_dict(_BOX_SCENE))
    for _ in range(3):
        sim.step()


if __name__ == "__main__":
    import os
    import sys

    try:
        _ahead()
    finally:
        if len(sys.argv) > 1:
            try:
                os.unlink(sys.argv[1])
            except OSError:
                pass
