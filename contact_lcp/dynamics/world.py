"""The world: all robots then all free bodies in one Pinocchio model, and the ground.

Layout of the world model: each robot is appended under the universe (its free-flyer
first when ``floating_base``), then each free body as one free-flyer joint, in the order
given. ``q``/``v`` of a robot or body are contiguous slices (``RobotInfo.q_slice``...).

Names: a single-robot scene keeps the URDF names. When a joint, frame or geometry name of
a robot is also used by another robot or body, every name of that robot is prefixed with
``"<robot>/"``. A robot's free-flyer joint is ``root_joint`` (prefixed likewise), a free
body's joint ``"<body>/root_joint"``; its frame and geometry are named ``<body>``.

``data`` holds the kinematics, frame and geometry placements filled by
:meth:`World.forward`; private Data objects hold the joint Jacobians and the ABA / M^-1
work, so that neither the dynamics queries nor other users of ``data`` disturb what the
contact Jacobian and the collision detector read. A world too large for one Pinocchio
``Data`` runs its dynamics on several models instead (:mod:`contact_lcp.dynamics.groups`);
``data`` is then None and the same queries answer from each group's Data.
"""

import coal
import numpy as np
import pinocchio as pin
from numba import njit

from contact_lcp.dynamics.free_flyer import FreeFlyers
from contact_lcp.dynamics.groups import block_diagonal, split_world
from contact_lcp.dynamics.placements import tree_placements
from contact_lcp.dynamics.loading import (append_free_body, load_body, load_robot, names_of,
                                          prefix_names, robot_info)
from contact_lcp.dynamics.specs import BodyInfo, check_pose
from contact_lcp.dynamics.sparse_rows import axis_wrench, support_columns, wrench_entry
from contact_lcp.exceptions import FrameNotFound, InvalidProblem, SceneError

GROUND = "ground"
#: numpy's native float64 (``a.dtype == _FLOAT`` tests an array without a function call;
#: not ``is``: arrays from Pinocchio carry dtype objects of their own)
_FLOAT = np.dtype(np.float64)


@njit(cache=True)
def fill_contact_rows(J, frames, points, joint_b, joint_a, J_W, support):
    """Row 3i + j of J: axis j of contact i's frame dotted with v_B - v_A at its point.

    ``J_W`` (6, nv) is the world-frame Jacobian of every joint's motion (Pinocchio's
    ``data.J`` in the WORLD convention: the linear part is the velocity of the point at
    the world origin), so the velocity along ``a`` of a point ``p`` moved by joint ``jt``
    is ``sum_c support[jt, c] (a' J_lin[:, c] + (p x a)' J_ang[:, c])``. Joint 0 is the
    world (no row entries).
    """
    nv = J.shape[1]
    for i in range(frames.shape[0]):
        for side in range(2):
            jt = joint_b[i] if side == 0 else joint_a[i]
            if jt == 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            for j in range(3):
                w = axis_wrench(frames, points, i, j)
                row = 3 * i + j
                for col in range(nv):
                    if support[jt, col]:
                        J[row, col] += sign * wrench_entry(w, J_W, col)


@njit(cache=True)
def same_vector(a, b):
    """``a`` and ``b`` (1-D float arrays) have the same length and entries (NaN never
    equal), in one compiled call (``np.array_equal`` costs several Python calls)."""
    if a.shape[0] != b.shape[0]:
        return False
    for i in range(a.shape[0]):
        if a[i] != b[i]:
            return False
    return True


@njit(cache=True)
def all_finite(a, b):
    """Whether every entry of the 1-D float arrays ``a`` and ``b`` is finite (one
    compiled call)."""
    for x in a:
        if not np.isfinite(x):
            return False
    for x in b:
        if not np.isfinite(x):
            return False
    return True


