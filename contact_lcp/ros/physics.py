"""The physics thread: steps one Simulator at a target real-time factor.

Threading design
----------------
The thread *owns* the simulator: no other thread calls it. ROS callbacks hand it work
with :meth:`PhysicsLoop.submit` (a function of the simulator, run between two steps,
answered through a ``concurrent.futures.Future``), and periodic work (the publishers)
is registered with :meth:`PhysicsLoop.every` and run by the thread itself between
steps when due, on sim time (state streams) or wall time (markers, diagnostics).
Compared with a lock around the simulator this needs no fairness (a physics loop that
re-takes a plain lock right after releasing it starves the publisher), every snapshot
is of one single step, and the loop serves requests while it waits for the wall clock,
so a paused simulator still answers at once.
Stepping is CPU-bound Python holding the GIL, so a MultiThreadedExecutor (or a publish
timer in another thread) adds no parallelism, only hand-offs: measured on the legged
frame, a 100 Hz executor timer that fetched snapshots from this thread cost ~14 % of a
core, publishing from here ~5 % (benchmarks/bench_node.py).

Sim-time rates
--------------
The state streams are published every ``1/publish_rate`` s of *sim* time, as Gazebo's
``update_rate``: a node on ``use_sim_time`` sees them at that rate whatever the speed,
the samples are the same on any machine, and publishing costs a fixed share of the
stepping (a wall-clock rate would publish after nearly every step of a simulation
running at a tenth of real time, and sample a fast one too sparsely).

Time
----
``time`` (what /clock publishes) is ``offset + sim.t``; a reset or a new simulator adds
the old ``sim.t + h`` to ``offset`` so the clock never goes back. No rclpy here.
"""

import collections
import contextlib
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Optional

#: Behind the wall clock by more than this [s], the loop stops trying to catch up.
MAX_LAG = 0.2
#: Window [s] over which the achieved real-time factor is measured.
RTF_WINDOW = 1.0


@dataclass(frozen=True)
class Snapshot:
    """What the publishers need from one step, copied in the physics thread.

    ``time`` [s] is the monotonic ROS time; ``joints`` a ``JointState``; ``base`` a
    ``BaseState`` or ``None``; ``wrenches`` link -> (6,) contact wrench in the link frame;
    ``contacts``/``shapes`` lists (empty unless asked for); ``info`` the last
    ``StepInfo`` (``None`` before the first step); ``stats`` the ``SimStats``.
    """

    time: float
    joints: object
    base: object
    wrenches: dict
    contacts: list
    shapes: list
    info: object
    stats: object
    real_time_factor: float
    paused: bool
    finished: bool
    error: str


