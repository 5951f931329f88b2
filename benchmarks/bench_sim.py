#!/usr/bin/env python3
"""Simulation speed side by side: our simulator and its peers on the same scenes, one process.

Four tables, all printed and written to one CSV
(``benchmarks/results/bench_sim_<stamp>_<revision>.csv``, revision = short hash of HEAD,
``-dirty`` when tracked files changed, plus the 1-minute load average of the machine at
the start and the end of the run):

1. **side by side** — per scene (humanoid, Talos and Go1 standing at h = 1 ms, the 5-box
   tower at h = 10 ms, our ``config/*.yaml``), our row and each peer's (MuJoCo, Drake
   point and hydroelastic, DART, PyBullet: ``sim_peers.py``) from the same harness
   (``peer_harness.measuring``: untimed settle, only ``step()`` timed), with the physics
   of every row: ``sum F_z / (m g)``, drift, the engine's and our own penetration,
   friction cone, standing, the ``check`` verdict (``peer_checks``), and on our rows
   ``x_<peer>`` = our speed over the peer's on the same scene: the median over the chunks
   of the peer's step time over ours in the same turn;
2. **ours** — LCP size and outcome, pivots, fallbacks, scene load time;
3. **breakdown** — mean time per step of each stage of ``StepInfo.timings`` and the rest
   of the mean step ("other": Python glue), Python-level calls per step;
4. **scaling** — step time against contact count (8/16/32/64 points) on scenes of 2/4/8/16
   boxes resting on the ground; when ``contact_lcp.sim`` is not importable, the LCP of
   the same resting boxes (analytic Delassus matrix) is timed alone instead.

Step times are the median over chunks of the mean step in the chunk, with one BLAS thread
(``chunk_us`` in the CSV: each chunk's). The scenes run one after another; on each, ours
and the peers run chunk by chunk in turn (ours first), so that the chunks a ratio
compares ran seconds apart: a shared machine's speed drifts by tens of percent over
minutes, and two engines run one after the other would carry that into their ratio.
Targets (issue 36, not tests): Talos and Go1 >= 0.5x MuJoCo's real-time factor and ahead of
Drake, DART and PyBullet; the tower ahead of DART and PyBullet, >= 0.25x MuJoCo, drift
<= 0.01 mm.

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

import bench_sim_ours  # noqa: E402
import common  # noqa: E402  (revision stamp, CSV, stats, tables)
import peer_scenes  # noqa: E402
from peer_harness import in_turn  # noqa: E402
import sim_peers  # noqa: E402

STAGES = bench_sim_ours.STAGES
SCENES = dict(peer_scenes.SCENE_FILES)
#: scenes that need the optional example-robot-data wheel
ROBOT_DATA_SCENES = ("talos", "go1")
SCALING_POINTS = (8, 16, 32, 64)
#: scenes whose `contact-lcp simulate --output` rate is measured beside the in-process one
CLI_SCENES = ("humanoid", "talos")
#: issue 36's targets: our real-time factor over MuJoCo's on the robots (goal 1) and on
#: the tower, and the tower's largest drift [mm]
TARGET_X_MUJOCO = 0.5
TARGET_X_MUJOCO_TOWER = 0.25
TARGET_TOWER_DRIFT_MM = 0.01
BOX_SIZE = (0.2, 0.2, 0.1)
BOX_MASS = 1.0
X_COLUMNS = tuple("x_" + p for p in sim_peers.PEERS)
COLUMNS = ("revision", "date", "load1", "load1_end", "section", "name", "engine", "scene", "status", "version",
           "time_step", "steps", "step_us", "step_mean_us", "steps_per_s", "rtf") + X_COLUMNS + (
           "chunk_us", "load_s", "points", "num_contacts", "num_active", "lcp_size", "lcp_solved", "lcp_method",
           "pivots", "fallbacks", "force_ratio", "max_penetration", "penetration_check", "cone_ratio", "base_height",
           "drift_mm", "stands", "check", "calls_per_step", "first_rung_share", "cli_rtf", "cli_share",
           "cli_share_lo", "cli_share_hi") + tuple(
               s + "_us" for s in STAGES) + ("other_us", "notes")


def simulator_class():
    """``contact_lcp.sim.Simulator``, or None while it does not exist."""
    try:
        from contact_lcp.sim import Simulator
    except ImportError:
        return None
    return Simulator


def time_simulator(sim, *, steps, settle, chunks):
    """Time ``sim.step()`` on a scaling scene (resting boxes, no physics columns)."""
    for _ in range(settle):
        sim.step()
    per = max(1, steps // chunks)
    chunk_means, infos = [], []
    for _ in range(chunks):
        t0 = time.perf_counter()
        for _ in range(per):
            infos.append(sim.step())
        chunk_means.append((time.perf_counter() - t0) / per)
    step = common.median(chunk_means)
    last = sim.step()  # one more, untimed step for the size of the model's LCP
    h = float(sim.h)
    stages = {s + "_us": 1e6 * float(np.mean([i.timings.get(s, 0.0) for i in infos])) for s in STAGES}
    return dict(
        status="ok", time_step=h, steps=per * chunks, step_us=1e6 * step, steps_per_s=1.0 / step,
        rtf=h / step, lcp_size=int(last.report.info.get("lcp_size", 0)),
        num_contacts=float(np.mean([i.num_contacts for i in infos])),
        lcp_solved=float(np.mean([i.lcp_status in ("SOLVED", "NO_CONTACT") for i in infos])),
        lcp_method=str(infos[-1].lcp_method), pivots=common.median([i.pivots for i in infos]), **stages)


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


#: issue 36's target: ``contact-lcp simulate --output`` at >= this share of the step rate
#: in this process on the same scene (:func:`cli_share`)
TARGET_CLI_SHARE = 0.85


def cli_rate(path, duration):
    """Real-time factor ``contact-lcp simulate <path> --duration <duration> --output ...``
    reports after its first step (which loads the kernels): what a user's run gets, with
    its per-step recording; None when it fails."""
    import re
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.run(
            [sys.executable, "-m", "contact_lcp.cli", "simulate", path, "--duration", repr(duration),
             "--output", os.path.join(folder, "run.npz")],
            capture_output=True, text=True, cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))
    found = re.search(r"then ([0-9.]+)x\)", proc.stdout + proc.stderr)
    return float(found.group(1)) if proc.returncode == 0 and found else None


def cli_share(path, duration, Simulator, rounds=5, steps=1000, settle=200):
    """``(cli_rtf, share, lo, hi)``: the real-time factor of :func:`cli_rate` and its
    share of the steady step rate in this process on the same scene, measured in turn
    (the in-process rate of ``steps`` steps, then the command, ``rounds`` times): the
    medians of the command's rates and of each turn's ratio, and the turns' smallest and
    largest ratio (a turn's ratio moves with the machine's speed between its two
    measurements, so a verdict needs the spread beside it); all None when the command
    fails. Measured minutes
    apart, the two rates would carry the machine's drift into the share."""
    sim = Simulator.from_file(path)
    for _ in range(settle):
        sim.step()
    rates, shares = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step()
        here = steps * sim.h / (time.perf_counter() - t0)
        cli = cli_rate(path, duration)
        if cli is None:
            return None, None, None, None
        rates.append(cli)
        shares.append(cli / here)
    return (float(np.median(rates)), float(np.median(shares)), float(min(shares)),
            float(max(shares)))


