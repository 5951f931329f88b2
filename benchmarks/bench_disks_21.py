"""Anitescu & Hart's 21 disks (S3 section 3): how does the pile end after 20 s?

Usage::

    .venv/bin/python benchmarks/bench_disks_21.py                     # the bundled scene
    .venv/bin/python benchmarks/bench_disks_21.py --seeds 0 1 2 3 4 5 6 7 8 9
    .venv/bin/python benchmarks/bench_disks_21.py --variants pyramid no_stabilization \\
        uncapped relaxed --half-width 150 --slope 30

Runs ``disks_21`` (written afresh by :mod:`contact_lcp.sim.disks` into a temporary folder,
with the pile jitter's ``--seeds`` and the walls' ``--half-width`` and ``--slope``) under
each ``--variants`` of its contact settings, and records the end state against the
paper's ("all disks are separated, and they are all in contact with the tabletop"):
disks on the table (centre within 1 cm of the radius), disks on a wall, pairs touching
(gap below 1 cm), the smallest pair gap, the energy left (kinetic and potential over the
initial potential energy), the largest energy gain of a step, the deepest overlap over
the run (on the geometry), failures, fallbacks and the wall time per step. CSV in
``benchmarks/results/`` with the revision and date in every row.
"""

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.progress import Progress  # noqa: E402
from contact_lcp.sim import Simulator, load_scene  # noqa: E402
from contact_lcp.sim import disks  # noqa: E402

#: contact-setting changes of each variant (the bundled scene: ``pyramid``)
VARIANTS = {
    "pyramid": {},
    "no_stabilization": {"stabilization": 0.0},
    "uncapped": {"max_correction_speed": 1e9},  # the paper's gamma phi / h, unbounded
    "activation_0.3": {"activation_distance": 0.3},  # the paper's epsilon-hat
    "relaxed": {"model": "relaxed"},
}

COLUMNS = ("variant", "seed", "half_width", "slope_deg", "t", "on_table", "on_wall",
           "touching_pairs", "min_pair_gap", "energy_left", "max_step_gain", "deepest",
           "failures", "fallbacks", "step_ms", "revision", "date")


def scene_files(folder, seed, half_width, slope_deg):
    """Write the disks_21 URDFs and scene under ``folder``; the scene's path."""
    folder = Path(folder)
    (folder / "urdf").mkdir(parents=True, exist_ok=True)
    (folder / "config").mkdir(parents=True, exist_ok=True)
    (folder / "urdf" / disks.DISK_URDF).write_text(disks.disk_urdf(collision="sphere"))
    (folder / "urdf" / "disks_walls.urdf").write_text(disks.walls_urdf(half_width, slope_deg))
    path = folder / "config" / "disks_21.yaml"
    path.write_text(disks.scene_yaml(seed=seed))
    return str(path)


def energy(sim, P, m, g):
    """Kinetic plus potential energy [J] of the 21 disks (centres ``P`` (21, 2))."""
    v = sim.v.reshape(len(P), 3)
    r = disks.RADIUS
    return (0.5 * m * np.sum(v[:, :2] ** 2) + 0.25 * m * r ** 2 * np.sum(v[:, 2] ** 2)
            + m * g * np.sum(P[:, 1] - r))


def run(variant, seed, half_width, slope_deg, duration=None):
    """One run; its row (a dict with :data:`COLUMNS`)."""
    with tempfile.TemporaryDirectory() as tmp:  # the URDFs are read by the Simulator
        scene = load_scene(scene_files(tmp, seed, half_width, slope_deg))
        scene = scene.replace(contact=dataclasses.replace(scene.contact, **VARIANTS[variant]))
        sim = Simulator(scene)
    names = [r.name for r in sim.world.robots if r.name.startswith("disk_")]
    m = disks.DENSITY * np.pi * disks.RADIUS ** 2 * disks.THICKNESS
    g = -scene.gravity[2]

    def centres():
        sim.world.forward(sim.q)
        return np.array([sim.world.frame_placement(f"{n}/disk")[[0, 2], 3] for n in names])

    P = centres()
    E = E0 = energy(sim, P, m, g)
    gain = deepest = wall = 0.0
    fallbacks = 0
    steps = int(round((scene.duration if duration is None else duration) / sim.h))
    bar = Progress(steps, desc=f"{variant} seed {seed}", unit="step", every=30.0)
    for _ in range(steps):
        t0 = time.perf_counter()
        info = sim.step()
        wall += time.perf_counter() - t0
        bar.update(1)
        fallbacks += info.fallbacks
        P = centres()
        E, E_before = energy(sim, P, m, g), E
        gain = max(gain, E - E_before)
        support, pairs = disks.gaps(P, disks.RADIUS, half_width, slope_deg)
        deepest = max(deepest, -support.min(), -pairs.min())
    bar.close()
    on_table = np.abs(support[0]) < 0.01
    return {"variant": variant, "seed": seed, "half_width": half_width, "slope_deg": slope_deg,
            "t": round(sim.t, 6), "on_table": int(on_table.sum()),
            "on_wall": int(np.count_nonzero(~on_table & (np.abs(support[1:]).min(axis=0) < 0.01))),
            "touching_pairs": int(np.count_nonzero(pairs < 0.01)),
            "min_pair_gap": float(pairs.min()), "energy_left": E / E0,
            "max_step_gain": gain / E0, "deepest": deepest,
            "failures": sim.stats.lcp_failures, "fallbacks": fallbacks,
            "step_ms": 1e3 * wall / steps}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[disks.PILE_SEED])
    parser.add_argument("--variants", nargs="+", default=["pyramid"], choices=sorted(VARIANTS))
    parser.add_argument("--half-width", type=float, default=disks.HALF_WIDTH)
    parser.add_argument("--slope", type=float, default=disks.SLOPE_DEG)
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    rows = []
    print("variant            seed  on table  on wall  touching  min gap  energy left  "
          "max gain  deepest  fail  fb  ms/step")
    for variant in args.variants:
        for seed in args.seeds:
            r = run(variant, seed, args.half_width, args.slope, args.duration)
            r.update(revision=revision, date=date)
            rows.append(r)
            print(f"{variant:18s} {seed:5d} {r['on_table']:9d} {r['on_wall']:8d} "
                  f"{r['touching_pairs']:9d} {r['min_pair_gap']:+8.4f} {r['energy_left']:12.4f} "
                  f"{r['max_step_gain']:9.1e} {r['deepest']:8.4f} {r['failures']:5d} "
                  f"{r['fallbacks']:3d} {r['step_ms']:8.2f}", flush=True)
    print("wrote " + common.write_csv(
        common.results_path("bench_disks_21", revision, stamp, args.results_dir), rows, COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
