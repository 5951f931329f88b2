"""How far a step's contact points leave their linearized paths (the curvature defect).

A contact's normal row keeps its gap linearized: ``phi + h n'(v_B - v_A) >= 0`` at the
contact point. The step then moves each body along its actual path, on the configuration
manifold: a turning body's points follow arcs. A point at ``r`` from the axis of a body
turning at ``w`` leaves the tangent by ``w^2 r h^2 / 2`` in a step, which the normal row
does not see. When the arc curves into the other body, that is a penetration the push-out
then removes at ``max_correction_speed`` only: a limp Talos's gripper, rolling on the
ground with its arm and base turning, sank 27 um a step for 0.3 s (0.72 mm) while its
row held it separating at the 4.9 mm/s cap.

:func:`curvature_defects` measures each contact's defect at a given step velocity, from
the geometry placements at ``q`` and at the end of the step (two compiled tree passes):
``e = n'(d_B - d_A) - h n'(v_B - v_A)``, with ``d_X`` the displacement of the material
point of body X at the contact over the step. The linear part is read from a step of
``h / 1000`` (its own curvature is 1e-6 of ``e``). The stepper adds the negative part of
``e`` to the rows' gaps (see :func:`contact_lcp.contact.problem.build_problem`) and
solves once more when some defect is larger than what the push-out removes in a step
(:class:`CurvatureCheck`, which measures only when a bound says it may be).
Positive defects are left out: a ball rolling on a floor has its material contact point
rise on its cycloid while its gap does not depend on its spin. Negative ones come from
points that turn about an axis beyond the contact, into the other body: a ring hanging
on another, a link rolling while the chain above it turns.
"""

import numpy as np
from numba import njit

from contact_lcp.collision.broadphase import chain_joints

#: the linear part is read from a step this much shorter
_SHORT = 1e-3


@njit(cache=True)
def _normal_displacements(X0, X1, body_a, body_b, p_W, R_WC):
    """(k,) normal component of ``d_B - d_A``: the displacement of each contact's material
    points from the placements ``X0`` to ``X1`` (ngeoms, 4, 4) of their geometries."""
    k = p_W.shape[0]
    out = np.zeros(k)
    for i in range(k):
        s = 0.0
        for side in range(2):
            g = body_b[i] if side == 0 else body_a[i]
            sign = 1.0 if side == 0 else -1.0
            # the material point in g's frame, then where X1 puts it
            loc = np.zeros(3)
            for a in range(3):
                acc = 0.0
                for b in range(3):
                    acc += X0[g, b, a] * (p_W[i, b] - X0[g, b, 3])
                loc[a] = acc
            for a in range(3):
                moved = X1[g, a, 3]
                for b in range(3):
                    moved += X1[g, a, b] * loc[b]
                s += sign * R_WC[i, a, 0] * (moved - p_W[i, a])
        out[i] = s
    return out


def curvature_defects(world, q, contacts, v_step, h):
    """(k,) curvature defect of each contact over a step at ``v_step`` [m] (negative: its
    points' paths curve into each other), or None when the world's placements are not
    computed from ``q`` (joint types outside :mod:`contact_lcp.dynamics.placements`).

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    q : (nq,) ndarray
        Configuration at the start of the step.
    contacts : contact_lcp.collision.contact_set.ContactSet
    v_step : (nv,) ndarray
        The step's velocity (in the frames at ``q``, as the step integrates it).
    h : float
        Time step [s].
    """
    fk = world.geometry_fk
    if fk is None or len(contacts) == 0:
        return None if fk is None else np.zeros(0)
    X0 = fk(q)
    q1, _ = world.integrate_state(q, v_step, h, trusted=True)
    qs, _ = world.integrate_state(q, v_step, _SHORT * h, trusted=True)
    args = (np.asarray(contacts.body_a, dtype=np.int64), np.asarray(contacts.body_b, dtype=np.int64),
            np.ascontiguousarray(contacts.p_W, dtype=float),
            np.ascontiguousarray(contacts.R_WC, dtype=float))
    whole = _normal_displacements(X0, fk(q1), *args)
    linear = _normal_displacements(X0, fk(qs), *args) / _SHORT
    return whole - linear


def turn_matrix(model, collision_model):
    """(ngeoms, nv) 1 where velocity coordinate c turns geometry g (a rotational
    coordinate of a joint on its chain: revolute, the free flyer's angular part; any
    coordinate of other non-prismatic joints), else 0."""
    objs = list(collision_model.geometryObjects)
    A = np.zeros((len(objs), model.nv))
    for g, o in enumerate(objs):
        for _, kind, cols in chain_joints(model, o.parentJoint):
            if "FreeFlyer" in kind:
                A[g, cols[3:]] = 1.0
            elif not ("Prismatic" in kind or kind.startswith("JointModelP")):
                A[g, cols] = 1.0
    return A


class CurvatureCheck:
    """Called as ``check(q, contacts, v_step)``: the contacts' curvature defects [m] when
    one of them curves in by more than ``tol`` [m], else None.

    Measured only when the bound ``h W_g reach_g / 2`` exceeds ``tol`` for a geometry g of
    the contacts, with ``reach_g`` the farthest a point of g travels in the step (the
    detector's levers) and ``W_g`` the sum of the turning rates on its chain: a point's
    acceleration at a fixed velocity is at most ``W_g`` times its speed bound, and its
    path leaves the tangent by at most half of that times ``h^2``. A standing robot's
    bound is ~1e-10 m and its steps skip the two tree passes (~60 us on Talos).
    """

    def __init__(self, world, detector, h, tol):
        self.world = world
        self.h, self.tol = float(h), float(tol)
        self.enabled = world.geometry_fk is not None
        if self.enabled:
            self._levers = np.ascontiguousarray(detector.levers, dtype=float)
            self._turn = turn_matrix(world.model, world.collision_model)

    def __call__(self, q, contacts, v_step):
        if not self.enabled or contacts.size == 0:
            return None
        if _bound(self._levers, self._turn, v_step, self.h, contacts.body_a,
                  contacts.body_b) < self.tol:
            return None
        e = curvature_defects(self.world, q, contacts, v_step, self.h)
        return e if e is not None and e.size and e.min() < -self.tol else None


@njit(cache=True)
def _bound(L, turn, v, h, body_a, body_b):
    """Largest ``h W_g reach_g / 2`` over the geometries of the contacts [m] (see
    :class:`CurvatureCheck`), in one compiled pass over their rows of ``L`` and ``turn``."""
    worst = 0.0
    for i in range(body_a.shape[0]):
        for side in range(2):
            g = body_a[i] if side == 0 else body_b[i]
            speed = 0.0
            rate = 0.0
            for c in range(v.shape[0]):
                a = abs(v[c])
                speed += L[g, c] * a
                rate += turn[g, c] * a
            worst = max(worst, 0.5 * h * rate * h * speed)
    return worst
