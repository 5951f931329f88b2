"""The node's standard ROS interfaces, from a separate rclpy process as a Gazebo user's
tools would use them: /tf, FollowJointTrajectory, simulation_interfaces.

One node process (the humanoid standing) serves the module; tests run in file order.
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
from contact_lcp.ros import interfaces  # noqa: E402

if any(interfaces.origin(p) is None for p in interfaces.PACKAGES):
    if os.environ.get("CI"):
        raise RuntimeError("the install step did not build the ROS interfaces: " + "; ".join(
            str(interfaces.missing(p)) for p in interfaces.PACKAGES))
    pytest.skip("tf2_msgs/control_msgs/simulation_interfaces not built here "
                "(python -m contact_lcp.ros.interfaces build)", allow_module_level=True)

from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from simulation_interfaces import srv  # noqa: E402
from simulation_interfaces.msg import Result, SimulationState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from contact_lcp_msgs.msg import Contacts  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_ID = int(os.environ.get("ROS_DOMAIN_ID") or 1 + os.getpid() % 100)
NS = "/contact_lcp"
ACTION = "/joint_trajectory_controller/follow_joint_trajectory"
ARM = "l_elbow"  # moves without upsetting the balance; limits [-2.5, 0]
OK = Result.RESULT_OK
#: a spawn or the steps after it may compile the new shape's contact kernels
SLOW = 300.0


@pytest.fixture(scope="module")
def node_proc(tmp_path_factory):
    log_path = tmp_path_factory.mktemp("contact_lcp_node") / "node.log"
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN_ID), PYTHONUNBUFFERED="1",
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "contact_lcp.ros", "--ros-args",
           "-p", f"scene:={ROOT / 'config' / 'humanoid_stand.yaml'}",
           "-p", "real_time_factor:=1.0"]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc.log_path = log_path
    try:
        yield proc
    finally:
        ros_harness.interrupt(proc, 10)


class Client:
    """A test-side rclpy node: TF and joint-state listener, action and service client."""

    def __init__(self, context):
        self.node = rclpy.create_node("standard_interfaces_client", context=context)
        self.tf, self.joints, self.contacts = [], [], []
        self.node.create_subscription(TFMessage, "/tf", self.tf.append, 50)
        self.node.create_subscription(Contacts, f"{NS}/contacts", self.contacts.append, 10)
        self.node.create_subscription(JointState, "/joint_states", self.joints.append, 50)
        self.action = ActionClient(self.node, FollowJointTrajectory, ACTION)
        self.spinner = ros_harness.Spinner(context, self.node)

    def frames(self, since=0):
        return {t.child_frame_id: t for m in self.tf[since:] for t in m.transforms}

    def joint(self, name):
        js = self.joints[-1]
        return js.position[list(js.name).index(name)]

    def call(self, kind, name, request, timeout=30.0):
        return ros_harness.call(self.node, kind, f"{NS}/{name}", request, timeout)

    def goal(self, target, seconds, tolerance=0.0, feedback=None):
        """Send a FollowJointTrajectory goal moving ARM to ``target``; the goal handle."""
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = [ARM]
        goal.trajectory.points = [JointTrajectoryPoint(
            positions=[target], time_from_start=Duration(sec=int(seconds),
                                                         nanosec=int(seconds % 1 * 1e9)))]
        if tolerance:
            goal.goal_tolerance = [JointTolerance(name=ARM, position=tolerance)]
        future = self.action.send_goal_async(goal, feedback_callback=feedback)
        ros_harness.wait_for(future.done, 30.0, "the goal's acceptance")
        return future.result()

    def close(self):
        ros_harness.close_ros(self.node.context, (self.spinner,), (self.node,))


@pytest.fixture(scope="module")
def client(node_proc):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    c = Client(context)
    try:
        deadline = time.monotonic() + 180.0
        while not c.joints or "ready:" not in node_proc.log_path.read_text():  # (ours)
            assert node_proc.poll() is None, node_proc.log_path.read_text()
            assert time.monotonic() < deadline, "no /joint_states:\n" + node_proc.log_path.read_text()
            time.sleep(0.1)
        assert c.action.wait_for_server(timeout_sec=30.0), node_proc.log_path.read_text()
        yield c
    finally:
        c.close()


def _result(handle, timeout=60.0):
    future = handle.get_result_async()
    ros_harness.wait_for(future.done, timeout, "the goal's result")
    return future.result()


def test_a_tf_listener_sees_the_floating_base_in_world(client):
    frames = ros_harness.wait_for(lambda: client.frames(), 10.0, "/tf")
    base = frames["base_link"]
    assert base.header.frame_id == "world"
    # the humanoid stands: its base is about its standing height up, upright
    assert 0.5 < base.transform.translation.z < 1.5
    assert abs(base.transform.rotation.w) > 0.99


def test_the_contacts_carry_the_robots_weight_on_the_ground(client):
    msg = ros_harness.wait_for(lambda: client.contacts and client.contacts[-1], 10.0,
                               "~/contacts")
    assert msg.header.frame_id == "world" and msg.contacts
    feet = {c.body_b for c in msg.contacts} | {c.body_a for c in msg.contacts}
    assert "ground" in feet and {"l_foot", "r_foot"} & feet
    for c in msg.contacts:
        n = (c.normal.x, c.normal.y, c.normal.z)
        assert math.isclose(math.hypot(*n), 1.0, abs_tol=1e-9)
        assert c.force.x * n[0] + c.force.y * n[1] + c.force.z * n[2] >= -1e-9  # pushes apart
    # standing still on flat ground: the vertical forces on the robot sum to its weight
    # (2 %: the standing robot's centre of mass still sways by a few mm/s)
    from contact_lcp.sim import Simulator

    weight = Simulator.from_file(str(ROOT / "config" / "humanoid_stand.yaml")).robot_mass(0) * 9.81
    fz = sum(c.force.z if c.body_a == "ground" else -c.force.z for c in msg.contacts)
    assert fz == pytest.approx(weight, rel=0.02)


def test_a_trajectory_goal_reaches_its_target_and_succeeds(client):
    feedback = []
    handle = client.goal(-1.0, 1.0, tolerance=0.02, feedback=feedback.append)
    assert handle.accepted
    outcome = _result(handle)
    assert outcome.status == 4, outcome.result.error_string  # GoalStatus.STATUS_SUCCEEDED
    assert outcome.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    time.sleep(0.1)  # the next joint state
    assert client.joint(ARM) == pytest.approx(-1.0, abs=0.02)
    assert feedback and feedback[-1].feedback.joint_names == [ARM]
    assert abs(feedback[-1].feedback.error.positions[0]) < 0.05


def test_a_newer_goal_preempts_the_running_one_and_says_so(client):
    # the first goal is long (it cannot end on its own while the test waits, whatever the
    # machine's load) and running (its feedback has come) before the second is sent
    feedback = []
    first = client.goal(-0.2, 30.0, feedback=feedback.append)
    ros_harness.wait_for(lambda: feedback, 30.0, "the first goal's feedback")
    second = client.goal(-0.6, 0.5)
    preempted = _result(first)
    assert preempted.status == 6  # GoalStatus.STATUS_ABORTED (no cancel was asked)
    assert "preempted by a newer goal" in preempted.result.error_string
    assert _result(second).status == 4
    assert client.joint(ARM) == pytest.approx(-0.6, abs=0.05)


def test_a_cancelled_goal_stops_and_reports_canceled(client):
    # a slow goal (0.07 rad/s): far from its end even when a loaded machine delivers the
    # cancel seconds late, yet the arm would move by more than the tolerance below in the
    # second the test waits had it not stopped
    handle = client.goal(-2.0, 20.0)
    time.sleep(0.5)
    cancel = handle.cancel_goal_async()
    ros_harness.wait_for(cancel.done, 10.0, "the cancel answer")
    outcome = _result(handle)
    assert outcome.status == 5  # GoalStatus.STATUS_CANCELED
    held = client.joint(ARM)
    time.sleep(1.0)
    assert client.joint(ARM) == pytest.approx(held, abs=0.02)  # stopped, not at -2
    assert held > -1.5


def test_a_goal_naming_an_unknown_joint_is_rejected(client):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["no_such_joint"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[0.0],
                                                   time_from_start=Duration(sec=1))]
    future = client.action.send_goal_async(goal)
    ros_harness.wait_for(future.done, 30.0, "the goal's answer")
    assert not future.result().accepted


def test_a_box_spawned_while_paused_falls_and_rests_after_300_steps_and_is_deleted(client):
    features = client.call(srv.GetSimulatorFeatures, "get_simulator_features",
                           srv.GetSimulatorFeatures.Request()).features
    assert "body" in features.spawn_formats
    paused = SimulationState(state=SimulationState.STATE_PAUSED)
    r = client.call(srv.SetSimulationState, "set_simulation_state",
                    srv.SetSimulationState.Request(state=paused))
    assert r.result.result == OK, r.result.error_message
    r = client.call(srv.StepSimulation, "step_simulation", srv.StepSimulation.Request(steps=1))
    assert r.result.result == OK, r.result.error_message
    for steps in (0, 2 ** 64 - 1):  # none, or hours of the physics thread: refused at once
        r = client.call(srv.StepSimulation, "step_simulation",
                        srv.StepSimulation.Request(steps=steps))
        assert r.result.result == Result.RESULT_OPERATION_FAILED
        assert "expected 1 to 100000 per call" in r.result.error_message

    request = srv.SpawnEntity.Request(
        name="box", resource_string="{shape: box, size: [0.2, 0.2, 0.2], mass: 1.0}")
    request.initial_pose.pose.position.x = 1.0
    request.initial_pose.pose.position.z = 0.5
    r = client.call(srv.SpawnEntity, "spawn_entity", request, timeout=SLOW)
    assert r.result.result == OK, r.result.error_message
    assert r.entity_name == "box"
    names = client.call(srv.GetEntities, "get_entities", srv.GetEntities.Request()).entities
    assert list(names) == ["humanoid", "box"]
    r = client.call(srv.SpawnEntity, "spawn_entity", request, timeout=SLOW)
    assert r.result.result == srv.SpawnEntity.Response.NAME_NOT_UNIQUE

    state = client.call(srv.GetEntityState, "get_entity_state",
                        srv.GetEntityState.Request(entity="box")).state
    assert state.pose.position.z == pytest.approx(0.5, abs=1e-12)  # paused: not moved
    r = client.call(srv.StepSimulation, "step_simulation",
                    srv.StepSimulation.Request(steps=300), timeout=SLOW)
    assert r.result.result == OK, r.result.error_message
    state = client.call(srv.GetEntityState, "get_entity_state",
                        srv.GetEntityState.Request(entity="box")).state
    # fallen 0.4 m in 0.286 s (sqrt(0.8 / g)), then resting on its face: centre at 0.1 m
    assert state.pose.position.z == pytest.approx(0.1, abs=1e-3)
    assert abs(state.twist.linear.z) < 0.05
    assert state.header.frame_id == "world"
    assert "box" in client.frames(max(0, len(client.tf) - 5)) or \
        ros_harness.wait_for(lambda: "box" in client.frames(), 5.0, "the box on /tf")

    r = client.call(srv.DeleteEntity, "delete_entity", srv.DeleteEntity.Request(entity="box"),
                    timeout=SLOW)
    assert r.result.result == OK, r.result.error_message
    names = client.call(srv.GetEntities, "get_entities", srv.GetEntities.Request()).entities
    assert list(names) == ["humanoid"]
    r = client.call(srv.GetEntityState, "get_entity_state",
                    srv.GetEntityState.Request(entity="box"))
    assert r.result.result == Result.RESULT_NOT_FOUND
    assert "no entity 'box'" in r.result.error_message


def test_a_robot_spawned_from_a_file_is_loaded_by_a_child_first_and_bad_uris_get_one_answer(
        client, tmp_path):
    request = srv.SpawnEntity.Request(name="arm2", uri=str(ROOT / "mjcf" / "free_box.xml"))
    request.initial_pose.pose.position.x = -1.0
    request.initial_pose.pose.position.z = 0.3
    r = client.call(srv.SpawnEntity, "spawn_entity", request, timeout=SLOW)
    assert r.result.result == OK, r.result.error_message
    r = client.call(srv.DeleteEntity, "delete_entity", srv.DeleteEntity.Request(entity="arm2"),
                    timeout=SLOW)
    assert r.result.result == OK, r.result.error_message
    secret = tmp_path / "secret.txt"
    secret.write_text("not a robot")
    answers = set()
    for uri in (str(secret), str(tmp_path / "missing.urdf"), "/etc", "file:///etc/passwd"):
        r = client.call(srv.SpawnEntity, "spawn_entity",
                        srv.SpawnEntity.Request(name="x", uri=uri), timeout=SLOW)
        assert r.result.result == srv.SpawnEntity.Response.RESOURCE_PARSE_ERROR
        assert "not a robot" not in r.result.error_message
        answers.add(r.result.error_message.replace(repr(uri), "URI"))
    assert len(answers) == 1, answers  # the same answer whether the file exists or not
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="b"><link name="l"><inertial><mass value="-1"/>'
                   '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
                   '</link></robot>')
    r = client.call(srv.SpawnEntity, "spawn_entity",
                    srv.SpawnEntity.Request(name="b", uri=str(bad)), timeout=SLOW)
    assert r.result.result == srv.SpawnEntity.Response.RESOURCE_PARSE_ERROR
    assert "mass" in r.result.error_message
    names = client.call(srv.GetEntities, "get_entities", srv.GetEntities.Request()).entities
    assert list(names) == ["humanoid"]


def test_stepping_while_playing_is_an_incorrect_state(client):
    playing = SimulationState(state=SimulationState.STATE_PLAYING)
    r = client.call(srv.SetSimulationState, "set_simulation_state",
                    srv.SetSimulationState.Request(state=playing))
    assert r.result.result == OK, r.result.error_message
    state = client.call(srv.GetSimulationState, "get_simulation_state",
                        srv.GetSimulationState.Request()).state.state
    assert state == SimulationState.STATE_PLAYING
    r = client.call(srv.StepSimulation, "step_simulation", srv.StepSimulation.Request(steps=5))
    assert r.result.result == Result.RESULT_INCORRECT_STATE
    assert "pause it first" in r.result.error_message
    assert not math.isnan(client.joint(ARM))
