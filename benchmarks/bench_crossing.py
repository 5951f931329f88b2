#!/usr/bin/env python3
"""What a step pays to cross from Python into its compiled kernels.

A step calls the same compiled kernels every time (placements, broad phase, the closed-form
collision, the contact rows, the assembly, the contact model's first rung, the
integration...). A call from Python pays numba's dispatcher (a type check per argument)
and the boxing of every array it returns; the same call from another compiled function
pays neither. This benchmark measures that difference on the bundled scenes, to size
what a step whose stages call each other inside compiled code would save (issue 36):

1. the kernels one settled step calls from Python (a profiler sees numba's dispatchers
   as calls), with the arguments of one step's calls (each module's name for a kernel is
   wrapped for that step);
2. each call timed from Python (``timeit``, the best of five) and inside a compiled loop
   that makes the same call (its body alone: the loop compiles the kernel's existing
   machine code in, so what it measures is what a compiled caller would pay, with warm
   caches as the Python timing);
3. the scene's mean step time over ``--steps`` steps, for scale.

The CSV (``benchmarks/results/bench_crossing_<stamp>_<revision>.csv``) has one row per
kernel call (``python_us``, ``compiled_us``, the argument count) and one ``(all)`` row per
scene with the sums and the step time. Nothing here is a target.

Usage::

    .venv/bin/python benchmarks/bench_crossing.py                 # the four scenes, ~2 min
    .venv/bin/python benchmarks/bench_crossing.py --scenes go1
"""

import argparse
import cProfile
import os
import pstats
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

import common  # noqa: E402  (revision stamp, CSV, tables)
import peer_scenes  # noqa: E402

COLUMNS = ("revision", "date", "scene", "kernel", "module", "args", "calls", "python_us",
           "compiled_us", "step_us")


def _compiled_loop():
    """A compiled function calling the kernel ``f`` ``n`` times with ``args`` (a tuple),
    compiled once per kernel and argument types."""
    from numba import njit

    @njit
    def loop(f, args, n):
        for _ in range(n):
            f(*args)
        return n

    return loop


def step_kernels(sim, steps=50):
    """``{kernel: [(module, name)]}``: the compiled kernels ``sim.step()`` calls from
    Python (over ``steps`` steps), each with the module names bound to it."""
    from numba.core.registry import CPUDispatcher

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        sim.step()
    prof.disable()
    seen = {(f, line) for (f, line, _), _ in pstats.Stats(prof).stats.items()}
    kernels = {}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("contact_lcp"):
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher):
                code = value.py_func.__code__
                if (code.co_filename, code.co_firstlineno) in seen:
                    kernels.setdefault(value, []).append((module, name))
    return kernels


def captured_calls(sim, kernels):
    """``[(kernel, args)]`` of one ``sim.step()``'s calls of ``kernels``, in call order."""
    calls = []

    def wrapped(kernel):
        def call(*args):
            calls.append((kernel, args))
            return kernel(*args)
        return call

    try:
        for kernel, sites in kernels.items():
            for module, name in sites:
                setattr(module, name, wrapped(kernel))
        sim.step()
    finally:
        for kernel, sites in kernels.items():
            for module, name in sites:
                setattr(module, name, kernel)
    return calls


def best_of(fn, number, repeat=5):
    """Seconds of one call of ``fn``: the best of ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def measure_scene(name, Simulator, settle, steps, number):
    """Rows of one scene: one per kernel call of a settled step, then ``(all)``."""
    sim = Simulator.from_file(os.path.join(ROOT, peer_scenes.SCENE_FILES[name]))
    for _ in range(settle):
        sim.step()
    kernels = step_kernels(sim)
    calls = captured_calls(sim, kernels)
    loop = _compiled_loop()
    rows = []
    for kernel, args in calls:
        kernel(*args)
        loop(kernel, args, 1)  # (compiles the loop for this kernel)
        rows.append(dict(scene=name, kernel=kernel.py_func.__name__,
                         module=kernel.py_func.__module__, args=len(args), calls=1,
                         python_us=1e6 * best_of(lambda: kernel(*args), number),
                         compiled_us=1e6 * best_of(lambda: loop(kernel, args, number), 1)
                         / number))
    t0 = time.perf_counter()
    for _ in range(steps):
        sim.step()
    step_us = 1e6 * (time.perf_counter() - t0) / steps
    rows.append(dict(scene=name, kernel="(all)", module="", args=sum(r["args"] for r in rows),
                     calls=len(rows), python_us=sum(r["python_us"] for r in rows),
                     compiled_us=sum(r["compiled_us"] for r in rows), step_us=step_us))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenes", default="go1,humanoid,talos,tower",
                   help=f"comma-separated, of {sorted(peer_scenes.SCENE_FILES)}")
    p.add_argument("--settle", type=int, default=300, help="steps before the measured one")
    p.add_argument("--steps", type=int, default=2000, help="steps of the mean step time")
    p.add_argument("--number", type=int, default=500, help="calls per timing")
    p.add_argument("--results-dir", default=None, help="where the CSV goes (default "
                   "benchmarks/results)")
    args = p.parse_args(argv)
    os.chdir(ROOT)
    from contact_lcp.sim.simulator import Simulator

    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    rows = []
    for name in [s for s in args.scenes.split(",") if s]:
        if name not in peer_scenes.SCENE_FILES:
            p.error(f"unknown scene {name!r}; expected some of {sorted(peer_scenes.SCENE_FILES)}")
        print(f"[bench_crossing] {name}", file=sys.stderr, flush=True)
        try:
            scene_rows = measure_scene(name, Simulator, args.settle, args.steps, args.number)
        except ImportError as e:  # (Talos and Go1 need the example-robot-data wheel)
            print(f"[bench_crossing] {name} skipped: {e}", file=sys.stderr)
            continue
        rows += [dict(r, revision=revision, date=date) for r in scene_rows]
        total = scene_rows[-1]
        print(common.format_table(
            [dict(r, kernel=f"{r['module'].split('.')[-1]}.{r['kernel']}" if r["module"]
                  else r["kernel"]) for r in scene_rows],
            ["kernel", "args", "python_us", "compiled_us"],
            ["kernel", "args", "from Python [us]", "inside a compiled loop [us]"]))
        saved = np.clip(1.0 - total["compiled_us"] / total["python_us"], 0.0, 1.0)
        print(f"{name}: {total['calls']} kernel calls a step, {total['python_us']:.1f} us from "
              f"Python, {total['compiled_us']:.1f} us compiled ({saved:.0%} less); the step "
              f"{total['step_us']:.1f} us\n")
    path = common.write_csv(common.results_path("bench_crossing", revision, stamp,
                                                args.results_dir), rows, COLUMNS,
                            float_format="%.4g")
    print(f"wrote {os.path.relpath(path, os.getcwd())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
