"""The relaxed contact model: its QP path against its LCP path on the same recorded problems.

Usage::

    .venv/bin/python benchmarks/bench_relaxed.py            # box stack, sliding box, legged frame, Brazil nut
    .venv/bin/python benchmarks/bench_relaxed.py --steps 50 # fewer problems

Problems are recorded from short runs with ``contact.model: relaxed``; each is then built
once (:func:`contact_lcp.contact.lcp_builder.build_relaxed_lcp`) and solved by every path:
the scene's LCP method(s) through ``contact_lcp.lcp.solve`` (validation and certification
included) and the QP backends through :func:`solve_relaxed_qp` (the velocity QP plus
certification; ``path: auto`` switches to it above 300 unknowns). The 50-grain Brazil nut
gives the large problems (400-900 unknowns, about four pyramid edges per degree of freedom). One BLAS thread, a warm-up solve per path, the garbage collector off.
Per path: certified success rate, shifted geometric mean and median of the time, worst
difference of ``v+`` against the robust LCP answer. CSV in ``benchmarks/results/`` with
the revision and date in every row.
"""

import argparse
import gc
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.contact.lcp_builder import build_relaxed_lcp  # noqa: E402
from contact_lcp.contact.relaxed_qp import solve_relaxed_qp  # noqa: E402
from contact_lcp.lcp import solve  # noqa: E402
from contact_lcp.sim import Simulator, load_scene  # noqa: E402

SCENES = ("box_stack.yaml", "box_on_plane.yaml", "legged_frame.yaml", "brazil_nut_50.yaml")
PATHS = (("lcp", "robust"), ("lcp", "lemke"), ("qp", "clarabel"))
COLUMNS = ("scene", "path", "solver", "problems", "solved", "sgm_ms", "median_ms", "max_ms",
           "worst_dv", "mean_size", "revision", "date")


def record(scene_file, steps, stride):
    """Relaxed-model problems of the first ``steps`` steps of a bundled scene (every
    ``stride``-th), with a sliding initial velocity on the first free body if any."""
    import dataclasses

    scene = load_scene(os.path.join(ROOT, "config", scene_file))
    contact = dataclasses.replace(scene.contact, model="relaxed")
    bodies = scene.bodies
    if bodies:
        bodies = (dataclasses.replace(bodies[0], velocity=(0.5, 0.2, 0, 0, 0, 1.0)),) + bodies[1:]
    sim = Simulator(scene.replace(contact=contact, bodies=bodies))
    sim.record_problems = True
    for _ in range(steps):
        sim.step()
    problems = [p for p in sim.recorded_problems[::stride] if p.num_contacts]
    return problems, contact.friction_directions


def run_path(problems, lcps, path, solver):
    """Times [s] and results of one path on every LCP (after a warm-up)."""
    def call(problem, lcp):
        if path == "qp":
            return solve_relaxed_qp(problem, lcp, solver=solver)
        return solve(lcp.M, lcp.q, solver)

    call(problems[0], lcps[0])
    times, results = [], []
    gc.disable()
    try:
        for problem, lcp in zip(problems, lcps):
            t0 = time.perf_counter()
            res = call(problem, lcp)
            times.append(time.perf_counter() - t0)
            results.append(res)
    finally:
        gc.enable()
    return np.array(times), results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300, help="steps recorded per scene")
    ap.add_argument("--stride", type=int, default=3, help="keep every n-th problem")
    ap.add_argument("--results-dir", default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    rows = []
    for scene_file in SCENES:
        problems, d = record(scene_file, args.steps, args.stride)
        lcps = [build_relaxed_lcp(p, num_directions=d) for p in problems]
        ref = [solve(lcp.M, lcp.q, "robust") for lcp in lcps]
        for path, solver in PATHS:
            times, results = run_path(problems, lcps, path, solver)
            print(f"  {scene_file} {path}:{solver}: {len(lcps)} problems in {times.sum():.1f} s",
                  flush=True)
            worst = 0.0
            for p, lcp, r0, r in zip(problems, lcps, ref, results):
                if r.success and r0.success:
                    dv = p.K @ (p.J.T @ (lcp.impulses(r.z) - lcp.impulses(r0.z)))
                    worst = max(worst, float(np.max(np.abs(dv))))
            rows.append(dict(
                scene=scene_file, path=path, solver=solver, problems=len(lcps),
                solved=sum(r.success for r in results),
                sgm_ms=1e3 * common.shifted_geometric_mean(times, 1e-5),
                median_ms=1e3 * common.median(times), max_ms=1e3 * float(np.max(times)),
                worst_dv=worst, mean_size=float(np.mean([lcp.q.size for lcp in lcps])),
                revision=revision, date=date))
    print(common.format_table(rows, COLUMNS[:-2]))
    out = common.write_csv(common.results_path("relaxed", revision, stamp, args.results_dir),
                           rows, COLUMNS)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