def owners_and_self_pairs(parts, geom):
    """Each geometry's owner (the part's name) and the parts' self-collision pairs, as
    world geometry indices, found by name (names are unique in the world): appendModel
    moves the geometries on the universe (a fixed base's) to the front at each append, so
    a part's geometries need not stay where they were appended."""
    index = {obj.name: i for i, obj in enumerate(geom.geometryObjects)}
    owners = [None] * geom.ngeoms
    self_pairs = set()
    for part in parts:
        names = [obj.name for obj in part.geom.geometryObjects]
        for name in names:
            owners[index[name]] = part.name
        for i, j in part.self_pairs:
            a, b = index[names[i]], index[names[j]]
            self_pairs.add((min(a, b), max(a, b)))
    return owners, self_pairs


class World:
    """Robots, free bodies and the ground in one Pinocchio model.

    Parameters
    ----------
    robots : sequence of RobotSpec
    bodies : sequence of BodySpec
    gravity : (3,) array_like
        [m/s^2] in W.
    ground_height : float or None
        Height of the ground halfspace ``z <= ground_height`` [m]; None for no ground.
    mesh_mode : {'convex', 'exact'}
        'convex' replaces every collision mesh by its convex hull (qhull); 'exact' keeps
        the triangle BVHs.
    whole : bool
        Keep the world one Pinocchio model even when large (loop closures couple its
        trees; see :mod:`contact_lcp.dynamics.groups`).

    Attributes
    ----------
    model : pin.Model
        The whole world (names, joint indices, frames).
    groups : list of contact_lcp.dynamics.groups.Group
        The Pinocchio models the dynamics run on: one (``model`` itself) unless the
        world is too large for one Data.
    data : pin.Data or None
        Kinematics and frame placements of :meth:`forward` for a one-group world; None
        for a split one (use :meth:`frame_placement`, :meth:`geometry_placements`).
    geometry_fk : contact_lcp.dynamics.placements.TreePlacements or None
        Every geometry's placement from ``q`` in one compiled call (None when a joint
        type is not covered; a split world always has it).
    collision_model, collision_data : pin.GeometryModel, pin.GeometryData
        Every collision geometry; the ground (if any) is the last one, on the universe.
        The GeometryModel holds no collision pairs (Pinocchio would allocate collision
        and patch results for each: gigabytes for 200 bodies); ``pairs`` lists them.
    pairs : list of (int, int)
        Candidate geometry pairs ``i < j``.
    geometry_owner : list of str
        For each geometry, the robot or body it belongs to, or ``"ground"``.
    self_pairs : set of (int, int)
        The geometry pairs of ``pairs`` that are robot self-collision pairs.
    gravity : (3,) ndarray
    robots : list of RobotInfo
    bodies : list of BodyInfo
    q0 : (nq,) ndarray
    v0 : (nv,) ndarray
    ground_height : float or None
    """

    def __init__(self, robots, bodies=(), *, gravity=(0.0, 0.0, -9.81), ground_height=0.0,
                 mesh_mode="convex", whole=False):
        robots, bodies = list(robots), list(bodies)
        names = [r.name for r in robots] + [b.name for b in bodies]
        if len(set(names)) != len(names) or GROUND in names:
            raise SceneError(
                f"robot and body names must be unique and not {GROUND!r}; received {names}"
            )
        parts = [load_robot(r, mesh_mode) for r in robots] + [load_body(b) for b in bodies]
        self._prefix_clashing(parts[: len(robots)], parts)

        model, geom = pin.Model(), pin.GeometryModel()
        q0, v0 = [], []
        self.robots, self.bodies = [], []
        for k, part in enumerate(parts):
            fixed_pose = pin.SE3.Identity()
            if k < len(robots) and not robots[k].floating_base and robots[k].base_pose is not None:
                p = check_pose(robots[k].base_pose, f"robot {robots[k].name!r} base_pose")
                fixed_pose = pin.XYZQUATToSE3(p)
            njoints, nq, nv = model.njoints, model.nq, model.nv
            try:
                if k < len(robots):
                    model, geom = pin.appendModel(model, part.model, geom, part.geom, 0,
                                                  fixed_pose)
                    geom.removeAllCollisionPairs()  # (appendModel adds them: _add_pairs)
                else:
                    append_free_body(model, geom, part)
            except Exception as e:
                raise SceneError(f"cannot append {part.name!r} to the world model: {e}") from e
            q0.append(part.q)
            v0.append(part.v)
            qs, vs = slice(nq, model.nq), slice(nv, model.nv)
            if k < len(robots):
                self.robots.append(robot_info(model, robots[k], part, njoints, qs, vs))
            else:
                b = bodies[k - len(robots)]
                self.bodies.append(
                    BodyInfo(b.name, njoints, qs, vs, float(b.mass), b.shape, tuple(b.size),
                             b.friction)
                )
        owners, self_pairs = owners_and_self_pairs(parts, geom)
        self.ground_height = None if ground_height is None else float(ground_height)
        if self.ground_height is not None:
            plane = coal.Halfspace(np.array([0.0, 0.0, 1.0]), self.ground_height)
            geom.addGeometryObject(pin.GeometryObject(GROUND, 0, 0, pin.SE3.Identity(), plane))
            owners.append(GROUND)
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        model.gravity = pin.Motion(self.gravity, np.zeros(3))
        self.model, self.collision_model = model, geom
        self.geometry_owner = owners
        self.self_pairs = self_pairs
        self._add_pairs()
        self.groups = split_world(model, whole=whole)
        self.geometry_fk = tree_placements(model, geom)
        if len(self.groups) == 1:
            self._data = model.createData()
            self._data_dyn = model.createData()
            self._data_jac = model.createData()
        else:  # see contact_lcp.dynamics.groups: Data per group, placements from q
            self._data = None
            if self.geometry_fk is None:
                kinds = sorted({model.joints[j].shortname() for j in range(1, model.njoints)})
                raise SceneError(
                    f"the world (nv = {model.nv}) is too large for one Pinocchio model and "
                    f"its joints ({kinds}) include a type whose placements are not computed "
                    "from q (free flyers, revolute and prismatic joints are)")
            for g in self.groups:
                g.data, g.data_dyn, g.data_jac = (g.model.createData() for _ in range(3))
            self._joint_group = np.zeros(model.njoints, dtype=np.int64)
            for k, g in enumerate(self.groups):
                self._joint_group[g.j0:g.j1] = k
        self._collision_data = pin.GeometryData(geom)
        self._pending = None  # (q, v) of placements not yet computed (forward)
        self.q0 = np.concatenate(q0) if q0 else np.zeros(0)
        self.v0 = np.concatenate(v0) if v0 else np.zeros(0)
        self._q_kin = None
        self._q_minv, self._minv = None, None
        # joint_support[j, c]: velocity coordinate c moves joint j (its own and its ancestors')
        self.joint_support = np.zeros((model.njoints, model.nv), dtype=np.bool_)
        for j in range(1, model.njoints):
            for a in model.supports[j]:
                if a:
                    self.joint_support[j, model.idx_vs[a]:model.idx_vs[a] + model.nvs[a]] = True
        self.support_columns = support_columns(self.joint_support)  # (CSR: sparse_rows.py)

    @staticmethod
    def _prefix_clashing(robot_parts, parts):
        sets = [names_of(p) for p in parts]
        for k, part in enumerate(robot_parts):
            others = set().union(*(s for i, s in enumerate(sets) if i != k))
            if sets[k] & others:
                prefix_names(part, part.name + "/")

    def _add_pairs(self):
        """Candidate pairs: geometries of different owners (robots, bodies, ground) that
        are not both fixed to the world, plus the filtered robot self-collision pairs."""
        geom, owners = self.collision_model, self.geometry_owner
        joints = [obj.parentJoint for obj in geom.geometryObjects]
        self.pairs = []
        for i in range(geom.ngeoms):
            for j in range(i + 1, geom.ngeoms):
                if joints[i] == 0 and joints[j] == 0:
                    continue
                if owners[i] != owners[j] or (i, j) in self.self_pairs:
                    self.pairs.append((i, j))

    # ----------------------------------------------------------------- kinematics
    def _check_q(self, q):
        return self._check_vector(q, "q", self.model.nq)

    @staticmethod
    def _check_vector(x, name, n):
        x = np.asarray(x, dtype=float)
        if x.shape == (n,) and np.isfinite(np.dot(x, x)):  # one call; NaN, inf and
            return x  # huge entries (overflow) go to the full check below
        if x.shape != (n,) or not np.all(np.isfinite(x)):
            raise InvalidProblem(
                f"{name} must be a finite ({n},) vector; received shape {x.shape}"
                + ("" if x.shape != (n,) else " with NaN or inf"))
        return x

    def forward(self, q, v=None, *, trusted=False):
        """Kinematics, joint Jacobians, frame and geometry placements at ``q`` (and ``v``).

        Call once per step before :meth:`contact_jacobian`, :meth:`frame_placement` and
        the collision detector. ``data`` gets joint and frame placements (and velocities
        when ``v`` is given), and ``collision_data`` the geometry placements, when either
        is first read after this call (a step reads neither: the detector computes its
        placements from ``q``, the contact rows take the joint Jacobians), with this call's
        ``q`` and ``v``; the joint Jacobians go to a private Data at once, so that other
        users of ``data`` (crba, rnea...) cannot change them before
        :meth:`contact_jacobian`. ``trusted``: the caller has checked ``q`` and ``v``
        (float arrays of the right shape, finite): the checks are skipped.
        """
        m, d = self.model, self._data
        if not trusted:
            q = self._check_q(q)
            v = None if v is None else self._check_vector(v, "v", m.nv)
        if d is None:
            self._forward_groups(q, v)
            return
        pin.computeJointJacobians(m, self._data_jac, q)
        self._q_kin = q.copy()
        self._pending = (self._q_kin, None if v is None else np.array(v, dtype=float))

    def _placed(self):
        """The placements (and velocities) of the last :meth:`forward` into ``data`` and
        ``collision_data``, if not there yet."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        m, d, (q, v) = self.model, self._data, pending
        if v is None:
            pin.forwardKinematics(m, d, q)
        else:
            pin.forwardKinematics(m, d, q, v)
        pin.updateFramePlacements(m, d)
        pin.updateGeometryPlacements(m, d, self.collision_model, self._collision_data)

    @property
    def data(self):
        """The world's ``pin.Data`` (None for a world split into groups) with the joint and
        frame placements and velocities of the last :meth:`forward`."""
        self._placed()
        return self._data

    @property
    def collision_data(self):
        """The ``pin.GeometryData`` with the geometry placements of the last
        :meth:`forward`."""
        self._placed()
        return self._collision_data

    def _forward_groups(self, q, v):
        """:meth:`forward` of a split world: each group's kinematics and Jacobians on its
        own Data; frame and geometry placements are computed when asked for."""
        for g in self.groups:
            if v is None:
                pin.forwardKinematics(g.model, g.data, q[g.qs])
            else:
                pin.forwardKinematics(g.model, g.data, q[g.qs], v[g.vs])
            pin.computeJointJacobians(g.model, g.data_jac, q[g.qs])
        self._J_W = np.concatenate([g.data_jac.J for g in self.groups], axis=1)
        self._q_kin = q.copy()
        self._X_geom = None

    @property
    def jacobian_data(self):
        """The ``pin.Data`` with the joint placements and joint Jacobians of the last
        :meth:`forward` (read it; do not run algorithms on it); one-group worlds only
        (loop closures keep a world whole)."""
        if self._data is None:
            raise InvalidProblem(f"this world is split into {len(self.groups)} Pinocchio "
                                 "models; read joint_jacobians instead of jacobian_data")
        return self._data_jac

    @property
    def joint_jacobians(self):
        """(6, nv) ndarray: every joint's world-frame Jacobian at the last :meth:`forward`
        (Pinocchio's ``data.J``, WORLD convention), whatever the world's groups. Always two
        dimensions: eigenpy returns a one-column matrix (one velocity coordinate, a lone
        pendulum) as a vector."""
        J = self._data_jac.J if self._data is not None else self._J_W
        return J if J.ndim == 2 else J.reshape(6, self.model.nv)

    def geometry_placements(self):
        """(ngeoms, 4, 4) ndarray: every collision geometry's placement in W at the last
        :meth:`forward` (at ``q0`` when there was none: before it Pinocchio's placements
        are uninitialized memory, which read as NaN or 1e308 now and then)."""
        if self._q_kin is None:
            self.forward(self.q0)
        if self.data is not None:
            oMg = self.collision_data.oMg
            return np.array([oMg[g].homogeneous for g in range(len(oMg))]).reshape(-1, 4, 4)
        if getattr(self, "_X_geom", None) is None:
            self._X_geom = self.geometry_fk(self._q_kin)
        return self._X_geom.copy()

    def ensure_forward(self, q):
        """:meth:`forward` at ``q`` unless ``q`` was the last configuration forwarded."""
        last = self._q_kin
        if q.__class__ is not np.ndarray or q.dtype != _FLOAT:  # (a step's q is one)
            q = np.asarray(q, dtype=float)
        if last is None or not same_vector(last, q):
            self.forward(q)

    def frame_id(self, name):
        """Frame index of ``name``; FrameNotFound listing the body frames otherwise."""
        ids = self.__dict__.setdefault("_frame_ids", {})
        if name in ids:
            return ids[name]
        if not self.model.existFrame(name):
            links = [f.name for f in self.model.frames if f.type == pin.FrameType.BODY]
            raise FrameNotFound(name, links, "link")
        ids[name] = self.model.getFrameId(name)
        return ids[name]

    def frame_placement(self, name):
        """(4, 4) ndarray ``X_WF`` of frame ``name`` at the last :meth:`forward`."""
        return self.frame_placements((name,))[0]

    def frame_placements(self, names):
        """(len(names), 4, 4) ndarray: ``X_WF`` of each frame of ``names`` at the last
        :meth:`forward`, in one compiled pass from its ``q`` when the joints allow
        (:attr:`geometry_fk`; the run recorder reads the wrench links' every step, and
        Pinocchio's frames cost a few Python calls each), else from Pinocchio: when the
        placements are not in ``data`` yet (:meth:`_placed`), from the joints' of the
        Jacobians' pass, and ``data`` still gets everything when it is read."""
        names = tuple(names)
        if self.geometry_fk is not None and self._q_kin is not None:
            # each set of names asked for keeps its frames' joints and placements (the
            # recorder's wrench links and a publisher's link alternate, step by step)
            frames = self.__dict__.setdefault("_frame_args", {})
            hit = frames.get(names)
            if hit is None:
                fids = [self.frame_id(name) for name in names]
                joint = np.array([int(self.model.frames[f].parentJoint) for f in fids],
                                 dtype=np.int64)
                X_JF = np.array([self.model.frames[f].placement.homogeneous for f in fids],
                                dtype=float).reshape(-1, 4, 4)
                frames[names] = hit = (joint, X_JF)
            return self.geometry_fk.frames(self._q_kin, *hit)
        fids = [self.frame_id(name) for name in names]
        X = np.empty((len(fids), 4, 4))
        if self._data is None:
            for i, fid in enumerate(fids):
                X[i] = self._frame_se3(fid)[0].homogeneous
            return X
        m, d, pending = self.model, self._data, self._pending
        if pending is None:
            for i, fid in enumerate(fids):
                X[i] = d.oMf[fid].homogeneous
            return X
        # the joints' placements at that q are in the Jacobians' Data (the same forward
        # pass as forwardKinematics'), the frame's as updateFramePlacement computes it
        oMi, frames = self._data_jac.oMi, self.__dict__.setdefault("_frame_parents", {})
        for i, fid in enumerate(fids):
            parent = frames.get(fid)
            if parent is None:
                f = m.frames[fid]
                parent = frames[fid] = (int(f.parentJoint), pin.SE3(f.placement))
            X[i] = (oMi[parent[0]] * parent[1]).homogeneous
        return X

    def _frame_se3(self, fid):
        """(X_WF, joint, group) of frame ``fid`` in a split world."""
        frame = self.model.frames[fid]
        j = int(frame.parentJoint)
        if j == 0:
            return frame.placement, 0, None
        g = self.groups[self._joint_group[j]]
        return g.data.oMi[g.local(j)] * frame.placement, j, g

    def frame_velocity(self, name):
        """(6,) ``[v w]`` of frame ``name``'s origin in W [m/s, rad/s] at the last
        :meth:`forward` given a velocity."""
        fid = self.frame_id(name)
        if self.data is None:
            X_WF, j, g = self._frame_se3(fid)
            if j == 0:
                return np.zeros(6)
            nu = self.model.frames[fid].placement.actInv(g.data.v[g.local(j)])  # in F
            return np.concatenate([X_WF.rotation @ nu.linear, X_WF.rotation @ nu.angular])
        nu = pin.getFrameVelocity(self.model, self.data, fid,
                                  pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        return np.concatenate([nu.linear, nu.angular])

    def joint_of_link(self, name):
        """World-model joint id that moves link (frame) ``name``; 0 if fixed to W."""
        return int(self.model.frames[self.frame_id(name)].parentJoint)

    def integrate(self, q, v, h):
        """``q+`` of :meth:`integrate_state` (the configuration only).

        q : (nq,), v : (nv,) [m/s, rad/s], h : float [s].
        """
        return self.integrate_state(q, v, h)[0]

    def integrate_state(self, q, v, h, *, trusted=False):
        """One step on the configuration manifold: ``q+`` and ``v`` in the frames at ``q+``.

        Free-flyer joints move their reference point (a lone body's centre of mass, a
        floating base's origin) in a straight line at its world velocity and rotate by
        ``exp3(h w)``; their linear velocity is then re-expressed in the new frame (see
        :mod:`contact_lcp.dynamics.free_flyer`). Other joints: ``pin.integrate``.

        Parameters
        ----------
        q : (nq,) ndarray
        v : (nv,) ndarray
            Velocity over the step [m/s, rad/s], free-flyers' in their frames at ``q``
            (as :class:`contact_lcp.dynamics.reduced.FreeMotion` returns it).
        h : float
            Time step [s].
        trusted : bool
            The caller has checked ``q`` and ``v`` (as :meth:`forward`).

        Returns
        -------
        q_next : (nq,) ndarray
            Quaternions normalised.
        v_next : (nv,) ndarray
            The same motion, free-flyers' velocities in their frames at ``q_next``.
        """
        if not trusted:
            v = self._check_vector(v, "v", self.model.nv)
            q = self._check_q(q)
        if getattr(self, "_flyers", None) is None:
            self._flyers = FreeFlyers(self.model)
        return self._flyers.integrate(self.model, q, v, float(h))

    # ------------------------------------------------------------------- dynamics
    def mechanical_energy(self, q, v):
        """``(kinetic, potential)`` energy of the whole world at ``(q, v)`` [J] (potential
        of gravity, zero at z = 0), on private Data."""
        q, v = self._check_q(q), self._check_vector(v, "v", self.model.nv)
        kinetic = potential = 0.0
        for g in self.groups:
            d = g.__dict__.setdefault("data_energy", g.model.createData())
            kinetic += float(pin.computeKineticEnergy(g.model, d, q[g.qs], v[g.vs]))
            potential += float(pin.computePotentialEnergy(g.model, d, q[g.qs]))
        return kinetic, potential

    def free_acceleration(self, q, v, tau):
        """``M^-1 (tau - b(q, v))`` with gravity (ABA) [m/s^2, rad/s^2], shape (nv,)."""
        nv = self.model.nv
        q, v = self._check_q(q), self._check_vector(v, "v", nv)
        tau = self._check_vector(tau, "tau", nv)
        if self._data is not None:
            return pin.aba(self.model, self._data_dyn, q, v, tau).copy()
        return np.concatenate([pin.aba(g.model, g.data_dyn, q[g.qs], v[g.vs], tau[g.vs])
                               for g in self.groups])

    def minverse(self, q):
        """(nv, nv) ``M(q)^-1`` [1/kg], both triangles filled (Pinocchio's ABA-based inverse;
        block diagonal over the groups of a split world)."""
        q = self._check_q(q)
        if self._q_minv is None or not same_vector(self._q_minv, q):
            if self._data is not None:
                Minv = np.array(pin.computeMinverse(self.model, self._data_dyn, q))
            else:
                Minv = block_diagonal([pin.computeMinverse(g.model, g.data_dyn, q[g.qs])
                                       for g in self.groups], [g.vs for g in self.groups],
                                      self.model.nv)
            Minv = np.triu(Minv) + np.triu(Minv, 1).T
            self._q_minv, self._minv = q.copy(), Minv
        return self._minv.copy()

    def delassus(self, q, J):
        """``J M^-1 J^T`` (m, m), symmetric, for any (m, nv) ``J`` (contact and limit rows)."""
        J = np.asarray(J, dtype=float)
        if J.ndim != 2 or J.shape[1] != self.model.nv:
            raise InvalidProblem(f"J must have shape (m, {self.model.nv}); received {J.shape}")
        Minv = self.minverse(q)
        G = J @ Minv @ J.T
        return 0.5 * (G + G.T)

    def contact_jacobian(self, q, contacts):
        """(3k, nv) Jacobian: row ``3i + j`` is axis j (n, t1, t2) of contact i's frame
        dotted with ``v_B - v_A`` at ``p_W``, the velocity of B relative to A [m/s].

        ``contacts``: k contacts as arrays (attributes ``R_WC`` (k, 3, 3), ``p_W`` (k, 3),
        ``joint_a``, ``joint_b`` (k,), as a collision ``ContactSet`` holds them) or as a
        sequence of points (each with ``frame()`` (3, 3), ``p_W`` (3,), ``joint_a``,
        ``joint_b``, as a ``ContactPoint``). Read by attribute, so that dynamics does not
        depend on collision. Uses the kinematics of :meth:`forward` (recomputed if ``q``
        differs).
        """
        self.ensure_forward(q)  # (checks q unless it is the configuration forwarded)
        k, nv = len(contacts), self.model.nv
        J = np.zeros((3 * k, nv))
        if k == 0:
            return J
        if hasattr(contacts, "R_WC"):
            R_WC, p_W = contacts.R_WC, contacts.p_W
            joint_a, joint_b = contacts.joint_a, contacts.joint_b
        else:
            contacts = list(contacts)
            R_WC = [c.frame() for c in contacts]
            p_W = [c.p_W for c in contacts]
            joint_a = [c.joint_a for c in contacts]
            joint_b = [c.joint_b for c in contacts]
        fill_contact_rows(J, np.ascontiguousarray(R_WC, dtype=float),
                           np.ascontiguousarray(p_W, dtype=float),
                           np.asarray(joint_b, dtype=np.int64),
                           np.asarray(joint_a, dtype=np.int64),
                           self.joint_jacobians, self.joint_support)
        return J
