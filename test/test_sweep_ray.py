"""Sweeps on a local Ray instance (two CPUs): the rows are those of the same runs made one
by one, nothing finished is run again, and no run is lost or doubled when a worker
process is killed or the driver stops half-way.

Ray is a test dependency (the ``test`` extra): under CI a missing Ray fails these tests;
elsewhere they skip, saying why.
"""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml

from contact_lcp.sim import Simulator
from contact_lcp.sweep import load_spec, run
from contact_lcp.sweep.results import read_csv

if os.environ.get("CI"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e .[test])")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLINE = os.path.join(ROOT, "config", "incline.yaml")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module's tests (its start is the slow part)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def friction_spec(frictions, duration=0.1, **extra):
    """The incline block's friction swept (against the ground's 0.5: the pair's is
    2 mu 0.5 / (mu + 0.5), and the block sticks above ~0.47)."""
    return {"scene": INCLINE, "duration": duration,
            "parameters": {"bodies.0.friction": list(frictions)}, **extra}


def one_by_one(values, duration, tmp_path):
    """The run made without the sweep: a scene file with the values, Simulator.from_file,
    the steps; the numbers the sweep reports."""
    data = yaml.safe_load(open(INCLINE))
    data["bodies"][0]["friction"] = values["bodies.0.friction"]
    path = tmp_path / f"incline_{values['bodies.0.friction']}.yaml"
    path.write_text(yaml.safe_dump(data))
    sim = Simulator.from_file(str(path))
    pen, fz = 0.0, 0.0
    for _ in range(int(round(duration / sim.h))):
        info = sim.step()
        pen = max(pen, info.max_penetration)
        fz += sim.world_contact_force()[2]
    s = sim.stats
    x, y, z = sim.body_state("block").pose[:3]
    return {"failures": s.lcp_failures, "fallbacks": s.fallbacks, "safe_stops": s.safe_stops,
            "max_penetration": pen, "mean_vertical_force": fz / s.steps, "final_x": x,
            "final_y": y, "final_z": z, "steps": s.steps}


def ids_in(path):
    return [r["run_id"] for r in read_csv(path)[1]]


def test_a_sweep_stops_the_ray_it_started_before_returning(tmp_path):
    """In a fresh process (this module's tests share a running instance): ``run`` starts
    a local instance, stops it while it writes the results, and has stopped it when it
    returns: Ray is not initialized and no process of it is left."""
    code = f"""
import os, ray
from contact_lcp.sweep import run
table = run({friction_spec([0.2, 0.8], duration=0.02)!r}, out={str(tmp_path)!r},
            num_cpus=2, progress=False)
left = []  # this process's children (Ray's gcs_server, raylet, agents, ...) still alive
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{{pid}}/stat") as f:
            name, rest = f.read().rsplit(")", 1)
    except OSError:
        continue
    state, parent = rest.split()[:2]
    if int(parent) == os.getpid() and state != "Z":
        left.append(name.split("(", 1)[1])
print(len(table), table.ran, ray.is_initialized(), left)
"""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "2 2 False []"


def test_sweep_rows_equal_the_runs_one_by_one_and_resume_runs_nothing(local_ray, tmp_path):
    spec = friction_spec([0.2, 0.35, 0.8])
    out = tmp_path / "out"
    table = run(spec, out=str(out), progress=False)
    assert table.ran == 3 and table.skipped == 0 and table.lost == 0
    assert table["status"] == ["ok"] * 3
    for row in table:
        expected = one_by_one(row, 0.1, tmp_path)
        # the same code on the same inputs in another process: the same bits
        assert {k: row[k] for k in expected} == expected, row
    # the block slides at the low friction, sticks at the high one
    assert table["final_x"][0] > 1e-3 > abs(table["final_x"][2])
    assert abs(table["mean_vertical_force"][2] - 8.89087) < 1e-6  # m g cos(25 deg)
    csv_before = (out / "results.csv").read_bytes()
    again = run(spec, out=str(out), resume=True, progress=False)
    assert again.ran == 0 and again.skipped == 3
    assert (out / "results.csv").read_bytes() == csv_before
    assert again.rows == table.rows
    assert (out / "bodies.0.friction.png").stat().st_size > 0


