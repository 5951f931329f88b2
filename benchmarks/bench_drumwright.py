#!/usr/bin/env python3
"""Drumwright's viscous and no-slip models (S4) against the friction pyramid, same run.

Two tables, printed and written to one CSV
(``benchmarks/results/bench_drumwright_<stamp>_<revision>.csv``):

1. **models** — on ``config/grasp.yaml`` (36 contacts) and ``config/legged_no_slip.yaml``
   (the humanoid standing): the pyramid model (robust search, the scene's solver), the
   viscous and the no-slip models with the modified PPM and, for the S4 "same model,
   other solver" ratio, with the robust search. Per row: mean step time and mean solve
   time [us], pivots per step (mean, max), slip (largest relative tangential speed at a
   loaded contact after a step [m/s]), failures (uncertified solves), fallbacks (the
   frictionless fallback or a PPM fallback to the robust search), drift of the held boxes
   / the pelvis [m]. Below it the speed ratios next to S4's published ones.
2. **scaling** — the no-slip step time against the number of contacts at a fixed number
   of degrees of freedom (8: two fingers and one held box), three series: *geometry
   grows*, pads of 1 to 8 ridges with 4 points each (8 to 64 contacts, one box-box pair
   more per ridge); *points per pair*, 8 ridges per pad with 1, 2 and 4 points each (16 to
   64 contacts); *ridges touching*, 8 ridges per pad of which 1, 2, 4 or 8 touch the box
   (the others 4 mm back), 4 points each: 8 to 64 contacts with the same geometry and the
   same dofs, only the contact count changes. S4 claims the cost follows the degrees of
   freedom; the target "no-slip step at 64 contacts <= 2x that at 8" is read on the last
   series (the first also grows the collision geometry).

3. **collision** — the grasp (no-slip) with its box-box pairs (gripper ridges against the
   held boxes) in closed form (``collision/boxes.py``, the default) and through coal (the
   detector's general path, as before it): collision and step time.

4. **lcp** — the LCPs alone, replayed from the no-slip/viscous runs' recorded problems,
   each solved cold by every method in turn (interleaved, so machine load hits all alike):
   the pyramid's frictional LCP ((2 + 8) k unknowns) by the robust search, the models'
   normal-row LCPs (k unknowns) by the PPM and the robust search. S4's Table I compares
   216 Stewart-Trinkle unknowns with Lemke against 36 no-slip unknowns with the PPM.

Step and stage times are ``time.perf_counter`` medians (``*_us``) and means
(``*_mean_us``: the whole run's time per step, S4's measure) over the timed steps after
``settle`` untimed ones, with one BLAS thread (the machine is shared: medians resist the
load of other processes, ``load1`` is recorded). Targets (not tests): grasp PPM mean <= 7
pivots and >= 5x faster than the pyramid's robust search (printed per step, warm, as the
simulation's solve stage, and per LCP, cold, replayed); no-slip step at 64 contacts <= 2x
that at 8 (the *ridges touching* series).

Usage::

    .venv/bin/python benchmarks/bench_drumwright.py           # ~2 minutes
    .venv/bin/python benchmarks/bench_drumwright.py --quick   # seconds, legged scene only
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import common  # noqa: E402

SCENES = {"grasp": "config/grasp.yaml", "legged": "config/legged_no_slip.yaml"}
#: (row name, contact model, model options)
MODELS = (
    ("pyramid/robust", "pyramid", {}),
    ("viscous/ppm", "viscous", {}),
    ("viscous/robust", "viscous", {"method": "robust"}),
    ("no_slip/ppm", "no_slip", {}),
    ("no_slip/robust", "no_slip", {"method": "robust"}),
)
#: S4's published running-time ratios (whole simulations): Table I grasp, Stewart-Trinkle
#: with Lemke against no-slip with the PPM; Tables II and III quadruped.
S4_RATIOS = {
    "grasp: pyramid / no_slip-ppm": 10.9681 / 1.6680,
    "legged: pyramid / no_slip-ppm": 416.284 / 301.796,
    "legged: viscous-lemke / viscous-ppm": 2936.36 / 2139.73,
}
#: (series, ridge grid along x, along z, points kept per ridge, ridges touching per pad
#: (None: all)): 2 pads x touching ridges x points contacts (module notes).
GROWS, POINTS, TOUCHING = "geometry grows", "points per pair", "ridges touching"
RIDGES = ((GROWS, 1, 1, 4, None), (GROWS, 1, 2, 4, None), (GROWS, 2, 2, 4, None),
          (GROWS, 2, 4, 4, None), (POINTS, 2, 4, 1, None), (POINTS, 2, 4, 2, None),
          (TOUCHING, 2, 4, 4, 1), (TOUCHING, 2, 4, 4, 2), (TOUCHING, 2, 4, 4, 4),
          (TOUCHING, 2, 4, 4, 8))
#: ridges of the 2 x 4 grid that touch first (spread over the pad)
TOUCH_ORDER = (0, 7, 3, 4, 1, 6, 2, 5)
#: how far back the ridges that do not touch are [m] (beyond the activation distance)
RECESS = 0.004
COLUMNS = ("revision", "date", "load1", "section", "scene", "name", "status", "steps",
           "contacts", "dofs", "lcp_size", "step_us", "solve_us", "step_mean_us",
           "solve_mean_us", "collision_us",
           "lcp_build_us", "lcp_us", "pivots_mean", "pivots_max", "slip_max", "failures",
           "fallbacks", "drift", "notes")


def loaded_slip(rec):
    """Largest relative tangential speed [m/s] at a loaded contact after step ``rec``
    (the step's velocity in the frames the contact rows were built in)."""
    k = len(rec.contacts)
    if rec.problem is None or k == 0:
        return 0.0
    v_C = (rec.problem.J[: 3 * k] @ rec.v_step).reshape(k, 3)
    loaded = rec.impulse_C[:, 0] > 0.0
    return float(np.abs(v_C[loaded, 1:]).max()) if loaded.any() else 0.0


def watched_height(sim):
    """Heights [m] of the free bodies, else of the first robot's base."""
    if sim.world.bodies:
        return np.array([sim.q[b.q_slice][2] for b in sim.world.bodies])
    return np.array([sim.q[2]])


def run(sim, steps, settle):
    """Step ``sim``; the row fields of the models/scaling tables."""
    for _ in range(settle):
        sim.step()
    z0 = watched_height(sim)
    step_t, solve_t, pivots, slip, contacts = [], [], [], 0.0, []
    stages = {"collision": [], "lcp_build": []}
    failures = fallbacks = 0
    for _ in range(steps):
        t0 = time.perf_counter()
        info = sim.step()
        step_t.append(time.perf_counter() - t0)
        rep = info.report
        solve_t.append(info.timings.get("solve", 0.0))
        for key, values in stages.items():
            values.append(info.timings.get(key, 0.0))
        pivots.append(rep.pivots)
        contacts.append(info.num_contacts)
        failures += rep.failures
        fallbacks += int(rep.fallbacks > 0 or "solver_fallback" in rep.info)
        slip = max(slip, loaded_slip(sim._last))
    return dict(status="ok", steps=steps, contacts=float(np.mean(contacts)),
                dofs=int(sim.world.model.nv), lcp_size=int(rep.info.get("lcp_size", 0)),
                step_us=1e6 * common.median(step_t), solve_us=1e6 * common.median(solve_t),
                step_mean_us=1e6 * float(np.mean(step_t)),
                solve_mean_us=1e6 * float(np.mean(solve_t)),
                collision_us=1e6 * common.median(stages["collision"]),
                lcp_build_us=1e6 * common.median(stages["lcp_build"]),
                pivots_mean=float(np.mean(pivots)), pivots_max=int(max(pivots)),
                slip_max=slip, failures=failures, fallbacks=fallbacks,
                drift=float(np.abs(watched_height(sim) - z0).max()))


def simulator(path, model, options):
    """A Simulator for scene ``path`` with contact ``model`` and model ``options``."""
    import dataclasses

    from contact_lcp.sim import Simulator
    from contact_lcp.sim.scene_loader import load_scene

    scene = load_scene(path)
    contact = dataclasses.replace(scene.contact, model=model, options=dict(options))
    return Simulator(scene.replace(contact=contact))


def models_table(steps, settle, scenes=SCENES):
    rows = []
    for scene, path in scenes.items():
        for name, model, options in MODELS:
            print(f"[bench_drumwright] {scene} {name}: {steps[scene]} steps", file=sys.stderr,
                  flush=True)
            try:
                row = run(simulator(os.path.join(ROOT, path), model, options),
                          steps[scene], settle)
            except Exception as e:  # report, keep benchmarking the rest
                row = dict(status=f"failed: {type(e).__name__}: {e}")
            rows.append(dict(section="models", scene=scene, name=name, **row))
    return rows


def ratios(rows):
    """Our speed ratios next to S4's (step time; solve time in the notes)."""
    by = {(r["scene"], r["name"]): r for r in rows if r.get("status") == "ok"}

    def ratio(scene, slow, fast, key):
        a, b = by.get((scene, slow)), by.get((scene, fast))
        return a[key] / b[key] if a and b and b[key] > 0 else float("nan")

    pairs = {
        "grasp: pyramid / no_slip-ppm": ("grasp", "pyramid/robust", "no_slip/ppm"),
        "legged: pyramid / no_slip-ppm": ("legged", "pyramid/robust", "no_slip/ppm"),
        "legged: viscous-lemke / viscous-ppm": ("legged", "viscous/robust", "viscous/ppm"),
        "grasp: viscous-robust / viscous-ppm": ("grasp", "viscous/robust", "viscous/ppm"),
        "grasp: no_slip-robust / no_slip-ppm": ("grasp", "no_slip/robust", "no_slip/ppm"),
    }
    out = []
    for label, (scene, slow, fast) in pairs.items():
        out.append(dict(name=label, step=ratio(scene, slow, fast, "step_mean_us"),
                        solve=ratio(scene, slow, fast, "solve_mean_us"),
                        step_median=ratio(scene, slow, fast, "step_us"),
                        solve_median=ratio(scene, slow, fast, "solve_us"),
                        s4=S4_RATIOS.get(label)))
    return out


def lcp_table(steps, scenes=SCENES):
    """Replay each scene's LCPs: pyramid (robust) vs normal rows (ppm, robust), cold."""
    from contact_lcp.contact.base import ModelSettings
    from contact_lcp.contact.lcp_builder import build_contact_lcp
    from contact_lcp.contact.models import make_model
    from contact_lcp.lcp import solve

    rows = []
    for scene, path in scenes.items():
        for model in ("no_slip", "viscous"):
            sim = simulator(os.path.join(ROOT, path), model, {})
            sim.record_problems = True
            for _ in range(steps):
                sim.step()
            problems = [p for p in sim.recorded_problems if p.num_contacts]
            m = make_model(model, ModelSettings())
            cases = {"pyramid LCP/robust": [], f"{model} LCP/ppm": [],
                     f"{model} LCP/robust": []}
            lcps = []
            for p in problems:
                fr = build_contact_lcp(p.G, p.u, p.mu, num_directions=8,
                                       num_unilateral=p.num_limits, normal_bias=p.bias)
                red, _ = m.reduce(p, p.phi[:p.num_contacts] <= m.touch_distance)
                lcps.append(((fr.M, fr.q), (red.M, red.q)))
            stats = {name: {"t": [], "pivots": [], "fail": 0, "n": 0} for name in cases}
            for (fM, fq), (rM, rq) in lcps:
                for name, (M, q, method) in {
                        "pyramid LCP/robust": (fM, fq, "robust"),
                        f"{model} LCP/ppm": (rM, rq, "ppm"),
                        f"{model} LCP/robust": (rM, rq, "robust")}.items():
                    t0 = time.perf_counter()
                    res = solve(M, q, method)
                    st = stats[name]
                    st["t"].append(time.perf_counter() - t0)
                    st["pivots"].append(res.pivots)
                    st["fail"] += int(not res.success or "fallback" in res.info)
                    st["n"] = q.shape[0]
            for name, st in stats.items():
                rows.append(dict(section="lcp", scene=scene, name=name, status="ok",
                                 steps=len(lcps), lcp_size=st["n"],
                                 lcp_us=1e6 * common.median(st["t"]),
                                 pivots_mean=float(np.mean(st["pivots"])),
                                 pivots_max=int(max(st["pivots"])), failures=st["fail"],
                                 notes="cold solves of the recorded problems"))
    return rows


def gripper_urdf(nx, nz, touching=None):
    """The gripper of urdf/gripper.urdf with an ``nx x nz`` grid of ridges per pad, of
    which ``touching`` (None: all; 2 x 4 grids only) reach the pad's face, in the order
    ``TOUCH_ORDER``, the others ``RECESS`` behind it."""
    xs = np.linspace(-0.015, 0.015, nx) if nx > 1 else [0.0]
    zs = np.linspace(-0.015, 0.015, nz) if nz > 1 else [0.0]
    sx, sz = 0.05 / nx, 0.05 / nz  # ridge size: a grid covering 55 mm of the 60 mm face
    grid = [(x, z) for x in xs for z in zs]
    back = [0.0] * len(grid)
    if touching is not None:
        if len(grid) != len(TOUCH_ORDER):
            raise ValueError(f"touching: expected a 2 x 4 grid, got {nx} x {nz}")
        back = [0.0 if TOUCH_ORDER.index(r) < touching else RECESS for r in range(len(grid))]

    def finger(name, y0, side):
        cols = "".join(
            f'<collision><origin xyz="{x:g} {side * (0.005 + b):g} {z:g}"/><geometry>'
            f'<box size="{0.5 * sx + 0.0025:g} 0.01 {0.5 * sz + 0.0025:g}"/></geometry></collision>'
            for (x, z), b in zip(grid, back))
        return (f'<joint name="{name}_joint" type="prismatic"><parent link="palm"/>'
                f'<child link="{name}"/><origin xyz="0 {y0:g} 0"/><axis xyz="0 1 0"/>'
                f'<limit lower="-0.02" upper="0.02" effort="200" velocity="0.5"/></joint>'
                f'<link name="{name}"><inertial><origin xyz="0 {side * 0.015:g} 0"/>'
                f'<mass value="0.1"/><inertia ixx="4e-5" ixy="0" ixz="0" iyy="6e-5" iyz="0" '
                f'izz="4e-5"/></inertial>{cols}<collision><origin xyz="0 {side * 0.02:g} 0"/>'
                f'<geometry><box size="0.06 0.02 0.06"/></geometry></collision></link>')

    return ('<?xml version="1.0"?><robot name="gripper"><link name="palm"><inertial>'
            '<mass value="1.0"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" '
            'izz="0.001"/></inertial></link>' + finger("left_finger", -0.04, -1)
            + finger("right_finger", 0.04, 1) + "</robot>")


def scaling_table(steps, settle, ridges=RIDGES):
    from contact_lcp.sim import Simulator, scene_from_dict

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for series, nx, nz, points, touching in ridges:
            urdf = os.path.join(tmp, f"gripper_{nx}x{nz}_{touching}.urdf")
            with open(urdf, "w") as f:
                f.write(gripper_urdf(nx, nz, touching))
            # One 80 mm wide box between the pads (pads 80 mm apart at q = 0).
            scene = scene_from_dict({
                "time_step": 1e-3, "ground": False,
                "robots": [{"name": "gripper", "urdf": urdf, "floating_base": False,
                            "controller": {"kp": 3000.0, "kd": 20.0, "trajectory": {
                                "type": "csv",
                                "file": os.path.join(ROOT, "config/grasp_squeeze.csv")}}}],
                "bodies": [{"name": "box", "shape": "box", "size": [0.06, 0.08, 0.06],
                            "mass": 0.4, "pose": [0, 0, 0, 0, 0, 0, 1], "friction": 1.0}],
                "contact": {"model": "no_slip", "friction": 1.0,
                            "max_points_per_pair": points},
            })
            name = f"{nx}x{nz} ridges, {points} pt"
            if touching is not None:
                name += f", {touching} touching"
            print(f"[bench_drumwright] scaling {name}", file=sys.stderr, flush=True)
            try:
                row = run(Simulator(scene), steps, settle)
            except Exception as e:
                row = dict(status=f"failed: {type(e).__name__}: {e}")
            rows.append(dict(section="scaling", scene="gripper", name=name, notes=series,
                             **row))
    return rows


def scaling_ratios(rows):
    """``(series, fewest, most)`` contacts rows of each scaling series that ran."""
    out = []
    for series in (GROWS, POINTS, TOUCHING):
        ok = [r for r in rows if r.get("notes") == series and r.get("status") == "ok"]
        if series == POINTS:  # its 64-contact end is the last row of the first series
            ok += [r for r in rows if r.get("notes") == GROWS and r.get("status") == "ok"
                   and r["name"].startswith("2x4")]
        if len(ok) >= 2:
            out.append((series, min(ok, key=lambda r: r["contacts"]),
                        max(ok, key=lambda r: r["contacts"])))
    return out


def collision_table(steps, settle):
    """The grasp's collision stage with box-box pairs in closed form and through coal."""
    rows = []
    for name, closed in (("box-box closed form", True), ("box-box through coal", False)):
        print(f"[bench_drumwright] collision {name}", file=sys.stderr, flush=True)
        sim = simulator(os.path.join(ROOT, SCENES["grasp"]), "no_slip", {})
        if not closed:  # the detector's general path for these pairs (a private switch)
            sim.detector._box_pair[:] = False
        rows.append(dict(section="collision", scene="grasp", name=name,
                         **run(sim, steps, settle)))
    return rows


def grasp_targets(rows, rat, lcp):
    """Print the grasp's targets: PPM pivots, and the pyramid's robust search against the
    no-slip PPM per step (warm, in the simulation) and per LCP (cold, replayed)."""
    grasp = {r["name"]: r for r in rows if r["scene"] == "grasp" and r.get("status") == "ok"}
    # the no-slip replay's rows (each model's replay has its own pyramid LCP row)
    grasp_lcp = [r for r in lcp if r["scene"] == "grasp"]
    at = next((i for i, r in enumerate(grasp_lcp) if r["name"] == "no_slip LCP/ppm"), None)
    cold = {} if at is None else {r["name"]: r["lcp_us"] for r in grasp_lcp[at - 1:at + 1]}
    if "no_slip/ppm" not in grasp or "pyramid/robust" not in grasp:
        return
    print(f"grasp targets: no-slip PPM pivots mean {grasp['no_slip/ppm']['pivots_mean']:.2f} "
          f"(<= 7); pyramid-robust / no-slip-PPM (>= 5): solve per step, warm (the "
          f"simulation's solve stage) {rat[0]['solve_median']:.1f}x median, "
          f"{rat[0]['solve']:.1f}x mean; per LCP, cold (replayed, solve() of each) "
          + (f"{cold['pyramid LCP/robust'] / cold['no_slip LCP/ppm']:.1f}x median"
             if "no_slip LCP/ppm" in cold else "n/a")
          + f"; whole step (S4's measure) {rat[0]['step_median']:.1f}x median, "
          f"{rat[0]['step']:.1f}x mean")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="a few steps per row, the legged scene only (smoke run)")
    p.add_argument("--results-dir", default=None, help="CSV folder ('' writes nothing)")
    args = p.parse_args(argv)
    steps = {"grasp": 10, "legged": 10} if args.quick else {"grasp": 200, "legged": 500}
    settle = 2 if args.quick else 50
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    # --quick: the legged scene only (the grasp's pyramid LCPs take seconds each cold)
    scenes = {"legged": SCENES["legged"]} if args.quick else SCENES
    rows = models_table(steps, settle, scenes)
    print("\nModels (pyramid: robust search; viscous / no_slip: modified PPM or robust)")
    print(common.format_table(rows, ("scene", "name", "contacts", "lcp_size", "step_mean_us",
                                     "step_us", "solve_mean_us", "solve_us", "pivots_mean",
                                     "pivots_max", "slip_max", "failures", "fallbacks",
                                     "drift", "status")))
    rat = ratios(rows)
    print("\nSpeed ratios (ours: mean = whole-run time as S4's, and median step / solve "
          "time; S4: whole runs)")
    print(common.format_table(rat, ("name", "step", "solve", "step_median", "solve_median",
                                    "s4")))
    lcp = lcp_table(10 if args.quick else 50, scenes)
    print("\nLCPs alone, cold (failures: uncertified, or the PPM fell back to robust)")
    print(common.format_table(lcp, ("scene", "name", "lcp_size", "lcp_us", "pivots_mean",
                                    "pivots_max", "failures")))
    grasp_targets(rows, rat, lcp)
    coll = [] if args.quick else collision_table(steps["grasp"], settle)
    if coll:
        print("\nGrasp collision: box-box pairs in closed form or through coal (no-slip)")
        print(common.format_table(coll, ("name", "contacts", "step_us", "collision_us",
                                         "solve_us", "slip_max", "failures", "status")))
    scale = scaling_table(10 if args.quick else 300, settle,
                          (RIDGES[0], RIDGES[6]) if args.quick else RIDGES)
    print("\nNo-slip cost against contacts at 8 dofs (notes: the series)")
    print(common.format_table(scale, ("notes", "name", "contacts", "dofs", "step_us",
                                      "collision_us", "lcp_build_us", "solve_us",
                                      "pivots_mean", "slip_max", "failures", "status")))
    for label, a, b in scaling_ratios(scale):
        print(f"{label}: {b['name']} / {a['name']} ({b['contacts']:.0f} / {a['contacts']:.0f} "
              f"contacts, {b['dofs']} dofs): step {b['step_us'] / a['step_us']:.2f}, model "
              f"solve {b['solve_us'] / a['solve_us']:.2f}, collision "
              f"{b['collision_us'] / a['collision_us']:.2f}"
              + (" (target <= 2)" if label == TOUCHING else ""))
    all_rows = rows + [dict(section="ratio", scene="", name=r["name"], step_us=r["step_median"],
                            solve_us=r["solve_median"], step_mean_us=r["step"],
                            solve_mean_us=r["solve"], notes=f"S4: {r['s4']}")
                       for r in rat] + lcp + coll + scale
    load1 = os.getloadavg()[0]
    for r in all_rows:
        r.update(revision=revision, date=date, load1=load1)
    if args.results_dir != "":
        path = common.results_path("bench_drumwright", revision, stamp, args.results_dir)
        common.write_csv(path, all_rows, COLUMNS)
        print(f"\nwrote {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
