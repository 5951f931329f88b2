"""Deep penetration removed by moving the bodies, not by pushing them (position projection).

The step's drift term pushes a penetrating contact apart at ``gamma phi / h`` capped at
``max_correction_speed`` (half a gravity's speed gain per step), so that the push can
neither launch a body nor add visible energy. The price is time: at h = 1 ms the cap is
4.9 mm/s, and a quadruped that its SRDF's standing posture puts 14 mm into the ground
(Unitree's Go1 in example-robot-data) stands sunk for three seconds; a box that an impact
swings 8 mm into its neighbour in a tumbling pile stays in it for 16 steps at h = 10 ms.

A penetration deeper than ``depth`` at the start of a step is instead removed by the
smallest mass-weighted displacement ``dq`` that takes every contact found (and every
joint limit within reach) to a gap of at least ``-target`` (Cline & Pai's
post-stabilization, here on the contacts at the step's start)::

    min 1/2 dq' K^-1 dq   subject to   phi + J_n dq >= -target

with ``K`` the step's inverse inertia (the servos' implicit terms and the loop closures
included, so that ``dq`` keeps the closures to first order). Its KKT conditions are the
frictionless LCP ``w = (J_n K J_n') a + phi + target``, ``dq = K J_n' a``: the Delassus
matrix of the step's problem, solved and certified by
:func:`contact_lcp.lcp.solve_with_retries` (the method and the standard further attempts).
The configuration moves to ``q (+) dq``; the velocity is not touched, so no kinetic
energy is added (the potential energy is that of the bodies out of each other). What
is left, ``target`` (the push-out of one step), the drift term removes in the step.
"""

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from contact_lcp.lcp import solve_with_retries


@dataclass(frozen=True)
class Projection:
    """One projection: ``dq`` (nv,) applied to the configuration, the penetration [m]
    before it and the largest one its linearization leaves (>= -target), the LCP's
    pivots, and whether it was certified (an uncertified answer is not applied)."""

    dq: np.ndarray
    depth_before: float
    depth_after: float
    pivots: int
    certified: bool


class PenetrationProjection:
    """Decides and computes the projection of one step.

    Parameters
    ----------
    depth : float or None
        Penetration [m] beyond which the step starts with a projection (None: never).
    target : float
        Penetration [m] each contact is projected to at most (what the drift term
        removes in one step: ``max_correction_speed * h``).
    method : str
        LCP method (the contact model's).
    """

    def __init__(self, depth, target, method="robust"):
        self.depth = None if depth is None else max(float(depth), float(target))
        self.target = float(target)
        self.method = method

    def needed(self, deepest):
        """Whether the contacts' smallest gap ``deepest`` [m] (inf without contacts) is a
        penetration deeper than ``depth`` (joint limits past their bound do not start
        one: their rows then only keep the projection from pushing them farther)."""
        return self.depth is not None and deepest < -self.depth

    def __call__(self, distance, J_found, K, limit_rows=None):
        """The projection for contacts with gaps ``distance`` (k,) [m] and contact rows
        ``J_found`` (3k, nv) (normal rows first in each triple), the step's ``K`` (nv, nv),
        and joint-limit rows ``(idx_v, sign, gap)``. Returns a :class:`Projection`."""
        J_n = J_found[0::3]
        phi = np.asarray(distance, dtype=float)
        if limit_rows is not None and limit_rows[0].size:
            idx_v, sign, gap = limit_rows
            J_l = np.zeros((idx_v.size, J_n.shape[1]))
            J_l[np.arange(idx_v.size), idx_v] = sign
            J_n = (sparse.vstack([J_n, J_l], format="csr") if sparse.issparse(J_n)
                   else np.vstack([J_n, J_l]))
            phi = np.concatenate([phi, gap])
        KJ = K @ J_n.T
        G = J_n @ KJ
        if sparse.issparse(G):  # (the sparse path's CSR rows and K; pivoting needs G dense)
            G = G.toarray()
        before = float(max(0.0, -phi.min()))
        res = solve_with_retries(G, phi + self.target, self.method)
        if not res.success:
            return Projection(np.zeros(K.shape[0]), before, before, res.pivots, False)
        dq = KJ @ res.z
        after = float(max(0.0, -(phi + J_n @ dq).min()))
        return Projection(dq, before, after, res.pivots, True)
