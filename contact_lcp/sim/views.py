"""Read-only views of the simulator's state: joints, base, contacts, wrenches, shapes."""

from dataclasses import dataclass

import numpy as np

from contact_lcp.exceptions import FrameNotFound


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


def _quat_to_R(qx, qy, qz, qw):
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
        """Names, positions, velocities and the efforts applied over the last step."""
        idx_q = np.concatenate([r.idx_q for r in self.world.robots]).astype(int) if self.world.robots else np.zeros(0, int)
        idx_v = np.concatenate([r.idx_v for r in self.world.robots]).astype(int) if self.world.robots else np.zeros(0, int)
        return JointState(list(self.joint_names), self._q[idx_q].copy(), self._v[idx_v].copy(),
                          self._tau[idx_v].copy())

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
        R = _quat_to_R(*pose[3:7])
        v_local = self._v[sv : sv + 6]
        return BaseState(pose, np.concatenate([R @ v_local[:3], R @ v_local[3:]]))

    def link_state(self, link):
        """Pose [x y z qx qy qz qw] and world-frame twist [v w] of a robot link's origin
        (or of a free body's centre)."""
        X = self.world.frame_placement(link)
        return BaseState(np.concatenate([X[:3, 3], _R_to_quat(X[:3, :3])]),
                         self.world.frame_velocity(link))

    def contacts(self):
        """Contacts of the last step, with the average force on B over the step [N] in W."""
        rec = self._last
        if rec is None:
            return []
        c = rec.contacts
        F = np.einsum("kij,kj->ki", c.R_WC, rec.impulse_C) / self.h
        return [ContactView(c.names[c.body_a[i]], c.names[c.body_b[i]], c.p_W[i].copy(),
                            c.n_W[i].copy(), F[i], float(c.distance[i])) for i in range(len(c))]

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
            [fx fy fz tx ty tz] [N, N.m]; zeros when the link had no contact.
        """
        return self.link_wrenches([link], frame)[link]

    def link_wrenches(self, links, frame="world"):
        """:meth:`link_wrench` of several links at once: ``{link: (6,) ndarray}``."""
        if frame not in ("world", "local"):
            raise ValueError(f"frame must be 'world' or 'local'; got {frame!r}")
        out = {}
        rec = self._last
        has = rec is not None and len(rec.contacts) > 0
        if has:
            c = rec.contacts
            P = c.p_W
            F = np.einsum("kij,kj->ki", c.R_WC, rec.impulse_C) / self.h  # force on B, in W
            names = np.array(c.names)
            A, B = names[c.body_a], names[c.body_b]
        for link in links:
            X = self.world.frame_placement(link)
            o, Rl = X[:3, 3], X[:3, :3]
            wrench = np.zeros(6)
            if has:
                sign = (B == link).astype(float) - (A == link).astype(float)
                if sign.any():
                    Fs = sign[:, None] * F
                    wrench[:3] = Fs.sum(axis=0)
                    wrench[3:] = np.cross(P - o, Fs).sum(axis=0)
            if frame == "local":
                wrench = np.concatenate([Rl.T @ wrench[:3], Rl.T @ wrench[3:]])
            out[link] = wrench
        return out

    def contact_force_total(self):
        """Sum of the contact forces on every robot link [N] in W (last step)."""
        links = {n for r in self.world.robots for n in r.link_names}
        total = np.zeros(3)
        for c in self.contacts():
            if c.body_b in links:
                total += c.force_W
            if c.body_a in links:
                total -= c.force_W
        return total

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
