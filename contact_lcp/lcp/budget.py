"""The wall-time budget of a solve, and how Ctrl-C reaches its compiled pivot loops.

A compiled (numba) loop holds the GIL and never looks at Python's signal flags, so a
dense n = 5 000 search ignored SIGINT for over a minute, and a timer could not even run.
Every long compiled loop therefore takes a one-element ``stop`` array and returns
(status ``tableau.STOPPED``) at its next pivot or node once ``stop[0]`` is nonzero.
From :data:`THREAD_MIN_N` rows on such a kernel runs in a worker thread (one per calling
thread, kept; the kernel's entry point is compiled ``nogil``) while the calling thread
waits for it in :data:`POLL` slices: a KeyboardInterrupt raised there, by a real SIGINT
or by ``_thread.interrupt_main()``, sets ``stop`` (the worker ends within one pivot,
O(n^2)) and is re-raised at once; a passed deadline sets it too and the method reports
``LCPStatus.TIME_LIMIT``. Smaller kernels run in the calling thread (the hand-over costs
~40 us; their pivot budgets bound them to well under a second), and the
Python-level loops (the revised path, Murty, PGS, the robust method's stages, the
further attempts of ``solve_with_retries``) test :func:`expired` between steps.

:func:`contact_lcp.lcp.solve` opens one :class:`Budget` per call (:func:`opened`); a
method called on its own runs under an unlimited one. Time that numba spends compiling
kernels does not count: a process's first solve compiles for seconds to minutes (a cold
cache), which is no part of the problem.
"""

import math
import queue
import threading
import time

import numpy as np
from numba.core import event as numba_event

#: values of ``stop[0]``
GO, INTERRUPTED, OUT_OF_TIME = 0, 1, 2

#: kernels of at least this many rows run in a worker thread (see the module notes)
THREAD_MIN_N = 200

#: how often the waiting thread looks at the clock and lets signals in [s]
POLL = 0.02


def default_time_limit(n):
    """``5 s + 2 us n^2``. A dense pivot costs O(n^2) (0.2-0.6 ms at n = 1 000 here), so
    the limit lets a dense n = 1 000 LCP (7 s) take some 10-30 n pivots and an n = 5 000
    one (55 s) a few thousand, far more than the O(n) that solvable dense problems take:
    a dense random LCP without a certifiable answer ends in seconds instead of minutes
    (n = 1 000: 79 s to MAX_PIVOTS before) or hours (n = 5 000). Sparse contact LCPs
    pivot far cheaper; a caller that knows a solve may legitimately take longer (the
    200-sphere pour's worst LCP took 539 290 sparse pivots, ~160 s) passes its own
    ``time_limit`` to :func:`contact_lcp.lcp.solve`, ``math.inf`` for none."""
    return 5.0 + 2e-6 * float(n) * float(n)


class _CompileClock(numba_event.Listener):
    """Total seconds numba has spent compiling (nested compilations counted once; numba
    compiles under one global lock, so one counter serves every thread)."""

    def __init__(self):
        self.depth = 0
        self.total = 0.0
        self.began = 0.0

    def on_start(self, event):
        if self.depth == 0:
            self.began = time.monotonic()
        self.depth += 1

    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0:
            self.total += time.monotonic() - self.began

    def seconds(self):
        return self.total + (time.monotonic() - self.began if self.depth else 0.0)


_COMPILING = _CompileClock()
numba_event.register("numba:compile", _COMPILING)


class Budget:
    """A solve's deadline and the ``stop`` flag of its kernels."""

    def __init__(self, time_limit=math.inf):
        self.time_limit = float(time_limit)
        self.start = time.monotonic()
        self.compiled = _COMPILING.seconds()
        self.stop = np.zeros(1, dtype=np.int64)

    def expired(self):
        """Whether the time limit has been spent (and then ``stop`` says so)."""
        if self.stop[0] == GO and self.elapsed() >= self.time_limit:
            self.stop[0] = OUT_OF_TIME
        return self.stop[0] != GO

    def elapsed(self):
        """Seconds since the budget was opened, numba's compilation excluded."""
        return time.monotonic() - self.start - (_COMPILING.seconds() - self.compiled)


class _Local(threading.local):
    """This thread's open budget, its reused unlimited one and its kernel worker (class
    defaults, so that reading one that was never set is an attribute read, not a
    ``getattr`` call: a step opens a budget)."""

    budget = None
    unlimited = None
    worker = None


_local = _Local()


def current():
    """The budget of the solve running in this thread (an unlimited one outside)."""
    budget = _local.budget
    return Budget() if budget is None else budget


def expired():
    """Whether the current solve's deadline has passed."""
    budget = _local.budget
    return budget is not None and budget.expired()


class opened:
    """The budget of one solve, current in this thread until the block ends (nested
    solves, e.g. a fallback method, share the outer one): ``with opened(limit) as b``.

    A class rather than a generator context (a simulation step opens one: ~7 us a step
    as a generator with a new Budget, ~1 us so; a simulator keeps one and sets its
    ``time_limit`` each step); an unlimited budget is one per thread, reused with its
    clock and ``stop`` reset."""

    __slots__ = ("time_limit", "outer")

    def __init__(self, time_limit):
        self.time_limit = time_limit
        self.outer = None

    def __enter__(self):
        outer = self.outer = _local.budget
        if outer is not None:
            return outer
        if self.time_limit == math.inf:
            budget = _local.unlimited
            if budget is None:
                budget = _local.unlimited = Budget()
            budget.start = time.monotonic()
            budget.compiled = _COMPILING.seconds()
            budget.stop[0] = GO
        else:
            budget = Budget(self.time_limit)
        _local.budget = budget
        return budget

    def __exit__(self, *exc):
        if self.outer is None:
            _local.budget = None
        return False


class _Worker:
    """One daemon thread per calling thread that runs kernels handed to it (starting a
    thread per call cost ~170 us; a hand-over through two queues ~20-40 us)."""

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        self.results = queue.SimpleQueue()
        self.count = 0  # jobs handed over; a result names its job
        self.thread = threading.Thread(target=self._serve, name="lcp-kernel", daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            job, kernel, args = self.jobs.get()
            try:
                self.results.put((job, True, kernel(*args)))
            except BaseException as e:  # handed to the waiting thread
                self.results.put((job, False, e))

    def run(self, kernel, args, budget):
        self.count += 1
        self.jobs.put((self.count, kernel, args))
        try:
            while True:
                try:
                    job, ok, out = self.results.get(timeout=POLL)
                    if job == self.count:  # (an interrupted wait left older ones)
                        break
                except queue.Empty:
                    budget.expired()
        except BaseException:
            budget.stop[0] = INTERRUPTED  # the kernel ends at its next pivot
            raise
        if not ok:
            raise out
        return out


def call(kernel, n, *args):
    """``kernel(*args, stop)`` with the current budget's ``stop``: in this thread's worker
    when ``n >= THREAD_MIN_N`` (module notes), else here. A KeyboardInterrupt (or any
    exception) while waiting stops the kernel, waits for it (one pivot) and is re-raised."""
    budget = current()
    if n < THREAD_MIN_N:
        return kernel(*args, budget.stop)
    worker = _local.worker
    if worker is None:
        worker = _local.worker = _Worker()
    return worker.run(kernel, (*args, budget.stop), budget)