def _ratio(a, b):
    return a / b if a and b and np.isfinite(a) and np.isfinite(b) else float("nan")


def _x(ours, peer):
    """Our speed over the peer's on one scene: the median over the chunks of the peer's
    chunk step time over ours in the same turn (the two ran seconds apart, see
    :func:`peer_harness.in_turn`); the ratio of the whole runs' rates when the chunks do not
    pair up."""
    a, b = tuple(ours.get("chunk_times") or ()), tuple(peer.chunk_times)
    if a and len(a) == len(b) and all(x > 0 for x in a + b):
        return float(np.median(np.array(b) / np.array(a)))
    return _ratio(ours.get("rtf"), peer.rtf)


def side_by_side(peers, ours):
    """Add ``x_<peer>`` (our speed over the peer's, same scene: :func:`_x`) to each of our
    rows; returns the rows of the side-by-side table: per scene ours first, then the
    peers."""
    rows = []
    for r in ours:
        for p in sim_peers.PEERS:
            match = [q for q in peers if q.engine == p and q.scene == r["name"] and q.status == "ok"]
            r["x_" + p] = _x(r, match[0]) if match and r.get("status") == "ok" else None
    scenes = list(dict.fromkeys([r["name"] for r in ours] + [p.scene for p in peers]))
    for scene in scenes:
        rows += [dict(r, engine="contact_lcp", scene=scene) for r in ours if r["name"] == scene]
        rows += [p.as_row() for p in peers if p.scene == scene]
    return rows


SIDE = [("scene", "scene"), ("engine", "engine"), ("status", "status"), ("rtf", "RTF"),
        ("steps_per_s", "steps/s")] + [("x_" + p, "x" + p) for p in sim_peers.PEERS] + [
        ("force_ratio", "Fz/mg"), ("drift_mm", "drift mm"), ("max_penetration", "pen [m]"),
        ("penetration_check", "pen ours [m]"), ("cone_ratio", "Ft/Fn"), ("num_contacts", "contacts"),
        ("stands", "stands"), ("check", "check")]


