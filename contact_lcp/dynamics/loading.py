"""Build one Pinocchio model + collision GeometryModel per robot or free body.

Every Pinocchio/coal error raised while loading is wrapped here into a
:class:`~contact_lcp.exceptions.SceneError` naming the file and what failed. The URDF's
values are checked before Pinocchio reads them (:mod:`~contact_lcp.dynamics.urdf_checks`)
and its collision geometry before coal computes with it (:mod:`~contact_lcp.dynamics.meshes`).
"""

import os
from dataclasses import dataclass, replace

import coal
import numpy as np
import pinocchio as pin

from contact_lcp.dynamics.formats import (build_mjcf, expand_xacro, expand_xacro_text,
                                          is_mjcf, is_xacro)
from contact_lcp.dynamics.locking import initial_positions, lock_joints
from contact_lcp.dynamics.meshes import check_geometry
from contact_lcp.dynamics.specs import RobotInfo, check_body, check_pose
from contact_lcp.dynamics.urdf_checks import check_collision_counts, check_urdf_xml
from contact_lcp.exceptions import FrameNotFound, SceneError

MESH_MODES = ("convex", "exact")


@dataclass
class LoadedPart:
    """A robot or free body before it is appended to the world.

    ``q`` is its initial configuration (nq of ``model``), ``v`` its initial velocity,
    ``self_pairs`` the robot-local geometry index pairs (i < j) allowed to self-collide
    after the SRDF and adjacency filters (empty for a free body).
    """

    name: str
    model: pin.Model
    geom: pin.GeometryModel
    q: np.ndarray
    v: np.ndarray
    xml: str = ""
    self_pairs: tuple = ()


def _source(spec):
    if spec.urdf_string is not None:
        return f"the urdf_string of robot {spec.name!r}"
    path = spec.urdf or ""
    kind = "xacro" if path.endswith(".xacro") else "MJCF" if path.endswith(".xml") else "URDF"
    return f"{kind} file {spec.urdf!r} of robot {spec.name!r}"


def read_urdf(spec):
    """The URDF text of a ``RobotSpec``."""
    if spec.urdf_string is not None:
        if is_xacro(spec.urdf_string):
            return expand_xacro_text(spec.urdf_string, f"robot {spec.name!r}")
        return spec.urdf_string
    if spec.urdf is None:
        raise SceneError(
            f"robot {spec.name!r}: give urdf (a path) or urdf_string; received neither")
    if not os.path.isfile(spec.urdf):
        raise SceneError(f"robot {spec.name!r}: URDF file {spec.urdf!r} does not exist")
    if spec.urdf.endswith(".xacro"):
        return expand_xacro(spec.urdf, spec.xacro_args, f"robot {spec.name!r}")
    if spec.xacro_args:
        raise SceneError(f"robot {spec.name!r}: xacro_args given for {spec.urdf!r}, which is "
                         "not a .xacro file")
    with open(spec.urdf, encoding="utf-8") as f:
        return f.read()


def _collision_parent(model, joint, carriers):
    """Nearest strict ancestor of ``joint`` that carries collision geometry (0 if none)."""
    j = model.parents[joint]
    while j > 0 and j not in carriers:
        j = model.parents[j]
    return j


def _self_pairs(model, geom, srdf, source):
    """Geometry pairs allowed to self-collide: not SRDF-disabled and not adjacent.

    Two geometries are adjacent when they are on the same joint, or when one joint is
    the nearest geometry-carrying ancestor of the other (so links without collision
    geometry, such as the small links between the axes of a 2-dof hip, do not make
    their neighbours count as distant).
    """
    geom.addAllCollisionPairs()
    if srdf is not None:
        try:
            pin.removeCollisionPairs(model, geom, srdf, False)
        except Exception as e:
            raise SceneError(f"{source}: cannot read collision pairs of SRDF {srdf!r}: {e}") from e
    carriers = {obj.parentJoint for obj in geom.geometryObjects}
    pairs = []
    for cp in geom.collisionPairs:
        i, j = sorted((cp.first, cp.second))
        ji, jj = geom.geometryObjects[i].parentJoint, geom.geometryObjects[j].parentJoint
        if ji == jj or _collision_parent(model, ji, carriers) == jj:
            continue
        if _collision_parent(model, jj, carriers) == ji:
            continue
        pairs.append((i, j))
    geom.removeAllCollisionPairs()
    return tuple(sorted(pairs))


