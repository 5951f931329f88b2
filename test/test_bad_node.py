"""The node against a careless or hostile peer (issue 35, items 3 and 9), over DDS from a
separate process: bad ``scene`` values are rejected with one reason that quotes nothing
from the file and is the same for a missing one; bad commands are rejected, counted on
/diagnostics and logged; the node keeps stepping and never publishes NaN.

One node process (a fixed-base arm without ground contact: cheap steps) serves the
module; tests run in file order.
"""

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

import ros_harness  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
NS = "/contact_lcp"
JOINTS = ("shoulder", "elbow", "wrist")
SECRETS = ("db_password", "s3cr3t-value", "root:x:0:0", "/bin/bash", "daemon")
ARM_SCENE = f"""time_step: 1e-3
ground: false
robots:
  - name: arm
    urdf: {ROOT / "test" / "data" / "two_link_arm.urdf"}
    floating_base: false
    base_pose: [0, 0, 0.5, 0, 0, 0, 1]
    controller: {{kp: 50.0, kd: 2.0, gravity_compensation: true}}
"""


class Peer:
    """The test's own node: records the simulator's topics, sends it commands."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=ros_harness.DOMAIN_ID)
        self.node = rclpy.create_node("contact_lcp_bad_peer", context=self.context)
        self.log = {}
        for topic, kind in (("/joint_states", JointState), ("/clock", Clock),
                            ("/diagnostics", DiagnosticArray)):
            self.log[topic] = []
            self.node.create_subscription(
                kind, topic, lambda m, t=topic: self.log[t].append(m), 50)
        self.commands = self.node.create_publisher(Float64MultiArray, f"{NS}/commands", 10)
        self.joint_commands = self.node.create_publisher(JointState, "/joint_commands", 10)
        self.trajectory = self.node.create_publisher(
            JointTrajectory, f"{NS}/joint_trajectory", 10)
        self.spinner = ros_harness.Spinner(self.context, self.node)

    def clock(self):
        c = self.log["/clock"][-1].clock if self.log["/clock"] else None
        return None if c is None else c.sec + c.nanosec * 1e-9

    def sim_time_passes(self, dt=0.05, timeout=30.0):
        t0 = self.clock()
        ros_harness.wait_for(lambda: self.clock() >= t0 + dt, timeout, f"{dt} s of sim time")

    def set_parameter(self, name, value):
        return ros_harness.set_parameter(self.node, name, value, timeout=30.0)

    def close(self):
        ros_harness.close_ros(self.context, (self.spinner,), (self.node,))


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """``(process, peer, folder)``: the node subprocess on the arm scene, and a peer."""
    folder = tmp_path_factory.mktemp("bad_node")
    scene = folder / "arm.yaml"
    scene.write_text(ARM_SCENE)
    log_path = folder / "node.log"
    env = dict(os.environ, ROS_DOMAIN_ID=str(ros_harness.DOMAIN_ID), PYTHONUNBUFFERED="1",
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "contact_lcp.ros", "--quiet", "--ros-args",
           "-p", f"scene:={scene}", "-p", "publish_rate:=50.0", "-p", "marker_rate:=0.0"]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc.log_path, proc.scene = log_path, str(scene)
    peer = None
    try:
        peer = Peer()
        deadline = time.monotonic() + 180.0
        while not (peer.log["/joint_states"] and peer.log["/clock"]):
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "no /joint_states:\n" + log_path.read_text()
            time.sleep(0.1)
        yield proc, peer, folder
    finally:
        if peer is not None:
            peer.close()
        ros_harness.interrupt(proc, 15)


def not_scenes(folder):
    """Paths a peer might name that are not scene files (each made here)."""
    secret = folder / "secrets.yaml"
    secret.write_text("db_password: s3cr3t-value\n")
    system = folder / "passwd.yaml"
    system.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/false\n")
    nested = folder / "nested.yaml"
    nested.write_text("time_step: 0.001\noutput: {db_password: s3cr3t-value}\n")
    directory = folder / "dir.yaml"
    directory.mkdir()
    device = folder / "zero.yaml"
    device.symlink_to("/dev/zero")
    fifo = folder / "fifo.yaml"
    os.mkfifo(fifo)
    huge = folder / "huge.yaml"
    with open(huge, "wb") as f:  # sparse: nothing on disk
        f.write(b"time_step: 0.001\n")
        f.truncate(4 << 30)
    return [str(p) for p in (secret, system, nested, directory, device, fifo, huge,
                             folder / "missing.yaml")] + ["/dev/zero", str(folder)]


def test_scene_values_that_are_not_scenes_get_one_reason_that_quotes_nothing(node):
    """Before: the secret's key and value came back in the reason, a missing file had
    its own reason ("not found"), and /dev/zero was read."""
    proc, peer, folder = node
    reasons = {}
    for value in not_scenes(folder):
        result = peer.set_parameter("scene", value)
        assert not result.successful, value
        reasons[value] = result.reason.replace(repr(value), "<scene>")
    for value, reason in reasons.items():
        assert "not a contact_lcp scene file" in reason, (value, reason)
        for secret in SECRETS:
            assert secret not in reason, (value, reason)
    assert len(set(reasons.values())) == 1, reasons
    log = proc.log_path.read_text()
    for secret in SECRETS:
        assert secret not in log, log
    peer.sim_time_passes()  # still stepping, on its own scene
    assert proc.poll() is None


def diagnostic_values(msg):
    return {kv.key: kv.value for kv in msg.status[0].values}


def _matched(publisher):
    ros_harness.wait_for(lambda: publisher.get_subscription_count() > 0, 20,
                         f"the node to subscribe to {publisher.topic_name}")


def test_bad_commands_are_rejected_counted_on_diagnostics_and_never_become_nan(node):
    """Before: rejected commands were only logged; /diagnostics did not count them."""
    proc, peer, _ = node
    for pub in (peer.commands, peer.joint_commands, peer.trajectory):
        _matched(pub)
    nan, inf = float("nan"), float("inf")
    commands = [[nan, 0.0, 0.0], [0.0, inf, 0.0], [0.1], [0.1, 0.2, 0.3, 0.4]]
    joint_commands = [
        JointState(name=["no_such_joint"], position=[0.1]),
        JointState(name=["shoulder"], position=[nan], velocity=[nan], effort=[nan]),
        JointState(name=["shoulder", "elbow"], position=[0.1]),
        JointState(name=["shoulder", "shoulder"], position=[0.1, 0.2]),
    ]
    nan_point = JointTrajectoryPoint(positions=[nan, 0.0, 0.0])
    nan_point.time_from_start.sec = 1
    trajectories = [JointTrajectory(joint_names=list(JOINTS), points=[nan_point]),
                    JointTrajectory(joint_names=["no_such_joint"], points=[])]
    sent = {f"{NS}/commands": 0, "/joint_commands": 0, f"{NS}/joint_trajectory": 0}
    for values in commands:
        peer.commands.publish(Float64MultiArray(data=values))
        sent[f"{NS}/commands"] += 1
        time.sleep(0.05)
    for msg in joint_commands:
        peer.joint_commands.publish(msg)
        sent["/joint_commands"] += 1
        time.sleep(0.05)
    for msg in trajectories:
        peer.trajectory.publish(msg)
        sent[f"{NS}/joint_trajectory"] += 1
        time.sleep(0.05)
    total = sum(sent.values())

    def counted():
        done = [diagnostic_values(m) for m in list(peer.log["/diagnostics"])
                if diagnostic_values(m).get("rejected_commands") == str(total)]
        return done[-1] if done else None
    values = ros_harness.wait_for(counted, 20, f"/diagnostics to count {total} rejected")
    for topic, n in sent.items():
        key = f"rejected_commands {topic.replace(NS, '~')}"
        assert values.get(key) == str(n), (key, values)
    assert values["rejected_commands_last"].startswith(tuple(
        t.replace(NS, "~") for t in sent)), values
    log = proc.log_path.read_text()
    assert "rejected" in log and "no_such_joint" in log and "finite" in log, log
    # still stepping, and a good command still works after all that
    peer.commands.publish(Float64MultiArray(data=[0.3, 0.0, 0.0]))
    peer.sim_time_passes(1.0)
    js = peer.log["/joint_states"][-1]
    assert abs(js.position[list(js.name).index("shoulder")] - 0.3) < 0.05, js.position
    for msg in list(peer.log["/joint_states"]):
        assert all(math.isfinite(x) for x in (*msg.position, *msg.velocity, *msg.effort))
    assert proc.poll() is None and "Traceback" not in proc.log_path.read_text()
