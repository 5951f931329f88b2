"""Large scenes: what one step costs as a pile grows to hundreds of contacts.

Usage::

    .venv/bin/python benchmarks/bench_large.py                 # spheres_200 (2 s), brazil_nut (2 s)
    .venv/bin/python benchmarks/bench_large.py spheres_200.yaml:0.5

Each scene (a bundled name or a path, ``:seconds`` of simulated time) is loaded with its
defaults and stepped; every step's wall time, contacts found and in the LCP, pivots, the
solve's outcome and the rungs of the model's ladder that ran (``qp:solved(...+polish:
solved)``: a pile step that needed the dense polish), its failed solves, the deepest
penetration and the process's peak
resident memory go to one CSV row
(``benchmarks/results/bench_large_<date>_<revision>.csv``, rewritten after every step, so
that a stopped run keeps its rows). The table printed groups the
steps by the number of contacts in the LCP. With ``--failed-lcps DIR`` every frictional
LCP that a step's robust search did not certify is written to ``DIR`` in the format of
``benchmarks/bench_hard_lcps.py`` (``<scene>_t<time>_<k>.npz``: ``M`` as CSR, ``q`` and
the warm start ``basis``), so that a failing step of a run of hours can be studied alone.
With ``--state FILE`` the simulator's state is written after every step, and
``--resume FILE`` carries a stopped run on from there (to the pivot: the same steps).
Above n = 1000 the robust method pivots on sparse LU factors
(:mod:`contact_lcp.lcp.revised`); below, on the dense tableau, whose cost grows with the
cube of the problem (pivots x n^2). With the pyramid model on the whole pile
(``--model pyramid``) the pour's steps take minutes once it settles, so its 2 s take
hours: ``--state``/``--resume`` split such a run, and
``benchmarks/data/spheres_200_pour.state`` is the pour at t = 1.14 s.

``--model NAME`` solves every scene with that contact model (the bundled pours set
``auto``, which runs the pyramid model on small islands only), ``--sleep`` turns
``contact.sleep`` on, and ``pour_1000`` (a scene name) is a generated 1000-sphere pour
(:func:`pour_scene`). Every row also has the step's contact islands and sleeping bodies,
and the table ends with each scene's total wall time and failed solves (the issue-37
targets: the 200-sphere pour's 2 s within 60 s with 0 failures)::

    .venv/bin/python benchmarks/bench_large.py spheres_200.yaml:2.0 pour_1000:2.0 --model auto --sleep

``--peers mujoco`` also runs each pour (spheres in the walled box) in MuJoCo for the same
number of steps, built from our simulator of the scene (:func:`peer_scenes.pour_from_simulator`),
and prints and writes (``bench_large_peers_<date>_<revision>.csv``) both engines' wall
time, the deepest contact each reports, the deepest overlap our own check finds from the
sphere positions after every step (:func:`peer_checks.pour_penetration`) and the final
pile height::

    .venv/bin/python benchmarks/bench_large.py spheres_200.yaml:2.0 pour_1000:2.0 --model auto --sleep --peers mujoco
"""

import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
from scipy import sparse  # noqa: E402

from contact_lcp.contact import pyramid  # noqa: E402
from contact_lcp.sim import Simulator  # noqa: E402
from contact_lcp.sim.checkpoint import CheckpointError  # noqa: E402
from peer_scenes import NotAPour  # noqa: E402

COLUMNS = ("scene", "step", "t", "ms", "contacts", "active", "pivots", "status", "rungs",
           "failures", "max_penetration", "groups", "islands", "sleeping", "model",
           "peak_rss_mb", "load_s", "revision", "date")
DEFAULT = ("spheres_200.yaml:2.0", "brazil_nut.yaml:2.0")


