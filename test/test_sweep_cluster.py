"""A sweep on a two-node Ray cluster (``ray.cluster_utils.Cluster``, both nodes on this
machine) that loses a node half-way: the lost node's runs are retried on the other, and
every run id is written exactly once.

Ray is a test dependency (the ``test`` extra): under CI a missing Ray fails this test;
elsewhere it skips, saying why.
"""

import os
import signal
import time

import pytest

from contact_lcp.sweep import load_spec, run
from contact_lcp.sweep.results import read_csv

if os.environ.get("CI"):
    import ray
    from ray.cluster_utils import Cluster
else:
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e .[test])")
    from ray.cluster_utils import Cluster

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLINE = os.path.join(ROOT, "config", "incline.yaml")
NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 ** 2}


@pytest.fixture
def two_nodes():
    """A head without CPUs (runs no task) and two one-CPU worker nodes; the node loss is
    noticed within a second."""
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "object_store_memory": 80 * 1024 ** 2, "include_dashboard": False,
        "_system_config": {"health_check_initial_delay_ms": 0, "health_check_period_ms": 200,
                           "health_check_failure_threshold": 3}})
    nodes = [cluster.add_node(**NODE) for _ in range(2)]
    try:
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        yield cluster, nodes
    finally:
        ray.shutdown()
        cluster.shutdown()


def runs_under_way(raylet):
    """Pids of the worker processes of the node whose raylet is ``raylet`` (a pid) that
    are running a sweep run (process title ``ray::simulate_run``)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read()
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if title.startswith(b"ray::simulate_run") and parent == raylet:
            found.append(int(pid))
    return found


def test_a_lost_nodes_runs_are_retried_and_each_run_id_is_written_once(two_nodes, tmp_path):
    cluster, nodes = two_nodes
    spec = {"scene": INCLINE, "duration": 0.3,
            "parameters": {"bodies.0.friction": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]}}
    raylet = nodes[1].all_processes["raylet"][0].process.pid
    in_flight = []

    def lose_a_node(row):
        # after the first row, once the node to lose is running a run
        deadline = time.monotonic() + 10.0
        while not in_flight and time.monotonic() < deadline:
            in_flight.extend(runs_under_way(raylet))
        if in_flight and nodes[1] in cluster.worker_nodes:
            cluster.remove_node(nodes[1], allow_graceful=False)

    try:
        table = run(spec, out=str(tmp_path), progress=False, on_row=lose_a_node)
    finally:
        for pid in in_flight:  # the lost node's worker, if it outlives its raylet
            _end(pid)
    assert in_flight, "the node was not seen running a run"
    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 2  # the head and the node that stayed
    assert table.lost == 0 and table["status"] == ["ok"] * 8
    ids = [r["run_id"] for r in read_csv(tmp_path / "results.csv")[1]]
    assert sorted(ids) == sorted(load_spec(spec).ids)
    # the rows do not depend on the node that made them (the block slides less with
    # more friction, whichever node ran which run)
    x = table["final_x"]
    assert all(a >= b - 1e-12 for a, b in zip(x, x[1:])) and x[0] > 1e-3


def _end(pid, wait=5.0):
    """Wait for process ``pid`` to exit, then SIGKILL it if it has not."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
