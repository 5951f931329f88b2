#!/usr/bin/env python3
"""Start-up time: from process start to the first completed step, cold and warm.

Each run is a fresh Python process (``python bench_start.py --child ...``) whose numba
cache home is a throwaway folder (``XDG_CACHE_HOME=<tmp>``, ``NUMBA_CACHE_DIR`` unset, so
``contact_lcp._numba_cache`` picks the folder):

* **cold** — the folder is empty: every kernel the first step needs is compiled;
* **warm** — a second process on the same folder: every kernel is loaded from it.

Entries (``--entries``):

* ``sim`` — ``Simulator.from_file(scene)`` and one ``step()``;
* ``cli`` — ``contact-lcp simulate <scene> --duration <one time step>`` to its exit;
* ``node`` — what the ROS node does before it is ready (``build_simulator`` with its
  warm-up: one step, plus a small LCP solved with every method), without rclpy.

Each process runs ``--steps`` steps (default 100, what ``--duration 0.1`` runs at 1 kHz:
the second step is the first that the contact model's first rung, the last basis, can
solve, which compiles more). Reported per run: wall seconds from the launch of the process to the first
completed step and the process's CPU seconds by then (``cli``: not seen apart), whether
it started the compile-ahead process (``ahead``, :mod:`contact_lcp.sim.compile_ahead`)
and the seconds its first step waited for kernels that process was compiling
(``waited_s``; ``sim`` and ``node`` only), the
seconds of import, scene load and first step, the wall and CPU seconds to the last step
(``cli``: to its exit), and what numba compiled in the whole run: kernels, signatures,
compile seconds (the ``numba:compile`` events of ``numba.core.event``; a kernel's *self*
seconds exclude the kernels compiled inside its compilation, *incl* include them,
*later* are its self seconds after the first step). The top ``--top`` kernels by self
seconds are printed and stored.

The CSV (``benchmarks/results/bench_start_<stamp>_<revision>.csv``) has one ``run`` row
per (entry, cache) and one ``kernel`` row per top kernel, with the 1-minute load average
before and after. Targets (issue 36, not tests): the humanoid cold <= 60 s, warm <= 3 s.

Usage::

    .venv/bin/python benchmarks/bench_start.py                  # sim cold + warm, ~3 min
    .venv/bin/python benchmarks/bench_start.py --entries sim,cli,node
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import common  # noqa: E402  (revision stamp, CSV, tables)

ENTRIES = ("sim", "cli", "node")
DEFAULT_SCENE = "config/humanoid_stand.yaml"
TARGETS = {"cold": 60.0, "warm": 3.0}
COLUMNS = ("revision", "date", "load1", "load1_end", "section", "scene", "entry", "cache", "status",
           "wall_s", "cpu_s", "import_s", "load_s", "step_s", "steps", "wall_n_s", "cpu_n_s", "kernels",
           "signatures", "compile_s", "later_s", "ahead", "waited_s", "kernel", "self_s", "incl_s", "target_s",
           "notes")


class CompileLog:
    """Listener of numba's ``numba:compile`` events: per kernel, its signatures and the
    seconds spent compiling it, inclusive and exclusive of the kernels it compiles inside
    (a caller's compilation types and compiles its callees first)."""

    def __init__(self):
        self.kernels = {}  # name -> {"signatures": [...], "self_s": float, "incl_s": float}
        self._stack = []  # [name, start, child seconds]
        self.later = False  # set after the first step: compilations then count as "later"

    def on_start(self, event):
        self._stack.append([_kernel_name(event.data["dispatcher"]), time.perf_counter(), 0.0])

    def on_end(self, event):
        name, start, children = self._stack.pop()
        incl = time.perf_counter() - start
        if self._stack:
            self._stack[-1][2] += incl
        k = self.kernels.setdefault(name, {"signatures": [], "self_s": 0.0, "incl_s": 0.0, "later_s": 0.0})
        k["signatures"].append(", ".join(str(a) for a in event.data["args"]))
        k["self_s"] += incl - children
        k["incl_s"] += incl
        if self.later:
            k["later_s"] += incl - children

    def install(self):
        """Register with numba's event API (imports numba); returns self."""
        from numba.core import event

        log = self

        class Forward(event.Listener):
            def on_start(self, ev):
                log.on_start(ev)

            def on_end(self, ev):
                log.on_end(ev)

        self._listener = Forward()
        event.register("numba:compile", self._listener)
        return self

    def uninstall(self):
        """Stop listening."""
        from numba.core import event

        event.unregister("numba:compile", self._listener)


def _kernel_name(dispatcher):
    f = getattr(dispatcher, "py_func", None)
    return f"{f.__module__}.{f.__qualname__}" if f is not None else str(dispatcher)


def _cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(entry, scene, steps, out):
    """Body of one measured process: import, load ``scene``, first step, up to ``steps``
    steps; JSON to ``out``."""
    t_start = time.time()
    log = CompileLog().install()
    t0 = time.time()
    from contact_lcp.sim import Simulator

    t_import = time.time()
    if entry == "node":
        from contact_lcp.ros.scene_info import warm_up

        sim = Simulator.from_file(scene)
        t_load = time.time()
        error = warm_up(sim)
        status = f"first step failed: {error}" if error else "ok"
    else:
        sim = Simulator.from_file(scene)
        t_load = time.time()
        sim.step()
        status = "ok"
    t_step, cpu_s = time.time(), _cpu_s()
    from contact_lcp.sim.compile_ahead import stats

    ahead = stats()  # (by the first step: what it waited for is the first step's)
    log.later = True
    for _ in range(steps - 1):
        sim.step()
    with open(out, "w") as f:
        json.dump(dict(status=status, t_start=t_start, import_s=t_import - t0, load_s=t_load - t_import,
                       step_s=t_step - t_load, t_step=t_step, cpu_s=cpu_s, t_steps=time.time(),
                       cpu_steps_s=_cpu_s(), ahead=ahead["started"], waited_s=ahead["waited_s"],
                       kernels=log.kernels), f)


def time_step_of(scene):
    """The scene file's ``time_step`` [s] (what ``--duration`` makes one step of)."""
    import yaml

    with open(scene) as f:
        data = yaml.safe_load(f)
    return float((data.get("simulation") or {}).get("time_step") or data.get("time_step") or 0.001)


def run_once(entry, scene, steps, cache_home, timeout):
    """One fresh process of ``entry`` on ``scene`` (``steps`` steps) with numba's cache
    under ``cache_home``; a row dict (times in seconds, what was compiled)."""
    env = dict(os.environ, XDG_CACHE_HOME=cache_home, PYTHONPATH=ROOT + os.pathsep + os.environ.get(
        "PYTHONPATH", ""), OPENBLAS_NUM_THREADS="1")
    env.pop("NUMBA_CACHE_DIR", None)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "child.json")
        if entry == "cli":
            # the console script's code, in this interpreter, with the compile listener
            code = (f"import sys; sys.path.insert(0, {HERE!r}); import bench_start, time, json; "
                    f"log = bench_start.CompileLog().install(); from contact_lcp.cli import main; "
                    f"rc = main(['simulate', {scene!r}, '--duration', {str(steps * time_step_of(scene))!r}]); "
                    f"json.dump(dict(status='ok' if rc in (0, None) else f'exit {{rc}}', t_steps=time.time(), "
                    f"cpu_steps_s=bench_start._cpu_s(), kernels=log.kernels), open({out!r}, 'w'))")
            cmd = [sys.executable, "-c", code]
        else:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", entry, "--scene", scene, "--steps", str(steps),
                   "--out", out]
        launch = time.time()
        try:
            proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return dict(status=f"timeout after {timeout:.0f} s")
        if proc.returncode != 0 or not os.path.exists(out):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
            return dict(status=f"exit {proc.returncode}: {tail[0][:200]}")
        with open(out) as f:
            res = json.load(f)
    kernels = res.pop("kernels")
    row = dict(status=res["status"], wall_s=res["t_step"] - launch if "t_step" in res else None,
               cpu_s=res.get("cpu_s"), import_s=res.get("import_s"), load_s=res.get("load_s"),
               step_s=res.get("step_s"), steps=steps, wall_n_s=res["t_steps"] - launch,
               cpu_n_s=res["cpu_steps_s"], kernels=len(kernels),
               signatures=sum(len(k["signatures"]) for k in kernels.values()),
               compile_s=sum(k["self_s"] for k in kernels.values()),
               later_s=sum(k["later_s"] for k in kernels.values()), ahead=res.get("ahead"),
               waited_s=res.get("waited_s"))
    row["_kernels"] = kernels
    return row


