"""Several robots, sensors, ros2_control-style commands, a description read from a topic.

test/data/two_humanoids.yaml puts two copies of our humanoid (alice at y = +1 m, bob at
y = -1 m) in one scene: the simulator names their joints "alice/l_knee"...; the node
must give each robot its own namespace with URDF joint names. Checked by an independent
client node over DDS (test/ros_harness.py).
"""

import math
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

rclpy = pytest.importorskip("rclpy")

from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from ros_harness import Harness, clock_of, stamp  # noqa: E402

pytestmark = [pytest.mark.ros]

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "humanoid.urdf"
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
ROBOTS = {"alice": 1.0, "bob": -1.0}  # name -> base y [m]


def urdf_joints(urdf):
    return [j.get("name") for j in ET.fromstring(urdf).findall("joint")
            if j.get("type") != "fixed"]


# (first in the file: it runs before the module-scoped two-robot node of `pair` starts)
def test_the_robot_is_read_from_a_transient_local_robot_description_topic():
    """robot_description_topic: a URDF published (latched) on it replaces the scene's
    robot (here the humanoid with l_hip_yaw renamed); a bad one is rejected with a
    reason and the node goes on with what it has."""
    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 0.0,
                 "robot_description_topic": "/robot_description", "marker_rate": 0.0})
    try:
        h.record(JointState, "/joint_states")
        h.wait_for(lambda: h.latest("/joint_states"), 30, "/joint_states")
        assert "l_hip_yaw" in h.latest("/joint_states").name
        pub = h.client.create_publisher(String, "/robot_description", LATCHED)
        pub.publish(String(data="<robot name='broken'"))
        time.sleep(0.5)
        urdf = URDF.read_text().replace('"l_hip_yaw"', '"l_hip_yaw_renamed"')
        assert urdf != URDF.read_text()
        pub.publish(String(data=urdf))
        since = time.monotonic()
        js = h.wait_for(lambda: [m for m in h.messages("/joint_states", since)
                                 if "l_hip_yaw_renamed" in m.name], 30,
                        "joint states of the new robot")[-1]
        assert sorted(js.name) == sorted(urdf_joints(urdf))
        assert h.node.scene.robot_description == urdf and not h.errors
    finally:
        h.close()


@pytest.fixture(scope="module")
def pair():
    h = Harness({"scene": str(ROOT / "test" / "data" / "two_humanoids.yaml"),
                 "real_time_factor": 0.0, "marker_rate": 0.0, "publish_rate": 100.0})
    try:
        h.record(Clock, "/clock")
        for name in ROBOTS:
            h.record(JointState, f"/{name}/joint_states")
            h.record(Odometry, f"/{name}/odom")
            h.record(Imu, f"/{name}/imu")
            h.record(String, f"/{name}/robot_description", LATCHED)
        h.commands = {name: h.client.create_publisher(JointState, f"/{name}/joint_commands", 10)
                      for name in ROBOTS}
        h.wait_for(lambda: all(h.log[t] for t in h.log), 60, "every topic of both robots")
        yield h
    finally:
        h.close()


def joint(h, robot, name):
    js = h.latest(f"/{robot}/joint_states")
    return js.position[list(js.name).index(name)]


def test_each_robot_has_its_namespace_urdf_joint_names_and_frames(pair):
    h = pair
    urdf = URDF.read_text()
    for name, y in ROBOTS.items():
        assert h.latest(f"/{name}/robot_description").data == urdf
        js = h.latest(f"/{name}/joint_states")
        assert sorted(js.name) == sorted(urdf_joints(urdf))  # unprefixed
        odom = h.latest(f"/{name}/odom")
        assert odom.header.frame_id == "world"
        assert odom.child_frame_id == f"{name}/base_link"
        assert odom.pose.pose.position.y == pytest.approx(y, abs=0.01)
        assert h.latest(f"/{name}/imu").header.frame_id == f"{name}/base_link"


def test_the_imu_of_a_standing_robot_reads_gravity(pair):
    """Specific force R^T (a - g) of a base at rest: gravity seen from the base, R^T (0, 0,
    9.81), with R the base orientation that /odom publishes with the same stamp.

    The PD-held posture leans the base forward while it settles (1-2 deg over the first
    second: x grows from 0.1 to 0.3 m/s^2), so the test compares each IMU sample after
    0.3 s of sim time with the orientation of the same instant instead of with a level
    base; the base's own acceleration is below 0.1 m/s^2 there (velocities from the
    simulator: its x velocity changes by 2 mm/s in 30 ms), and 0.2 m/s^2 bounds the
    difference. The node runs as fast as it can and an in-process reader that falls behind
    loses messages of its keep-last queue, so the test waits for five matched samples
    rather than expecting each one."""
    h = pair
    for name in ROBOTS:
        def matched(name=name):
            odom = {round(stamp(m), 6): m for m in h.messages(f"/{name}/odom")}
            return [(m, odom[round(stamp(m), 6)]) for m in h.messages(f"/{name}/imu")
                    if stamp(m) >= 0.3 - 1e-9 and round(stamp(m), 6) in odom]
        h.wait_for(lambda: len(matched()) >= 5, 60, f"5 IMU and odometry samples of {name}")
        for imu, odom in matched()[:20]:
            o = odom.pose.pose.orientation
            R = pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix()
            expected = R.T @ np.array([0.0, 0.0, 9.81])
            acc = imu.linear_acceleration
            assert [acc.x, acc.y, acc.z] == pytest.approx(expected, abs=0.2), name
            w = imu.angular_velocity
            assert max(abs(w.x), abs(w.y), abs(w.z)) < 0.1, name  # standing still [rad/s]


