#!/usr/bin/env python3
"""Simulation speed: steps/s and real-time factor at h = 1 ms, peers in the same run.

Four tables, all printed and written to one CSV
(``benchmarks/results/bench_sim_<stamp>_<revision>.csv``, revision = short hash of HEAD,
``-dirty`` when tracked files changed, plus the 1-minute load average of the machine):

1. **peers** — Talos standing in MuJoCo and PyBullet (``sim_peers.py``), when installed;
2. **ours** — the default humanoid and Talos standing (``config/*_stand.yaml``): steps/s,
   real-time factor, scene load time (includes the feet's convex hulls), contacts, LCP
   outcome;
3. **breakdown** — mean time per step of each stage of ``StepInfo.timings`` (collision,
   dynamics, lcp_build, solve, integrate) and the rest of the mean step ("other": Python
   glue);
4. **scaling** — step time against contact count (8/16/32/64 points) on scenes of 2/4/8/16
   boxes resting on the ground; when ``contact_lcp.sim`` is not importable, the LCP of
   the same resting boxes (analytic Delassus matrix) is timed alone instead, and the table
   says so.

Step times are the median over ``chunks`` timed chunks of the mean step in the chunk
(``time.perf_counter``), after an untimed settle, with one BLAS thread. Target (not a test): Talos standing at
>= 5x real time at 1 kHz on one core.

Usage::

    .venv/bin/python benchmarks/bench_sim.py            # full run, a few minutes
    .venv/bin/python benchmarks/bench_sim.py --quick    # seconds; what the smoke test runs
"""

import argparse
import importlib.metadata
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402
import yaml  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import common  # noqa: E402  (revision stamp, CSV, stats, tables)
import sim_peers  # noqa: E402

STAGES = ("collision", "dynamics", "lcp_build", "solve", "contact", "integrate")
SCENES = {"humanoid": "config/humanoid_stand.yaml", "talos": "config/talos_stand.yaml"}
SCALING_POINTS = (8, 16, 32, 64)
TARGET_RTF = 5.0
BOX_SIZE = (0.2, 0.2, 0.1)
BOX_MASS = 1.0
COLUMNS = ("revision", "date", "load1", "load1_end", "section", "name", "status", "version", "time_step", "steps",
           "step_us", "step_mean_us", "steps_per_s", "rtf", "load_s", "points", "num_contacts", "num_active",
           "lcp_size", "lcp_solved", "lcp_method", "pivots", "fallbacks", "max_penetration",
           "base_height", "stands", "force_ratio", "base_drift", "calls_per_step", "compiled_share") + tuple(
               s + "_us" for s in STAGES) + ("other_us", "notes")


def simulator_class():
    """``contact_lcp.sim.Simulator``, or None while it does not exist."""
    try:
        from contact_lcp.sim import Simulator
    except ImportError:
        return None
    return Simulator


