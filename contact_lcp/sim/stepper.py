"""One velocity-impulse time step with contacts and joint limits (Anitescu & Hart).

Per step: collision detection, contact activation by distance, Jacobians and the
Delassus matrix ``G = J K J'`` (K = M^-1, or its dynamic block when joints are
prescribed), the contact LCP with the stabilization term ``gamma * phi / h`` on the
normal rows, the two-step certified solve, then ``v+ = v_free + K J' f`` and
``q+ = integrate(q, h v+)``.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from contact_lcp.contact.two_step import ContactSolve, solve_contact_step


@dataclass
class LimitRows:
    """Active joint-limit rows: velocity index, sign (+1 lower, -1 upper), gap [rad or m]."""

    idx_v: np.ndarray
    sign: np.ndarray
    gap: np.ndarray


@dataclass
class StepRecord:
    """What one step did (kept by the simulator for wrenches, markers and logs).

    ``impulse_C`` (k, 3) are the contact impulses in each contact frame (n, t1, t2)
    [N.s]; ``limit_impulse`` (l,) those of the joint limits.
    """

    contacts: list
    impulse_C: np.ndarray
    limit_impulse: np.ndarray
    solve: ContactSolve = None
    max_penetration: float = 0.0
    timings: dict = field(default_factory=dict)

    @property
    def num_active(self):
        """Contacts whose normal impulse is positive."""
        return int(np.count_nonzero(self.impulse_C[:, 0] > 0.0)) if len(self.contacts) else 0


def joint_limit_rows(robots, q, prescribed, activation, v_free=None, h=0.0):
    """Joint limits within ``activation`` of being reached, as unilateral rows.

    A limit is active when its gap, or the gap it would have after a step of ``h`` at the
    free velocity ``v_free`` (nv,), is at most ``activation``: a joint approaching faster
    than ``activation / h`` is still caught before it passes the limit.

    Parameters
    ----------
    robots : list of RobotInfo
    q : (nq,) ndarray
    prescribed : (p,) int ndarray or None
        Velocity indices that are prescribed (their limits are not constraints).
    activation : float
        Gap [rad or m] below which a limit row is active.
    """
    if not robots:
        return LimitRows(np.zeros(0, int), np.zeros(0), np.zeros(0))
    iq = np.concatenate([r.idx_q for r in robots]).astype(int)
    iv = np.concatenate([r.idx_v for r in robots]).astype(int)
    lo = np.concatenate([r.lower for r in robots])
    hi = np.concatenate([r.upper for r in robots])
    free = ~np.isin(iv, prescribed) if prescribed is not None else np.ones(iv.size, bool)
    gap_lo, gap_hi = q[iq] - lo, hi - q[iq]
    step = np.zeros(iv.size) if v_free is None else h * v_free[iv]
    # inf limits give inf gaps: never active
    at_lo = free & (np.minimum(gap_lo, gap_lo + step) <= activation)
    at_hi = free & (np.minimum(gap_hi, gap_hi - step) <= activation)
    return LimitRows(np.concatenate([iv[at_lo], iv[at_hi]]),
                     np.concatenate([np.ones(at_lo.sum()), -np.ones(at_hi.sum())]),
                     np.concatenate([gap_lo[at_lo], gap_hi[at_hi]]))


def normal_bias(phi, h, gamma, max_correction_speed=None):
    """Anitescu & Hart's stabilization term on normal rows [m/s].

    A gap ``phi > 0`` may close within the step (``phi / h``); a penetration ``phi < 0``
    is removed at the rate ``gamma * phi / h`` (``gamma = 0``: left in place), at most
    ``max_correction_speed`` [m/s] when given (the energy a deep penetration can inject
    is then at most ``m v^2 / 2``; removal takes ``|phi| / v`` seconds instead of one step).
    """
    phi = np.asarray(phi, dtype=float)
    bias = np.where(phi >= 0.0, phi, gamma * phi) / h
    if max_correction_speed is not None:
        bias = np.maximum(bias, -float(max_correction_speed))
    return bias


def advance(world, detector, free_motion, q, v, tau, h, contact, solver, *, armature=None,
            prescribed=None, v_prescribed=None, limit_activation=None):
    """One time step.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    detector : contact_lcp.collision.ContactDetector
    free_motion : contact_lcp.dynamics.reduced.FreeMotion
    q : (nq,) ndarray; v, tau : (nv,) ndarray
    h : float
        Time step [s].
    contact : contact_lcp.sim.scene.ContactSettings
    solver : contact_lcp.sim.scene.SolverSettings
    armature : (nv,) ndarray, optional
        Implicit servo terms ``h kd + h^2 kp`` (see :class:`FreeMotion`).
    prescribed : (p,) int ndarray, optional
        Velocity indices of prescribed joints, with ``v_prescribed`` (p,) their
        velocities over the step.
    limit_activation : float, optional
        Joint-limit activation gap; None disables joint limits.

    Returns
    -------
    q_next, v_next : ndarray
    record : StepRecord
    """
    timings = {}
    t0 = time.perf_counter()
    world.ensure_forward(q)  # the simulator forwards each new state once, after its step
    contacts = detector.detect(q)
    t1 = time.perf_counter()
    timings["collision"] = t1 - t0
    v_free, K = free_motion(q, v, tau, h, armature, prescribed, v_prescribed)
    limits = (joint_limit_rows(world.robots, q, prescribed, limit_activation, v_free, h)
              if limit_activation is not None else LimitRows(np.zeros(0, int), np.zeros(0), np.zeros(0)))
    k, l = len(contacts), limits.idx_v.size
    impulse_C = np.zeros((k, 3))
    limit_impulse = np.zeros(l)
    sol = None
    v_next = v_free
    t2 = time.perf_counter()
    timings["dynamics"] = t2 - t1
    if k + l:
        J = np.zeros((3 * k + l, v.shape[0]))
        if k:
            J[: 3 * k] = world.contact_jacobian(q, contacts)
        J[3 * k + np.arange(l), limits.idx_v] = limits.sign
        G = J @ K @ J.T
        G = 0.5 * (G + G.T)
        u = J @ v_free
        phi = np.concatenate([[c.distance for c in contacts], limits.gap])
        bias = normal_bias(phi, h, contact.stabilization, contact.max_correction_speed)
        mu = np.array([c.mu for c in contacts])
        t3 = time.perf_counter()
        timings["lcp_build"] = t3 - t2
        sol = solve_contact_step(
            G, u, mu, num_unilateral=l, normal_bias=bias,
            num_directions=contact.friction_directions, method=solver.method,
            options=solver.options, two_step=solver.two_step,
            drop_unloaded=solver.drop_unloaded, fallback=solver.fallback)
        t4 = time.perf_counter()
        timings["solve"] = t4 - t3
        if sol.safe_stop:
            # No certified impulse: keep the configuration and stop the dynamic motion
            # rather than apply an uncertified impulse (never injects energy).
            v_next = np.zeros_like(v_free)
            if prescribed is not None:
                v_next[prescribed] = v_free[prescribed]
        else:
            v_next = v_free + K @ (J.T @ sol.f)
            impulse_C = sol.f[: 3 * k].reshape(k, 3)
            limit_impulse = sol.f[3 * k :]
        t2 = t4
    t5 = time.perf_counter()
    q_next = world.integrate(q, v_next, h)
    timings["integrate"] = time.perf_counter() - t5
    pen = max([0.0] + [-c.distance for c in contacts])
    rec = StepRecord(contacts, impulse_C, limit_impulse, sol, pen, timings)
    return q_next, v_next, rec