def test_a_run_that_fails_is_a_row_with_its_error(local_ray, tmp_path):
    # a start 3 cm into the ground passes the loader but not the simulator's check
    spec = {"scene": INCLINE, "duration": 0.05, "record": True,
            "parameters": {"bodies.0.pose": [[0, 0, 0.05, 0, 0, 0, 1],
                                             [0, 0, 0.02, 0, 0, 0, 1]]}}
    table = run(spec, out=str(tmp_path), progress=False)
    assert table["status"] == ["ok", "error"]
    assert "SceneError" in table["message"][1] and "penetration" in table["message"][1]
    assert table["steps"] == [50, 0]
    ok, failed = table["run_id"]
    with np.load(tmp_path / "runs" / f"{ok}.npz") as rec:  # record: true
        assert rec["t"].shape == (50,)
    assert not (tmp_path / "runs" / f"{failed}.npz").exists()


def test_the_cli_sweeps_and_resumes(local_ray, tmp_path, capsys):
    from contact_lcp.cli import main

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(friction_spec([0.2, 0.8], duration=0.05)))
    out = str(tmp_path / "out")
    assert main(["sweep", str(path), "--out", out]) == 0
    assert "done: 2 of 2 runs" in capsys.readouterr().out
    assert main(["sweep", str(path), "--out", out]) == 2  # not over finished rows
    assert "--resume" in capsys.readouterr().err
    assert main(["sweep", str(path), "--out", out, "--resume"]) == 0
    assert "(0 run now, 2 finished before)" in capsys.readouterr().out


def test_a_stopped_driver_keeps_its_rows_and_resume_runs_only_the_rest(local_ray, tmp_path):
    spec = friction_spec([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], duration=0.05)
    seen = []

    def crash(row):
        seen.append(row["run_id"])
        if len(seen) == 2:
            raise KeyboardInterrupt  # as Ctrl-C in the driver

    with pytest.raises(KeyboardInterrupt):
        run(spec, out=str(tmp_path), progress=False, on_row=crash)
    assert ids_in(tmp_path / "results.csv") == seen
    table = run(spec, out=str(tmp_path), resume=True, progress=False)
    assert table.skipped == 2 and table.ran == 4
    ids = ids_in(tmp_path / "results.csv")
    assert sorted(ids) == sorted(load_spec(spec).ids)  # each exactly once


def kill_one_worker_in_a_run(killed, stop):
    """SIGKILL the first Ray worker process seen running a sweep run (its process title
    is ``ray::simulate_run``); its pid goes to ``killed``."""
    while not stop.is_set() and not killed:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    title = f.read()
            except OSError:
                continue
            if title.startswith(b"ray::simulate_run"):
                os.kill(int(pid), signal.SIGKILL)
                killed.append(int(pid))
                return
        time.sleep(0.005)


def test_a_killed_workers_run_is_retried_and_written_once(local_ray, tmp_path):
    spec = friction_spec([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], duration=0.4)
    killed, stop = [], threading.Event()
    killer = threading.Thread(target=kill_one_worker_in_a_run, args=(killed, stop))
    killer.start()
    try:
        table = run(spec, out=str(tmp_path), progress=False)
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was seen running a sweep run"
    assert table.lost == 0 and table["status"] == ["ok"] * 6
    assert sorted(ids_in(tmp_path / "results.csv")) == sorted(load_spec(spec).ids)
    # the retried run's numbers are those of a run that was never interrupted
    x = table["final_x"]
    assert np.all(np.diff(x) <= 1e-12)  # more friction, less slide


def test_a_killed_run_without_retries_is_lost_and_resume_runs_it(local_ray, tmp_path):
    spec = friction_spec([0.1, 0.2, 0.3, 0.4], duration=0.4)
    killed, stop = [], threading.Event()
    killer = threading.Thread(target=kill_one_worker_in_a_run, args=(killed, stop))
    killer.start()
    try:
        table = run(spec, out=str(tmp_path), progress=False, max_retries=0)
    finally:
        stop.set()
        killer.join()
    assert killed and table.lost == 1 and len(table) == 3
    assert table.lost_ids[0] not in ids_in(tmp_path / "results.csv")
    again = run(spec, out=str(tmp_path), resume=True, progress=False)
    assert again.ran == 1 and again.lost == 0 and len(again) == 4
