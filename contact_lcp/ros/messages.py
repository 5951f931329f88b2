"""Message packing: simulator values in, ROS messages out. No state, no physics.

The high-rate streams (joint states, clock, odometry, IMU, wrenches) are pre-serialized
by :mod:`contact_lcp.ros.packed`; here are the values they carry that need computing
(:func:`imu_values`) and the typed messages (TF, markers, diagnostics).

Conventions: stamps are the simulator's monotonic ROS time; world-frame messages use
frame_id ``world``; poses arrive as [x y z qx qy qz qw] (Pinocchio order), which is also
geometry_msgs' (x, y, z, w) order of fields, so no reordering is needed; wrenches are
(fx, fy, fz, tx, ty, tz) in N and N.m.
"""

import math

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, TransformStamped, Vector3
from visualization_msgs.msg import Marker, MarkerArray

WORLD = "world"
#: Force arrows: metres of arrow per newton.
FORCE_SCALE = 1e-3
#: Side [m] and thickness [m] of the box drawn for a halfspace.
GROUND_SIDE = 10.0
GROUND_THICKNESS = 1e-3

_SHAPE_COLOR = (0.6, 0.6, 0.7, 0.5)
_GROUND_COLOR = (0.4, 0.4, 0.4, 0.8)
_POINT_COLOR = (1.0, 0.2, 0.1, 1.0)
_FORCE_COLOR = (0.1, 0.8, 0.2, 1.0)


