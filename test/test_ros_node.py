"""The contact_lcp node end to end: a subprocess on real DDS, checked from a test node.

One node process serves the whole module (its start, with imports and the first LCP,
dominates the time); tests run in file order and leave it running (unpaused, default
commands restored by the reset at the end). The DDS traffic stays on this machine
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) in a domain derived from the pid, so parallel
runs do not see each other. ``CONTACT_LCP_ROS_TEST_SCENE`` runs it on another standing
scene (its wrench_links must be the feet).
"""

import math
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

import ros_harness  # noqa: E402  (wait_for, call, set_parameter from the test client)
from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
PUBLISH_RATE = 50.0  # [Hz]
# ROS_DOMAIN_ID if set (each session its own), else one from the pid (valid: 1..101)
DOMAIN_ID = int(os.environ.get("ROS_DOMAIN_ID") or 1 + os.getpid() % 100)
ARM = "l_elbow"  # a joint that can move without upsetting the balance; limits [-2.5, 0]
NS = "/contact_lcp"


def _scene():
    scene = os.environ.get("CONTACT_LCP_ROS_TEST_SCENE") or str(
        ROOT / "config" / "humanoid_stand.yaml")
    if not Path(scene).is_file():
        pytest.skip(f"scene {scene} is not in the tree")
    return scene


def stamp(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


class Observer:
    """A test-side node recording what the simulator node publishes."""

    def __init__(self, context):
        self.node = rclpy.create_node("contact_lcp_observer", context=context)
        self.log = {}
        self.wrench_links = ("l_foot", "r_foot")
        for topic, kind in [("/joint_states", JointState), ("/clock", Clock),
                            ("/odom", Odometry)]:
            self._record(topic, kind, 50)
        for link in self.wrench_links:
            self._record(f"{NS}/contact_wrenches/{link}", WrenchStamped, 50)
        self._record("/diagnostics", DiagnosticArray, 10)
        self._record(f"{NS}/contact_markers", MarkerArray, 5)
        self._record("/robot_description", String,
                     QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.commands = self.node.create_publisher(Float64MultiArray, f"{NS}/commands", 10)
        self.trajectory = self.node.create_publisher(
            JointTrajectory, f"{NS}/joint_trajectory", 10)
        self.spinner = ros_harness.Spinner(context, self.node)

    def _record(self, topic, kind, qos):
        self.log[topic] = []
        self.node.create_subscription(
            kind, topic, lambda m, t=topic: self.log[t].append((time.monotonic(), m)), qos)

    def messages(self, topic, since=0.0):
        return [m for w, m in list(self.log[topic]) if w >= since]

    def latest(self, topic):
        return self.log[topic][-1][1] if self.log[topic] else None

    def wait_for(self, predicate, timeout, what):
        return ros_harness.wait_for(predicate, timeout, what)

    def call(self, kind, name, request, timeout=10.0):
        return ros_harness.call(self.node, kind, name, request, timeout)

    def set_parameter(self, name, value):
        """SetParametersResult of setting ``name`` on the simulator node."""
        return ros_harness.set_parameter(self.node, name, value, timeout=10.0)

    def joint(self, name):
        js = self.latest("/joint_states")
        return js.position[list(js.name).index(name)]

    def sim_time_passes(self, dt, timeout=60.0):
        """Wait until /clock has advanced by ``dt`` [s] from now."""
        t0 = stamp_clock(self.latest("/clock"))
        self.wait_for(lambda: stamp_clock(self.latest("/clock")) >= t0 + dt, timeout,
                      f"{dt} s of sim time")

    def close(self):
        ros_harness.close_ros(self.node.context, (self.spinner,), (self.node,))


def stamp_clock(msg):
    return msg.clock.sec + msg.clock.nanosec * 1e-9


@pytest.fixture(scope="module")
def sim_node(tmp_path_factory):
    """The node subprocess (log file attached); SIGINT then kill at the end."""
    scene = _scene()
    log_path = tmp_path_factory.mktemp("contact_lcp_node") / "node.log"
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN_ID), PYTHONUNBUFFERED="1",
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "contact_lcp.ros", "--ros-args",
           "-p", f"scene:={scene}", "-p", f"publish_rate:={PUBLISH_RATE}",
           "-p", "marker_rate:=5.0", "-p", "real_time_factor:=1.0"]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc.log_path = log_path
    proc.scene = scene
    try:
        yield proc
    finally:
        ros_harness.interrupt(proc, 10)


