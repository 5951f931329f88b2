"""Read-only views of the simulator's state: joints, base, contacts, wrenches, shapes."""

from dataclasses import dataclass

import numpy as np
from numba import njit

from contact_lcp.exceptions import FrameNotFound
from contact_lcp.sim.joint_angles import wrap_angle


@dataclass(frozen=True)
class JointState:
    """Joint names with positions, velocities and applied efforts, each (n,)."""

    names: list
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


@dataclass(frozen=True)
class BaseState:
    """Floating-base pose [x y z qx qy qz qw] and twist [vx vy vz wx wy wz] in W."""

    pose: np.ndarray
    twist: np.ndarray


@dataclass(frozen=True)
class ContactView:
    """A contact of the last step with the force on B [N] (over the step) in W."""

    body_a: str
    body_b: str
    p_W: np.ndarray
    n_W: np.ndarray
    force_W: np.ndarray
    distance: float

    def __init__(self, body_a, body_b, p_W, n_W, force_W, distance):
        # one update of the instance's dict, not one object.__setattr__ per field (the
        # __init__ dataclass generates for a frozen class): contacts() makes one a contact
        self.__dict__.update(body_a=body_a, body_b=body_b, p_W=p_W, n_W=n_W,
                             force_W=force_W, distance=distance)