def to_time(t):
    """``builtin_interfaces/Time`` for ``t`` [s] (rounded to the nanosecond); a ``Time``
    is returned as it is (a publish cycle makes one stamp for all its messages: rclpy
    serializes at ``publish``, so sharing it is safe)."""
    if isinstance(t, Time):
        return t
    ns = int(round(t * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def from_time(stamp):
    """Seconds [s] of a ``builtin_interfaces/Time``."""
    return stamp.sec + stamp.nanosec * 1e-9


def rotation_of(p):
    """Rotation matrix (3, 3) of a pose [x y z qx qy qz qw]."""
    qx, qy, qz, qw = (float(c) for c in p[3:7])
    return np.array([
        [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
        [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
        [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)],
    ])


def imu_values(base, a_W, gravity):
    """What an ideal IMU at the origin of a frame reads, as Imu's fields in order.

    Parameters
    ----------
    base : BaseState
        Pose [x y z qx qy qz qw] and world-frame twist [v w] of the frame origin.
    a_W : (3,) array_like
        Acceleration of the frame origin in W [m/s^2] (the node differentiates the
        published velocities over one publish period).
    gravity : (3,) array_like
        Gravity in W [m/s^2].

    Returns
    -------
    (10,) ndarray
        Orientation (x y z w) in W; angular velocity [rad/s] and linear acceleration
        [m/s^2] in the frame, the latter the specific force ``R^T (a_W - g)`` (at rest,
        +9.81 along the world's up axis seen from the frame).
    """
    p = np.asarray(base.pose, dtype=np.float64)
    R = rotation_of(p)
    out = np.empty(10)
    out[0:4] = p[3:7]
    out[4:7] = R.T @ np.asarray(base.twist[3:6], dtype=np.float64)
    out[7:10] = R.T @ (np.asarray(a_W, dtype=np.float64) - np.asarray(gravity, dtype=np.float64))
    return out


def _set_xyz(v, x, y, z):
    v.x, v.y, v.z = x, y, z


def _set_pose(position, orientation, p):
    p = np.asarray(p, dtype=np.float64).tolist()
    _set_xyz(position, *p[:3])
    orientation.x, orientation.y, orientation.z, orientation.w = p[3:7]


def transform(t, base, child_frame, out=None):
    """``TransformStamped`` world -> ``child_frame`` of a ``BaseState`` (or a body's)."""
    msg = out or TransformStamped()
    msg.header.stamp = to_time(t)
    msg.header.frame_id = WORLD
    msg.child_frame_id = child_frame
    _set_pose(msg.transform.translation, msg.transform.rotation, base.pose)
    return msg


def quaternion_xyzw(R):
    """Return the unit quaternion (x, y, z, w) of a rotation matrix ``R`` (3, 3).

    Shepperd's method, on the largest of the four candidate diagonals.

    Plain floats: ~10x faster than NumPy on a 3x3, and it runs for every shape marker.
    """
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = np.asarray(R, dtype=float).tolist()
    tr = r00 + r11 + r22
    big = max(tr, r00, r11, r22)
    if big == tr:
        q = (r21 - r12, r02 - r20, r10 - r01, 1.0 + tr)
    elif big == r00:
        q = (1.0 + r00 - r11 - r22, r01 + r10, r02 + r20, r21 - r12)
    elif big == r11:
        q = (r01 + r10, 1.0 - r00 + r11 - r22, r12 + r21, r02 - r20)
    else:
        q = (r02 + r20, r12 + r21, 1.0 - r00 - r11 + r22, r10 - r01)
    norm = math.sqrt(sum(c * c for c in q))
    return tuple(c / norm for c in q)


def _z_to(n):
    """Quaternion (x, y, z, w) turning the z axis onto the unit vector ``n``."""
    if n[2] < -1.0 + 1e-12:
        return (1.0, 0.0, 0.0, 0.0)
    q = np.array([-n[1], n[0], 0.0, 1.0 + n[2]])  # (z x n, 1 + z . n), then normalized
    return tuple(float(c) for c in q / np.linalg.norm(q))


def _marker(stamp, ns, mid, kind, color):
    m = Marker()
    m.header.stamp = stamp
    m.header.frame_id = WORLD
    m.ns, m.id, m.type, m.action = ns, mid, kind, Marker.ADD
    m.color.r, m.color.g, m.color.b, m.color.a = color
    m.pose.orientation.w = 1.0
    return m


def shape_marker(stamp, mid, shape, out=None):
    """Draw one collision ``ShapeView`` as a Marker (capsules as cylinders).

    ``out``: the Marker drawn for the same shape last time; only its stamp and pose are
    refilled (a Marker costs ~20 us to build, and shapes change only their pose).
    """
    X = np.asarray(shape.X_W, dtype=float)
    size = [float(s) for s in shape.size]
    x, y, z, w = quaternion_xyzw(X[:3, :3])
    p = X[:3, 3]
    if shape.kind == "halfspace":  # n . x <= d in the shape frame: a square on the plane
        n, d = np.asarray(size[:3]), size[3]
        x, y, z, w = _z_to(X[:3, :3] @ n)
        p = p + X[:3, :3] @ (d * n)
    if out is not None and (out.id, out.text) == (mid, shape.name):
        m = out
        m.header.stamp = stamp
    else:
        m = _new_shape_marker(stamp, mid, shape, size)
    _set_xyz(m.pose.position, float(p[0]), float(p[1]), float(p[2]))
    o = m.pose.orientation
    o.x, o.y, o.z, o.w = x, y, z, w
    return m


def _new_shape_marker(stamp, mid, shape, size):
    color = _GROUND_COLOR if shape.kind == "halfspace" else _SHAPE_COLOR
    kinds = {"box": Marker.CUBE, "sphere": Marker.SPHERE, "ellipsoid": Marker.SPHERE,
             "cylinder": Marker.CYLINDER, "capsule": Marker.CYLINDER,
             "mesh": Marker.MESH_RESOURCE, "halfspace": Marker.CUBE}
    m = _marker(stamp, "shapes", mid, kinds[shape.kind], color)
    m.text = shape.name
    if shape.kind == "box":
        sx, sy, sz = size
    elif shape.kind == "sphere":
        sx = sy = sz = 2.0 * size[0]
    elif shape.kind == "ellipsoid":
        sx, sy, sz = (2.0 * r for r in size)
    elif shape.kind in ("cylinder", "capsule"):
        sx = sy = 2.0 * size[0]
        sz = size[1] + (2.0 * size[0] if shape.kind == "capsule" else 0.0)
    elif shape.kind == "mesh":
        m.mesh_resource = "file://" + str(shape.mesh_path)
        sx, sy, sz = size if len(size) == 3 else (1.0, 1.0, 1.0)
    else:  # halfspace
        sx, sy, sz = GROUND_SIDE, GROUND_SIDE, GROUND_THICKNESS
    m.scale = Vector3(x=sx, y=sy, z=sz)
    return m


def contact_markers(t, contacts, shapes, previous_arrows=0, force_scale=FORCE_SCALE,
                    shape_cache=None):
    """``(MarkerArray, n_arrows)``: contact points, force arrows and collision shapes.

    Arrows go from the contact point along the force on body B (``force_scale`` m/N),
    for the contacts that carry a force; arrows left over from a previous message with
    more of them (``previous_arrows``) are deleted by id. ``shape_cache``: a list kept
    by the caller, holding the shape markers between calls (see :func:`shape_marker`).
    """
    stamp = to_time(t)
    out = MarkerArray()
    points = _marker(stamp, "contact_points", 0, Marker.SPHERE_LIST, _POINT_COLOR)
    points.scale = Vector3(x=0.02, y=0.02, z=0.02)
    arrows = 0
    for c in contacts:
        p = [float(x) for x in c.p_W]
        f = [float(x) for x in c.force_W]
        points.points.append(Point(x=p[0], y=p[1], z=p[2]))
        if max(abs(x) for x in f) < 1e-9:
            continue  # a contact point without force: rviz draws a 0-length arrow badly
        arrow = _marker(stamp, "contact_forces", arrows, Marker.ARROW, _FORCE_COLOR)
        arrows += 1
        arrow.scale = Vector3(x=0.005, y=0.01, z=0.01)  # shaft and head diameters, head
        arrow.points = [Point(x=p[0], y=p[1], z=p[2]),
                        Point(x=p[0] + force_scale * f[0], y=p[1] + force_scale * f[1],
                              z=p[2] + force_scale * f[2])]
        out.markers.append(arrow)
    for i in range(arrows, previous_arrows):
        gone = _marker(stamp, "contact_forces", i, Marker.ARROW, _FORCE_COLOR)
        gone.action = Marker.DELETE
        out.markers.append(gone)
    out.markers.append(points)
    cache = shape_cache if shape_cache is not None else []
    drawn = [shape_marker(stamp, i, s, cache[i] if i < len(cache) else None)
             for i, s in enumerate(shapes)]
    cache[:] = drawn
    out.markers.extend(drawn)
    return out, arrows


def diagnostics(t, snap, *, target_rtf, scene, new_failures, extra=None):
    """``DiagnosticArray`` with one status summarizing the solver and the timing;
    ``extra``: more key-value pairs (e.g. the publisher process's dropped messages)."""
    status = DiagnosticStatus(name="contact_lcp: simulation", hardware_id=scene)
    info, stats = snap.info, snap.stats
    if snap.error:
        status.level, status.message = DiagnosticStatus.ERROR, "stopped: " + snap.error
    elif new_failures:
        status.level = DiagnosticStatus.WARN
        status.message = (f"{new_failures} LCP failure(s) since the last report (fallbacks "
                          f"{stats.fallbacks}, safe stops {getattr(stats, 'safe_stops', 0)} so far)")
    elif target_rtf > 0 and not snap.paused and snap.real_time_factor < 0.9 * target_rtf:
        status.level = DiagnosticStatus.WARN
        status.message = (f"real-time factor {snap.real_time_factor:.2f} below the "
                          f"target {target_rtf:g}")
    else:
        status.level = DiagnosticStatus.OK
        status.message = "paused" if snap.paused else "running"
    values = {
        "sim_time": f"{t:.6f}",
        "paused": str(snap.paused),
        "real_time_factor": f"{snap.real_time_factor:.3f}",
        "target_real_time_factor": f"{target_rtf:g}",
        "steps": stats.steps,
        "lcp_failures": stats.lcp_failures,
        "fallbacks": stats.fallbacks,
        "safe_stops": getattr(stats, "safe_stops", 0),
        "uncertified_steps": getattr(stats, "uncertified", 0),
        "solves": getattr(stats, "solves", 0),
        "warm_starts": getattr(stats, "warm_starts", 0),
        "pivots_total": stats.pivots_total,
        "projections": getattr(stats, "projections", 0),
    }
    if info is not None:
        report = getattr(info, "report", None)
        values.update({
            "solver_method": info.lcp_method,
            "lcp_status": info.lcp_status,
            "contact_model": "none" if report is None else report.applied,
            "certified": "True" if report is None else str(report.certified),
            "pivots": info.pivots,
            "contacts": info.num_contacts,
            "active_contacts": info.num_active,
            "max_penetration": f"{info.max_penetration:.3e}",
        })
    values.update(extra or {})
    status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = to_time(t)
    return msg