def targets(row):
    """Issue 36's targets for one of our rows: (target, 'MET' / 'NOT MET' / 'no peer row')."""
    def verdict(x, at_least):
        return "no peer row" if x is None or not np.isfinite(x) else ("MET" if x >= at_least else "NOT MET")

    out = []
    if row["name"] in ROBOT_DATA_SCENES:
        out.append((f">= {TARGET_X_MUJOCO:g}x MuJoCo", verdict(row.get("x_mujoco"), TARGET_X_MUJOCO)))
        out += [(f"ahead of {p}", verdict(row.get("x_" + p), 1.0)) for p in ("drake", "dart", "pybullet")]
    elif row["name"] == "tower":
        out.append((f">= {TARGET_X_MUJOCO_TOWER:g}x MuJoCo", verdict(row.get("x_mujoco"), TARGET_X_MUJOCO_TOWER)))
        out += [(f"ahead of {p}", verdict(row.get("x_" + p), 1.0)) for p in ("dart", "pybullet")]
        out.append((f"drift <= {TARGET_TOWER_DRIFT_MM:g} mm",
                    "MET" if row.get("drift_mm", np.inf) <= TARGET_TOWER_DRIFT_MM else "NOT MET"))
    if row.get("cli_rtf") is not None:
        out.append((f"simulate --output >= {TARGET_CLI_SHARE:g}x the in-process rate, in turn "
                    f"({row['cli_rtf']:.2f}x real time, {row['cli_share']:.2f}x, turns "
                    f"{row['cli_share_lo']:.2f}-{row['cli_share_hi']:.2f})",
                    verdict(row.get("cli_share"), TARGET_CLI_SHARE)))
    return out


def report(side, ours, scaling, load1, load1_end):
    """Print the four tables and the targets; returns the text."""
    noisy = load1 > 0.7 or load1_end > 1.7  # by the end this run itself adds about 1
    out = [f"machine load (1 min) at start / end: {load1:.2f} / {load1_end:.2f} on {os.cpu_count()} cores"
           + ("  -- NOISY: other processes were running" if noisy else "")]
    out += ["", "Side by side (same harness; RTF = real-time factor; x<peer> = ours / peer; pen = the engine's "
            "own largest penetration, pen ours = ours from its poses)",
            common.format_table(side, [c for c, _ in SIDE], [h for _, h in SIDE])]
    ok = [r for r in ours if r.get("status") == "ok"]
    out += ["", "Ours: LCP and load",
            common.format_table(ours, ["name", "status", "step_us", "load_s", "num_active", "lcp_size", "lcp_solved",
                                       "lcp_method", "pivots", "fallbacks", "first_rung_share"],
                                ["scene", "status", "step [us]", "load [s]", "active", "LCP n", "LCP ok", "method",
                                 "pivots", "fallbacks", "compiled"])]
    if ok:
        cols = [s + "_us" for s in STAGES] + ["other_us", "step_mean_us", "calls_per_step"]
        out += ["", "Profile: mean time per stage [us] (other = the rest of sim.step(): Python glue) "
                "and Python-level calls per step",
                common.format_table(ok, ["name"] + cols, ["scene"] + list(STAGES) + ["other", "total", "py calls"])]
    out += ["", "Scaling: step time against contact points" + (f" ({scaling[0]['notes']})" if scaling else ""),
            common.format_table(scaling, ["name", "status", "points", "num_contacts", "lcp_size", "step_us",
                                          "collision_us", "lcp_build_us", "solve_us", "lcp_method", "pivots",
                                          "lcp_solved"],
                                ["scene", "status", "points", "contacts", "LCP n", "step [us]",
                                 "collision [us]", "build [us]", "solve [us]", "method", "pivots", "LCP ok"])]
    for r in ok:
        line = f"{r['name']}: {r['rtf']:.2f}x real time" + "".join(
            f"; {r['x_' + p]:.3g}x {p}" for p in sim_peers.PEERS if r.get("x_" + p) is not None)
        out.append(line + "".join(f"\n  target {t}: {v}" for t, v in targets(r)))
    text = "\n".join(out)
    print(text)
    return text


def _ours(name, Simulator, rev, args, options):
    """Our run on the scene ``name``: a generator of :func:`peer_harness.measuring`'s
    kind whose value is our row, or the row itself (a status) when it cannot run."""
    if Simulator is None:
        return dict(name=name, status="contact_lcp.sim not available")
    if name in ROBOT_DATA_SCENES and not _installed("example-robot-data"):
        return dict(name=name, status="not installed (example-robot-data)")
    return bench_sim_ours.measuring_ours(name, os.path.join(ROOT, SCENES[name]), Simulator, version=rev,
                                         method=args.method, profile_steps=20 if args.quick else 500, **options)