def _initial_q(model, spec, source):
    q = pin.neutral(model)
    if spec.reference_configuration is not None:
        refs = model.referenceConfigurations
        names = [entry.key() for entry in refs]  # the SRDF's, or MJCF's qpos0
        if spec.srdf is None and spec.reference_configuration not in names:
            raise SceneError(
                f"{source}: reference_configuration {spec.reference_configuration!r} needs an srdf"
            )
        if spec.reference_configuration not in names:
            raise SceneError(
                f"{source}: SRDF {spec.srdf!r} has no reference configuration "
                f"{spec.reference_configuration!r}; it has {sorted(names)}"
            )
        q = np.array(refs[spec.reference_configuration], dtype=float).copy()  # a view: copy
    for name, value in dict(spec.initial_joints).items():
        jid = model.getJointId(name) if model.existJointName(name) else 0
        if jid == 0 or model.nvs[jid] != 1:
            one_dof = [model.names[j] for j in range(1, model.njoints) if model.nvs[j] == 1]
            raise FrameNotFound(name, one_dof, "joint")
        iq = model.idx_qs[jid]
        if model.nqs[jid] == 2:  # continuous joint: (cos, sin)
            q[iq : iq + 2] = np.cos(value), np.sin(value)
        else:
            q[iq] = float(value)
    if spec.floating_base:
        if spec.base_pose is not None:
            q[:7] = check_pose(spec.base_pose, f"robot {spec.name!r} base_pose")
        elif spec.reference_configuration is None:
            q[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        else:  # the SRDF's own base pose
            q[:7] = check_pose(q[:7], f"robot {spec.name!r} SRDF base pose "
                               f"({spec.reference_configuration})")
    return q


def check_masses(model, source):
    """Reject masses and inertias a simulation cannot use, naming the link.

    Every body's mass must be finite and >= 0 and its rotational inertia finite and
    positive semi-definite; and the mass matrix at the neutral configuration must be
    positive definite (a moving joint that carries no mass and no inertia makes ``M``
    singular, and the first step would divide by zero).
    """
    for j in range(1, model.njoints):
        Y = model.inertias[j]
        m, I = float(Y.mass), np.asarray(Y.inertia, dtype=float)
        link = _link_of_joint(model, j)
        if not np.isfinite(m) or m < 0.0:
            raise SceneError(f"{source}: link {link!r} has mass {m!r}; expected a finite "
                             "mass >= 0 [kg]")
        if not np.all(np.isfinite(I)) or np.linalg.eigvalsh(0.5 * (I + I.T)).min() < -1e-12 * max(
                1.0, np.abs(I).max()):
            raise SceneError(f"{source}: link {link!r} has inertia {I.tolist()}; expected a "
                             "finite, positive semi-definite 3x3 matrix [kg.m^2]")
    data = model.createData()
    M = pin.crba(model, data, pin.neutral(model))
    M = np.triu(M) + np.triu(M, 1).T
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        scale = max(float(np.abs(np.diag(M)).max()), 1e-300)
        bad = [j for j in range(1, model.njoints)
               if np.any(np.diag(M)[model.idx_vs[j]:model.idx_vs[j] + model.nvs[j]] <= 1e-12 * scale)]
        names = [_link_of_joint(model, j) for j in bad] or ["(a combination of links)"]
        joints = [model.names[j] for j in bad]
        raise SceneError(f"{source}: the mass matrix is singular: link(s) {names} move on "
                         "their joint but carry no mass or inertia; give them an <inertial> "
                         "with mass > 0, attach them with a fixed joint, or lock their "
                         f"joints at their initial positions (locked_joints: {joints})") from None


def _link_of_joint(model, j):
    """Name of the first body frame moved by joint ``j``."""
    for f in model.frames:
        if f.parentJoint == j and f.type == pin.FrameType.BODY:
            return f.name
    return model.names[j]


def load_robot(spec, mesh_mode="convex"):
    """Load a ``RobotSpec`` into a :class:`LoadedPart` (root joint named ``root_joint``)."""
    if mesh_mode not in MESH_MODES:
        raise SceneError(f"mesh_mode must be one of {MESH_MODES}; received {mesh_mode!r}")
    xml = read_urdf(spec)
    source = _source(spec)
    if is_mjcf(xml):
        model, geom, spec = build_mjcf(spec, source)
    else:
        model, geom, xml, spec = _build_urdf(xml, spec, source)
    check_geometry(model, geom, mesh_mode, source)  # before coal computes with it
    _reference_configurations(model, spec, source)
    check_masses(model, source)
    q = _initial_q(model, spec, source)
    pairs = _self_pairs(model, geom, spec.srdf, source)
    distinct_frame_names(model)
    return LoadedPart(spec.name, model, geom, q, np.zeros(model.nv), xml, pairs)


def _build_urdf(xml, spec, source):
    """``(model, geom, xml, spec)`` of a URDF robot (its locked joints welded)."""
    check_urdf_xml(xml, source)
    if spec.locked_joints:
        xml, spec = _locked(xml, spec, source)
    collisions = check_urdf_xml(xml, source)
    try:
        if spec.floating_base:
            model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
        else:
            model = pin.buildModelFromXML(xml)
    except Exception as e:
        raise SceneError(f"{source}: Pinocchio cannot build a model from it: {e}") from e
    try:
        geom = pin.buildGeomFromUrdfString(
            model, xml, pin.COLLISION, package_dirs=[str(d) for d in spec.package_dirs]
        )
    except Exception as e:
        raise SceneError(
            f"{source}: cannot load its collision geometry (package_dirs="
            f"{list(spec.package_dirs)}): {e}"
        ) from e
    check_collision_counts(collisions, model, geom, source)
    return model, geom, xml, spec


def _reference_configurations(model, spec, source):
    """Load the SRDF's reference configurations of ``spec`` into ``model`` (if it has one)."""
    if spec.srdf is None:
        return
    if not os.path.isfile(spec.srdf):
        raise SceneError(f"robot {spec.name!r}: SRDF file {spec.srdf!r} does not exist")
    try:
        pin.loadReferenceConfigurations(model, spec.srdf, False)
    except Exception as e:
        raise SceneError(f"{source}: cannot read SRDF {spec.srdf!r}: {e}") from e


def _locked(xml, spec, source):
    """The URDF with ``spec.locked_joints`` fixed at their initial positions (the SRDF
    state's and ``initial_joints``', read on the unlocked robot), and the spec without
    initial positions for them."""
    try:
        full = pin.buildModelFromXML(xml)
    except Exception as e:
        raise SceneError(f"{source}: Pinocchio cannot build a model from it: {e}") from e
    _reference_configurations(full, spec, source)
    q = _initial_q(full, replace(spec, floating_base=False, base_pose=None), source)
    locked = set(spec.locked_joints)
    xml = lock_joints(xml, initial_positions(full, q, spec.locked_joints), source)
    rest = {j: x for j, x in dict(spec.initial_joints).items() if j not in locked}
    return xml, replace(spec, initial_joints=rest)


def distinct_frame_names(model):
    """Give each frame its own name, in place: a joint (or other non-link) frame that
    shares its name with another frame becomes ``<name>_joint`` (``_fixed_joint``,
    ``_op_frame``, ... by its type; more underscores if that is taken too).

    URDFs may name a link and a joint alike (ANYbotics' ANYmal C: link and joint
    ``LF_HAA``); Pinocchio builds the model, but then finds two frames for the name
    and cannot append it to the world model. Link names, which scenes refer to, and
    the joints' own names (``model.names``) are kept.
    """
    taken = {}
    for f in model.frames:
        taken[f.name] = taken.get(f.name, 0) + 1
    for i in range(model.nframes):
        f = model.frames[i]
        if taken[f.name] < 2 or f.type == pin.FrameType.BODY:
            continue
        kind = {pin.FrameType.JOINT: "joint", pin.FrameType.FIXED_JOINT: "fixed_joint"}.get(
            f.type, str(f.type).rsplit(".", 1)[-1].lower())
        new = f"{f.name}_{kind}"
        while new in taken:
            new = "_" + new
        taken[f.name] -= 1
        taken[new] = 1
        model.frames[i].name = new


def body_shape(shape, size):
    """The coal shape and the unit-mass-scaled inertia builder of a free-body shape."""
    if shape == "box":
        return coal.Box(*size)
    if shape == "sphere":
        return coal.Sphere(size[0])
    if shape == "cylinder":
        return coal.Cylinder(size[0], size[1])
    if shape == "capsule":
        return coal.Capsule(size[0], size[1])
    return coal.Ellipsoid(*size)


def body_inertia(shape, size, mass):
    """Inertia of a uniform solid about its centre [kg, kg.m^2] (Pinocchio's formulas)."""
    if shape == "box":
        return pin.Inertia.FromBox(mass, *size)  # full extents
    if shape == "sphere":
        return pin.Inertia.FromSphere(mass, size[0])
    if shape == "cylinder":
        return pin.Inertia.FromCylinder(mass, size[0], size[1])
    if shape == "capsule":
        return pin.Inertia.FromCapsule(mass, size[0], size[1])
    return pin.Inertia.FromEllipsoid(mass, *size)  # semi-axes


def load_body(spec):
    """A free body as a one-joint model.

    Its joint is ``<name>/root_joint``; its frame and geometry are ``<name>``.
    """
    size, pose, vel_W = check_body(spec)
    model = pin.Model()
    model.name = spec.name
    jid = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(),
                         f"{spec.name}/root_joint")
    model.appendBodyToJoint(jid, body_inertia(spec.shape, size, spec.mass), pin.SE3.Identity())
    jframe = model.addJointFrame(jid, 0)
    fid = model.addBodyFrame(spec.name, jid, pin.SE3.Identity(), jframe)
    geom = pin.GeometryModel()
    shape = body_shape(spec.shape, size)
    shape.computeLocalAABB()
    geom.addGeometryObject(pin.GeometryObject(spec.name, jid, fid, pin.SE3.Identity(), shape))
    R_WB = pin.Quaternion(pose[6], *pose[3:6]).toRotationMatrix()
    # Pinocchio's free-flyer velocity is in the body frame.
    v = np.concatenate([R_WB.T @ vel_W[:3], R_WB.T @ vel_W[3:]])
    return LoadedPart(spec.name, model, geom, pose, v)


