"""Unpacking incoming messages and throttling warnings (contact_lcp/ros/inbound.py)."""

import pytest

pytest.importorskip("trajectory_msgs.msg")

from builtin_interfaces.msg import Duration, Time  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from contact_lcp.ros.inbound import Throttle, trajectory_arrays  # noqa: E402


def _trajectory(joints, points, stamp=(0, 0)):
    msg = JointTrajectory(joint_names=joints)
    msg.header.stamp = Time(sec=stamp[0], nanosec=stamp[1])
    for t, q, v in points:
        msg.points.append(JointTrajectoryPoint(
            positions=q, velocities=v,
            time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))))
    return msg


def test_trajectory_arrays_unpacks_times_and_stamp():
    msg = _trajectory(["a", "b"], [(0.5, [1.0, 2.0], []), (1.25, [3.0, 4.0], [])], (2, 5e8))
    joints, start, t_rel, q, v = trajectory_arrays(msg)
    assert joints == ["a", "b"] and start == pytest.approx(2.5)
    assert t_rel == pytest.approx([0.5, 1.25]) and q == [[1.0, 2.0], [3.0, 4.0]] and v is None
    _, start, _, _, v = trajectory_arrays(
        _trajectory(["a"], [(1.0, [0.0], [1.0])]))
    assert start is None and v == [[1.0]]


@pytest.mark.parametrize("joints, points, words", [
    ([], [(1.0, [], [])], "no joint_names"),
    (["a"], [], "no points"),
    (["a", "b"], [(1.0, [1.0], [])], "point 0 has 1 positions for 2 joints"),
    (["a"], [(1.0, [1.0], [1.0, 2.0])], "point 0 has 2 velocities"),
    (["a"], [(1.0, [1.0], [1.0]), (2.0, [1.0], [])], "some points only"),
    (["a"], [(1.0, [1.0], []), (0.5, [1.0], [])], r"strictly increasing, got \[1.0, 0.5\]"),
])
def test_trajectory_arrays_rejects_malformed(joints, points, words):
    with pytest.raises(ValueError, match=words):
        trajectory_arrays(_trajectory(joints, points))


class _Logger:
    def __init__(self):
        self.lines = []

    def warning(self, text):
        self.lines.append(text)


def test_throttle_logs_new_reasons_and_counts_repeats():
    now = [0.0]
    log = _Logger()
    th = Throttle(log, period=1.0, min_gap=0.1, clock=lambda: now[0])
    assert th.warn("cmd", "wrong length")
    now[0] = 0.05
    assert not th.warn("cmd", "NaN")            # within min_gap
    now[0] = 0.2
    assert th.warn("cmd", "NaN")                # a new reason is shown
    now[0] = 0.5
    assert not th.warn("cmd", "NaN")            # the same reason is throttled
    assert th.warn("traj", "no points")         # other sources are independent
    now[0] = 1.3
    assert th.warn("cmd", "NaN")
    assert log.lines[-1] == "NaN (1 more rejected since)"
    assert len(log.lines) == 4


# -- sensor_msgs/JointState commands (topic_based_ros2_control) ---------------------------
def test_each_joint_takes_the_first_finite_field():
    from contact_lcp.ros.inbound import joint_command_groups

    nan = float("nan")
    groups = joint_command_groups(["a", "b", "c"], [0.5, nan, nan], [nan, -1.0, nan],
                                  [nan, 2.0, 3.0])
    assert groups == {"position": (["a"], [0.5]), "velocity": (["b"], [-1.0]),
                      "effort": (["c"], [3.0])}
    assert joint_command_groups(["a"], [], [], [4.0]) == {"effort": (["a"], [4.0])}


@pytest.mark.parametrize("names, p, v, e, words", [
    ([], [], [], [], "no joint names"),
    (["a", "a"], [1.0, 2.0], [], [], "repeated"),
    (["a"], [1.0, 2.0], [], [], "position has 2 values for 1 joints"),
    (["a", "b"], [1.0, float("nan")], [], [], "joint 'b' has no finite"),
    (["a"], [], [float("inf")], [], "joint 'a' has no finite"),
])
def test_malformed_joint_commands_say_why(names, p, v, e, words):
    from contact_lcp.ros.inbound import joint_command_groups

    with pytest.raises(ValueError, match=words):
        joint_command_groups(names, p, v, e)
