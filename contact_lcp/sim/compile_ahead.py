"""Compiling the shared kernels in a second process on a cold cache.

A first run compiles about 200 kernels, one after the other, on one core. The LCP
methods and the contact model's kernels (about half of that time) do not depend on the
scene, so on a cold cache a ``Simulator`` starts ``python -m contact_lcp.sim.warm``, which
compiles them into the same cache while this process compiles what its own scene adds,
and this process loads them when its first step gets there. Kept apart from
:mod:`contact_lcp.sim.warm` (which builds a ``Simulator``) so that the simulator can
import it.

The second process writes into its lock file the kernel it is compiling (numba saves a
kernel to the cache after its compilation ends, before the next one starts). When this
process misses the cache for that kernel (its first step got there first), it waits for
the other process to finish it and loads it, instead of compiling the same kernel
again beside it: the robust search alone takes half a minute to compile.
"""

#: set to "0" to keep :func:`compile_ahead` from starting its process
AHEAD_ENV = "CONTACT_LCP_COMPILE_AHEAD"
#: the start of the name of the cache index of a kernel every step with contact runs (numba
#: names it ``<file>.<function>-<line>.py<version>.nbi``): the cache has the shared
#: kernels once it has this one
_SENTINEL = "robust_kernel.run_search-"
#: a lock older than this is left by processes that were killed: taken over [s]
_STALE_LOCK_S = 600.0
_checked = False
#: what this process saw of a second process: whether it started one and how long it
#: waited for kernels that process was compiling [s] (:func:`stats`)
_STATS = {"started": False, "waited_s": 0.0}


def compile_ahead():
    """On a cold kernel cache, start compiling the shared kernels in a process of its
    own (see the module notes); once per process. Nothing is started when the cache
    already holds them, when numba has no cache folder, when no core is idle
    (:func:`_free_core`), when another process is compiling them (a lock file in the cache
    folder) or when ``CONTACT_LCP_COMPILE_AHEAD=0``. The process is ended when this one
    exits; this process's kernels wait for the ones it is compiling (module notes).
    Returns it, or None.
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
    _STATS["started"] = True
    _wait_for_shared(proc, lock)
    return proc


def stats():
    """``{"started": bool, "waited_s": float}``: whether this process started the second
    process, and the seconds it waited for kernels that process was compiling (what
    ``benchmarks/bench_start.py`` reports beside a cold start)."""
    return dict(_STATS)


def _free_core(window=0.1):
    """Whether a core is idle for the second process (on a busy machine it would take
    this one's time, not add its own): on Linux, the cores' idle time over ``window``
    seconds now (``/proc/stat``), at least ``IDLE_CORES`` of a core beside the one this
    process takes (it sleeps meanwhile); elsewhere the 1-minute load average. The load
    average lags: for a minute after an install or another run it still counts them,
    and a first run on a machine idle by then would compile everything alone."""
    import os
    import time

    cores = os.cpu_count() or 1
    try:
        before = _cpu_times()
        time.sleep(window)
        after = _cpu_times()
    except (OSError, ValueError):
        try:
            return os.getloadavg()[0] <= cores - 1.0
        except OSError:
            return False
    total = after[0] - before[0]
    idle = (after[1] - before[1]) / total * cores if total > 0 else 0.0
    return idle >= 1.0 + IDLE_CORES


#: the idle share of a core, beyond this process's own, that the second process needs
IDLE_CORES = 0.75


def _cpu_times():
    """``(total, idle)`` jiffies of all cores (``/proc/stat``'s first line; idle and
    iowait count as idle)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    if not fields or fields[0] != "cpu":
        raise ValueError("/proc/stat has no cpu line")
    ticks = [int(x) for x in fields[1:]]
    return sum(ticks[:8]), ticks[3] + ticks[4]  # (guest time is inside user time)


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


#: longest wait for a kernel the second process is compiling [s] (the robust search
#: takes ~30 s on a 2-core machine; past this, this process compiles it itself)
_WAIT_S = 300.0


def report_progress(lock):
    """In the second process: write into ``lock`` the name of each kernel it starts to
    compile (the outermost compilations only: the kernels inside one are cached with it).
    The previous name stays until the next one starts, after numba saved the kernel.
    Returns the listener (``numba.core.event.unregister("numba:compile", it)`` ends it)."""
    import os

    from numba.core import event

    depth = [0]

    class _Writer(event.Listener):
        def on_start(self, ev):
            depth[0] += 1
            if depth[0] == 1:
                name = _kernel_name(ev.data["dispatcher"])
                tmp = f"{lock}.{os.getpid()}"
                try:
                    with open(tmp, "w") as f:
                        f.write(name)
                    os.replace(tmp, lock)
                except OSError:
                    pass

        def on_end(self, ev):
            depth[0] -= 1

    writer = _Writer()
    event.register("numba:compile", writer)
    return writer


def _kernel_name(dispatcher):
    func = getattr(dispatcher, "py_func", None)
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"


def _wait_for_shared(proc, lock):
    """In this process: when a kernel of this package misses the cache while the second
    process ``proc`` is compiling it (its name in ``lock``), wait until that process has
    moved on (or ended, or ``_WAIT_S`` passed) and load it from the cache again; see the
    module notes. Each jitted function of the package's modules imported so far gets
    the wait on its cache's lookup; a numba without that lookup gets none (this process
    then compiles the kernel itself, as before)."""
    import sys

    from numba.core.dispatcher import Dispatcher

    for mod_name, module in list(sys.modules.items()):
        if not mod_name.startswith("contact_lcp.") or module is None:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher):
                _patient(value, proc, lock)


def _patient(dispatcher, proc, lock):
    """Wrap ``dispatcher``'s cache lookup with the wait of :func:`_wait_for_shared`."""
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is None or getattr(load, "_waits", False):
        return
    name = _kernel_name(dispatcher)

    def load_overload(sig, target_context):
        found = load(sig, target_context)
        if found is None and _compiling(proc, lock) == name:
            _wait(proc, lock, name)
            found = load(sig, target_context)
        return found

    load_overload._waits = True
    cache.load_overload = load_overload


def _compiling(proc, lock):
    """The kernel the second process is compiling, or None (it ended, or says nothing)."""
    if proc.poll() is not None:
        return None
    try:
        with open(lock) as f:
            return f.read().strip() or None
    except OSError:
        return None


def _wait(proc, lock, name):
    import time

    start = time.monotonic()
    while _compiling(proc, lock) == name and time.monotonic() < start + _WAIT_S:
        time.sleep(0.05)
    _STATS["waited_s"] += time.monotonic() - start
