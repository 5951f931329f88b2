#!/usr/bin/env python3
"""Sweep speed: 32 runs of the incline box, one by one against ``contact_lcp.sweep`` on Ray.

The runs: ``config/incline.yaml`` with the block's friction at 32 values from 0.2 to 0.8
(it slides below ~0.47 against the ground's 0.5, and sticks above), for each duration of
``--durations`` (default 2 s, the scene's own, and 20 s): a sweep pays a fixed cost (Ray's
start and stop, each worker's import and kernel load, ~5 s on 2 cores) that a short sweep
cannot earn back, so the two sizes show where it pays. Three ways:

* **serial** — this process makes the runs one after the other
  (``contact_lcp.sweep.simulate_run``, the function each Ray task runs), after contact_lcp
  is imported; its first run loads the compiled kernels, as each worker's does;
* **sweep** — ``contact_lcp.sweep.run`` on a new local Ray instance with all cores, from
  ``ray.init`` to the returned table (the workers' start, import and kernel load, and the
  rows written and fsynced to a results.csv, included);
* **sweep_running** — the same on a Ray instance started before the clock (as a cluster
  or a notebook has one): its workers still start cold (import, kernels), but the
  instance's start and shutdown (~5 s here) are not counted;
* **cli** (``--cli``) — today's way without sweeps: one ``contact-lcp simulate`` process
  per run (each imports contact_lcp and loads the kernels).

The sweep's plot (final position, penetration, force against the friction) goes next to
the CSV as ``..._friction.png``. Each row of the CSV
(``benchmarks/results/bench_sweep_<stamp>_<revision>.csv``) gives the
wall seconds, the speed-up against serial, whether the sweep's rows equal the serial
ones (every number, bit for bit), the cores and the 1-minute load average before and
after. Target (issue 40, not a test): sweep >= 1.7x serial on this 2-core machine. Run
it when the machine is otherwise idle: the other processes' load is the sweep's loss.

Usage::

    .venv/bin/python benchmarks/bench_sweep.py          # ~6 min on 2 cores
    .venv/bin/python benchmarks/bench_sweep.py --durations 2 --cli   # + 32 simulate processes
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import numpy as np  # noqa: E402

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from contact_lcp.progress import Progress  # noqa: E402
from contact_lcp.sweep import load_spec, run, simulate_run  # noqa: E402
from contact_lcp.sweep.results import plot_parameters  # noqa: E402
from contact_lcp.sweep.worker import METRICS, task  # noqa: E402

SCENE = os.path.join(ROOT, "config", "incline.yaml")
COLUMNS = ("revision", "date", "mode", "runs", "duration", "cpus", "wall_s", "per_run_s", "speedup",
           "same_rows", "rows", "ok_runs", "load1", "load1_end", "target", "notes")
#: the numbers of a row that must not depend on where the run was made
COMPARED = [m for m in METRICS if m not in ("wall_seconds", "message")]


def sweep_spec(runs, duration):
    return {"scene": SCENE, "duration": duration,
            "parameters": {"bodies.0.friction": [float(f) for f in np.linspace(0.2, 0.8, runs)]}}


def serial(spec):
    """The runs one by one in this process: (wall seconds, rows)."""
    rows = []
    t0 = time.perf_counter()
    with Progress(len(spec.runs), desc="serial", unit="run", every=10.0) as bar:
        for r in spec.runs:
            rows.append(simulate_run(task(r, spec)))
            bar.update(1)
    return time.perf_counter() - t0, rows


def swept(spec, num_cpus, plot=None, running=False):
    """The runs as a sweep on a new local Ray instance (``running``: on one started
    before the clock, as on a cluster or in a notebook): (wall seconds, rows); the
    sweep's plot of the friction is copied to ``plot`` (made after the timing)."""
    import ray

    if running:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        table = run(spec, out=out, num_cpus=num_cpus, plots=False)
        wall = time.perf_counter() - t0
        if running:
            ray.shutdown()
        if plot:
            plot_parameters(table, spec.parameters, out)
            shutil.copy(os.path.join(out, f"{spec.parameters[0]}.png"), plot)
        return wall, table.rows