def peak_rss_mb():
    """Peak resident memory of this process so far [MB] (Linux: ru_maxrss in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class FailedLCPs:
    """While active, keeps every frictional LCP that the pyramid model's solve did not
    certify (as CSR, with its ``q`` and warm start); :meth:`write` saves and forgets them."""

    def __init__(self, folder):
        self.folder, self.kept = folder, []

    def __enter__(self):
        self._real = pyramid.lcp_rung

        def spy(M, q, method, opts):
            res = self._real(M, q, method, opts)
            if not res.success:
                basis = opts.get("initial_basis")
                self.kept.append((sparse.csr_matrix(M), np.array(q),
                                  np.zeros(0, np.int64) if basis is None
                                  else np.asarray(basis, dtype=np.int64)))
            return res

        pyramid.lcp_rung = spy
        return self

    def __exit__(self, *exc):
        pyramid.lcp_rung = self._real

    def write(self, scene, t):
        """Write the LCPs kept since the last call; returns their paths."""
        paths = []
        for k, (M, q, basis) in enumerate(self.kept, 1):
            path = os.path.join(self.folder, f"{os.path.splitext(scene)[0]}_t{t:.3f}_{k}.npz")
            np.savez_compressed(path, data=M.data, indices=M.indices, indptr=M.indptr, q=q,
                                basis=basis)
            paths.append(path)
        self.kept = []
        return paths


def pour_scene(n=1000, radius=0.015, seed=1000):
    """A pour of ``n`` spheres (r = 1.5 cm, 20 g) into ``urdf/walled_box.urdf`` (0.4 m
    square): a 10 x 10 column of ``n / 100`` layers 4.5 cm apart from 0.3 m up, each
    centre shifted by up to 2 mm sideways (numpy ``seed``: neighbours 3.6 cm apart stay
    clear of each other) so that the column collapses;
    as ``config/spheres_200.yaml`` at five times the bodies."""
    from contact_lcp.sim import scene_from_dict

    rng = np.random.default_rng(seed)
    bodies = []
    for i in range(n):
        layer, cell = divmod(i, 100)
        x, y = (cell // 10 - 4.5) * 0.036, (cell % 10 - 4.5) * 0.036
        dx, dy = rng.uniform(-0.002, 0.002, 2)
        bodies.append({"name": f"s{i}", "shape": "sphere", "size": [radius], "mass": 0.02,
                       "pose": [x + dx, y + dy, 0.3 + 0.045 * layer, 0, 0, 0, 1]})
    return scene_from_dict({
        "time_step": 0.01, "duration": 2.0, "gravity": [0, 0, -9.81],
        "ground": {"height": 0.0, "friction": 0.5},
        "robots": [{"name": "box", "urdf": "../urdf/walled_box.urdf", "floating_base": False,
                    "controller": {"type": "effort"}}],
        "bodies": bodies, "contact": {"max_contacts": 10 * n}, "solver": {"method": "robust"}},
        base_dir=os.path.join(ROOT, "config"), path="pour_1000")


def load(name, model=None, sleep=False):
    """The simulator of a bundled scene, a path or ``pour_1000``, with ``model`` and
    ``sleep`` (when given) in its contact settings."""
    import dataclasses

    from contact_lcp.sim import load_scene

    if name == "pour_1000":
        scene = pour_scene()
    else:
        scene = load_scene(name if os.path.sep in name else os.path.join(ROOT, "config", name))
    c = scene.contact
    c = dataclasses.replace(c, model=model or c.model, sleep=bool(sleep) or c.sleep)
    return Simulator(scene.replace(contact=c))


#: peer engines ``--peers`` runs on the pours (a module of benchmarks/ with ``run_pour``)
PEERS = {"mujoco": "peers_mujoco"}
PEER_COLUMNS = ("scene", "engine", "version", "status", "steps", "wall_s",
                "engine_penetration", "our_penetration", "pile_height", "notes",
                "revision", "date")


class PourCheck:
    """Our own look at a pour from its positions (:mod:`peer_checks`, as for the peers):
    the deepest overlap over the steps and the pile's final height."""

    def __init__(self, sim, name):
        import peer_scenes

        self.scene = peer_scenes.pour_from_simulator(sim, name)
        self.slices = [b.q_slice for b in sim.world.bodies]
        self.deepest, self.height = 0.0, 0.0

    def centres(self, q):
        return np.array([q[s][:3] for s in self.slices])

    def after_step(self, sim):
        from peer_checks import pile_height, pour_penetration

        c = self.centres(sim.q)
        self.deepest = max(self.deepest, pour_penetration(self.scene, c))
        self.height = pile_height(self.scene, c)


