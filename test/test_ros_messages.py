"""Message packing (contact_lcp/ros/messages.py): stamps, frames, quaternions, markers."""

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("visualization_msgs.msg")

from visualization_msgs.msg import Marker  # noqa: E402

from contact_lcp.ros import messages  # noqa: E402


def test_stamps_round_to_the_nanosecond_and_carry():
    t = messages.to_time(1.9999999999)
    assert (t.sec, t.nanosec) == (2, 0)
    t = messages.to_time(3.000000001)
    assert (t.sec, t.nanosec) == (3, 1)
    assert messages.from_time(messages.to_time(12.345678901)) == pytest.approx(12.345678901)


def test_transform_keeps_the_quaternion_field_order():
    base = SimpleNamespace(pose=np.array([1, 2, 3, 0.1, 0.2, 0.3, 0.9]),
                           twist=np.arange(6.0))
    tf = messages.transform(0.0, base, "base_link")
    assert (tf.header.frame_id, tf.child_frame_id) == ("world", "base_link")
    assert tf.transform.rotation.w == 0.9 and tf.transform.translation.y == 2.0


def _R_of(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_quaternion_of_rotation_matrix_round_trips():
    rng = np.random.default_rng(7)
    qs = list(rng.normal(size=(200, 4))) + [np.array([1.0, 0, 0, 0]), np.array([0, 0, 0, 1.0]),
                                            np.array([0, 1.0, 0, 0]), np.array([0, 0, 1.0, 0])]
    for q in qs:
        q = q / np.linalg.norm(q)
        got = np.array(messages.quaternion_xyzw(_R_of(q)))
        assert np.allclose(_R_of(got), _R_of(q), atol=1e-12)
        assert abs(np.linalg.norm(got) - 1) < 1e-12


def _shape(kind, size, name="s"):
    X = np.eye(4)
    X[:3, 3] = [0.1, 0.2, 0.3]
    return SimpleNamespace(name=name, link="l", kind=kind, size=size, X_W=X, mesh_path=None)


def test_contact_markers_shapes_arrows_and_stale_deletes():
    contacts = [SimpleNamespace(p_W=np.zeros(3), force_W=np.array([0, 0, 100.0])),
                SimpleNamespace(p_W=np.ones(3), force_W=np.zeros(3))]  # no arrow
    shapes = [_shape("box", (0.2, 0.1, 0.05)), _shape("sphere", (0.1,)),
              _shape("capsule", (0.05, 0.3)), _shape("halfspace", (0.0, 0.0, 1.0, 0.5))]
    msg, n = messages.contact_markers(1.0, contacts, shapes, previous_arrows=3)
    assert n == 1
    by_ns = {}
    for m in msg.markers:
        by_ns.setdefault(m.ns, []).append(m)
        assert m.header.frame_id == "world"
    arrow = by_ns["contact_forces"][0]
    assert arrow.action == Marker.ADD and arrow.points[1].z == pytest.approx(0.1)
    assert len(by_ns["contact_points"][0].points) == 2
    assert [m.id for m in by_ns["contact_forces"] if m.action == Marker.DELETE] == [1, 2]
    box, sphere, capsule, ground = by_ns["shapes"]
    assert (box.type, box.scale.x, box.pose.position.z) == (Marker.CUBE, 0.2, 0.3)
    assert sphere.scale.x == pytest.approx(0.2)
    assert capsule.type == Marker.CYLINDER and capsule.scale.z == pytest.approx(0.4)
    assert ground.scale.x == messages.GROUND_SIDE and ground.pose.orientation.w == 1.0
    assert ground.pose.position.z == pytest.approx(0.8)  # shape origin 0.3 + d 0.5


def test_shape_markers_are_refilled_not_rebuilt():
    cache = []
    shapes = [_shape("box", (0.2, 0.1, 0.05), "a"), _shape("sphere", (0.1,), "b")]
    first, _ = messages.contact_markers(0.0, [], shapes, shape_cache=cache)
    kept = list(cache)
    shapes[0].X_W[2, 3] = 1.5
    second, _ = messages.contact_markers(1.0, [], shapes, shape_cache=cache)
    assert cache[0] is kept[0] and cache[0].pose.position.z == 1.5
    assert cache[0].header.stamp.sec == 1 and cache[0].scale.x == 0.2
    shapes[1] = _shape("capsule", (0.05, 0.3), "c")  # another shape at that index
    messages.contact_markers(2.0, [], shapes, shape_cache=cache)
    assert cache[1] is not kept[1] and cache[1].type == Marker.CYLINDER


def test_halfspace_square_lies_on_a_tilted_plane():
    n = np.array([0.0, 0.6, 0.8])
    m = messages.shape_marker(messages.to_time(0), 0, _shape("halfspace", (*n, 0.0)))
    o = m.pose.orientation
    assert np.allclose(_R_of((o.x, o.y, o.z, o.w))[:, 2], n)


def test_diagnostics_levels():
    stats = SimpleNamespace(steps=10, lcp_failures=0, fallbacks=0, pivots_total=40)
    info = SimpleNamespace(lcp_method="robust", lcp_status="SOLVED", pivots=4,
                           num_contacts=8, num_active=8, max_penetration=1e-4)
    snap = SimpleNamespace(info=info, stats=stats, error="", paused=False,
                           real_time_factor=0.5)
    d = messages.diagnostics(0.0, snap, target_rtf=1.0, scene="s.yaml", new_failures=0)
    status = d.status[0]
    assert status.level == status.WARN and "below" in status.message
    values = {kv.key: kv.value for kv in status.values}
    assert values["solver_method"] == "robust" and values["pivots_total"] == "40"
    snap.error = "SimulationError: boom"
    assert messages.diagnostics(0.0, snap, target_rtf=1.0, scene="s", new_failures=0
                                ).status[0].level == status.ERROR


def test_imu_reads_the_specific_force_and_rates_in_the_base_frame():
    """A base yawed 90 deg about z, spinning at 1 rad/s about world x, accelerating at
    1 m/s^2 along world x, under g = (0, 0, -9.81): seen from the base (its x axis is
    world y), f = R^T (a - g) = (0, -1, 9.81) and w = R^T (1, 0, 0) = (0, -1, 0)."""
    s = np.sqrt(0.5)
    base = SimpleNamespace(pose=np.array([0, 0, 1, 0, 0, s, s]),
                           twist=np.array([0, 0, 0, 1.0, 0, 0]))
    v = messages.imu_values(base, [1.0, 0, 0], [0, 0, -9.81])  # the fields of Imu, in order
    assert v[7:10] == pytest.approx([0.0, -1.0, 9.81], abs=1e-12)  # linear acceleration
    assert v[4:7] == pytest.approx([0.0, -1.0, 0.0], abs=1e-12)  # angular velocity
    assert v[0:4] == pytest.approx([0, 0, s, s])  # orientation (x y z w)


def test_a_robot_publishes_its_own_joints_under_its_urdf_names():
    """Robot b's joints are 2: of the simulator's; its message names them as its URDF."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    from contact_lcp.ros.robots import RobotIO

    sent = []

    class Pub:
        def get_subscription_count(self):
            return 1

        def publish(self, raw):
            sent.append(deserialize_message(raw, JointState))

    robot = SimpleNamespace(topic=lambda name: f"/b/{name}", local_names=["x"], first=2,
                            floating=False)
    io = RobotIO(robot, [0, 0, -9.81], lambda kind, topic, qos: Pub(),
                 skip_description="/b/robot_description")
    js = SimpleNamespace(names=["a/x", "a/y", "b/x"], position=np.array([1.0, 2.0, 3.0]),
                         velocity=np.array([0.0, 0.0, -1.0]), effort=np.array([0, 0, 7.0]))
    io.publish_joints((4, 5), js)
    msg = sent[-1]
    assert list(msg.name) == ["x"] and list(msg.position) == [3.0]
    assert (list(msg.velocity), list(msg.effort)) == ([-1.0], [7.0])
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (4, 5)