def python_calls_per_step(sim, steps=500):
    """Python-level function calls per ``sim.step()`` (cProfile's count, C calls included)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        sim.step()
    prof.disable()
    return pstats.Stats(prof).total_calls / steps


def time_simulator(sim, *, steps, settle, chunks):
    """Time ``sim.step()``; returns the row fields of the 'ours' and 'breakdown' tables,
    plus the physics of the run: mean vertical contact force on the robots against m g,
    horizontal base drift and the largest penetration over the timed steps."""
    robots = bool(sim.scene.robots)
    z0 = float(sim.base_state(0).pose[2]) if robots else None
    for _ in range(settle):
        sim.step()
    p0 = sim.base_state(0).pose[:3].copy() if robots else None
    per = max(1, steps // chunks)
    chunk_means, infos, fz = [], [], []
    for _ in range(chunks):
        t0 = time.perf_counter()
        for _ in range(per):
            infos.append(sim.step())
        chunk_means.append((time.perf_counter() - t0) / per)
        fz.append(sim.contact_force_total()[2])
    step, mean = common.median(chunk_means), float(np.mean(chunk_means))
    last = sim.step()  # one more, untimed step for the size of the model's LCP
    lcp_size = int(last.report.info.get("lcp_size", 0))
    h = float(sim.h)
    stages = {s + "_us": 1e6 * float(np.mean([i.timings.get(s, 0.0) for i in infos])) for s in STAGES}
    solved = [i.lcp_status in ("SOLVED", "NO_CONTACT") for i in infos]
    extra = {}
    if z0 is not None:  # standing check on the first robot's base
        z1 = float(sim.base_state(0).pose[2])
        mg = sum(sim.robot_mass(i) for i in range(len(sim.world.robots))) * float(
            np.linalg.norm(sim.scene.gravity))
        extra = dict(base_height=z1, stands=abs(z1 - z0) < sim_peers.STAND_TOLERANCE,
                     force_ratio=float(np.mean(fz)) / mg if mg else float("nan"),
                     base_drift=float(np.linalg.norm(sim.base_state(0).pose[:2] - p0[:2])))
    extra["calls_per_step"] = python_calls_per_step(sim)
    # the share of the timed steps that took the compiled common step (sim/hot_step.py;
    # it times its work as one stage, "contact")
    extra["compiled_share"] = float(np.mean(["contact" in i.timings for i in infos]))
    return dict(
        status="ok", time_step=h, steps=per * chunks, step_us=1e6 * step, steps_per_s=1.0 / step,
        lcp_size=lcp_size,
        rtf=h / step, num_contacts=float(np.mean([i.num_contacts for i in infos])),
        num_active=float(np.mean([i.num_active for i in infos])), **extra,
        lcp_solved=float(np.mean(solved)),
        lcp_method=str(infos[-1].lcp_method), pivots=common.median([i.pivots for i in infos]),
        fallbacks=int(sum(i.fallbacks for i in infos)),
        max_penetration=float(max(i.max_penetration for i in infos)),
        step_mean_us=1e6 * mean, other_us=1e6 * mean - sum(stages.values()), **stages,
    )


def bench_scene(name, path, Simulator, *, steps, settle, chunks, method=None):
    """One row for a scene file; a missing scene or a failing simulator is a status.

    ``method`` replaces the scene's LCP method (``Simulator.from_file(solver_method=...)``).
    """
    if not os.path.isfile(path):
        return dict(name=name, status=f"no scene file {os.path.relpath(path, ROOT)}")
    print(f"[bench_sim] {name}: {steps} steps", file=sys.stderr, flush=True)
    try:
        t0 = time.perf_counter()
        sim = Simulator.from_file(path, solver_method=method)
        load_s = time.perf_counter() - t0
        row = time_simulator(sim, steps=steps, settle=settle, chunks=chunks)
    except Exception as e:  # report, keep benchmarking the rest
        return dict(name=name, status=f"failed: {type(e).__name__}: {e}")
    return dict(name=name, load_s=load_s, **row)


def box_scene(num_boxes, *, h=1e-3, friction=0.8):
    """A scene dict: ``num_boxes`` boxes resting on the ground in a row, 4 corners each."""
    lx, ly, lz = BOX_SIZE
    bodies = [dict(name=f"box{i}", shape="box", size=list(BOX_SIZE), mass=BOX_MASS,
                   pose=[1.5 * lx * i, 0.0, lz / 2, 0.0, 0.0, 0.0, 1.0], velocity=[0.0] * 6,
                   friction=friction)
              for i in range(num_boxes)]
    return dict(time_step=h, duration=1.0, gravity=[0.0, 0.0, -9.81],
                ground=dict(height=0.0, friction=friction), robots=[], bodies=bodies)


def bench_scaling_sim(Simulator, points, *, steps, settle, chunks, method=None):
    """Scaling rows from full simulator steps on resting-box scenes."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in points:
            path = os.path.join(tmp, f"boxes_{n}.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(box_scene(n // 4), f)
            row = bench_scene(f"{n // 4} boxes", path, Simulator, steps=steps, settle=settle, chunks=chunks,
                              method=method)
            rows.append(dict(row, points=n, notes="full sim.step() on resting boxes"))
    return rows


def resting_boxes_delassus(num_boxes, h=1e-3, g=9.81):
    """``G = J M^-1 J'`` and ``u`` for boxes resting on their 4 bottom corners.

    Contact frames are (z, x, y) in W; each box has mass ``BOX_MASS``, size ``BOX_SIZE``.
    ``u`` is the contact velocity after one step of gravity, ``-g h`` on the normals.

    Returns
    -------
    G : (12 b, 12 b) ndarray [1/kg];  u : (12 b,) ndarray [m/s]
    """
    lx, ly, lz = BOX_SIZE
    m = BOX_MASS
    I_diag = m / 12.0 * np.array([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])
    Minv = np.diag(np.concatenate([np.full(3, 1.0 / m), 1.0 / I_diag]))
    rows = []
    for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        r = np.array([sx * lx / 2, sy * ly / 2, -lz / 2])
        skew = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        J_W = np.hstack([np.eye(3), -skew])  # point velocity = v + w x r
        rows.append(J_W[[2, 0, 1]])  # contact frame rows (n, t1, t2)
    J = np.vstack(rows)
    G_box = J @ Minv @ J.T
    G = np.kron(np.eye(num_boxes), G_box)
    u = np.tile(J @ np.array([0, 0, -g * h, 0, 0, 0]), num_boxes)
    return G, u


def bench_scaling_lcp(points, *, repeats, mu=0.8):
    """Scaling rows from the contact LCP alone (build + solve), when there is no simulator."""
    from contact_lcp.contact.lcp_builder import build_contact_lcp
    from contact_lcp.lcp import METHODS, solve

    method = next(m for m in ("robust", "lemke", "lexicographic", "pgs") if m in METHODS)
    rows = []
    for n in points:
        G, u = resting_boxes_delassus(n // 4)
        build, total, res = [], [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            lcp = build_contact_lcp(G, u, mu)
            t1 = time.perf_counter()
            res = solve(lcp.M, lcp.q, method=method)
            build.append(t1 - t0)
            total.append(time.perf_counter() - t0)
        step, b = common.median(total), common.median(build)
        rows.append(dict(name=f"{n // 4} boxes", status="ok", points=n, num_contacts=n,
                         lcp_size=len(lcp.q), step_us=1e6 * step, lcp_build_us=1e6 * b,
                         solve_us=1e6 * (step - b), lcp_method=method, lcp_solved=float(res.success),
                         pivots=res.pivots, steps=repeats,
                         notes="synthetic: one frictional LCP of resting boxes, build + solve only"))
    return rows


def _installed(dist):
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def plot_scaling(rows, path):
    """Step time against contact points, with the line through the smallest case."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok:
        return
    x = np.array([r["points"] for r in ok], dtype=float)
    y = np.array([r["step_us"] for r in ok], dtype=float)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(x, y, "o-", label="step time")
    ax.plot(x, y[0] * x / x[0], "--", label="linear from the first")
    ax.set_xlabel("contact points")
    ax.set_ylabel("step [us]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {os.path.relpath(path, os.getcwd())}")


def _ratio(a, b):
    return a / b if a and b and np.isfinite(a) and np.isfinite(b) else float("nan")


def report(peers, ours, scaling, load1, load1_end):
    """Print the four tables and the comparisons; returns the text."""
    noisy = load1 > 0.7 or load1_end > 1.7  # by the end this run itself adds about 1
    out = [f"machine load (1 min) at start / end: {load1:.2f} / {load1_end:.2f} on {os.cpu_count()} cores"
           + ("  -- NOISY: other processes were running" if noisy else "")]
    out += [] if not peers else ["", "Peers: Talos standing, h = 1 ms",
            common.format_table([p.as_row() for p in peers],
                                ["name", "status", "version", "steps_per_s", "rtf", "base_height", "stands",
                                 "num_contacts"],
                                ["peer", "status", "version", "steps/s", "RTF", "base z [m]", "stands", "contacts"])]
    out += [] if not ours else ["", "Ours: standing, h = 1 ms",
            common.format_table(ours, ["name", "status", "steps_per_s", "rtf", "step_us", "load_s", "num_contacts",
                                       "num_active", "lcp_size", "lcp_solved", "pivots", "fallbacks", "max_penetration",
                                       "base_height", "stands", "force_ratio", "base_drift", "calls_per_step",
                                       "compiled_share"],
                                ["scene", "status", "steps/s", "RTF", "step [us]", "load [s]", "contacts",
                                 "active", "LCP n", "LCP ok", "pivots", "fallbacks", "max pen [m]", "base z [m]",
                                 "stands", "sum Fz / mg", "drift [m]", "py calls/step", "compiled"])]
    ok = [r for r in ours if r.get("status") == "ok"]
    if ok:
        cols = [s + "_us" for s in STAGES] + ["other_us", "step_mean_us", "calls_per_step"]
        out += ["", "Profile: mean time per stage [us] (other = the rest of sim.step(): Python glue) "
                "and Python-level calls per step",
                common.format_table(ok, ["name"] + cols,
                                    ["scene"] + list(STAGES) + ["other", "total", "py calls"])]
    out += ["", "Scaling: step time against contact points" + (f" ({scaling[0]['notes']})" if scaling else ""),
            common.format_table(scaling, ["name", "status", "points", "num_contacts", "lcp_size", "step_us",
                                          "collision_us", "lcp_build_us", "solve_us", "lcp_method", "pivots",
                                          "lcp_solved"],
                                ["scene", "status", "points", "contacts", "LCP n", "step [us]",
                                 "collision [us]", "build [us]", "solve [us]", "method", "pivots", "LCP ok"])]
    rtf = {p.name: p.rtf for p in peers if p.status == "ok"}
    for r in ok:
        line = f"{r['name']}: {r['rtf']:.2f}x real time"
        line += "".join(f"; {_ratio(r['rtf'], v):.3g}x {k}" for k, v in rtf.items())
        if r["name"] == "talos":
            line += f"; target >= {TARGET_RTF:g}x: {'MET' if r['rtf'] >= TARGET_RTF else 'NOT MET'}"
        out.append(line)
    text = "\n".join(out)
    print(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps of each; for the smoke test")
    ap.add_argument("--peers", default=",".join(sim_peers.PEERS),
                    help="comma-separated peers to run ('' for none); default all")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated standing scenes")
    ap.add_argument("--points", default=",".join(map(str, SCALING_POINTS)), help="scaling contact counts")
    ap.add_argument("--method", default=None, help="LCP method for every scene (default: the scene's)")
    ap.add_argument("--synthetic", action="store_true", help="scaling on the LCP alone even if the sim exists")
    ap.add_argument("--results-dir", default=common.RESULTS_DIR, help="where the CSV goes ('' for none)")
    args = ap.parse_args(argv)
    unknown = [s for s in args.scenes.split(",") if s and s not in SCENES]
    if unknown:
        ap.error(f"--scenes: unknown {unknown}; expected names from {sorted(SCENES)}")
    steps, settle, chunks, peer_s = (20, 5, 2, 0.02) if args.quick else (3000, 200, 5, 5.0)
    load1 = os.getloadavg()[0]

    print(f"[bench_sim] peers: {args.peers or 'none'}", file=sys.stderr, flush=True)
    peers = sim_peers.run_peers([p for p in args.peers.split(",") if p], duration=peer_s,
                                settle=0.01 if args.quick else 0.5, chunks=chunks)
    Simulator = simulator_class()
    ours = []
    for name in [s for s in args.scenes.split(",") if s]:
        if Simulator is None:
            ours.append(dict(name=name, status="contact_lcp.sim not available"))
        elif name == "talos" and not _installed("example-robot-data"):
            ours.append(dict(name=name, status="not installed (example-robot-data)"))
        else:
            ours.append(bench_scene(name, os.path.join(ROOT, SCENES[name]), Simulator,
                                    steps=steps, settle=settle, chunks=chunks, method=args.method))
    points = [int(p) for p in args.points.split(",") if p]
    if Simulator is None or args.synthetic:
        scaling = bench_scaling_lcp(points, repeats=3 if args.quick else 20)
    else:
        scaling = bench_scaling_sim(Simulator, points, steps=steps // 3, settle=settle, chunks=chunks,
                                    method=args.method)
    load1_end = os.getloadavg()[0]
    report(peers, ours, scaling, load1, load1_end)

    if args.results_dir:
        date, stamp = common.utc_stamp()
        rev = common.git_revision(ROOT)
        rows = [dict(section="peers", step_us=1e6 * p.step_time, **p.as_row(),
                     steps=round(p.sim_time / p.time_step) if p.status == "ok" else None) for p in peers]
        rows += [dict(section="ours", **r) for r in ours] + [dict(section="scaling", **r) for r in scaling]
        for r in rows:
            r.update(revision=rev, date=date, load1=load1, load1_end=load1_end)
        path = common.write_csv(common.results_path("bench_sim", rev, stamp, args.results_dir), rows, COLUMNS)
        print(f"\nwrote {os.path.relpath(path, os.getcwd())}")
        plot_scaling(scaling, path[:-4] + "_scaling.png")
    return peers, ours, scaling


if __name__ == "__main__":
    main()
