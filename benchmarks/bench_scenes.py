#!/usr/bin/env python3
"""Every bundled scene for its whole duration: failures, fallbacks and the slowest step.

Usage::

    .venv/bin/python benchmarks/bench_scenes.py                      # every scene but the two of minutes (~2 min)
    .venv/bin/python benchmarks/bench_scenes.py --all                # with the 200-sphere pour and nut (~1.5 min more)
    .venv/bin/python benchmarks/bench_scenes.py hoist ring --duration 2

Runs each ``config/<scene>.yaml`` with its own settings for its ``duration`` (or
``--duration`` seconds, whichever is shorter) and writes one row per scene: steps, mean
and slowest wall time per step (the first step, which may compile, left out), when the
slowest ran and the rungs of the contact model's ladder it took, what the run summary
counts (failed solves, fallbacks, safe stops, uncertified steps) and whether a step
stopped the run (``SimulationError``: its message). A rare slow or failed step of a long
run is what a median over a few hundred steps hides (a pile step that needs the relaxed
model's dense polish, one uncertified LCP of a chain in 10 000 steps). ``--all`` adds the
scenes that take minutes (the 200-sphere pour and the 200-grain Brazil nut). CSV in
``benchmarks/results/bench_scenes_<stamp>_<revision>.csv``.
"""

import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.sim import SimulationError, Simulator  # noqa: E402

COLUMNS = ("scene", "h", "duration", "steps", "wall_s", "step_ms", "slowest_ms", "slowest_t",
           "slowest_rungs", "solves", "pivots", "failures", "fallbacks", "safe_stops",
           "uncertified", "stopped", "revision", "date", "load1")
#: scenes of minutes, run only with ``--all``
LONG = ("spheres_200", "brazil_nut")
#: files of config/ that are not scenes
NOT_SCENES = ("contact_lcp.params",)


def bundled(include_long=False):
    """The names of the bundled scenes (``config/*.yaml``), sorted."""
    names = sorted(os.path.splitext(os.path.basename(p))[0]
                   for p in glob.glob(os.path.join(ROOT, "config", "*.yaml")))
    return [n for n in names if n not in NOT_SCENES and (include_long or n not in LONG)]


def run(scene, duration=None):
    """One row: ``config/<scene>.yaml`` for its duration, or ``duration`` [s] if shorter."""
    sim = Simulator.from_file(os.path.join(ROOT, "config", f"{scene}.yaml"))
    seconds = sim.scene.duration if duration is None else min(duration, sim.scene.duration)
    steps = int(round(seconds / sim.h))
    total, later, slowest, stopped = 0.0, 0.0, (0.0, None, ""), ""
    for i in range(steps):
        t = time.perf_counter()
        try:
            info = sim.step()
        except SimulationError as e:  # the row says where and why; the other rows run
            steps, stopped = i, str(e)
            break
        dt = time.perf_counter() - t
        total += dt
        if i:  # (the first step may compile)
            later += dt
            if dt > slowest[0]:
                slowest = (dt, sim.t, info.lcp_rungs)
    s = sim.stats
    return dict(scene=scene, h=sim.h, duration=seconds, steps=steps, wall_s=total,
                step_ms=1e3 * later / max(steps - 1, 1), slowest_ms=1e3 * slowest[0],
                slowest_t=slowest[1], slowest_rungs=slowest[2], solves=s.solves,
                pivots=s.pivots_total, failures=s.lcp_failures, fallbacks=s.fallbacks,
                safe_stops=s.safe_stops, uncertified=s.uncertified, stopped=stopped)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenes", nargs="*", help="scene names (config/<name>.yaml); "
                        "default: every bundled scene")
    parser.add_argument("--all", action="store_true",
                        help=f"with the scenes of minutes too ({', '.join(LONG)})")
    parser.add_argument("--duration", type=float, default=None,
                        help="at most this many simulated seconds of each scene")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    names = args.scenes or bundled(args.all)
    unknown = sorted(set(names) - set(bundled(True)))
    if unknown:
        parser.error(f"expected bundled scene names ({', '.join(bundled(True))}); "
                     f"received {', '.join(unknown)}")
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    load1 = os.getloadavg()[0]
    rows = []
    for name in names:
        row = run(name, args.duration)
        row.update(revision=revision, date=date, load1=load1)
        rows.append(row)
        when = "" if row["slowest_t"] is None else f" at t = {row['slowest_t']:.3f} s"
        print(f"{name:16s} {row['steps']:5d} steps in {row['wall_s']:7.2f} s, slowest "
              f"{row['slowest_ms']:8.1f} ms{when}, failures {row['failures']}, fallbacks "
              f"{row['fallbacks']}, safe stops {row['safe_stops']}, uncertified "
              f"{row['uncertified']}" + (f"; stopped: {row['stopped']}" if row["stopped"]
                                          else ""), flush=True)
    print(common.format_table(rows, ("scene", "steps", "wall_s", "step_ms", "slowest_ms",
                                     "slowest_t", "failures", "fallbacks", "safe_stops",
                                     "uncertified")))
    path = common.results_path("bench_scenes", revision, stamp, args.results_dir)
    common.write_csv(path, rows, COLUMNS)
    print(f"machine load (1 min) at start: {load1:.2f}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