def quat_to_R(qx, qy, qz, qw):
    """Rotation matrix (3, 3) of the unit quaternion ``(qx, qy, qz, qw)``."""
    return np.array([
        [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
        [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
        [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)],
    ])


def _R_to_quat(R):
    """(x, y, z, w) of a rotation matrix (Shepperd's method, w >= 0)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
        q[i], q[j], q[k] = s / 4, (R[j, i] + R[i, j]) / s, (R[k, i] + R[i, k]) / s
    q = np.array(q)
    return q if q[3] >= 0 else -q


class SimulatorViews:
    """Mixin of :class:`contact_lcp.sim.Simulator`: everything a publisher reads."""

    def joint_state(self):
        """Names, positions, velocities and the efforts applied over the last step.

        Positions [rad or m] as :mod:`contact_lcp.sim.joint_angles` reports them: a
        continuous joint's angle, unwrapped (a wheel that made three turns reads ~6π).
        """
        return JointState(list(self.joint_names), *self.joint_arrays())

    def joint_arrays(self):
        """``(position, velocity, effort)`` of :meth:`joint_state` without the names (the
        run recorder reads them every step)."""
        idx_v = self.__dict__.get("_joint_idx_v")
        if idx_v is None:  # (the world's joints do not change)
            idx_v = (np.concatenate([r.idx_v for r in self.world.robots]).astype(np.int64)
                     if self.world.robots else np.zeros(0, np.int64))
            self._joint_idx_v = idx_v
        joints = self._joint_positions
        if joints.any_continuous or self._applied is None:
            return joints.read(self._q), self._v[idx_v], self.applied_torques()[idx_v]
        # one compiled call: the recorder and the joint-state publisher read them every step
        tau, arm, v1, v0 = self._applied
        return _joint_rows(self._q, self._v, joints.idx_q, idx_v, tau, arm, self.h, v1, v0)

    def trajectory_start(self, joints, first):
        """Current positions of ``joints`` (names) to start a trajectory whose first
        point is ``first`` (one position per joint): a continuous joint's angle is taken
        on the turn within π of its first point, so the trajectory leads the shortest way
        there (ros2_control's ``angle_wraparound``) instead of unwinding whole turns."""
        now = self.joint_state()
        index = {name: i for i, name in enumerate(now.names)}
        cont = dict(zip(now.names, self._joint_positions.continuous))
        out = []
        for name, target in zip(joints, first):
            p = float(now.position[index[name]])
            if cont[name]:
                p = float(target) + float(wrap_angle(p - float(target)))
            out.append(p)
        return out

    def base_state(self, robot=0):
        """Floating-base pose and world-frame twist of ``robot``; None for a fixed base."""
        info = self.world.robots[robot]
        if not info.floating_base:
            return None
        return self._free_flyer_state(info.q_slice.start, info.v_slice.start)

    def body_state(self, name):
        """Pose and world-frame twist of the free body ``name``."""
        for b in self.world.bodies:
            if b.name == name:
                return self._free_flyer_state(b.q_slice.start, b.v_slice.start)
        raise FrameNotFound(name, [b.name for b in self.world.bodies], "body")

    def _free_flyer_state(self, sq, sv):
        pose = self._q[sq : sq + 7].copy()
        R = quat_to_R(*pose[3:7])
        v_local = self._v[sv : sv + 6]
        return BaseState(pose, np.concatenate([R @ v_local[:3], R @ v_local[3:]]))

    def link_state(self, link):
        """Pose [x y z qx qy qz qw] and world-frame twist [v w] of a robot link's origin
        (or of a free body's centre)."""
        X = self.world.frame_placement(link)
        return BaseState(np.concatenate([X[:3, 3], _R_to_quat(X[:3, :3])]),
                         self.world.frame_velocity(link))

    def mechanical_energy(self):
        """``(kinetic, potential)`` energy of the world at the current state [J]."""
        return self.world.mechanical_energy(self._q, self._v)

    @property
    def stepped(self):
        """Whether there is a last step whose contacts and forces the views read: False
        before the first step, after a reset or a body moved by hand, and after loading
        a state saved before any step."""
        return self._last is not None

    def contacts(self):
        """Contacts of the last step, with the average force on B over the step [N] in W."""
        rec = self._last
        if rec is None:
            return []
        c = rec.contacts
        # each contact's vectors are rows of copies made once (not one copy per row)
        P, N, F = c.p_W.copy(), c.n_W.copy(), self._contact_forces().copy()
        names = c.names
        return [ContactView(names[a], names[b], P[i], N[i], F[i], d)
                for i, (a, b, d) in enumerate(zip(c.body_a.tolist(), c.body_b.tolist(),
                                                  c.distance.tolist()))]

    def contact_arrays(self):
        """The contacts of the last step as arrays (no per-contact objects: the viewer and
        the run recorder read them every step): ``(p_W, n_W, force_W, distance, mu)``,
        (k, 3) [m], (k, 3) unit normals from A to B, (k, 3) average force on B over the
        step [N] in W, (k,) signed distances [m] (< 0 in penetration) and (k,) friction
        coefficients; k = 0 before the first step."""
        rec = self._last
        if rec is None or len(rec.contacts) == 0:
            z = np.zeros((0, 3))
            return z, z, z, np.zeros(0), np.zeros(0)
        c = rec.contacts
        return (c.p_W.copy(), c.n_W.copy(), self._contact_forces().copy(), c.distance.copy(),
                c.mu.copy())

    def contact_table(self, links=()):
        """The last step's contacts in one pass, as the run recorder stores them every
        step: ``(table, total, wrenches)`` with ``table`` (k, 11) rows ``[p_W n_W force_W
        distance mu]`` (the columns of :meth:`contact_arrays`), ``total`` (3,) =
        :meth:`contact_force_total` and ``wrenches`` (len(links), 6) the rows of
        :meth:`link_wrenches` ``(links, "world")``."""
        return self.contact_table_later(links)()

    def contact_table_later(self, links=()):
        """:meth:`contact_table` of the last step as a function to call later (with no
        argument): the link placements are this state's, read now; the forces are
        computed when it is called, after later steps. The run recorder calls a batch of
        them at a time: the force distribution of several steps in a row runs on code and
        data still in the cache, not after each step's own."""
        links = tuple(links)
        X = self._link_placements(links)
        rec, inv_h = self._last, 1.0 / self.h
        if rec is None or len(rec.contacts) == 0:
            return lambda: (np.zeros((0, 11)), np.zeros(3), np.zeros((len(links), 6)))
        c = rec.contacts
        robot, link_of = self._robot_surfaces(c.names), self._link_index(c.names, links)

        def table():
            out, total, wrenches = np.empty((len(c), 11)), np.zeros(3), np.zeros((len(links), 6))
            _contact_table(c.p_W, c.n_W, c.R_WC, rec.impulse_C, c.distance, c.mu, inv_h,
                           c.body_a, c.body_b, robot, link_of, X, out, total, wrenches)
            return out, total, wrenches
        return table

    def _contact_forces(self):
        """(k, 3) average force on B of each contact of the last step [N] in W, computed
        once per step: the recorder, the viewer and the publishers all read it (callers
        copy before handing it out)."""
        rec = self._last
        hit = self.__dict__.get("_forces")
        if hit is None or hit[0] is not rec:
            F = np.empty((len(rec.contacts), 3))
            _world_forces(rec.contacts.R_WC, rec.impulse_C, 1.0 / self.h, F)
            self._forces = hit = (rec, F)
        return hit[1]

    def link_wrench(self, link, frame="world"):
        """Net contact wrench on ``link`` over the last step.

        Parameters
        ----------
        link : str
            A link (or free body) name.
        frame : {'world', 'local'}
            'world': axes of W, moment about the link origin; 'local': in the link frame.

        Returns
        -------
        (6,) ndarray
            (fx, fy, fz, tx, ty, tz) in N and N.m; zeros when the link had no contact.
        """
        return self.link_wrenches([link], frame)[link]

    def link_wrenches(self, links, frame="world"):
        """:meth:`link_wrench` of several links at once: ``{link: (6,) ndarray}``."""
        if frame not in ("world", "local"):
            raise ValueError(f"frame must be 'world' or 'local'; got {frame!r}")
        links = tuple(links)
        out = np.zeros((len(links), 6))
        rec = self._last
        X = self._link_placements(links)  # (an unknown link is an error, contacts or not)
        if rec is not None and len(rec.contacts) > 0:
            c = rec.contacts
            _link_wrenches(c.p_W, self._contact_forces(), c.body_a, c.body_b,
                           self._link_index(c.names, links), X, frame == "local", out)
        return dict(zip(links, out))

    def _link_placements(self, links):
        """(len(links), 4, 4) ``X_WL`` of each link at the current state."""
        return self.world.frame_placements(links)

    def _link_index(self, names, links):
        """(len(names),) int: which of ``links`` each surface name is (-1: none); kept
        while the contact set's names and the links asked for are the same, as they are
        from step to step."""
        hit = self.__dict__.get("_link_of")
        if hit is None or hit[0] is not names or hit[1] != links:
            where = {link: i for i, link in enumerate(links)}
            index = np.fromiter((where.get(n, -1) for n in names), dtype=np.int64,
                                count=len(names))
            self._link_of = hit = (names, links, index)
        return hit[2]

    def contact_force_total(self, applied=False):
        """Sum of the contact forces on every robot link [N] in W (last step).

        ``applied``: of the impulses the step applied (the pivoting answer) rather than
        of the forces read (a force distribution's, :mod:`contact_lcp.contact.min_norm`,
        computed on the first read). Both have the same velocities, so on a floating-base
        robot the same sum (its base's row of ``J' f``); on a fixed base the base takes
        the difference. Read every step (the run summary's mean), it costs no least-norm
        solve."""
        rec = self._last
        out = np.zeros(3)
        if rec is None or len(rec.contacts) == 0:
            return out
        c = rec.contacts
        _signed_total(self._step_forces(rec, applied), self._robot_surfaces(c.names), c.body_a,
                      c.body_b, out)
        return out

    def _step_forces(self, rec, applied):
        """(k, 3) average contact forces of the last step ``rec`` on B [N] in W: those read
        (:meth:`_contact_forces`) or, ``applied``, of the impulses the step applied."""
        if not applied:
            return self._contact_forces()
        F = np.empty((len(rec.contacts), 3))
        _world_forces(rec.contacts.R_WC, rec.applied_impulse_C, 1.0 / self.h, F)
        return F

    def world_contact_force(self, applied=False):
        """Sum of the contact forces that the world (the ground and any geometry fixed to
        it, the A side of such contacts) exerts over the last step [N] in W.

        ``applied``: of the impulses the step applied, as :meth:`contact_force_total`'s;
        the same sum when every body the world touches moves freely (a free body, a
        floating-base robot: the sum is that of their net contact forces, rows of
        ``J' f``); a fixed-base robot's base takes the difference."""
        rec = self._last
        if rec is None or len(rec.contacts) == 0:
            return np.zeros(3)
        c = rec.contacts
        return self._step_forces(rec, applied)[c.joint_a == 0].sum(axis=0)

    def _robot_surfaces(self, names):
        """(len(names),) bool: which surface names are robot links (kept while the
        contact set's names are the same object, as :meth:`_link_index`)."""
        hit = self.__dict__.get("_robot_mask")
        if hit is None or hit[0] is not names:
            links = {n for r in self.world.robots for n in r.link_names}
            mask = np.fromiter((n in links for n in names), dtype=np.bool_, count=len(names))
            self._robot_mask = hit = (names, mask)
        return hit[1]

    def collision_shapes(self):
        """Every collision shape at the current state (see ``ShapeView``)."""
        from contact_lcp.collision.shape_views import shape_views

        return shape_views(self.world)

    def robot_description(self, robot=0):
        """The URDF XML of ``robot`` as loaded."""
        return self.world.robots[robot].urdf_xml

    def robot_mass(self, robot=0):
        """Total mass of ``robot`` [kg]."""
        return float(self.world.robots[robot].mass)

    def link_names(self):
        """Every link of every robot, and the free bodies' names."""
        return [n for r in self.world.robots for n in r.link_names] + [b.name for b in self.world.bodies]


def check_link(sim, link):
    """Raise FrameNotFound unless ``link`` is a robot link or a free body."""
    names = sim.link_names()
    if link not in names:
        raise FrameNotFound(link, names, "link")


@njit(cache=True)
def _joint_rows(q, v, idx_q, idx_v, tau, arm, h, v1, v0):
    """``(position, velocity, effort)`` of :meth:`SimulatorViews.joint_arrays` when no
    joint is continuous: ``q[idx_q]``, ``v[idx_v]`` and the applied torques
    ``tau - arm / h (v1 - v0)`` at ``idx_v`` (as ``Simulator.applied_torques``)."""
    n = idx_v.shape[0]
    position, velocity, effort = np.empty(n), np.empty(n), np.empty(n)
    for a in range(n):
        c = idx_v[a]
        position[a] = q[idx_q[a]]
        velocity[a] = v[c]
        effort[a] = tau[c] - arm[c] / h * (v1[c] - v0[c])
    return position, velocity, effort


@njit(cache=True)
def _world_forces(R, impulse_C, inv_h, out):
    """``out[i] = R_i impulse_i / h``: contact i's average force on B [N] in W."""
    for i in range(R.shape[0]):
        for a in range(3):
            out[i, a] = inv_h * (R[i, a, 0] * impulse_C[i, 0] + R[i, a, 1] * impulse_C[i, 1]
                                 + R[i, a, 2] * impulse_C[i, 2])


@njit(cache=True)
def _signed_total(F, match, body_a, body_b, out):
    """Sum into ``out`` (3,) of the forces on the surfaces ``match`` (by name index):
    +F where the surface is B, -F where it is A (a contact between two of them cancels)."""
    for i in range(F.shape[0]):
        s = (1.0 if match[body_b[i]] else 0.0) - (1.0 if match[body_a[i]] else 0.0)
        if s != 0.0:
            for a in range(3):
                out[a] += s * F[i, a]


@njit(cache=True)
def _link_wrenches(P, F, body_a, body_b, link_of, X, local, out):
    """Net contact force and moment about the origin of ``X[l]`` (4, 4) on link ``l``
    (the surfaces with ``link_of == l``), in W or (``local``) in the frame of ``X[l]``,
    added into ``out[l]`` (6,) [N, N.m]; contact i pushes B with ``F[i]`` and A with
    ``-F[i]``."""
    acc = np.zeros_like(out)
    for i in range(P.shape[0]):
        for side in range(2):
            link = link_of[body_b[i]] if side == 0 else link_of[body_a[i]]
            if link < 0:
                continue
            s = 1.0 if side == 0 else -1.0
            r0 = P[i, 0] - X[link, 0, 3]
            r1 = P[i, 1] - X[link, 1, 3]
            r2 = P[i, 2] - X[link, 2, 3]
            f0, f1, f2 = s * F[i, 0], s * F[i, 1], s * F[i, 2]
            acc[link, 0] += f0
            acc[link, 1] += f1
            acc[link, 2] += f2
            acc[link, 3] += r1 * f2 - r2 * f1
            acc[link, 4] += r2 * f0 - r0 * f2
            acc[link, 5] += r0 * f1 - r1 * f0
    for link in range(out.shape[0]):
        for a in range(3):
            if local:
                for b in range(2):
                    v = acc[link, 3 * b : 3 * b + 3]
                    out[link, 3 * b + a] += (X[link, 0, a] * v[0] + X[link, 1, a] * v[1]
                                             + X[link, 2, a] * v[2])
            else:
                out[link, a] += acc[link, a]
                out[link, 3 + a] += acc[link, 3 + a]


@njit(cache=True)
def _contact_table(P, N, R, impulse_C, distance, mu, inv_h, body_a, body_b, robot, link_of, X,
                   table, total, wrenches):
    """Fill ``table`` (k, 11) with ``[p_W n_W force_W distance mu]`` per contact, ``total``
    (3,) with the force on the ``robot`` surfaces and ``wrenches`` (L, 6) with each link's
    (see ``_link_wrenches``), in W."""
    F = table[:, 6:9]
    _world_forces(R, impulse_C, inv_h, F)
    for i in range(P.shape[0]):
        for a in range(3):
            table[i, a] = P[i, a]
            table[i, 3 + a] = N[i, a]
        table[i, 9] = distance[i]
        table[i, 10] = mu[i]
    _signed_total(F, robot, body_a, body_b, total)
    _link_wrenches(P, F, body_a, body_b, link_of, X, False, wrenches)