def compare_peers(check, rows, peers, revision, date):
    """Rows of :data:`PEER_COLUMNS`: ours (from ``rows`` and ``check``) then each peer's
    run of the same pour for the same number of steps."""
    import importlib

    scene = rows[-1]["scene"]
    out = [{"scene": scene, "engine": "contact_lcp", "version": revision, "status": "ran",
            "steps": len(rows), "wall_s": sum(r["ms"] for r in rows) / 1e3,
            "engine_penetration": max(r["max_penetration"] for r in rows),
            "our_penetration": check.deepest, "pile_height": check.height,
            "notes": f"model {rows[-1]['model']}", "revision": revision, "date": date}]
    for name in peers:
        res = importlib.import_module(PEERS[name]).run_pour(check.scene, len(rows))
        out.append({c: res.get(c, "") for c in PEER_COLUMNS} | {
            "scene": scene, "revision": revision, "date": date})
        print(f"{scene}: {name} {res.get('status')} in {res.get('wall_s', float('nan')):.1f} s",
              flush=True)
    return out


def run(spec, revision, date, detail=False, save=None, failed=None, state=None, resume=None,
        model=None, sleep=False, check=None):
    """Rows (dicts of :data:`COLUMNS`) of one ``name[:seconds]`` scene; ``detail`` also
    prints each step's solve report (its solves and how the solve went); ``save(rows)``,
    when given, is called after every step with the rows so far; ``failed`` (a
    :class:`FailedLCPs`), when given, writes the LCPs each step failed to certify.
    ``resume``: a state file (:meth:`Simulator.save_state`) to start from, up to the same
    end time; ``state``: a file the state is written to after every step. ``check``: a
    list that gets this pour's :class:`PourCheck` (which looks at every step, untimed)."""
    name, _, seconds = spec.partition(":")
    t0 = time.perf_counter()
    sim = load(name, model, sleep)
    load_s = time.perf_counter() - t0
    pour = None
    if check is not None:
        pour = PourCheck(sim, os.path.basename(name))
        check.append(pour)
    steps = int(round((float(seconds) if seconds else sim.scene.duration) / sim.h))
    first = 1
    if resume is not None:
        sim.load_state(resume)
        first = sim.stats.steps + 1
        print(f"resumed {resume} at t = {sim.t:.3f} s (step {first - 1})", flush=True)
    rows = []
    for k in range(first, steps + 1):
        t0 = time.perf_counter()
        info = sim.step()
        ms = 1e3 * (time.perf_counter() - t0)
        rows.append({"scene": os.path.basename(name), "step": k, "t": round(sim.t, 6), "ms": ms,
                     "contacts": info.num_contacts, "active": info.num_active,
                     "pivots": info.pivots, "status": info.lcp_status, "rungs": info.lcp_rungs,
                     "failures": info.report.failures, "max_penetration": info.max_penetration,
                     "groups": len(sim.world.groups), "islands": sim.islands,
                     "sleeping": sim.sleeping_bodies, "model": sim.model.name,
                     "peak_rss_mb": peak_rss_mb(), "load_s": load_s, "revision": revision,
                     "date": date})
        print(f"{rows[-1]['scene']} t = {sim.t:.2f} s: {ms:9.1f} ms, {info.num_active:4d} of "
              f"{info.num_contacts:4d} contacts, {info.pivots:6d} pivots, {info.lcp_status}, "
              f"{sim.islands} islands, {sim.sleeping_bodies} asleep", flush=True)
        if detail and info.report is not None:
            print(f"    {info.report.solves} solves, {info.report.failures} failed: "
                  f"{dict(info.report.info)}", flush=True)
        if pour is not None:
            pour.after_step(sim)
        if save is not None:
            save(rows)
        if failed is not None:
            for p in failed.write(rows[-1]["scene"], sim.t):
                print(f"    wrote {p}", flush=True)
        if state is not None:
            sim.save_state(state)
    st = sim.stats
    print(f"{os.path.basename(name)}: {st.steps} steps, {st.lcp_failures} failed solves, "
          f"{st.fallbacks} fallbacks, {st.safe_stops} safe stops, {st.uncertified} uncertified",
          flush=True)
    return rows


def summary(rows):
    """Per scene and band of active contacts: steps, median and slowest ms, median
    pivots (the slowest step shows a rare fallback that the median hides)."""
    out = []
    for scene in dict.fromkeys(r["scene"] for r in rows):
        mine = [r for r in rows if r["scene"] == scene and r["step"] > 1]  # (first: compiles)
        for lo, hi in ((0, 1), (1, 50), (50, 100), (100, 200), (200, 300), (300, 10 ** 6)):
            band = [r for r in mine if lo <= r["active"] < hi]
            if band:
                out.append({"scene": scene, "active": f"{lo}-{hi - 1}" if hi < 10 ** 6 else f">={lo}",
                            "steps": len(band), "median_ms": common.median([r["ms"] for r in band]),
                            "max_ms": max(r["ms"] for r in band),
                            "median_pivots": common.median([r["pivots"] for r in band]),
                            "not_solved": sum(r["status"] not in ("SOLVED", "NO_CONTACT")
                                              for r in band)})
    return out


