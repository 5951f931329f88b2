"""Energy drift of the free motion, with and without a loop closure (no contact).

Usage::

    .venv/bin/python benchmarks/bench_energy.py                    # 10 s at h = 1 ms and 0.1 ms
    .venv/bin/python benchmarks/bench_energy.py --duration 3 --steps 1e-3

Issue 11 asks a four-bar linkage to keep its energy within 1 % over 10 s. This runs the
same three rods (0.15, 0.4, 0.3 m, 2 kg/m, crank at 60 deg, released at rest) twice: as the
four-bar (the rocker's tip closed on the ground pivot by a point closure) and as the open
triple pendulum (no closure). Columns: the largest |E(t) - E(0)| and the final E(T) - E(0),
both over the largest kinetic energy of the run. If the open chain drifts as much as the
closed one, the drift comes from the free-motion integrator and not from the loop rows.
CSV in ``benchmarks/results/`` with the revision and date in every row.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.sim import Simulator, scene_from_dict  # noqa: E402
from contact_lcp.sim.chains import chain_urdf, fourbar_scene  # noqa: E402
from contact_lcp.sim.chains import fourbar_angles as chains_fourbar_angles  # noqa: E402

COLUMNS = ("system", "h", "duration", "max_error", "final_error", "loop_drift", "revision",
           "date")
CRANK, COUPLER, ROCKER, GROUND = 0.15, 0.4, 0.3, 0.4


def fourbar_angles():
    """Joint angles of the four-bar with the crank at 60 deg (circle intersection)."""
    return chains_fourbar_angles(CRANK, COUPLER, ROCKER, GROUND)


def energy_error(urdf, h, duration, closed):
    """(max |dE|, final dE) over the largest kinetic energy, and the largest loop error."""
    sim = Simulator(scene_from_dict(fourbar_scene(urdf, h, fourbar_angles(), ROCKER, closed)))
    E0, worst, ke, drift = sum(sim.mechanical_energy()), 0.0, 0.0, 0.0
    for _ in range(int(round(duration / h))):
        sim.step()
        kinetic, potential = sim.mechanical_energy()
        worst = max(worst, abs(kinetic + potential - E0))
        ke = max(ke, kinetic)
        if closed:
            drift = max(drift, float(np.max(np.abs(sim.loops.errors(sim.q)))))
    return worst / ke, (sum(sim.mechanical_energy()) - E0) / ke, drift


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--steps", type=float, nargs="+", default=[1e-3, 1e-4])
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        urdf = os.path.join(tmp, "fourbar.urdf")
        with open(urdf, "w") as f:
            f.write(chain_urdf([CRANK, COUPLER, ROCKER], mass_per_length=2.0))
        for h in args.steps:
            for system, closed in (("four-bar", True), ("open chain", False)):
                worst, final, drift = energy_error(urdf, h, args.duration, closed)
                rows.append({"system": system, "h": h, "duration": args.duration,
                             "max_error": worst, "final_error": final, "loop_drift": drift,
                             "revision": revision, "date": date})
                print(f"{system:10s} h = {h * 1e3:g} ms, {args.duration:g} s: max |dE| "
                      f"{100 * worst:.2f} %, final dE {100 * final:+.2f} % of the largest "
                      f"kinetic energy; loop drift {drift:.1e} m", flush=True)
    path = common.results_path("bench_energy", revision, stamp, args.results_dir)
    common.write_csv(path, rows, COLUMNS)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