def append_free_body(model, geom, part):
    """Append the one-free-flyer ``part`` of :func:`load_body` to ``model`` and ``geom``
    under the universe, in place: the joint (its limits), body, frames and geometries
    ``pin.appendModel`` would give, at a cost that does not grow with the world.
    ``appendModel`` copies the whole world it appends to and adds a collision pair
    between each new geometry and every earlier one, so n bodies would cost O(n^2) time
    and pairs, each pair with its collision results in ``GeometryData`` (the world keeps
    its own pair list, :meth:`World._add_pairs`)."""
    pm = part.model
    if pm.njoints != 2:
        raise ValueError(f"a free body has one joint; {part.name!r} has {pm.njoints - 1}")
    jid = model.addJoint(0, pm.joints[1], pm.jointPlacements[1], pm.names[1],
                         pm.effortLimit, pm.velocityLimit, pm.lowerPositionLimit,
                         pm.upperPositionLimit)
    model.appendBodyToJoint(jid, pm.inertias[1], pin.SE3.Identity())
    frame_of = {0: 0}
    for i in range(1, pm.nframes):
        fr = pm.frames[i]
        frame_of[i] = model.addFrame(
            pin.Frame(fr.name, jid if fr.parentJoint == 1 else 0, frame_of[fr.parentFrame],
                      fr.placement, fr.type, fr.inertia), False)  # (inertia appended above)
    for obj in part.geom.geometryObjects:
        obj = obj.copy()
        obj.parentJoint, obj.parentFrame = jid, frame_of[obj.parentFrame]
        geom.addGeometryObject(obj)


