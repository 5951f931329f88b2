#!/usr/bin/env python3
"""The seed's non-convex scenes (Nguyen & Trinkle): time per step and outcome, facet_set
against the standard pyramid model.

For each bundled scene (``config/cracked_ramp.yaml``, ``config/peg_in_hole.yaml``) and each
model, runs the scene's duration once untimed (numba kernels compiled or loaded from
their cache), then again, and reports the mean and median step time, the collision
and solve stages, LCP solves, failed solves, fallbacks, the body's final lowest point and
tilt. Printed and written to ``benchmarks/results/bench_facet_set_<stamp>_<revision>.csv``.

Usage::

    .venv/bin/python benchmarks/bench_facet_set.py
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import common  # noqa: E402

SCENES = (("cracked_ramp", "box"), ("peg_in_hole", "peg"))
MODELS = ("facet_set", "pyramid")
COLUMNS = ("revision", "date", "scene", "model", "time_step", "steps", "step_mean_ms",
           "step_median_ms", "collision_ms", "solve_ms", "solves", "failed_solves", "fallbacks",
           "safe_stops", "lowest_z", "tilt_deg", "max_tilt_deg")


def run(scene, body, model):
    from contact_lcp.sim import Simulator
    from contact_lcp.sim.trace import body_corners, tilt_deg

    path = os.path.join(ROOT, "config", scene + ".yaml")
    warm = Simulator.from_file(path, contact_model=model)  # compiled kernels loaded, not timed
    for _ in range(int(round(warm.scene.duration / warm.h))):
        warm.step()
    sim = Simulator.from_file(path, contact_model=model)
    steps = int(round(sim.scene.duration / sim.h))
    times, coll, solv, tilts = [], [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        info = sim.step()
        times.append(time.perf_counter() - t0)
        coll.append(info.timings.get("collision", 0.0))
        solv.append(info.timings.get("solve", 0.0))
        tilts.append(tilt_deg(sim, body))
    s = sim.stats
    return {"scene": scene, "model": model, "time_step": sim.h, "steps": steps,
            "step_mean_ms": 1e3 * float(np.mean(times)),
            "step_median_ms": 1e3 * float(np.median(times)),
            "collision_ms": 1e3 * float(np.mean(coll)), "solve_ms": 1e3 * float(np.mean(solv)),
            "solves": s.solves, "failed_solves": s.lcp_failures, "fallbacks": s.fallbacks,
            "safe_stops": s.safe_stops, "lowest_z": float(body_corners(sim, body)[:, 2].min()),
            "tilt_deg": tilts[-1], "max_tilt_deg": max(tilts)}


def main():
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    rows = []
    for scene, body in SCENES:
        for model in MODELS:
            row = run(scene, body, model)
            row.update(revision=revision, date=date)
            rows.append(row)
    print(common.format_table(rows, COLUMNS[2:]))
    path = common.results_path("bench_facet_set", revision, stamp)
    common.write_csv(path, rows, COLUMNS)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
