"""Message packing: simulator values in, ROS messages out. No state, no physics.

Conventions: stamps are the simulator's monotonic ROS time; world-frame messages use
frame_id ``world``; poses arrive as [x y z qx qy qz qw] (Pinocchio order), which is also
geometry_msgs' (x, y, z, w) order of fields, so no reordering is needed; wrenches are
[fx fy fz tx ty tz] [N, N.m].
"""

import math

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, Pose, TransformStamped, Vector3, WrenchStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
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
    """``builtin_interfaces/Time`` for ``t`` [s] (rounded to the nanosecond)."""
    ns = int(round(t * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def from_time(stamp):
    """Seconds [s] of a ``builtin_interfaces/Time``."""
    return stamp.sec + stamp.nanosec * 1e-9


def clock(t):
    return Clock(clock=to_time(t))


def joint_state(t, js):
    """``sensor_msgs/JointState`` of a simulator ``JointState`` (effort = applied torque)."""
    msg = JointState()
    msg.header.stamp = to_time(t)
    msg.name = list(js.names)
    msg.position = np.asarray(js.position, dtype=float).tolist()
    msg.velocity = np.asarray(js.velocity, dtype=float).tolist()
    msg.effort = np.asarray(js.effort, dtype=float).tolist()
    return msg


def wrench(t, link, w):
    """``WrenchStamped`` in the link frame (frame_id = link) of ``w`` = [fx fy fz tx ty tz]."""
    msg = WrenchStamped()
    msg.header.stamp = to_time(t)
    msg.header.frame_id = link
    f = [float(x) for x in w]
    msg.wrench.force = Vector3(x=f[0], y=f[1], z=f[2])
    msg.wrench.torque = Vector3(x=f[3], y=f[4], z=f[5])
    return msg


def pose(p):
    """``geometry_msgs/Pose`` of [x y z qx qy qz qw]."""
    p = [float(x) for x in p]
    out = Pose()
    out.position.x, out.position.y, out.position.z = p[0], p[1], p[2]
    o = out.orientation
    o.x, o.y, o.z, o.w = p[3], p[4], p[5], p[6]
    return out


def odometry(t, base, child_frame):
    """``nav_msgs/Odometry`` of a ``BaseState``: pose in world, twist in world axes.

    The twist is the simulator's world-frame [v w] of the base origin (as Gazebo's
    p3d plugin does), not nav_msgs' usual child-frame twist.
    """
    msg = Odometry()
    msg.header.stamp = to_time(t)
    msg.header.frame_id = WORLD
    msg.child_frame_id = child_frame
    msg.pose.pose = pose(base.pose)
    v = [float(x) for x in base.twist]
    msg.twist.twist.linear = Vector3(x=v[0], y=v[1], z=v[2])
    msg.twist.twist.angular = Vector3(x=v[3], y=v[4], z=v[5])
    return msg


def transform(t, base, child_frame):
    """``TransformStamped`` world -> ``child_frame`` of a ``BaseState``."""
    msg = TransformStamped()
    msg.header.stamp = to_time(t)
    msg.header.frame_id = WORLD
    msg.child_frame_id = child_frame
    p = pose(base.pose)
    msg.transform.translation = Vector3(x=p.position.x, y=p.position.y, z=p.position.z)
    msg.transform.rotation = p.orientation
    return msg


def quaternion_xyzw(R):
    """Unit quaternion (x, y, z, w) of a rotation matrix ``R`` (3, 3) (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    i = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if i == 0:
        s = 2.0 * math.sqrt(1.0 + tr)
        q = (R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1], 0.25 * s * s)
    elif i == 1:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = (0.25 * s * s, R[0, 1] + R[1, 0], R[0, 2] + R[2, 0], R[2, 1] - R[1, 2])
    elif i == 2:
        s = 2.0 * math.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        q = (R[0, 1] + R[1, 0], 0.25 * s * s, R[1, 2] + R[2, 1], R[0, 2] - R[2, 0])
    else:
        s = 2.0 * math.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
        q = (R[0, 2] + R[2, 0], R[1, 2] + R[2, 1], 0.25 * s * s, R[1, 0] - R[0, 1])
    q = np.asarray(q) / s
    return tuple(float(x) for x in q / np.linalg.norm(q))


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


def shape_marker(stamp, mid, shape):
    """A Marker drawing one collision ``ShapeView`` (capsules are drawn as cylinders)."""
    X = np.asarray(shape.X_W, dtype=float)
    size = [float(s) for s in shape.size]
    color = _GROUND_COLOR if shape.kind == "halfspace" else _SHAPE_COLOR
    kinds = {"box": Marker.CUBE, "sphere": Marker.SPHERE, "ellipsoid": Marker.SPHERE,
             "cylinder": Marker.CYLINDER, "capsule": Marker.CYLINDER,
             "mesh": Marker.MESH_RESOURCE, "halfspace": Marker.CUBE}
    m = _marker(stamp, "shapes", mid, kinds[shape.kind], color)
    m.text = shape.name
    x, y, z, w = quaternion_xyzw(X[:3, :3])
    p = X[:3, 3]
    if shape.kind == "halfspace":  # n . x <= d in the shape frame: a square on the plane
        n, d = np.asarray(size[:3]), size[3]
        x, y, z, w = _z_to(X[:3, :3] @ n)
        p = p + X[:3, :3] @ (d * n)
    m.pose.position = Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
    m.pose.orientation.x, m.pose.orientation.y = x, y
    m.pose.orientation.z, m.pose.orientation.w = z, w
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


def contact_markers(t, contacts, shapes, previous_arrows=0, force_scale=FORCE_SCALE):
    """``(MarkerArray, n_arrows)``: contact points, force arrows and collision shapes.

    Arrows go from the contact point along the force on body B (``force_scale`` m/N);
    arrows left over from a previous message with more contacts (``previous_arrows``)
    are deleted by id.
    """
    stamp = to_time(t)
    out = MarkerArray()
    points = _marker(stamp, "contact_points", 0, Marker.SPHERE_LIST, _POINT_COLOR)
    points.scale = Vector3(x=0.02, y=0.02, z=0.02)
    for i, c in enumerate(contacts):
        p = [float(x) for x in c.p_W]
        f = [float(x) for x in c.force_W]
        points.points.append(Point(x=p[0], y=p[1], z=p[2]))
        arrow = _marker(stamp, "contact_forces", i, Marker.ARROW, _FORCE_COLOR)
        arrow.scale = Vector3(x=0.005, y=0.01, z=0.01)  # shaft and head diameters, head
        arrow.points = [Point(x=p[0], y=p[1], z=p[2]),
                        Point(x=p[0] + force_scale * f[0], y=p[1] + force_scale * f[1],
                              z=p[2] + force_scale * f[2])]
        out.markers.append(arrow)
    for i in range(len(contacts), previous_arrows):
        gone = _marker(stamp, "contact_forces", i, Marker.ARROW, _FORCE_COLOR)
        gone.action = Marker.DELETE
        out.markers.append(gone)
    out.markers.append(points)
    out.markers.extend(shape_marker(stamp, i, s) for i, s in enumerate(shapes))
    return out, len(contacts)


def diagnostics(t, snap, *, target_rtf, scene, new_failures):
    """``DiagnosticArray`` with one status summarizing the solver and the timing."""
    status = DiagnosticStatus(name="contact_lcp: simulation", hardware_id=scene)
    info, stats = snap.info, snap.stats
    if snap.error:
        status.level, status.message = DiagnosticStatus.ERROR, "stopped: " + snap.error
    elif new_failures:
        status.level = DiagnosticStatus.WARN
        status.message = f"{new_failures} LCP failure(s) since the last report"
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
        "pivots_total": stats.pivots_total,
    }
    if info is not None:
        values.update({
            "solver_method": info.lcp_method,
            "lcp_status": info.lcp_status,
            "pivots": info.pivots,
            "contacts": info.num_contacts,
            "active_contacts": info.num_active,
            "max_penetration": f"{info.max_penetration:.3e}",
        })
    status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = to_time(t)
    return msg
