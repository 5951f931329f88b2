"""What a scene asks for (``RobotSpec``, ``BodySpec``) and what the world built (``*Info``).

The specs are plain frozen dataclasses so that scene files and ROS parameters map onto
them one to one; they hold no Pinocchio objects. Poses are ``[x y z qx qy qz qw]`` in W
(Pinocchio's quaternion order), velocities ``[vx vy vz wx wy wz]`` in W.
"""

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from contact_lcp.exceptions import SceneError

SHAPES = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2, "ellipsoid": 3}
"""Free-body shapes and the length of their ``size``:

* ``box`` (lx, ly, lz) full extents [m];
* ``sphere`` (r,);
* ``cylinder`` (r, length) with the axis along the body z;
* ``capsule`` (r, length of the segment) with the segment along the body z;
* ``ellipsoid`` (a, b, c) semi-axes along the body x, y, z.
"""


@dataclass(frozen=True)
class RobotSpec:
    """A robot to load from URDF (and optionally SRDF).

    Attributes
    ----------
    name : str
        Unique in the scene; the prefix ``"<name>/"`` of its joint and frame names when
        another robot or body of the scene uses the same names.
    urdf : str or None
        Path to the URDF file, or to a xacro file (``.xacro``), expanded with
        ``xacro_args``.
    urdf_string : str or None
        URDF XML; overrides ``urdf`` when both are given.
    package_dirs : tuple of str
        Directories searched for ``package://`` URIs (Pinocchio resolves them).
    srdf : str or None
        Path to an SRDF: reference configurations and disabled collision pairs.
    floating_base : bool
        Root link on a free-flyer joint (True) or welded to the world (False).
    base_pose : tuple of 7 floats or None
        ``[x y z qx qy qz qw]`` of the root link in W [m, -]. For a floating base it is
        the initial free-flyer configuration; for a fixed base, the weld. None: the
        reference configuration's base pose (the SRDF's full state, as its author placed
        the robot) when one is named, else the origin.
    initial_joints : mapping str -> float
        Initial positions of named joints [rad or m], applied after the reference
        configuration. Names are the URDF joint names.
    reference_configuration : str or None
        Name of an SRDF ``group_state`` (e.g. Talos' ``"half_sitting"``) giving the
        initial state: joint positions and, unless ``base_pose`` is given, the
        free-flyer pose.
    locked_joints : tuple of str
        URDF joints welded at their initial positions (:mod:`contact_lcp.dynamics.locking`):
        fingers a scene does not move, or links without mass.
    xacro_args : mapping str -> str
        ``<xacro:arg>`` values for a ``.xacro`` file (as ``xacro file.xacro name:=value``).
    """

    name: str
    urdf: str | None = None
    urdf_string: str | None = None
    package_dirs: tuple = ()
    srdf: str | None = None
    floating_base: bool = True
    base_pose: tuple | None = None
    initial_joints: Mapping[str, float] = field(default_factory=dict)
    reference_configuration: str | None = None
    locked_joints: tuple = ()
    xacro_args: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BodySpec:
    """A free rigid body of uniform density (one free-flyer joint, one collision shape).

    Attributes
    ----------
    name : str
        Unique in the scene; names its joint, frame and geometry.
    shape : str
        One of ``SHAPES`` (box, sphere, cylinder, capsule, ellipsoid).
    size : tuple of float
        Dimensions [m], see ``SHAPES``.
    mass : float
        [kg], > 0.
    pose : tuple of 7 floats
        ``[x y z qx qy qz qw]`` of the body frame (the shape centre) in W.
    velocity : tuple of 6 floats
        ``[vx vy vz wx wy wz]`` of the shape centre, in W [m/s, rad/s].
    friction : float or None
        Friction coefficient of its surface; None for the detector's default.
    """

    name: str
    shape: str
    size: tuple
    mass: float
    pose: tuple = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    velocity: tuple = (0.0,) * 6
    friction: float | None = None


