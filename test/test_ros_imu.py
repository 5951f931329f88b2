"""IMUs on links the scene names (output.imu_links), without DDS: the publishers are fakes."""

from types import SimpleNamespace

import numpy as np
import pytest

from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu

from contact_lcp.ros.packed import to_stamp
from contact_lcp.ros.robots import SceneIO
from contact_lcp.sim import Simulator, load_scene


class FakePublisher:
    """Records what is sent, as a subscriber would read it (the node sends bytes)."""

    def __init__(self, topic):
        self.topic, self.sent = topic, []

    def get_subscription_count(self):
        return 1

    def publish(self, raw):
        msg = deserialize_message(raw, Imu)
        m = msg.linear_acceleration
        w = msg.angular_velocity
        self.sent.append((msg.header.frame_id, np.array([m.x, m.y, m.z]),
                          np.array([w.x, w.y, w.z])))


def test_a_named_link_imu_reads_gravity_in_the_link_frame():
    scene = load_scene("config/humanoid_stand.yaml")
    scene = scene.replace(output=scene.output.__class__(wrench_links=(), imu_links=("l_foot",)))
    sim = Simulator(scene)
    pubs = {}

    def publisher(kind, topic, qos):
        return pubs.setdefault(topic, FakePublisher(topic))

    io = SceneIO(SimpleNamespace(gravity=scene.gravity, robots=(), bodies=(),
                                 imu_links=("l_foot",)), publisher)
    assert set(pubs) == {"~/imu/l_foot"}
    for k in range(300):
        sim.step()
        if k >= 200 and k % 10 == 0:  # every 10 ms after 0.2 s of settling
            io.publish_sensors(to_stamp(sim.t), sim.t, sim, with_tf=False)
    sent = pubs["~/imu/l_foot"].sent
    frames, acc, gyro = zip(*sent[1:])  # the first sample has no acceleration yet
    assert set(frames) == {"l_foot"}
    # The flat foot stands still: specific force R^T (a - g) = (0, 0, 9.81) to the
    # residual sway of the PD posture (0.05 m/s^2), no rotation.
    np.testing.assert_allclose(np.mean(acc, axis=0), [0.0, 0.0, 9.81], atol=0.05)
    assert np.abs(gyro).max() < 1e-3


def test_an_unknown_imu_link_is_refused_with_the_links():
    from contact_lcp.exceptions import FrameNotFound

    scene = load_scene("config/humanoid_stand.yaml")
    scene = scene.replace(output=scene.output.__class__(imu_links=("l_fot",)))
    with pytest.raises(FrameNotFound, match="l_fot"):
        Simulator(scene)
