"""A robot description that crashes a loader cannot take the node down (issue 35, item 1).

The node runs in its own process; this test talks to it over DDS as any peer would.
The URDFs that killed the node with SIGSEGV at the start of this branch (a flat mesh, a
mesh with scale 0) are sent as the ``robot_description`` parameter and on the
description topic; and, since no input known today still crashes a native library, a
loader that does crash is stood in by replacing the node's loader command (in the node
process, from this test) with one that kills itself with SIGSEGV on a marked URDF.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from contact_lcp.ros import urdf_guard  # noqa: E402
from ros_harness import DOMAIN_ID, Spinner, clock_of, close_ros, set_parameter, wait_for  # noqa: E402
from test_bad_urdf import (SQUARE, ascii_stl, binary_stl, cube_triangles, mesh,  # noqa: E402
                           one_link)
from test_ros_robustness import _alive, _env, _wait_ready  # noqa: E402

pytestmark = [pytest.mark.ros]

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "/bad_urdf_description"
MARK = "<!-- crash the loader -->"
# The node's loader child, replaced: SIGSEGV on a marked description, else the real one.
LOADER = ("import io, os, signal, sys\n"
          "data = sys.stdin.read()\n"
          f"if {MARK!r} in data:\n"
          "    os.kill(os.getpid(), signal.SIGSEGV)\n"
          "sys.stdin = io.StringIO(data)\n"
          "from contact_lcp.dynamics import probe\n"
          "sys.exit(probe.main())\n")
NODE = ("import sys\n"
        "from contact_lcp.ros import urdf_guard\n"
        "urdf_guard.COMMAND = [sys.executable, '-c', {loader!r}]\n"
        "from contact_lcp.ros.cli import run\n"
        "sys.exit(run(['contact_lcp', '--quiet', '--ros-args', '-p', 'scene:={scene}', "
        "'-p', 'marker_rate:=0.0', '-p', 'robot_description_topic:={topic}']))\n")


def test_a_crashing_loader_child_is_a_reason_not_a_crash():
    crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    reason = urdf_guard.probe({"mesh_mode": "convex", "robots": []}, command=crash)
    assert "crashed a loader process (SIGSEGV)" in reason
    hang = [sys.executable, "-c", "import time; time.sleep(30)"]
    assert "more than 0.5 s" in urdf_guard.probe({}, command=hang, timeout=0.5)


def test_meshes_a_peer_names_get_one_answer_that_tells_nothing_of_the_files(tmp_path):
    """A description's mesh may name any path; whether it is missing, a secret text file,
    a folder, a FIFO (which would block a reader) or a device, the reason is the same
    but for the path the peer sent, and quotes no content. A real mesh still loads."""
    import os

    from contact_lcp.ros.config import NodeConfig

    secret = tmp_path / "secret.stl"
    secret.write_text("db_password: s3cr3t-value\n")
    (tmp_path / "folder.stl").mkdir()
    os.mkfifo(tmp_path / "pipe.stl")
    paths = [tmp_path / "missing.stl", secret, tmp_path / "folder.stl", tmp_path / "pipe.stl",
             Path("/dev/zero"), Path("/etc/passwd")]
    (tmp_path / "box.urdf").write_text(one_link('<geometry><box size="0.2 0.2 0.1"/></geometry>'))
    scene = tmp_path / "scene.yaml"
    scene.write_text("robots:\n  - {name: r, urdf: box.urdf}\n")
    scene = str(scene)
    reasons = set()
    for path in paths:
        cfg = NodeConfig(scene=scene, robot_description=one_link(mesh(path)))
        reason = urdf_guard.check(cfg, timeout=20.0)
        assert reason is not None and "s3cr3t" not in reason and "root:" not in reason
        reasons.add(reason.replace(str(path), "PATH"))
    assert len(reasons) == 1, reasons
    good = binary_stl(tmp_path / "plate.stl", SQUARE)
    assert urdf_guard.check(NodeConfig(scene=scene, robot_description=one_link(mesh(good)))) \
        is None


def test_the_loader_child_names_the_culprit_and_accepts_a_flat_mesh(tmp_path):
    cube = ascii_stl(tmp_path / "cube.stl", cube_triangles())
    bad = {"name": "r", "urdf_string": one_link(mesh(cube, "0 0 0"))}
    reason = urdf_guard.probe({"mesh_mode": "convex", "robots": [bad]})
    assert "link 'base'" in reason and "scale='0 0 0'" in reason, reason
    flat = {"name": "r", "urdf_string": one_link(mesh(binary_stl(tmp_path / "f.stl", SQUARE)))}
    assert urdf_guard.probe({"mesh_mode": "convex", "robots": [flat]}) is None


class Client:
    """A client node in this process, spun in a thread."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN_ID)
        self.node = rclpy.create_node("bad_urdf_client", context=self.context)
        self.clock = []
        self.node.create_subscription(Clock, "/clock", self.clock.append, 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.description = self.node.create_publisher(String, TOPIC, latched)
        self.spinner = Spinner(self.context, self.node)

    def sim_time_advances(self, dt=0.01, timeout=60):
        wait_for(lambda: self.clock, timeout, "/clock")
        t0 = clock_of(self.clock[-1])
        wait_for(lambda: clock_of(self.clock[-1]) >= t0 + dt, timeout, f"{dt} s of sim time")

    def close(self):
        close_ros(self.context, (self.spinner,), (self.node,))


@pytest.mark.slow
def test_the_node_survives_crashing_descriptions_over_ros(tmp_path):
    flat = one_link(mesh(binary_stl(tmp_path / "flat.stl", SQUARE)))
    box = one_link('<geometry><box size="0.2 0.2 0.1"/></geometry>')
    zero = one_link(mesh(ascii_stl(tmp_path / "cube.stl", cube_triangles()), "0 0 0"))
    crash = box.replace("<robot", MARK + "<robot")
    (tmp_path / "box.urdf").write_text(box)
    scene = tmp_path / "scene.yaml"
    scene.write_text("time_step: 0.002\nduration: 1000.0\nrobots:\n  - {name: r, urdf: "
                     "box.urdf, base_pose: [0, 0, 0.05, 0, 0, 0, 1]}\n")
    log_path = tmp_path / "node.log"
    code = NODE.format(loader=LOADER, scene=scene, topic=TOPIC)
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env(),
                                stdout=log, stderr=subprocess.STDOUT)
    client = None
    try:
        _wait_ready(log_path, timeout=900)
        client = Client()
        client.sim_time_advances()
        for urdf, words in [(zero, ["link 'base'", "scale='0 0 0'"]),
                            (crash, ["crashed a loader process (SIGSEGV)"])]:
            result = set_parameter(client.node, "robot_description", urdf, timeout=300)
            assert not result.successful, result
            for w in words:
                assert w in result.reason, result.reason
            assert _alive(proc.pid), log_path.read_text()
            client.sim_time_advances()
        client.description.publish(String(data=crash))  # the topic goes the same way
        wait_for(lambda: "crashed a loader process" in log_path.read_text(), 300,
                 "the topic's rejection in the node's log")
        client.sim_time_advances()
        result = set_parameter(client.node, "robot_description", flat, timeout=300)
        assert result.successful, result.reason  # a flat mesh is a legal shape
        client.sim_time_advances()
        assert _alive(proc.pid) and proc.poll() is None
    finally:
        if client is not None:
            client.close()
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    text = log_path.read_text()
    assert "Traceback" not in text, text
    assert proc.returncode == 0, text


@pytest.mark.slow
def test_a_launch_given_description_that_crashes_the_loader_ends_the_start_cleanly(tmp_path):
    box = one_link('<geometry><box size="0.2 0.2 0.1"/></geometry>')
    (tmp_path / "box.urdf").write_text(box)
    scene = tmp_path / "scene.yaml"
    scene.write_text("robots:\n  - {name: r, urdf: box.urdf}\n")
    params = tmp_path / "params.yaml"
    params.write_text("contact_lcp:\n  ros__parameters:\n    robot_description: "
                      + json.dumps(box.replace("<robot", MARK + "<robot")) + "\n")
    code = NODE.format(loader=LOADER, scene=scene, topic=TOPIC).replace(
        "'robot_description_topic:={topic}'".format(topic=TOPIC),
        f"'robot_description_topic:={TOPIC}', '--params-file', {str(params)!r}")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "crashed a loader process (SIGSEGV)" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
