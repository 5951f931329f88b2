#!/usr/bin/env python3
"""Stacks and piles at h = 10 ms and 50 ms: failures, fallbacks, penetration, time (issue 10).

Usage::

    .venv/bin/python benchmarks/bench_stacks.py                  # 5 s of each, both steps
    .venv/bin/python benchmarks/bench_stacks.py --duration 1 --steps 0.05

Runs ``config/<scene>.yaml`` for each scene of ``lcp_scenes.SCENES`` (5- and 10-box towers,
3-2-1 and 4-3-2-1 box pyramids, 21 and 200 spheres in a walled box) with its default
settings but the time step, and counts what the run summary counts (solves, pivots, failed solves,
fallbacks, safe stops, uncertified steps) plus the deepest penetration after any step,
measured by a full detection at the new state (not only on the contacts of the LCP), and
the mean, median and worst wall time per step (the first step, which includes
compilation, is left out), and how many steps the last step's basis solved without a
search (``last_basis_steps``: the contact model's first rung, its report's rungs
``last_basis:solved``; a resting pile should spend most steps there). The trajectories of piles are chaotic (a
round-off change of the step moves the pile to another one): ``--perturb N`` runs each
scene N more times with every free body moved by up to 1 um (seeded), one row each
(column ``perturbation``), to compare medians and means over several trajectories. A run
whose step stops (``SimulationError``: more contacts than the scene's
``contact.max_contacts``, as the 200-sphere pour at h = 50 ms) ends there: its row counts
the steps taken and says why (``stopped``), and the other rows run. CSV in
``benchmarks/results/bench_stacks_<stamp>_<revision>.csv``.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402
from lcp_scenes import SCENES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.sim import SimulationError, Simulator  # noqa: E402

COLUMNS = ("scene", "h", "duration", "perturbation", "steps", "step_ms", "median_step_ms",
           "worst_step_ms", "rtf", "solves", "pivots", "failures", "fallbacks", "safe_stops",
           "uncertified", "deepest_mm", "re_solved_steps", "last_basis_steps", "stopped",
           "revision", "date", "load1")
#: largest displacement of a free body by ``--perturb`` [m]
PERTURBATION = 1e-6


def perturb(sim, seed):
    """Move every free body of ``sim`` by up to ``PERTURBATION`` along each axis."""
    flyers = sim.stepper.free_motion.flyers
    idx = (np.asarray(flyers.idx_q, dtype=np.int64)[:, None] + np.arange(3)).ravel()
    q = sim.q
    q[idx] += np.random.default_rng(seed).uniform(-PERTURBATION, PERTURBATION, idx.size)
    sim._q = q  # the benchmark's own start; the simulator has no state setter
    sim.world.forward(sim._q, sim._v)


def run(scene, h, duration, perturbation=0):
    """One row: the scene at time step ``h`` [s] for ``duration`` [s]; ``perturbation``
    > 0 seeds a start moved by :func:`perturb`."""
    sim = Simulator.from_file(os.path.join(ROOT, "config", f"{scene}.yaml"), time_step=h)
    if perturbation:
        perturb(sim, perturbation)
    detector = sim.stepper.detector
    steps = int(round(duration / h))
    times, deepest, re_solved, warm, stopped = [], 0.0, 0, 0, ""
    for i in range(steps):
        t = time.perf_counter()
        try:
            info = sim.step()
        except SimulationError as e:  # the row says where and why, the other rows run
            steps, stopped = i, str(e)
            break
        if i:
            times.append(time.perf_counter() - t)
        re_solved += int(info.report.info.get("active_set_rounds", 0) > 0)
        warm += int(info.report.last_basis_only)
        found = detector.detect(sim.q)
        if len(found):
            deepest = max(deepest, -float(found.distance.min()))
    s = sim.stats
    mean = sum(times) / max(len(times), 1)
    return dict(scene=scene, h=h, duration=duration, perturbation=perturbation, steps=steps,
                step_ms=1e3 * mean, median_step_ms=1e3 * float(np.median(times)) if times else 0.0,
                worst_step_ms=1e3 * max(times, default=0.0), rtf=h / mean if mean else 0.0,
                solves=s.solves, pivots=s.pivots_total, failures=s.lcp_failures,
                fallbacks=s.fallbacks, safe_stops=s.safe_stops, uncertified=s.uncertified,
                deepest_mm=1e3 * deepest, re_solved_steps=re_solved, last_basis_steps=warm,
                stopped=stopped)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="simulated seconds")
    parser.add_argument("--steps", type=float, nargs="+", default=[0.01, 0.05])
    parser.add_argument("--scenes", default=",".join(SCENES))
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--perturb", type=int, default=0,
                        help="also run each scene this many times from perturbed starts")
    args = parser.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    load1 = os.getloadavg()[0]
    rows = []
    runs = [(scene, h, seed) for scene in args.scenes.split(",") for h in args.steps
            for seed in range(args.perturb + 1)]
    for scene, h, seed in runs:
        row = run(scene, h, args.duration, seed)
        row.update(revision=revision, date=date, load1=load1)
        rows.append(row)
        start = f" (start {seed})" if seed else ""
        print(f"{scene:11s} h = {1e3 * h:4.0f} ms{start}: {row['step_ms']:7.2f} ms/step "
              f"(median {row['median_step_ms']:.2f}, worst {row['worst_step_ms']:.1f}), "
              f"{row['rtf']:.2f}x real time, failures {row['failures']}, fallbacks "
              f"{row['fallbacks']}, safe stops {row['safe_stops']}, uncertified "
              f"{row['uncertified']}, deepest {row['deepest_mm']:.3f} mm, re-solved steps "
              f"{row['re_solved_steps']}, from the last basis {row['last_basis_steps']}/"
              f"{row['steps']}" + (f"; stopped: {row['stopped']}" if row["stopped"] else ""),
              flush=True)
    path = common.results_path("bench_stacks", revision, stamp, args.results_dir)
    common.write_csv(path, rows, COLUMNS)
    print(f"machine load (1 min) at start: {load1:.2f}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