class PhysicsLoop:
    """Step ``sim`` in a thread at ``real_time_factor`` (<= 0: as fast as possible).

    Parameters
    ----------
    sim : contact_lcp.sim.Simulator
    real_time_factor : float
        Target sim seconds per wall second.
    paused : bool
        Start paused.
    duration : float, optional
        Stop stepping (``finished`` is set) once ``time`` reaches this [s].
    on_error : callable, optional
        ``on_error(exc)`` from the physics thread when a step raises; the loop pauses.
    on_task_error : callable, optional
        ``on_task_error(exc)`` when a periodic task raises (the task stays scheduled).
    """

    def __init__(self, sim, *, real_time_factor=1.0, paused=False, duration=None,
                 on_error=None, on_task_error=None, wall_clock=time.monotonic):
        self._sim = sim
        self._rtf = float(real_time_factor)
        self._paused = bool(paused)
        self._duration = duration
        self._on_error = on_error
        self._wall = wall_clock
        self._ops = queue.SimpleQueue()
        self._stop = threading.Event()
        self.finished = threading.Event()
        self._offset = 0.0
        self._info = None
        self._error = ""
        self._stepped = 0.0  # sim seconds stepped while running, for the achieved factor
        self._window = collections.deque(maxlen=64)
        self._tasks = []  # Task objects, touched by the physics thread only
        #: CPU seconds of the physics thread in steps, periodic tasks and submitted ops
        self.cpu = {"steps": 0.0, "tasks": 0.0, "ops": 0.0}
        self._on_task_error = on_task_error
        self._yielding = 0  # threads inside yielding(): the loop lets them run
        self._yield_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="contact_lcp_physics",
                                        daemon=True)

    @contextlib.contextmanager
    def yielding(self):
        """While a thread is in this block, the loop releases the GIL after every step it
        does not wait for. Stepping flat out (``real_time_factor`` 0, or behind its
        target) the loop otherwise holds the GIL but for the interpreter's switch
        interval, and a thread that releases it often (loading a robot, a loader child's
        pipe) waits that interval to get it back each time, so a new robot description
        is adopted many times slower. Releasing it every step costs a flat-out loop
        about half its rate, so it happens only while asked."""
        with self._yield_lock:
            self._yielding += 1
        try:
            yield
        finally:
            with self._yield_lock:
                self._yielding -= 1

    # -- seen from other threads ------------------------------------------------------
    @property
    def time(self):
        """Current ROS time [s] (monotonic across resets)."""
        return self._now

    @property
    def real_time_factor(self):
        """Achieved sim seconds per wall second over the last ~second."""
        if len(self._window) < 2:
            return 0.0
        (w0, s0), (w1, s1) = self._window[0], self._window[-1]
        return (s1 - s0) / (w1 - w0) if w1 > w0 else 0.0

    @property
    def last_info(self):
        """The :class:`StepInfo` of the last step (None before the first); read it in
        the physics thread (a task) to have the one of the simulator a task gets."""
        return getattr(self, "_info", None)

    @property
    def paused(self):
        """True while the physics is paused (by request or after a failed step)."""
        return self._paused

    @property
    def running(self):
        """True while the physics thread is alive."""
        return self._thread.is_alive()

    def start(self):
        """Start the physics thread."""
        self._now = self._offset + self._sim.t
        self._sample(force=True)
        self._thread.start()

    def stop(self, timeout=5.0):
        """Ask the thread to end and wait for it (at most ``timeout`` s)."""
        self._stop.set()
        self._ops.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def submit(self, fn):
        """Run ``fn(sim)`` in the physics thread between two steps; return a Future."""
        fut = Future()
        if self._stop.is_set():
            fut.set_exception(RuntimeError("the physics loop has stopped"))
        else:
            self._ops.put((fn, fut))
        return fut

    def every(self, period, fn, clock="wall"):
        """Call ``fn(sim)`` in the physics thread every ``period`` seconds.

        ``clock='wall'``: on the wall clock, between steps and while paused; a call is
        late by at most one step, and periods missed in a long step are skipped, not
        made up. ``clock='sim'``: after the step that reaches each multiple of
        ``period`` of sim time (so the same states on any machine, at any speed), and
        on the wall clock while paused or finished, so the stream goes on; after a
        reset, a new simulator or a single step it runs at once. Returns a
        :class:`Task` whose ``cancel()`` stops it (it may run once more meanwhile).
        """
        if clock not in ("wall", "sim"):
            raise ValueError(f"clock must be 'wall' or 'sim', got {clock!r}")
        task = Task(self, fn, float(period), clock)
        self.submit(lambda sim: self._tasks.append(task))
        return task

    def set_paused(self, paused):
        """Future: pause or resume stepping."""
        return self.submit(lambda sim: self._set("_paused", bool(paused)))

    def set_real_time_factor(self, rtf):
        """Future: a new target real-time factor (<= 0: as fast as possible)."""
        return self.submit(lambda sim: self._set("_rtf", float(rtf)))

    def step_once(self):
        """Future of the StepInfo of exactly one step; fails unless paused."""
        def op(sim):
            if not self._paused:
                raise RuntimeError("not paused: ~/step works only while paused")
            if self.finished.is_set():
                raise RuntimeError("the requested duration has been simulated")
            info = self._step()
            self._state_changed()
            return info
        return self.submit(op)

    @property
    def error(self):
        """Why the last step failed ('' when it did not, or since a reset)."""
        return self._error

    def reset(self, resume_after_error=True):
        """Future: back to the scene's initial state, with the clock still moving forward.

        Its result is the error the loop was stopped by ('' if none); after an error,
        with ``resume_after_error``, stepping resumes (a reset after a failed step means
        "start again"; a pause asked for by the user stays).
        """
        def op(sim):
            error = self._error
            self._offset += sim.t + sim.h
            sim.reset()
            self._restart()
            if error and resume_after_error:
                self._paused = False
            return error
        return self.submit(op)

    def replace_simulator(self, new_sim, then=None):
        """Future: carry on with ``new_sim`` (rebuilt scene), the clock moving forward.

        ``then()`` runs in the same op, before any task sees the new simulator.
        """
        def op(sim):
            self._offset += sim.t + sim.h
            self._sim = new_sim
            if then is not None:
                then()
            self._restart()
        return self.submit(op)

    def change_simulator(self, make, then=None):
        """Future: carry on with ``make(sim)``, a simulator that continues ``sim``'s state
        and time (an entity added or removed), built in the physics thread between two
        steps so that no step is lost. ``then(new_sim)`` runs in the same op, before any
        task sees the new simulator; the future's result is ``new_sim``."""
        def op(sim):
            new_sim = make(sim)
            if then is not None:
                then(new_sim)
            self._offset += sim.t - new_sim.t  # (the same sim time: no jump)
            self._sim = new_sim
            self._restart()
            return new_sim
        return self.submit(op)

    def step_many(self, n):
        """Future: exactly ``n`` steps while paused (their count is the result)."""
        def op(sim):
            if not self._paused:
                raise RuntimeError("not paused: stepping works only while paused")
            self._paused = False  # sim-clock tasks run on sim time, as when playing
            try:
                for i in range(n):
                    if self.finished.is_set():
                        raise RuntimeError(f"the requested duration has been simulated after {i} steps")
                    self._step()
                    if self._error:
                        raise RuntimeError(f"step {i + 1} of {n} failed: {self._error}")
                    self._run_tasks()
            finally:
                self._paused = True
            return n
        return self.submit(op)

    def snapshot(self, wrench_links=(), *, contacts=False, shapes=False):
        """Future of a :class:`Snapshot` of the current state."""
        return self.submit(lambda sim: self.take_snapshot(
            sim, wrench_links, contacts=contacts, shapes=shapes))

    def take_snapshot(self, sim, wrench_links=(), *, contacts=False, shapes=False):
        """:class:`Snapshot` of ``sim``; only from the physics thread (a task or an op)."""
        return Snapshot(
            time=self.time,
            joints=sim.joint_state(),
            base=_first_base(sim),
            wrenches=sim.link_wrenches(wrench_links, "local"),
            contacts=sim.contacts() if contacts else [],
            shapes=sim.collision_shapes() if shapes else [],
            info=self._info,
            stats=sim.stats,
            real_time_factor=self.real_time_factor,
            paused=self._paused,
            finished=self.finished.is_set(),
            error=self._error,
        )

    # -- the thread -------------------------------------------------------------------
    def _set(self, attr, value):
        setattr(self, attr, value)
        self._anchor = None

    def _restart(self):
        self._info = None
        self._error = ""
        self._now = self._offset + self._sim.t  # one assignment: readers never see a dip
        self._anchor = None
        self._state_changed()

    def _state_changed(self):
        """Let sim-clock tasks run at once (a reset, a new simulator, a single step)."""
        for task in self._tasks:
            if task.clock == "sim":
                task.due, task.due_wall = self._now, -float("inf")

    def _idle(self):
        return self._paused or self.finished.is_set()

    def _run(self):
        self._anchor = None  # (wall, time) from which the target factor is kept
        self._serve(None)  # tasks registered before start: run them on the initial state
        self._run_tasks()
        while not self._stop.is_set():
            if self._idle():
                self._anchor = None
                self._serve(self._wall() + 0.1)
                continue
            self._serve(None)
            if self._idle() or self._stop.is_set():
                continue
            if self._anchor is None:
                self._anchor = (self._wall(), self.time)
            self._step()
            self._run_tasks()
            waited = False
            if self._rtf > 0.0 and self._anchor is not None:
                due = self._anchor[0] + (self.time - self._anchor[1]) / self._rtf
                lag = self._wall() - due
                if lag < 0.0:
                    self._serve(due)
                    waited = True
                elif lag > MAX_LAG:
                    self._anchor = None  # cannot keep up: do not try to make it back
            if self._yielding and not waited:
                time.sleep(0.0)  # (see yielding)
        self._fail_pending()

    def _run_tasks(self):
        """Run the due tasks; return the wall time at which the next one is due."""
        now = self._wall()
        self._sample(now)
        idle = self._idle()
        next_wall = float("inf")
        for task in self._tasks:
            if task.clock == "sim" and not idle:
                if self._now >= task.due - 1e-9:
                    task.due += task.period
                    if task.due <= self._now + 1e-9:  # period < h, or time jumped
                        task.due = self._now + task.period
                    task.due_wall = now + task.period
                    self._run_task(task)
                continue
            if now >= task.due_wall:
                task.due_wall += task.period
                if task.due_wall <= now:  # late by a period or more: skip, never bunch
                    task.due_wall = now + task.period
                self._run_task(task)
            next_wall = min(next_wall, task.due_wall)
        return next_wall

    def _run_task(self, task):
        c0 = time.thread_time()
        try:
            task.fn(self._sim)
        except Exception as e:
            if self._on_task_error is not None:
                self._on_task_error(e)
        self.cpu["tasks"] += time.thread_time() - c0

    def _step(self):
        c0 = time.thread_time()
        try:
            self._info = self._sim.step()
        except Exception as e:  # the thread must not die; SimulationError is the usual one
            self._paused = True
            self._error = f"{type(e).__name__}: {e}"
            if self._on_error is not None:
                self._on_error(e)
            return None
        self.cpu["steps"] += time.thread_time() - c0
        self._error = ""  # stepping again after an error, successfully
        self._now = self._offset + self._sim.t
        self._stepped += self._sim.h
        if self._duration is not None and self.time >= self._duration - 1e-9:
            self.finished.set()
        return self._info

    def _serve(self, until):
        """Run queued ops; with ``until`` (wall time), serve them and due tasks until then."""
        while True:
            if until is None:
                timeout = 0.0
            else:
                next_task = self._run_tasks()
                timeout = min(until, next_task) - self._wall()
                if until - self._wall() <= 0.0:
                    timeout = 0.0
            try:
                item = self._ops.get(timeout=timeout) if timeout > 0.0 else self._ops.get_nowait()
            except queue.Empty:
                if until is None or self._wall() >= until:
                    return
                continue
            if item is None:
                return
            fn, fut = item
            if fut.set_running_or_notify_cancel():
                c0 = time.thread_time()
                try:
                    fut.set_result(fn(self._sim))
                except Exception as e:
                    fut.set_exception(e)
                self.cpu["ops"] += time.thread_time() - c0

    def _sample(self, now=None, force=False):
        now = self._wall() if now is None else now
        if force or not self._window or now - self._window[-1][0] >= RTF_WINDOW / 20:
            self._window.append((now, self._stepped))
            while len(self._window) > 2 and now - self._window[1][0] >= RTF_WINDOW:
                self._window.popleft()

    def _fail_pending(self):
        while True:
            try:
                item = self._ops.get_nowait()
            except queue.Empty:
                return
            if item is not None and item[1].set_running_or_notify_cancel():
                item[1].set_exception(RuntimeError("the physics loop has stopped"))

    _now: float = 0.0
    _anchor: Optional[tuple] = None


def _first_base(sim):
    """``sim.base_state()`` of the first robot; None without robots (free bodies only)."""
    robots = getattr(getattr(sim, "world", None), "robots", None)
    return None if robots is not None and not robots else sim.base_state()


class Task:
    """A periodic task of a :class:`PhysicsLoop` (see :meth:`PhysicsLoop.every`)."""

    def __init__(self, loop, fn, period, clock):
        self._loop, self.fn, self.period, self.clock = loop, fn, period, clock
        self.due = loop.time  # sim time of the next call (clock 'sim')
        self.due_wall = -float("inf")  # wall time of the next call: at once

    def cancel(self):
        """Future done once the task is off the schedule."""
        def op(sim):
            tasks = self._loop._tasks
            tasks[:] = [t for t in tasks if t is not self]
        return self._loop.submit(op)
