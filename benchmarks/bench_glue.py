"""What a step's Python orchestration costs: the step against a replay of its own calls.

Usage::

    .venv/bin/python benchmarks/bench_glue.py                       # the four scenes
    .venv/bin/python benchmarks/bench_glue.py --scenes go1_stand --steps 2000

A step is Python code that calls compiled kernels (numba) and Pinocchio. This records,
for each scene after ``--settle`` steps, every kernel and Pinocchio call one step makes
with its arguments, and then times the step (``step_us``) against replaying those calls
back to back with the same arguments from a plain loop (``floor_us``: what the step's
numerical work costs, numba's dispatch of each call included). ``glue_us`` is the
difference: what the step spends in Python around its kernels (calls between its
stages, the arrays and records it builds, argument lists). A pipeline that called its
stage kernels from one short Python function would spend close to the floor.

Chunks of steps and of replays alternate (``--chunks`` of each, ``--steps`` steps per
chunk), so that both see the same machine; the medians over chunks are reported.
``pinocchio_us`` times the floor's Pinocchio calls replayed alone, ``kernels_us`` is the
rest of the floor (the numba kernels with their dispatch). ``python_calls`` are the Python-level calls a step makes (cProfile's count, the numba
dispatcher calls among them: the issue's "Python calls per step"); ``kernels`` and
``pinocchio`` count the calls the floor replays. The replayed arguments are those of
the recorded step, so the floor is exact for the steps that take the same path (a
standing robot, a resting tower: every step after the settle).

``compiled_us`` is what the same work costs when the kernels run from compiled code: the
Pinocchio calls replayed from Python as in the floor, and each run of kernel calls
between two of them (a segment) replayed ``--steps`` times inside one compiled loop that
makes those calls in order (generated per segment; its compile, ~10 s for a robot's
15 kernels, is outside the timing). No crossing from Python into a kernel and no
boxing of the arrays the kernels return is in it, as in a step whose stages call each
other inside compiled code; the Pinocchio calls still cross.

``outside_us`` is the part of ``Simulator.step`` outside ``Stepper.step`` (the control
law, the step's budget, statistics and records, the closing kinematics call: Pinocchio's
``computeGeneralizedGravity`` and ``computeJointJacobians`` among them), from one more
chunk of steps per round with ``Stepper.step`` timed on its own: what a compiled stepper
would leave around it. CSV in ``benchmarks/results/``.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

import common  # noqa: E402
from bench_sim_ours import python_calls_per_step  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.sim import Simulator  # noqa: E402

SCENES = ("talos_stand", "go1_stand", "humanoid_stand", "tower_5")
COLUMNS = ("scene", "steps", "step_us", "floor_us", "kernels_us", "pinocchio_us", "glue_us",
           "glue_share", "compiled_us", "outside_us", "python_calls", "kernels", "pinocchio",
           "revision", "date", "load1")


#: the types of Pinocchio's compiled functions (Boost.Python's; a builtin in case)
_BOUND = {("Boost.Python", "function"), ("builtins", "builtin_function_or_method")}


class CallRecorder:
    """While :meth:`recording`, every call of a numba kernel of ``contact_lcp`` (the
    module attributes that are dispatchers) and of a Pinocchio function is kept with
    its arguments in :attr:`calls`; outside it the modules hold their own objects."""

    def __init__(self):
        self.calls = []
        self._swapped = []

    def _wrap(self, fn, kind):
        calls = self.calls

        def recorded(*args, **kwargs):
            calls.append((kind, fn, args, kwargs))
            return fn(*args, **kwargs)
        return recorded

    def __enter__(self):
        for name, module in list(sys.modules.items()):
            if not name.startswith("contact_lcp") or module is None:
                continue
            for attr, value in list(vars(module).items()):
                if isinstance(value, CPUDispatcher):
                    self._swapped.append((module, attr, value))
                    setattr(module, attr, self._wrap(value, "kernel"))
        for attr in dir(pin):
            value = getattr(pin, attr)
            kind = type(value)
            if not attr.startswith("_") and (kind.__module__, kind.__name__) in _BOUND:
                self._swapped.append((pin, attr, value))
                setattr(pin, attr, self._wrap(value, "pinocchio"))
        return self

    def __exit__(self, *exc):
        for module, attr, value in reversed(self._swapped):
            setattr(module, attr, value)
        self._swapped.clear()
        return False


def replay(calls):
    """Call each recorded ``(kind, fn, args, kwargs)`` again, in order."""
    for _, fn, args, kwargs in calls:
        fn(*args, **kwargs)


def segments(calls):
    """The recorded calls as ``("pinocchio", call)`` and ``("kernels", [call, ...])``
    items in order: each run of kernel calls between two Pinocchio calls is one item."""
    out = []
    for call in calls:
        if call[0] == "pinocchio":
            out.append(("pinocchio", call))
        elif out and out[-1][0] == "kernels":
            out[-1][1].append(call)
        else:
            out.append(("kernels", [call]))
    return out


def compiled_segment(calls):
    """``(loop, arguments)``: ``loop(n, *arguments)`` makes the kernel ``calls`` (recorded
    ``(kind, fn, args, kwargs)``, no keywords) in order, ``n`` times, inside compiled
    code."""
    from numba import njit

    if any(kwargs for *_, kwargs in calls):
        raise ValueError("a recorded kernel call with keyword arguments")
    pairs = ", ".join(f"f{i}, a{i}" for i in range(len(calls)))
    body = "".join(f"        f{i}(*a{i})\n" for i in range(len(calls)))
    namespace = {}
    exec(f"def loop(n, {pairs}):\n    for _ in range(n):\n{body}    return n\n", namespace)
    arguments = tuple(x for _, fn, args, _ in calls for x in (fn, args))
    return njit(namespace["loop"]), arguments


def compiled_plan(calls):
    """``[(loop, arguments)]``: :func:`compiled_segment` of each segment of ``calls``,
    compiled."""
    plan = []
    for kind, item in segments(calls):
        if kind == "kernels":
            loop, arguments = compiled_segment(item)
            loop(1, *arguments)  # (its compile outside the timing)
            plan.append((loop, arguments))
    return plan


def compiled_replay(plan, pinocchio, steps):
    """Seconds per step of a replay with each segment of kernel calls inside compiled
    code (``compiled_us``, module notes): the ``plan``'s loops ``steps`` times each, and
    the ``pinocchio`` calls ``steps`` times from Python."""
    t0 = time.perf_counter()
    for loop, arguments in plan:
        loop(steps, *arguments)
    for _ in range(steps):
        replay(pinocchio)
    return (time.perf_counter() - t0) / steps


def outside_stepper(sim, steps):
    """Seconds per step of ``sim.step()`` spent outside ``sim.stepper.step`` (over
    ``steps`` steps, the stepper's own call timed on its own)."""
    stepper = sim.stepper
    inner, clock = stepper.step, time.perf_counter
    spent = [0.0]

    def timed(*args, **kwargs):
        t = clock()
        out = inner(*args, **kwargs)
        spent[0] += clock() - t
        return out

    stepper.step = timed
    try:
        t0 = clock()
        for _ in range(steps):
            sim.step()
        return (clock() - t0 - spent[0]) / steps
    finally:
        del stepper.step  # (the class's method again)


def measure(name, steps, chunks, settle):
    """One scene's row: ``step_us``, ``floor_us`` (medians over the chunks) and counts."""
    sim = Simulator.from_file(os.path.join(ROOT, "config", name + ".yaml"))
    for _ in range(settle):
        sim.step()
    with CallRecorder() as rec:
        sim.step()
    calls = rec.calls
    pinocchio = [c for c in calls if c[0] == "pinocchio"]
    replay(calls)  # (any first-call cost outside the timing)
    plan = compiled_plan(calls)
    step_t, floor_t, pin_t, compiled_t, outside_t = [], [], [], [], []
    for _ in range(chunks):
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step()
        t1 = time.perf_counter()
        for _ in range(steps):
            replay(calls)
        t2 = time.perf_counter()
        for _ in range(steps):
            replay(pinocchio)
        t3 = time.perf_counter()
        compiled_t.append(compiled_replay(plan, pinocchio, steps))
        outside_t.append(outside_stepper(sim, steps))
        step_t.append((t1 - t0) / steps)
        floor_t.append((t2 - t1) / steps)
        pin_t.append((t3 - t2) / steps)
    step_us, floor_us = 1e6 * float(np.median(step_t)), 1e6 * float(np.median(floor_t))
    pinocchio_us = 1e6 * float(np.median(pin_t))
    return {"scene": name, "steps": steps * chunks, "step_us": step_us, "floor_us": floor_us,
            "pinocchio_us": pinocchio_us, "kernels_us": floor_us - pinocchio_us,
            "glue_us": step_us - floor_us, "glue_share": (step_us - floor_us) / step_us,
            "compiled_us": 1e6 * float(np.median(compiled_t)),
            "outside_us": 1e6 * float(np.median(outside_t)),
            "python_calls": python_calls_per_step(sim, min(steps, 500)),
            "kernels": sum(kind == "kernel" for kind, *_ in calls),
            "pinocchio": sum(kind == "pinocchio" for kind, *_ in calls)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", nargs="+", default=list(SCENES))
    parser.add_argument("--steps", type=int, default=1000, help="steps per chunk")
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--settle", type=int, default=300)
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    rows = []
    for name in args.scenes:
        row = measure(name, args.steps, args.chunks, args.settle)
        row.update(revision=revision, date=date, load1=os.getloadavg()[0])
        rows.append(row)
    print(common.format_table(rows, COLUMNS[:-3]))
    print(common.write_csv(common.results_path("bench_glue", revision, stamp,
                                               args.results_dir), rows, COLUMNS))


if __name__ == "__main__":
    main()