def totals(rows):
    """Per scene: steps, total wall time [s], the slowest step after the first (which
    compiles) [ms] and its time [s], failed solves, steps not solved, the most islands
    of a step and sleeping bodies at the end."""
    out = []
    for scene in dict.fromkeys(r["scene"] for r in rows):
        mine = [r for r in rows if r["scene"] == scene]
        slowest = max(mine[1:] or mine, key=lambda r: r["ms"])
        out.append({"scene": scene, "model": mine[-1]["model"], "steps": len(mine),
                    "wall_s": sum(r["ms"] for r in mine) / 1e3,
                    "slowest_ms": slowest["ms"], "slowest_t": slowest["t"],
                    "failures": sum(int(r["failures"]) for r in mine),
                    "not_solved": sum(r["status"] not in ("SOLVED", "NO_CONTACT") for r in mine),
                    "max_islands": max(r["islands"] for r in mine),
                    "sleeping_end": mine[-1]["sleeping"]})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenes", nargs="*", default=list(DEFAULT),
                        help="bundled scene names or paths, each optionally :seconds")
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--detail", action="store_true",
                        help="also print each step's solve report")
    parser.add_argument("--failed-lcps", metavar="DIR", default=None,
                        help="write every frictional LCP not certified to DIR (npz)")
    parser.add_argument("--state", metavar="FILE", default=None,
                        help="write the simulator's state to FILE after every step (one scene)")
    parser.add_argument("--resume", metavar="FILE", default=None,
                        help="start from a state FILE written by --state (one scene)")
    parser.add_argument("--model", default=None,
                        help="contact model for every scene (default: each scene's own)")
    parser.add_argument("--sleep", action="store_true", help="turn contact.sleep on")
    parser.add_argument("--peers", nargs="+", default=[], choices=sorted(PEERS),
                        help="also run each pour in these engines for the same steps")
    args = parser.parse_args(argv)
    if args.peers and args.resume:
        parser.error("--peers runs a pour from its start; it cannot follow --resume")
    if (args.state or args.resume) and len(args.scenes) != 1:
        parser.error(f"--state and --resume need exactly one scene; got {len(args.scenes)}")
    if args.failed_lcps:
        os.makedirs(args.failed_lcps, exist_ok=True)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    path = common.results_path("bench_large", revision, stamp, args.results_dir)
    rows, compared = [], []

    def save(mine):  # the CSV is rewritten after every step: a run of hours that is
        common.write_csv(path, rows + mine, COLUMNS)  # stopped keeps what it measured

    for spec in args.scenes:
        check = [] if args.peers else None
        try:
            if args.failed_lcps:
                with FailedLCPs(args.failed_lcps) as failed:
                    mine = run(spec, revision, date, args.detail, save, failed, args.state,
                               args.resume, args.model, args.sleep, check)
            else:
                mine = run(spec, revision, date, args.detail, save, None, args.state,
                           args.resume, args.model, args.sleep, check)
        except CheckpointError as e:  # --resume: not a state file, or another scene's
            parser.error(str(e))
        except NotAPour as e:  # --peers on a scene that is not a pour of spheres
            parser.error(str(e))
        rows += mine
        if args.peers and mine:
            compared += compare_peers(check[0], mine, args.peers, revision, date)
    table = summary(rows)
    print(common.format_table(table, ("scene", "active", "steps", "median_ms", "max_ms",
                                      "median_pivots", "not_solved")))
    print(common.format_table(totals(rows), ("scene", "model", "steps", "wall_s", "slowest_ms",
                                             "slowest_t", "failures", "not_solved",
                                             "max_islands", "sleeping_end")))
    print(f"peak resident memory {peak_rss_mb():.0f} MB")
    common.write_csv(path, rows, COLUMNS)
    print(f"wrote {path}")
    if compared:
        print(common.format_table(compared, ("scene", "engine", "steps", "wall_s",
                                             "engine_penetration", "our_penetration",
                                             "pile_height", "status")))
        peer_path = common.results_path("bench_large_peers", revision, stamp, args.results_dir)
        common.write_csv(peer_path, compared, PEER_COLUMNS)
        print(f"wrote {peer_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