@pytest.fixture(scope="module")
def obs(sim_node):
    """The observer, once the node publishes joint states."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    observer = Observer(context)
    try:
        deadline = time.monotonic() + 120.0
        while not observer.log["/joint_states"]:
            assert sim_node.poll() is None, sim_node.log_path.read_text()
            assert time.monotonic() < deadline, "no /joint_states within 120 s:\n" + \
                sim_node.log_path.read_text()
            time.sleep(0.1)
        yield observer
    finally:
        observer.close()


@pytest.fixture(scope="module")
def scene_facts(sim_node):
    """Joint names, total mass, time step and initial joint positions of the scene."""
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(sim_node.scene)
    js = sim.joint_state()
    return dict(joints=list(js.names), q0=dict(zip(js.names, js.position)), h=sim.h)


def urdf_mass_and_joints(urdf):
    root = ET.fromstring(urdf)
    mass = sum(float(m.get("value")) for m in root.iter("mass"))
    joints = [j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"]
    return mass, joints


# ---------------------------------------------------------------------------------------
def test_joint_states_carry_the_urdf_joints_at_the_publish_rate(obs):
    urdf = obs.wait_for(lambda: obs.latest("/robot_description"), 10, "/robot_description")
    _, joints = urdf_mass_and_joints(urdf.data)
    js = obs.latest("/joint_states")
    assert sorted(js.name) == sorted(joints) and len(js.name) == len(joints)
    assert len(js.position) == len(js.velocity) == len(js.effort) == len(joints)
    # publish_rate is in sim time (Gazebo's update_rate): the stamps of consecutive
    # messages are 1/rate apart, exactly, on any machine. Counted over >= 2 s of wall
    # time and >= 0.2 s of sim time; 1 % covers the rounding of stamps to the ns. The
    # wall rate is that times the achieved real-time factor (printed, not tested).
    t0 = time.monotonic()
    obs.wait_for(lambda: time.monotonic() - t0 >= 2.0 and len(
        obs.messages("/joint_states", t0)) > 2 and stamp(obs.latest("/joint_states"))
        - stamp(obs.messages("/joint_states", t0)[0]) >= 0.2, 60, "0.2 s of sim time")
    received = obs.messages("/joint_states", t0)
    stamps = sorted({stamp(m) for m in received})
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    gaps = np.diff(stamps)
    wall = [w for w, m in list(obs.log["/joint_states"]) if w >= t0]
    print(f"/joint_states: {rate:.3f} Hz of sim time (configured {PUBLISH_RATE} Hz), "
          f"{(len(wall) - 1) / (wall[-1] - wall[0]):.1f} Hz of wall time")
    assert rate == pytest.approx(PUBLISH_RATE, rel=0.01)
    assert np.median(gaps) == pytest.approx(1.0 / PUBLISH_RATE, abs=1e-6)


def test_publish_rate_and_wrench_links_change_at_runtime(obs):
    assert obs.set_parameter("publish_rate", 25.0).successful
    assert obs.set_parameter("wrench_links", ["l_foot"]).successful
    try:
        time.sleep(0.1)
        since = time.monotonic()
        obs.sim_time_passes(0.2)
        stamps = sorted({stamp(m) for m in obs.messages("/joint_states", since)})
        assert np.median(np.diff(stamps)) == pytest.approx(0.04, abs=1e-6)
        assert obs.messages(f"{NS}/contact_wrenches/l_foot", since)
        late = time.monotonic()
        obs.sim_time_passes(0.1)
        assert not obs.messages(f"{NS}/contact_wrenches/r_foot", late)
    finally:
        assert obs.set_parameter("publish_rate", PUBLISH_RATE).successful
        assert obs.set_parameter("wrench_links", list(obs.wrench_links)).successful


def test_clock_advances_and_stamps_follow_it(obs):
    since = time.monotonic()
    obs.sim_time_passes(0.05)
    clocks = [stamp_clock(m) for m in obs.messages("/clock", since)]
    assert all(b >= a for a, b in zip(clocks, clocks[1:])) and clocks[-1] > clocks[0]
    stamps = [stamp(m) for m in obs.messages("/joint_states", since)]
    assert set(stamps) <= set(clocks) | {stamps[-1]}


def test_feet_carry_the_weight(obs, sim_node):
    """Time-averaged world-z contact force on both feet = m g within 2 %.

    The wrenches are in the foot frames: each is rotated to the world with the foot's
    orientation from forward kinematics of /robot_description at the published base
    pose (/odom) and joint positions (/joint_states) of the same stamp.
    """
    import pinocchio as pin

    urdf = obs.latest("/robot_description").data
    mass, _ = urdf_mass_and_joints(urdf)
    model = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
    data = model.createData()
    # settled: the default scene's feet carry m g within 0.1 % from 0.25 s on
    obs.wait_for(lambda: stamp_clock(obs.latest("/clock")) >= 0.5, 60, "0.5 s of settling")
    since = time.monotonic()
    topics = ["/joint_states", "/odom"] + [f"{NS}/contact_wrenches/{link}"
                                           for link in obs.wrench_links]

    def complete_samples():
        """{stamp: {topic: message}} of the stamps every topic has published (topics
        arrive in their own order: under load the wrenches trail the joint states)."""
        by_stamp = {}
        for topic in topics:
            for m in obs.messages(topic, since):
                by_stamp.setdefault(stamp(m), {})[topic] = m
        return {t: v for t, v in by_stamp.items() if len(v) == len(topics)}

    def span():
        times = sorted(complete_samples())
        return times[-1] - times[0] if times else 0.0

    obs.wait_for(lambda: span() >= 1.0, 60, "1 s of sim time of complete samples")
    complete = complete_samples()
    times = sorted(complete)
    assert times[-1] - times[0] >= 1.0, f"samples span {times[-1] - times[0]:.3f} s"
    fz = []
    for t in times:
        sample = complete[t]
        js, odom = sample["/joint_states"], sample["/odom"]
        q = pin.neutral(model)
        p, o = odom.pose.pose.position, odom.pose.pose.orientation
        q[:7] = [p.x, p.y, p.z, o.x, o.y, o.z, o.w]
        for name, value in zip(js.name, js.position):
            q[model.joints[model.getJointId(name)].idx_q] = value
        pin.framesForwardKinematics(model, data, q)
        total = 0.0
        for link in obs.wrench_links:
            f = sample[f"{NS}/contact_wrenches/{link}"].wrench.force
            R = data.oMf[model.getFrameId(link)].rotation
            total += (R @ np.array([f.x, f.y, f.z]))[2]
        fz.append(total)
    mg = mass * 9.81
    print(f"feet: mean world-z force {np.mean(fz):.2f} N over {len(fz)} samples "
          f"({times[-1] - times[0]:.2f} s); m g = {mg:.2f} N")
    assert np.mean(fz) == pytest.approx(mg, rel=0.02)


def test_markers_and_diagnostics_describe_the_scene(obs):
    markers = obs.wait_for(lambda: obs.latest(f"{NS}/contact_markers"), 10, "markers")
    by_ns = {}
    for m in markers.markers:
        assert m.header.frame_id == "world"
        by_ns.setdefault(m.ns, []).append(m)
    arrows = [m for m in by_ns["contact_forces"] if m.action == Marker.ADD]
    assert len(arrows) >= 3  # two flat feet: >= 3 loaded points
    assert all(m.type == Marker.ARROW and m.points[1].z > m.points[0].z for m in arrows)
    shapes = {m.text: m for m in by_ns["shapes"]}  # one marker per collision shape
    assert shapes["ground"].type == Marker.CUBE and abs(shapes["ground"].pose.position.z) < 1e-9
    for foot in obs.wrench_links:
        box = next(m for name, m in shapes.items() if name.startswith(foot))
        assert box.type == Marker.CUBE and box.pose.position.z < 0.05  # on the ground
    diag = obs.wait_for(lambda: obs.latest("/diagnostics"), 10, "/diagnostics").status[0]
    values = {kv.key: kv.value for kv in diag.values}
    for key in ("solver_method", "pivots", "pivots_total", "lcp_failures", "fallbacks",
                "real_time_factor", "contacts"):
        assert key in values, key
    assert values["solver_method"].startswith("robust")


def test_invalid_parameters_are_rejected_with_a_reason(obs):
    for name, value, words in [("time_step", -1.0, "time_step must be in"),
                               ("command_mode", "banana", "effort, position, velocity"),
                               ("joints", ["no_such_joint"], "unknown no_such_joint"),
                               ("publish_rate", "fast", "must be a number"),
                               ("solver_method", "nope", "expected one of"),
                               ("robot_description", "<robot name='x'", "cannot build")]:
        result = obs.set_parameter(name, value)
        assert not result.successful and words in result.reason, (name, result.reason)
    assert obs.set_parameter("command_mode", "position").successful


def test_a_position_command_moves_a_joint(obs):
    assert obs.set_parameter("joints", [ARM]).successful
    q0 = obs.joint(ARM)
    target = q0 - 0.5
    for _ in range(3):
        obs.commands.publish(Float64MultiArray(data=[target]))
        time.sleep(0.05)
    obs.wait_for(lambda: abs(obs.joint(ARM) - target) < 0.05, 60, f"{ARM} at {target}")


def test_malformed_input_is_rejected_and_the_state_stays_finite(obs, sim_node):
    target = obs.joint(ARM)
    bad = [
        (obs.commands, Float64MultiArray(data=[1.0, 2.0]), "expected 1 values"),
        (obs.commands, Float64MultiArray(data=[math.nan]), "must be finite"),
        (obs.commands, Float64MultiArray(data=[math.inf]), "must be finite"),
        (obs.trajectory, _trajectory(["no_such_joint"], [(0.5, -1.0)]), "unknown joint"),
        (obs.trajectory, _trajectory([ARM], [(1.0, -1.0), (0.5, -0.5)]),
         "strictly increasing, got [1.0, 0.5]"),
        (obs.trajectory, _trajectory([ARM], []), "no points"),
    ]
    since = time.monotonic()
    for pub, msg, words in bad:
        # a distinct reason is logged at once when the last line is >= 0.1 s old (the
        # throttle): the next message goes 0.15 s after this one's line, so that however
        # late the node's executor takes a message, the two are never closer than that
        pub.publish(msg)
        try:
            obs.wait_for(lambda: words in sim_node.log_path.read_text(), 30,
                         f"a warning with {words!r} in the node's log")
        except AssertionError as e:
            raise AssertionError(f"{e}:\n{sim_node.log_path.read_text()[-3000:]}") from None
        time.sleep(0.15)
    obs.sim_time_passes(0.05)
    assert sim_node.poll() is None
    for m in obs.messages("/joint_states", since):
        assert all(math.isfinite(x) for x in [*m.position, *m.velocity, *m.effort])
    assert abs(obs.joint(ARM) - target) < 0.05  # the last good command still holds


def _trajectory(joints, points):
    msg = JointTrajectory(joint_names=joints)
    for t, q in points:
        msg.points.append(JointTrajectoryPoint(
            positions=[q], time_from_start=Duration(sec=int(t), nanosec=int(t % 1 * 1e9))))
    return msg


def test_a_trajectory_is_followed_in_sim_time(obs):
    q0 = obs.joint(ARM)
    obs.trajectory.publish(_trajectory([ARM], [(0.2, q0 - 0.25), (0.4, q0 - 0.5)]))
    obs.wait_for(lambda: abs(obs.joint(ARM) - (q0 - 0.5)) < 0.05, 60, "the trajectory end")


def test_paused_clock_stops_and_step_advances_one_time_step(obs, scene_facts):
    assert obs.call(SetBool, f"{NS}/set_paused", SetBool.Request(data=True)).success
    time.sleep(0.3)
    t1 = stamp_clock(obs.latest("/clock"))
    time.sleep(1.0)
    assert stamp_clock(obs.latest("/clock")) == t1
    for k in (1, 2):
        assert obs.call(Trigger, f"{NS}/step", Trigger.Request()).success
        obs.wait_for(lambda: stamp_clock(obs.latest("/clock")) > t1, 5, "the stepped clock")
        t2 = stamp_clock(obs.latest("/clock"))
        assert t2 - t1 == pytest.approx(scene_facts["h"], abs=1e-9)
        t1 = t2
    assert obs.call(SetBool, f"{NS}/set_paused", SetBool.Request(data=False)).success
    assert not obs.call(Trigger, f"{NS}/step", Trigger.Request()).success  # running
    obs.sim_time_passes(0.02)


def test_a_new_time_step_rebuilds_the_simulator(obs, scene_facts):
    assert obs.set_parameter("paused", True).successful
    assert obs.set_parameter("time_step", 0.002).successful
    for h in (0.002, scene_facts["h"]):
        time.sleep(0.2)
        t1 = stamp_clock(obs.latest("/clock"))
        assert obs.call(Trigger, f"{NS}/step", Trigger.Request()).success
        obs.wait_for(lambda: stamp_clock(obs.latest("/clock")) > t1, 5, "the stepped clock")
        assert stamp_clock(obs.latest("/clock")) - t1 == pytest.approx(h, abs=1e-9)
        assert obs.set_parameter("time_step", 0.0).successful  # back to the scene's


def test_reset_restores_the_initial_joint_positions(obs, scene_facts):
    assert obs.call(SetBool, f"{NS}/set_paused", SetBool.Request(data=True)).success
    before = stamp_clock(obs.latest("/clock"))
    assert obs.call(Trigger, f"{NS}/reset", Trigger.Request()).success
    obs.wait_for(lambda: stamp(obs.latest("/joint_states")) > before, 5,
                 "joint states after reset")
    js = obs.latest("/joint_states")
    q = dict(zip(js.name, js.position))
    for name, q0 in scene_facts["q0"].items():
        assert q[name] == pytest.approx(q0, abs=1e-12), name
    assert stamp_clock(obs.latest("/clock")) > before  # the clock never goes back
    # no step since the reset: its contact forces are not known, so no wrench is
    # published (a zero one would say that the standing feet carry nothing) while the
    # joint states go on; once stepping again, the wrenches come back
    reset = stamp(js)
    n = len(obs.messages("/joint_states"))
    obs.wait_for(lambda: len(obs.messages("/joint_states")) >= n + 5, 10,
                 "five more joint states while paused")
    topic = f"{NS}/contact_wrenches/l_foot"
    assert not [m for m in obs.messages(topic) if stamp(m) >= reset]
    assert obs.set_parameter("paused", False).successful
    obs.wait_for(lambda: [m for m in obs.messages(topic) if stamp(m) > reset], 10,
                 "a wrench after the first step since the reset")
    obs.sim_time_passes(0.02)