def cli(spec):
    """One ``contact-lcp simulate`` process per run: wall seconds."""
    import yaml

    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for r in spec.runs:
            path = os.path.join(folder, f"{r.run_id}.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(r.scene_data, f)
            paths.append(path)
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t0 = time.perf_counter()
        with Progress(len(paths), desc="cli", unit="run", every=10.0) as bar:
            for path in paths:
                subprocess.run([sys.executable, "-m", "contact_lcp.cli", "simulate", path,
                                "--duration", repr(spec.duration)], check=True, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                bar.update(1)
        return time.perf_counter() - t0


def same_rows(a, b):
    """Whether the rows of ``a`` and ``b`` (by run id) have the same numbers."""
    by_id = {r["run_id"]: r for r in b}
    return len(a) == len(b) and all(
        r["run_id"] in by_id and all(r[k] == by_id[r["run_id"]][k] for k in COMPARED) for r in a)


def measure(runs, duration, num_cpus, with_cli, plot):
    """The rows of one sweep size: serial, sweep, sweep_running (and cli)."""
    spec = load_spec(sweep_spec(runs, duration))
    load1 = os.getloadavg()[0]
    t_serial, rows_serial = serial(spec)
    t_sweep, rows_sweep = swept(spec, num_cpus, plot)
    t_running, rows_running = swept(spec, num_cpus, running=True)
    same = same_rows(rows_serial, rows_sweep) and same_rows(rows_serial, rows_running)
    base = {"runs": len(spec.runs), "duration": duration, "load1": load1}
    out = [
        {**base, "mode": "serial", "cpus": 1, "wall_s": t_serial, "speedup": 1.0,
         "rows": len(rows_serial), "ok_runs": sum(r["status"] == "ok" for r in rows_serial)},
        {**base, "mode": "sweep", "cpus": num_cpus, "wall_s": t_sweep,
         "speedup": t_serial / t_sweep, "same_rows": same, "target": 1.7,
         "rows": len(rows_sweep), "ok_runs": sum(r["status"] == "ok" for r in rows_sweep),
         "notes": "ray.init to the returned table"},
        {**base, "mode": "sweep_running", "cpus": num_cpus, "wall_s": t_running,
         "speedup": t_serial / t_running, "same_rows": same,
         "rows": len(rows_running), "ok_runs": sum(r["status"] == "ok" for r in rows_running),
         "notes": "on a Ray instance started before the clock (fresh workers)"},
    ]
    if with_cli:
        t_cli = cli(spec)
        out.append({**base, "mode": "cli", "cpus": 1, "wall_s": t_cli,
                    "speedup": t_serial / t_cli,
                    "notes": "one contact-lcp simulate process per run"})
    load1_end = os.getloadavg()[0]
    for r in out:
        r.update(per_run_s=r["wall_s"] / len(spec.runs), load1_end=load1_end)
    for r in rows_serial + rows_sweep + rows_running:
        if r["status"] != "ok":
            print(f"run {r['run_id']}: {r['message']}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=32)
    ap.add_argument("--durations", default="2,20",
                    help="simulated seconds per run, comma-separated: one sweep of --runs "
                         "runs for each (default 2,20)")
    ap.add_argument("--num-cpus", type=int, default=os.cpu_count(), help="Ray's CPUs")
    ap.add_argument("--cli", action="store_true", help="also one simulate process per run")
    ap.add_argument("--results-dir", default=common.RESULTS_DIR, help="where the CSV goes")
    args = ap.parse_args(argv)
    revision = common.git_revision(ROOT)
    date, stamp = common.utc_stamp()
    csv_path = common.results_path("bench_sweep", revision, stamp, args.results_dir)
    out = []
    for i, duration in enumerate(float(d) for d in args.durations.split(",")):
        plot = csv_path[:-4] + "_friction.png" if i == 0 else None
        out += measure(args.runs, duration, args.num_cpus, args.cli, plot)
    for r in out:
        r.update(revision=revision, date=date)
    print(common.format_table(out, ["mode", "runs", "duration", "cpus", "wall_s", "per_run_s",
                                    "speedup", "same_rows", "rows", "ok_runs", "load1",
                                    "load1_end"]))
    path = common.write_csv(csv_path, out, COLUMNS)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
