"""Joint control of one robot: the scene's controller plus commands from outside."""

import numpy as np
from numba import njit

from contact_lcp.exceptions import ContactLCPError, SceneError
from contact_lcp.sim.joint_angles import joint_positions, servo_error, wrap_scalar
from contact_lcp.sim.references import (
    HoldReference,
    SampledReference,
    SinusoidReference,
    read_csv_trajectory,
)

MODES = ("effort", "position", "velocity")


class CommandError(ContactLCPError, ValueError):
    """A joint command that cannot be applied (the message says why); nothing changed."""


def _per_joint(gain, names, what):
    if isinstance(gain, dict):
        unknown = [j for j in gain if j not in names]
        if unknown:
            raise SceneError(f"controller.{what}: unknown joint {unknown[0]!r}; joints: {names}")
        return np.array([gain.get(j, 0.0) for j in names])
    return np.full(len(names), float(gain))


class RobotControl:
    """Torques (and prescribed velocities) for the actuated joints of one robot.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    info : RobotInfo
    spec : contact_lcp.sim.scene.ControllerSpec
    q0 : (nq,) ndarray
        Initial world configuration; the posture held when there is no trajectory.

    Notes
    -----
    Joint positions are those of :mod:`contact_lcp.sim.joint_angles`: a continuous joint's
    angle, targets on it absolute angles reached the shortest way (error wrapped to
    [-π, π)).
    """

    def __init__(self, world, info, spec, q0):
        self.world, self.info, self.spec = world, info, spec
        names = list(info.joint_names)
        self.kp = _per_joint(spec.kp, names, "kp")
        self.kd = _per_joint(spec.kd, names, "kd")
        self.continuous = np.asarray(info.continuous, dtype=bool)
        self._any_continuous = bool(self.continuous.any())
        self.q_init = joint_positions(np.asarray(q0, dtype=float), info.idx_q, self.continuous)
        self.reference = self._reference(spec.trajectory, names)
        self._no_gravity = np.zeros(world.model.nv)
        lim = np.asarray(info.effort_limit, dtype=float)
        self.limit = np.where(np.isfinite(lim) & (lim > 0), lim, np.inf)  # 0 or none: no limit
        self.clear_commands()

    def _reference(self, traj, names):
        if traj is None:
            return HoldReference(self.q_init)
        if traj.kind == "sinusoid":
            unknown = [j for j in traj.sinusoids if j not in names]
            if unknown:
                raise SceneError(f"trajectory: unknown joint {unknown[0]!r}; joints: {names}")
            A, T, phi = (np.array([traj.sinusoids.get(j, (0.0, 1.0, 0.0))[i] for j in names])
                         for i in range(3))
            return SinusoidReference(self.q_init, A, T, phi)
        cols, sampled = read_csv_trajectory(traj.csv, names)
        idx = [names.index(c) for c in cols]
        full = np.tile(self.q_init, (sampled.t.size, 1))
        full[:, idx] = sampled.p
        return SampledReference(sampled.t, full)

    #: what the external commands change (set by :meth:`clear_commands`; a state file
    #: saves these, :mod:`contact_lcp.sim.checkpoint`)
    COMMAND_FIELDS = ("mode", "value", "cmd_kp", "cmd_kd", "tracks", "commanded")

    def clear_commands(self):
        """Forget every external command: the scene controller drives all joints."""
        n = len(self.info.joint_names)
        self.mode = np.array([None] * n, dtype=object)
        self.value = np.zeros(n)
        self.cmd_kp = self.kp.copy()
        self.cmd_kd = self.kd.copy()
        self.tracks = []
        self.commanded = False  # any external command or trajectory set

    def command(self, mode, idx, values, kp=None, kd=None):
        """Set an external command on joints ``idx`` (indices into the robot's joints)."""
        if mode not in MODES:
            raise CommandError(f"unknown command mode {mode!r}; expected one of {list(MODES)}")
        if self.spec.kind == "prescribed":
            raise CommandError(f"robot {self.info.name!r} is prescribed: its joints follow the "
                               "scene's reference and take no commands")
        self.mode[idx] = mode
        self.commanded = True
        self.value[idx] = values
        if kp is not None:
            self.cmd_kp[idx] = kp
        if kd is not None:
            self.cmd_kd[idx] = kd
        self.tracks = [(i, r) for i, r in self.tracks if not np.isin(i, idx).any()]

    def track(self, idx, times, positions, velocities=None):
        """Track a sampled trajectory on joints ``idx`` with the position gains."""
        if self.spec.kind == "prescribed":
            raise CommandError(f"robot {self.info.name!r} is prescribed and takes no trajectory")
        self.tracks = [(i, r) for i, r in self.tracks if not np.isin(i, idx).any()]
        self.tracks.append((np.asarray(idx), SampledReference(times, positions, velocities)))
        self.mode[idx] = "trajectory"
        self.commanded = True

    def torques(self, t, h, q, v, gravity):
        """Generalized force of this robot's joints over the step starting at ``t``.

        Servos (the scene's pd, position/velocity commands, trajectories) are implicit:
        their torque is evaluated at the predicted position ``q + h v`` and the returned
        ``armature`` ``h kd + h^2 kp`` completes the backward-Euler servo (see
        :class:`contact_lcp.dynamics.reduced.FreeMotion`). A servo whose torque would
        exceed the effort limit is clamped and made explicit for that step.

        Parameters
        ----------
        t, h : float
            Time and time step [s].
        q, v : ndarray
            World configuration and velocity.
        gravity : callable
            ``gravity(q) -> (nv,)`` generalized gravity, for gravity compensation.

        Returns
        -------
        tau : (nv,) ndarray
            Zero outside the robot's actuated joints [N.m or N].
        armature : (nv,) ndarray
            Implicit servo terms [kg.m^2 or kg].
        prescribed_idx : list of int
            Velocity indices that follow the reference exactly (prescribed controller).
        prescribed_v : list of float
            Their velocities over the step, ``(q_ref(t + h) - q) / h`` so positions land
            exactly on the reference.
        """
        info = self.info
        nv = v.shape[0]
        tau, arm = np.zeros(nv), np.zeros(nv)
        cont = self.continuous
        qj = joint_positions(q, info.idx_q, cont) if self._any_continuous else q[info.idx_q]
        vj = v[info.idx_v]
        if self.spec.kind == "prescribed":
            q_next, _, _ = self.reference(t + h)
            return tau, arm, list(info.idx_v), list(servo_error(q_next, qj, cont) / h)
        if self.spec.kind == "pd" and not self.commanded:  # the scene's servos alone
            q_ref, v_ref, _ = self.reference(t + h)
            g = gravity(q) if self.spec.gravity_compensation else self._no_gravity
            _pd_servos(tau, arm, info.idx_v, cont, qj, vj, q_ref, v_ref, self.kp, self.kd, g,
                       self.limit, h)
            return tau, arm, [], []
        n = qj.shape[0]
        q_pred = qj + h * vj
        tj, kp, kd = np.zeros(n), np.zeros(n), np.zeros(n)
        if self.spec.kind == "pd":
            q_ref, v_ref, _ = self.reference(t + h)
            kp, kd = self.kp.copy(), self.kd.copy()
            tj = kp * servo_error(q_ref, q_pred, cont) + kd * (v_ref - vj)
        if self.commanded:
            tj = self._external(t, h, qj, vj, q_pred, tj, kp, kd)
        if self.spec.gravity_compensation:
            if not self.commanded:
                servo = np.full(n, self.spec.kind == "pd")
            else:
                servo = (self.mode == None) if self.spec.kind == "pd" else np.zeros(n, bool)  # noqa: E711
                servo |= np.isin(self.mode, ("position", "trajectory"))
            if servo.any():
                tj[servo] += gravity(q)[info.idx_v][servo]
        lim = self.limit
        clamped = np.abs(tj) > lim
        tau[info.idx_v] = np.clip(tj, -lim, lim)
        arm[info.idx_v] = np.where(clamped, 0.0, h * kd + h * h * kp)
        return tau, arm, [], []

    def _external(self, t, h, qj, vj, q_pred, tj, kp, kd):
        """Apply the external commands and trajectories over the scene controller's
        torques ``tj``; their gains go into ``kp``, ``kd`` (in place)."""
        cont = self.continuous
        for i in np.flatnonzero(self.mode == "effort"):
            tj[i], kp[i], kd[i] = self.value[i], 0.0, 0.0
        i = np.flatnonzero(self.mode == "position")
        kp[i], kd[i] = self.cmd_kp[i], self.cmd_kd[i]
        tj[i] = kp[i] * servo_error(self.value[i], q_pred[i], cont[i]) - kd[i] * vj[i]
        i = np.flatnonzero(self.mode == "velocity")
        kp[i], kd[i] = 0.0, self.cmd_kd[i]
        tj[i] = kd[i] * (self.value[i] - vj[i])
        for i, ref in self.tracks:
            qr, vr, _ = ref(t + h)
            kp[i], kd[i] = self.cmd_kp[i], self.cmd_kd[i]
            tj[i] = kp[i] * servo_error(qr, q_pred[i], cont[i]) + kd[i] * (vr - vj[i])
        return tj


@njit(cache=True)
def _pd_servos(tau, arm, idx_v, continuous, qj, vj, q_ref, v_ref, kp, kd, g, limit, h):
    """The scene's implicit PD servos with gravity ``g`` (nv,) added, in place on ``tau``
    and ``arm`` (see :meth:`RobotControl.torques`: a clamped joint is explicit; a
    continuous joint's position error is wrapped to [-π, π))."""
    for a in range(qj.shape[0]):
        c = idx_v[a]
        e = q_ref[a] - (qj[a] + h * vj[a])
        if continuous[a]:
            e = wrap_scalar(e)
        t = kp[a] * e + kd[a] * (v_ref[a] - vj[a]) + g[c]
        if abs(t) > limit[a]:
            tau[c] = min(max(t, -limit[a]), limit[a])
            arm[c] = 0.0
        else:
            tau[c] = t
            arm[c] = h * kd[a] + h * h * kp[a]