def _scene(name, ours, peers, Simulator, rev, args, options):
    """Our run (``ours``) and the ``peers``' on the scene ``name``, chunk by chunk in turn
    (:func:`peer_harness.in_turn`): ``(our row or None, the peers' PeerRuns)``."""
    runs = []
    if ours:
        runs.append((_ours(name, Simulator, rev, args, options),  # (a failure: report, go on)
                     lambda e: dict(name=name, status=f"failed: {type(e).__name__}: {e}")))
    results = in_turn(runs + sim_peers.scene_runs(peers, name, **options))
    return (results[0] if ours else None), results[1 if ours else 0:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few steps of each; for the smoke test")
    ap.add_argument("--peers", default=",".join(sim_peers.PEERS),
                    help="comma-separated peers to run ('' for none); default all")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated scenes for our simulator")
    ap.add_argument("--peer-scenes", default=",".join(sim_peers.SCENES),
                    help="comma-separated scenes for the peers ('' for none)")
    ap.add_argument("--points", default=",".join(map(str, SCALING_POINTS)), help="scaling contact counts")
    ap.add_argument("--method", default=None, help="LCP method for every scene (default: the scene's)")
    ap.add_argument("--synthetic", action="store_true", help="scaling on the LCP alone even if the sim exists")
    ap.add_argument("--results-dir", default=common.RESULTS_DIR, help="where the CSV goes ('' for none)")
    args = ap.parse_args(argv)
    names = lambda text: [x for x in text.split(",") if x]  # noqa: E731
    for opt, given, known in (("--scenes", args.scenes, SCENES), ("--peer-scenes", args.peer_scenes, SCENES),
                              ("--peers", args.peers, sim_peers.PEERS)):
        unknown = [x for x in names(given) if x not in known]
        if unknown:
            ap.error(f"{opt}: unknown {unknown}; expected names from {sorted(known)}")
    # full: 5 s of simulated time per scene and engine after 0.5 s of settling
    duration, settle, chunks, steps = (0.02, 0.005, 2, 20) if args.quick else (5.0, 0.5, 10, 3000)
    options = dict(duration=duration, settle=settle, chunks=chunks)
    load1 = os.getloadavg()[0]
    rev = common.git_revision(ROOT)

    Simulator = simulator_class()
    ours, peers = [], []
    # scene by scene, ours and the peers chunk by chunk in turn: a ratio compares chunks
    # run seconds apart, as a shared machine's speed drifts by tens of percent over minutes
    for name in dict.fromkeys(names(args.scenes) + names(args.peer_scenes)):
        mine = name in names(args.scenes)
        theirs = names(args.peers) if name in names(args.peer_scenes) else []
        print(f"[bench_sim] {name}: {', '.join((['ours'] if mine else []) + theirs)} in turn",
              file=sys.stderr, flush=True)
        row, runs = _scene(name, mine, theirs, Simulator, rev, args, options)
        ours += [row] if mine else []
        peers += runs
    for r in ours:  # the command line on the same scene, right after the in-process rows
        if r.get("status") == "ok" and r["name"] in CLI_SCENES:
            print(f"[bench_sim] contact-lcp simulate --output: {r['name']}", file=sys.stderr, flush=True)
            r["cli_rtf"], r["cli_share"], r["cli_share_lo"], r["cli_share_hi"] = cli_share(
                os.path.join(ROOT, SCENES[r["name"]]), duration + settle, Simulator,
                **(dict(rounds=1, steps=5, settle=5) if args.quick else {}))
    points = [int(p) for p in names(args.points)]
    if Simulator is None or args.synthetic:
        scaling = bench_scaling_lcp(points, repeats=3 if args.quick else 20)
    else:
        scaling = bench_scaling_sim(Simulator, points, steps=steps // 3, settle=5 if args.quick else 200,
                                    chunks=chunks, method=args.method)
    load1_end = os.getloadavg()[0]
    side = side_by_side(peers, ours)
    report(side, ours, scaling, load1, load1_end)

    if args.results_dir:
        date, stamp = common.utc_stamp()
        rows = [dict(r, section="ours" if r["engine"] == "contact_lcp" else "peers",
                     step_us=1e6 * r["step_time"] if "step_time" in r else r.get("step_us"),
                     step_mean_us=1e6 * r["step_time_mean"] if "step_time_mean" in r else r.get("step_mean_us"),
                     chunk_us=" ".join(f"{1e6 * t:.1f}" for t in r.get("chunk_times") or ()))
                for r in side]
        rows += [dict(section="scaling", **r) for r in scaling]
        for r in rows:
            r.update(revision=rev, date=date, load1=load1, load1_end=load1_end)
        path = common.write_csv(common.results_path("bench_sim", rev, stamp, args.results_dir), rows, COLUMNS)
        print(f"\nwrote {os.path.relpath(path, os.getcwd())}")
        plot_scaling(scaling, path[:-4] + "_scaling.png")
    return peers, ours, scaling


if __name__ == "__main__":
    main()
