"""What the contact forces cost a step: unread, read under ``any``, read under ``min_norm``.

Usage::

    .venv/bin/python benchmarks/bench_forces.py                      # the four scenes
    .venv/bin/python benchmarks/bench_forces.py --scenes talos_stand --steps 500

Under ``contact.force_distribution: min_norm`` (the default) the pyramid model's forces
are computed when read (:mod:`contact_lcp.contact.min_norm`): a step applies the pivoting
answer, and the least-norm impulse with its velocities is found when a wrench, a marker,
or a recording asks. This runs each bundled scene three ways from
the same start (50 steps first, untimed) and times the same ``--steps`` steps:

* ``any`` with the forces read every step (``Simulator.contact_table``, as a recording
  reads them);
* ``min_norm`` with the forces never read (a benchmark, a sweep saving only the state);
* ``min_norm`` with the forces read every step.

Columns: milliseconds a step (median of 5 chunks), and for the read ``min_norm`` runs how
the least-norm impulse was found: by the compiled projection and its active set
(``compiled``), by the face's QP (``qp``), or the face held one impulse (``unique``);
``moved`` is the largest difference of the final ``q`` from the ``any`` run (0: the
motion does not depend on the forces being read). ``mirror_pairs`` and ``mirror_asym``
compare the last step's contacts with their mirror images across the plane y = 0 (every
bundled robot and tower stands on it): the pairs of contacts within ``MIRROR_DISTANCE``
of each other's mirror image, and the largest difference of the normal forces of a pair
as a fraction of the total normal force (0 when the forces are mirror-symmetric; a
robot whose posture or model is not leans to one side: Talos's half_sitting rolls both
ankles the same way, and its right arm's centre of mass is the left one's unmirrored; see
``VARIANTS``). CSV in ``benchmarks/results/``.
"""

import argparse
import collections
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402
import yaml  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import contact_lcp.contact.min_norm as min_norm  # noqa: E402
from contact_lcp.contact.min_norm_kernel import APPLIED, UNIQUE  # noqa: E402
from contact_lcp.sim import Simulator, load_scene, scene_from_dict  # noqa: E402

SCENES = ("talos_stand", "talos_mirrored_ankles", "go1_stand", "humanoid_stand", "tower_5")
#: scenes that are a bundled one with some initial joint positions changed:
#: ``talos_mirrored_ankles`` is Talos in the SRDF's half_sitting but with its right ankle
#: rolled the mirror way (half_sitting rolls both ankles by -1.7 mrad, the same way,
#: which tilts the soles alike instead of as mirror images)
VARIANTS = {"talos_mirrored_ankles": ("talos_stand", {"leg_right_6_joint": 0.001708})}
RUNS = (("any", True), ("min_norm", False), ("min_norm", True))
COLUMNS = ("scene", "force_distribution", "forces_read", "steps", "ms_per_step", "compiled",
           "qp", "unique", "moved", "mirror_pairs", "mirror_asym", "revision", "date")
CHUNKS = 5
#: a contact within this of another's mirror image is its mirrored contact [m]
MIRROR_DISTANCE = 2e-3


def mirror_asymmetry(sim):
    """``(pairs, worst)``: the last step's contacts paired with their mirror images across
    y = 0 (within ``MIRROR_DISTANCE``), and the largest difference of a pair's normal
    forces over the total normal force."""
    table = sim.contact_table()[0]
    p, normal = table[:, 0:3], np.einsum("ij,ij->i", table[:, 3:6], table[:, 6:9])
    total = normal.sum()
    pairs, worst = 0, 0.0
    for i in np.flatnonzero(p[:, 1] > 0.0):
        gap = np.linalg.norm(p - p[i] * np.array([1.0, -1.0, 1.0]), axis=1)
        j = int(np.argmin(gap))
        if gap[j] <= MIRROR_DISTANCE:
            pairs += 1
            worst = max(worst, abs(normal[i] - normal[j]) / total)
    return pairs, worst


def run(name, distribution, read, steps, counts):
    """``(ms a step, final q, mirror_asymmetry)`` of ``steps`` steps after 50 untimed
    ones."""
    base, joints = VARIANTS.get(name, (name, None))
    path = os.path.join(ROOT, "config", f"{base}.yaml")
    if joints:
        with open(path) as f:
            data = yaml.safe_load(f)
        data["robots"][0]["initial_joints"] = joints
        scene = scene_from_dict(data, base_dir=os.path.dirname(path))
    else:
        scene = load_scene(path)
    scene = scene.replace(contact=dataclasses.replace(scene.contact,
                                                      force_distribution=distribution))
    sim = Simulator(scene)
    for _ in range(50):
        sim.step()
        sim.contact_table()
    counts.clear()
    chunk = max(1, steps // CHUNKS)
    times = []
    for _ in range(CHUNKS):
        t0 = time.perf_counter()
        for _ in range(chunk):
            sim.step()
            if read:
                sim.contact_table()  # reads the step's forces
        times.append((time.perf_counter() - t0) / chunk * 1e3)
    return common.median(times), sim.q, mirror_asymmetry(sim)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", nargs="+", default=list(SCENES))
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    counts = collections.Counter()
    compiled = min_norm.least_norm_face

    def counted(*a):
        out = compiled(*a)
        counts[int(out[0])] += 1
        return out

    min_norm.least_norm_face = counted
    rows = []
    for name in args.scenes:
        reference = None
        for distribution, read in RUNS:
            ms, q, (pairs, asym) = run(name, distribution, read, args.steps, counts)
            reference = q if reference is None else reference
            faces = sum(counts.values())
            rows.append({"scene": name, "force_distribution": distribution,
                         "forces_read": read, "steps": args.steps, "ms_per_step": ms,
                         "compiled": counts[APPLIED], "unique": counts[UNIQUE],
                         "qp": faces - counts[APPLIED] - counts[UNIQUE],
                         "moved": float(np.max(np.abs(q - reference))),
                         "mirror_pairs": pairs, "mirror_asym": asym,
                         "revision": revision, "date": date})
    print(common.format_table(rows, COLUMNS[:-2]))
    print(common.write_csv(common.results_path("bench_forces", revision, stamp,
                                               args.results_dir), rows, COLUMNS))


if __name__ == "__main__":
    main()
