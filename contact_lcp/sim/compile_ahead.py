"""Compiling the shared kernels in a second process on a cold cache.

A first run compiles about 200 kernels, one after the other, on one core. The LCP
methods and the contact model's kernels (about half of that time) do not depend on the
scene, so on a cold cache a ``Simulator`` starts ``python -m contact_lcp.sim.warm``, which
compiles them into the same cache while this process compiles what its own scene adds,
and this process loads them when its first step gets there. Kept apart from
:mod:`contact_lcp.sim.warm` (which builds a ``Simulator``) so that the simulator can
import it.
"""

#: set to "0" to keep :func:`compile_ahead` from starting its process
AHEAD_ENV = "CONTACT_LCP_COMPILE_AHEAD"
#: a kernel every step with contact runs: the cache has the shared kernels once it has this
_SENTINEL = "robust._search-"
#: a lock older than this is left by processes that were killed: taken over [s]
_STALE_LOCK_S = 600.0
_checked = False


def compile_ahead():
    """On a cold kernel cache, start compiling the shared kernels in a process of its
    own (see the module notes); once per process. Nothing is started when the cache already holds them, when numba has no cache folder, when no
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