def test_joint_commands_move_one_robot_only_with_the_mode_chosen_per_joint(pair):
    """As topic_based_ros2_control sends them: l_elbow by position, r_elbow by velocity
    (its position field NaN), in one message to bob; alice does not move."""
    h = pair
    alice_l, bob_r = joint(h, "alice", "l_elbow"), joint(h, "bob", "r_elbow")
    msg = JointState(name=["l_elbow", "r_elbow"], position=[-1.2, math.nan],
                     velocity=[math.nan, -0.5])
    for _ in range(3):
        h.commands["bob"].publish(msg)
        time.sleep(0.05)
    h.wait_for(lambda: abs(joint(h, "bob", "l_elbow") + 1.2) < 0.05, 60, "bob's l_elbow")
    assert joint(h, "bob", "r_elbow") < bob_r - 0.05  # driven at -0.5 rad/s
    assert joint(h, "alice", "l_elbow") == pytest.approx(alice_l, abs=0.02)
    # malformed commands are dropped; the state stays finite and the last command holds
    for bad in [JointState(name=["l_elbow"], position=[1.0, 2.0]),
                JointState(name=["no_such_joint"], position=[0.0]),
                JointState(name=["l_elbow"], position=[math.nan]),
                JointState(name=["alice/l_elbow"], position=[0.0])]:
        h.commands["bob"].publish(bad)
        time.sleep(0.1)
    since = time.monotonic()
    h.wait_for(lambda: len(h.messages("/bob/joint_states", since)) > 5, 30, "more states")
    for m in h.messages("/bob/joint_states", since):
        assert all(math.isfinite(x) for x in [*m.position, *m.velocity, *m.effort])
    assert joint(h, "bob", "l_elbow") == pytest.approx(-1.2, abs=0.05)
    assert not h.errors


def test_stamps_of_every_robot_are_the_clock(pair):
    # /clock is a stream of depth 10, as Gazebo's: a subscriber that falls behind on a
    # busy machine loses samples (the writer overwrites them), so not every joint-state
    # stamp has its /clock message in the record. What must hold: every stamp is sim time
    # on the 100 Hz tick of the clock (the wall clock would read ~1.8e9 s), the robots
    # share their ticks, and the ticks the record holds are the clock's own.
    h = pair
    since = time.monotonic()
    h.wait_for(lambda: len(h.messages("/alice/joint_states", since)) > 3, 30, "states")
    clocks = {clock_of(m) for m in h.messages("/clock")}
    ticks = {}
    for name in ROBOTS:
        stamps = [stamp(m) for m in h.messages(f"/{name}/joint_states", since)[:-1]]
        assert stamps and all(0.0 < t < 1e3 and abs(100 * t - round(100 * t)) < 1e-6
                              for t in stamps), stamps
        assert set(stamps) & clocks, (name, sorted(stamps)[:5], sorted(clocks)[-5:])
        ticks[name] = set(stamps)
    assert set.intersection(*ticks.values())


def test_robot_relative_joint_names_resolve_unless_two_robots_share_them(pair):
    scene = pair.node.scene
    assert scene.sim_joint("alice/l_elbow") == "alice/l_elbow"
    with pytest.raises(KeyError, match="joint 'l_elbow' is a joint of several robots: name "
                                       "one of alice/l_elbow, bob/l_elbow"):
        scene.sim_joint("l_elbow")
    with pytest.raises(KeyError, match="unknown joint 'no_such'"):
        scene.sim_joint("no_such")


def test_one_namespace_moves_the_whole_instance_and_joint_states_can_move_aside():
    """``-r __ns:=/simA`` (here: the node's namespace) moves every topic, /clock and /tf
    included; ``joint_states_topic`` moves the simulator's joint states off the topic
    joint_state_broadcaster publishes (the topic_based_ros2_control recipe)."""
    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 0.0,
                 "marker_rate": 0.0, "joint_states_topic": "sim_joint_states"},
                namespace="/simA")
    try:
        h.record(JointState, "/simA/sim_joint_states")
        h.record(Clock, "/simA/clock")
        h.wait_for(lambda: h.log["/simA/sim_joint_states"] and h.log["/simA/clock"], 60,
                   "the namespaced joint states and clock")
        names = {n for n, _ in h.node.get_publisher_names_and_types_by_node(
            "contact_lcp", "/simA")}
        assert {"/simA/odom", "/simA/diagnostics", "/simA/robot_description"} <= names
        assert not {"/joint_states", "/clock", "/odom", "/sim_joint_states"} & names
        subs = {n for n, _ in h.node.get_subscriber_names_and_types_by_node(
            "contact_lcp", "/simA")}
        assert "/simA/joint_commands" in subs
        from ros_harness import set_parameter

        result = set_parameter(h.client, "joint_states_topic", "other",
                               simulator="/simA/contact_lcp")
        assert not result.successful and "start-up only" in result.reason
    finally:
        h.close()
