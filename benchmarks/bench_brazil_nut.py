"""The Brazil-nut shaker (Anitescu & Hart, S3 section 4): does the nut rise within 75 s?

Usage::

    .venv/bin/python benchmarks/bench_brazil_nut.py                  # config/brazil_nut_50.yaml, 75 s
    .venv/bin/python benchmarks/bench_brazil_nut.py config/brazil_nut.yaml   # the paper's 200 grains (hours)
    .venv/bin/python benchmarks/bench_brazil_nut.py --duration 20 --every 5

Runs the scene and samples, every ``--every`` steps: the nut's height above the container
floor, how many grains have their centre above the nut's centre (0: the nut is on top),
the highest grain, contacts, the deepest overlap since the last sample (measured on the
geometry: centres and radii), and the wall time per step. Prints a table and the first time no grain is above the nut; CSV in
``benchmarks/results/`` with the revision and date in every row.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.progress import Progress  # noqa: E402
from contact_lcp.sim import Simulator  # noqa: E402
from contact_lcp.sim.brazil_nut import container_width, disk_radius  # noqa: E402

COLUMNS = ("t", "nut_height", "grains_above_nut", "grains", "top_grain", "contacts",
           "deepest", "failures", "fallbacks", "step_ms", "revision", "date")


def centres(sim, names):
    """(n, 2) centres (x, z) of the named disks relative to the container [m]."""
    sim.world.forward(sim.q)
    box = sim.world.frame_placement("box")[[0, 2], 3]
    return np.array([sim.world.frame_placement(f"{n}/disk")[[0, 2], 3] for n in names]) - box


def deepest_overlap(P, r, width):
    """Largest overlap [m] between two disks or a disk and the container (``width``
    inside), from the geometry (the detector's depths include coal's rare spurious ones)."""
    gaps = np.linalg.norm(P[:, None] - P[None], axis=2) - (r[:, None] + r[None])
    pair = -gaps[np.triu_indices(len(r), 1)].min()
    wall = max((np.abs(P[:, 0]) + r - 0.5 * width).max(), (r - P[:, 1]).max())
    return max(pair, wall, 0.0)


def run(path, duration=None, every=10, progress=True):
    """Simulate the scene and return the sampled rows (dicts with :data:`COLUMNS`)."""
    revision = common.git_revision(ROOT)
    date, _ = common.utc_stamp()
    sim = Simulator.from_file(path)
    grains = [r.name for r in sim.world.robots if r.name.startswith("grain_")]
    names = ["nut"] + grains
    urdf = {r.robot.name: r.robot.urdf for r in sim.scene.robots}
    radii = np.array([disk_radius(urdf[name]) for name in names])
    width = container_width(urdf["shaker"])
    steps = int(round((sim.scene.duration if duration is None else duration) / sim.h))
    rows, deepest, wall, n = [], 0.0, 0.0, 0
    bar = Progress(steps, desc="brazil nut", unit="step", every=30.0) if progress else None
    for k in range(1, steps + 1):
        t0 = time.perf_counter()
        info = sim.step()
        wall += time.perf_counter() - t0
        n += 1
        if bar is not None:
            bar.update(1)
        P = centres(sim, names)
        deepest = max(deepest, deepest_overlap(P, radii, width))
        if k % every and k != steps:
            continue
        nut, z = P[0, 1], P[1:, 1]
        rows.append({"t": round(sim.t, 6), "nut_height": nut,
                     "grains_above_nut": int(np.count_nonzero(z > nut)), "grains": len(grains),
                     "top_grain": float(z.max()), "contacts": info.num_contacts,
                     "deepest": deepest, "failures": sim.stats.lcp_failures,
                     "fallbacks": sim.stats.fallbacks + sim.stats.safe_stops,
                     "step_ms": 1e3 * wall / n, "revision": revision, "date": date})
        if bar is not None:
            r = rows[-1]
            bar.write(f"t = {r['t']:5.1f} s  nut {nut:6.2f}  grains above it "
                      f"{r['grains_above_nut']:3d}/{len(grains)}  top grain {r['top_grain']:6.2f}"
                      f"  contacts {r['contacts']:4d}  overlap {r['deepest']:.1e}  "
                      f"{r['step_ms']:6.0f} ms/step")
        deepest, wall, n = 0.0, 0.0, 0
    if bar is not None:
        bar.close()
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scene", nargs="?", default=os.path.join(ROOT, "config", "brazil_nut_50.yaml"),
                        help="default: 50 grains (minutes); brazil_nut.yaml has the paper's "
                             "200 (~13 s per step once settled)")
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds")
    parser.add_argument("--every", type=int, default=10, help="sample every this many steps")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    rows = run(args.scene, args.duration, args.every)
    on_top = [r["t"] for r in rows if r["grains_above_nut"] == 0]
    first = rows[0]
    print(f"nut height {first['nut_height']:.2f} -> {rows[-1]['nut_height']:.2f} m above the floor; "
          f"grains above it {first['grains_above_nut']} -> {rows[-1]['grains_above_nut']}; "
          + (f"first on top at t = {on_top[0]:.1f} s" if on_top else "never on top")
          + f"; failures {rows[-1]['failures']}, fallbacks {rows[-1]['fallbacks']}")
    date, stamp = common.utc_stamp()
    path = common.results_path("bench_brazil_nut", rows[-1]["revision"], stamp, args.results_dir)
    common.write_csv(path, rows, COLUMNS)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
