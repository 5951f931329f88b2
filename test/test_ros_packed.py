"""Pre-serialized messages (contact_lcp/ros/packed.py): what a subscriber reads back."""

import numpy as np
import pytest

pytest.importorskip("rclpy")

from rclpy.serialization import deserialize_message  # noqa: E402

from contact_lcp.ros import packed  # noqa: E402


def read(packer, kind, values, stamp=(17, 250_000_000)):
    return deserialize_message(packer.pack(np.asarray(values, dtype=float), stamp), kind)


def test_joint_states_read_back_with_names_stamp_and_arrays():
    from sensor_msgs.msg import JointState

    names = ["l_hip", "l_knee", "r_hip"]
    p = packed.joint_state(names)
    values = np.arange(9.0) - 4.5
    for stamp in [(17, 250_000_000), (18, 999_999_999)]:  # the same bytes, refilled
        msg = read(p, JointState, values, stamp)
        assert list(msg.name) == names
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == stamp
        assert list(msg.position) == [-4.5, -3.5, -2.5]
        assert list(msg.velocity) == [-1.5, -0.5, 0.5]
        assert list(msg.effort) == [1.5, 2.5, 3.5]


def test_odometry_imu_wrench_and_clock_read_back():
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu

    odom = read(packed.odometry("world", "base_link"), Odometry, np.arange(13.0))
    assert (odom.header.frame_id, odom.child_frame_id) == ("world", "base_link")
    o = odom.pose.pose.orientation
    assert [o.x, o.y, o.z, o.w] == [3.0, 4.0, 5.0, 6.0]
    assert odom.twist.twist.angular.z == 12.0
    assert list(odom.pose.covariance) == [0.0] * 36
    imu = read(packed.imu("b/base_link"), Imu, np.arange(10.0))
    assert imu.header.frame_id == "b/base_link"
    assert [imu.orientation.w, imu.angular_velocity.x, imu.linear_acceleration.z] == \
        [3.0, 4.0, 9.0]
    w = read(packed.wrench("l_foot"), WrenchStamped, [1, 2, 3, 4, 5, 6])
    assert (w.header.frame_id, w.wrench.force.x, w.wrench.torque.z) == ("l_foot", 1.0, 6.0)
    c = read(packed.clock(), Clock, [], (5, 6))
    assert (c.clock.sec, c.clock.nanosec) == (5, 6)


def test_to_stamp_rounds_to_the_nanosecond():
    assert packed.to_stamp(1.5) == (1, 500_000_000)
    assert packed.to_stamp(2.9999999999) == (3, 0)


class Counting:
    def __init__(self, subscribers):
        self.subscribers, self.sent = subscribers, []

    def get_subscription_count(self):
        return self.subscribers

    def publish(self, raw):
        self.sent.append(raw)


def test_a_stream_sends_only_while_someone_listens():
    pub = Counting(0)
    stream = packed.Stream(pub, packed.wrench("l_foot"))
    assert not stream.publish(np.zeros(6), (0, 0)) and pub.sent == []
    pub.subscribers = 2
    assert stream.publish(np.ones(6), (0, 0)) and len(pub.sent) == 1