@dataclass(frozen=True)
class RobotInfo:
    """A robot as placed in the world model.

    Attributes
    ----------
    name : str
    urdf_xml : str
        The URDF text that was loaded.
    floating_base : bool
    root_joint : int
        World-model id of the robot's free-flyer joint, 0 for a fixed base.
    joint_names : list of str
        The robot's 1-dof joints (revolute, prismatic, continuous) in model order, as
        named in the world model (URDF names unless prefixed).
    idx_q, idx_v : (n,) ndarray of int
        Index of each joint in the world ``q`` and ``v`` (for a continuous joint,
        ``idx_q`` points to its cosine; its ``q`` has two entries, cos and sin).
    continuous : (n,) ndarray of bool
        Which joints are continuous: their position is the angle ``atan2(sin, cos)``
        (:mod:`contact_lcp.sim.joint_angles`), never ``q[idx_q]``.
    lower, upper : (n,) ndarray
        Position limits [rad or m]; -inf/+inf when absent or continuous.
    velocity_limit, effort_limit : (n,) ndarray
        [rad/s or m/s], [N.m or N]; inf when absent or 0.
    q_slice, v_slice : slice
        The robot's part of the world vectors, free-flyer included.
    link_names : list of str
        The robot's body frame names (one per URDF link).
    mass : float
        Total mass [kg], fixed root link included.
    base_link : str
        The root link's frame name.
    """

    name: str
    urdf_xml: str = field(repr=False)
    floating_base: bool
    root_joint: int
    joint_names: list
    idx_q: np.ndarray
    idx_v: np.ndarray
    continuous: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    q_slice: slice
    v_slice: slice
    link_names: list
    mass: float
    base_link: str


@dataclass(frozen=True)
class BodyInfo:
    """A free body as placed in the world model.

    Attributes
    ----------
    name : str
        Also its frame and geometry name.
    joint : int
        World-model id of its free-flyer joint.
    q_slice, v_slice : slice
        Its 7 configuration and 6 velocity entries.
    mass : float
        [kg]
    shape : str
    size : tuple of float
    friction : float or None
        Its surface friction from the ``BodySpec``.
    """

    name: str
    joint: int
    q_slice: slice
    v_slice: slice
    mass: float
    shape: str
    size: tuple
    friction: float | None = None


def check_pose(pose, what):
    """``pose`` as a (7,) array with a unit quaternion; SceneError otherwise."""
    p = np.asarray(pose, dtype=float).reshape(-1)
    if p.shape != (7,) or not np.all(np.isfinite(p)):
        raise SceneError(f"{what} must be 7 finite numbers [x y z qx qy qz qw]; received {pose!r}")
    norm = np.linalg.norm(p[3:])
    if norm < 1e-9:
        raise SceneError(f"{what} has a zero quaternion; received {pose!r}")
    p[3:] /= norm
    return p


def check_body(spec):
    """Validate a ``BodySpec``; return (size, pose, velocity) as arrays."""
    if spec.shape not in SHAPES:
        raise SceneError(
            f"body {spec.name!r}: shape must be one of {sorted(SHAPES)}; received {spec.shape!r}"
        )
    size = np.asarray(spec.size, dtype=float).reshape(-1)
    n = SHAPES[spec.shape]
    if size.shape != (n,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
        raise SceneError(
            f"body {spec.name!r}: a {spec.shape} needs {n} positive sizes; received {spec.size!r}"
        )
    if not (np.isfinite(spec.mass) and spec.mass > 0):
        raise SceneError(f"body {spec.name!r}: mass must be > 0 kg; received {spec.mass!r}")
    vel = np.asarray(spec.velocity, dtype=float).reshape(-1)
    if vel.shape != (6,) or not np.all(np.isfinite(vel)):
        raise SceneError(
            f"body {spec.name!r}: velocity must be 6 finite numbers; received {spec.velocity!r}"
        )
    if spec.friction is not None and not (np.isfinite(spec.friction) and spec.friction >= 0):
        raise SceneError(f"body {spec.name!r}: friction must be >= 0; received {spec.friction!r}")
    return size, check_pose(spec.pose, f"body {spec.name!r} pose"), vel