def top_kernels(kernels, n):
    """The ``n`` kernels with the most self seconds: (name, record) pairs."""
    return sorted(kernels.items(), key=lambda kv: -kv[1]["self_s"])[:n]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", default=DEFAULT_SCENE, help=f"scene file (default {DEFAULT_SCENE})")
    ap.add_argument("--entries", default="sim", help=f"comma-separated, from {ENTRIES} (default sim)")
    ap.add_argument("--caches", default="cold,warm", help="comma-separated: cold, warm (default both)")
    ap.add_argument("--steps", type=int, default=100,
                    help="steps per run, the first one timed apart (default 100: --duration 0.1 at 1 kHz)")
    ap.add_argument("--top", type=int, default=20, help="kernels listed by compile seconds (default 20)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per process (default 1800)")
    ap.add_argument("--results-dir", default=common.RESULTS_DIR, help="where the CSV goes ('' for none)")
    ap.add_argument("--child", choices=ENTRIES, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args.scene, args.steps, args.out)
    entries = [e for e in args.entries.split(",") if e]
    caches = [c for c in args.caches.split(",") if c]
    bad = [e for e in entries if e not in ENTRIES] + [c for c in caches if c not in TARGETS]
    if bad:
        ap.error(f"unknown entries/caches {bad}; expected entries from {ENTRIES}, caches from "
                 f"{tuple(TARGETS)}")
    scene = os.path.join(ROOT, args.scene) if not os.path.isabs(args.scene) else args.scene
    if not os.path.isfile(scene):
        ap.error(f"--scene: no file {scene}")

    load1 = os.getloadavg()[0]
    rows, kernel_rows = [], []
    for entry in entries:
        home = tempfile.mkdtemp(prefix="bench-start-")
        try:
            for cache in caches:  # "warm" after "cold" reuses the folder the cold run filled
                print(f"[bench_start] {entry} {cache} ...", file=sys.stderr, flush=True)
                row = run_once(entry, scene, args.steps, home, args.timeout)
                row.update(section="run", scene=args.scene, entry=entry, cache=cache, target_s=TARGETS[cache])
                kernels = row.pop("_kernels", {})
                for name, k in top_kernels(kernels, args.top):
                    kernel_rows.append(dict(section="kernel", scene=args.scene, entry=entry, cache=cache,
                                            kernel=name, signatures=len(k["signatures"]), self_s=k["self_s"],
                                            incl_s=k["incl_s"], later_s=k["later_s"], notes=" | ".join(k["signatures"])[:500]))
                rows.append(row)
        finally:
            shutil.rmtree(home, ignore_errors=True)
    load1_end = os.getloadavg()[0]

    print(f"\nstart-up of {args.scene} (load average {load1:.2f} -> {load1_end:.2f}, {os.cpu_count()} cores)")
    print(common.format_table(rows, ("entry", "cache", "status", "wall_s", "cpu_s", "import_s", "load_s",
                                     "step_s", "steps", "wall_n_s", "cpu_n_s", "kernels", "signatures", "compile_s",
                                     "later_s", "ahead", "waited_s", "target_s")))
    if kernel_rows:
        print(f"\ntop kernels by compile seconds (self excludes the kernels compiled inside)")
        print(common.format_table(kernel_rows, ("entry", "cache", "kernel", "signatures", "self_s", "incl_s", "later_s")))
    for r in rows:
        if r["status"] == "ok":
            first = r["wall_s"] if r["wall_s"] is not None else r["wall_n_s"]
            verdict = "meets" if first <= r["target_s"] else "misses"
            what = "the first step" if r["wall_s"] is not None else f"the exit after {r['steps']} steps"
            print(f"{r['entry']} {r['cache']}: {first:.1f} s to {what}, {verdict} the "
                  f"{r['target_s']:.0f} s target; {r['wall_n_s']:.1f} s to step {r['steps']}")
    if args.results_dir:
        date, stamp = common.utc_stamp()
        rev = common.git_revision(ROOT)
        for r in rows + kernel_rows:
            r.update(revision=rev, date=date, load1=load1, load1_end=load1_end)
        path = common.write_csv(common.results_path("bench_start", rev, stamp, args.results_dir),
                                rows + kernel_rows, COLUMNS)
        print(f"\nwrote {os.path.relpath(path, os.getcwd())}")
    return rows, kernel_rows


if __name__ == "__main__":
    main()