def names_of(part):
    """Every joint, frame and geometry name of a part (universe excluded)."""
    m = part.model
    names = {m.names[j] for j in range(1, m.njoints)}
    names |= {f.name for f in m.frames if f.name != "universe"}
    names |= {g.name for g in part.geom.geometryObjects}
    return names


def prefix_names(part, prefix):
    """Rename every joint, frame and geometry of ``part`` to ``prefix + name`` in place."""
    m = part.model
    for j in range(1, m.njoints):
        m.names[j] = prefix + m.names[j]
    for i in range(m.nframes):
        if m.frames[i].name != "universe":
            m.frames[i].name = prefix + m.frames[i].name
    for obj in part.geom.geometryObjects:
        obj.name = prefix + obj.name


def _finite_or_inf(x):
    """Pinocchio's 'no limit' (+-max double) and a 0 velocity/effort limit as inf."""
    x = np.asarray(x, dtype=float).copy()
    x[np.abs(x) >= 1e300] = np.inf * np.sign(x[np.abs(x) >= 1e300])
    return x


def robot_info(model, spec, part, first_joint, qs, vs):
    """The RobotInfo of ``part`` (spec ``spec``) once appended to the world ``model`` from
    joint ``first_joint`` on, with its ``q``/``v`` slices ``qs``/``vs``."""
    joints = range(first_joint, model.njoints)
    one_dof = [j for j in joints if model.nvs[j] == 1]
    idx_q = np.array([model.idx_qs[j] for j in one_dof], dtype=int)
    idx_v = np.array([model.idx_vs[j] for j in one_dof], dtype=int)
    continuous = np.array([model.nqs[j] == 2 for j in one_dof], dtype=bool)
    lower = _finite_or_inf(model.lowerPositionLimit[idx_q])
    upper = _finite_or_inf(model.upperPositionLimit[idx_q])
    lower[continuous], upper[continuous] = -np.inf, np.inf
    vel = _finite_or_inf(model.velocityLimit[idx_v])
    eff = _finite_or_inf(model.effortLimit[idx_v])
    vel[vel == 0], eff[eff == 0] = np.inf, np.inf
    pm = part.model
    links = [f.name for f in pm.frames if f.type == pin.FrameType.BODY]
    mass = float(sum(pm.inertias[j].mass for j in range(pm.njoints)))
    return RobotInfo(
        name=spec.name, urdf_xml=part.xml, floating_base=bool(spec.floating_base),
        root_joint=first_joint if spec.floating_base else 0,
        joint_names=[model.names[j] for j in one_dof], idx_q=idx_q, idx_v=idx_v,
        continuous=continuous, lower=lower, upper=upper, velocity_limit=vel, effort_limit=eff,
        q_slice=qs, v_slice=vs, link_names=links, mass=mass,
        base_link=links[0] if links else "",
    )
