"""Free motion of a world whose joints are partly prescribed, and gravity torques.

With joints in ``P`` following a reference exactly (Yamane & Nakamura's high-gain
feedback mode), only the other degrees of freedom ``D`` (floating bases, free bodies,
unprescribed joints) are dynamic. Their free motion over a step of ``h`` is::

    M_DD dv_D = h (tau_D - b_D - M_DP a_P),       a_P = (v_P+ - v_P) / h

and a contact impulse ``p`` changes only ``v_D`` by ``M_DD^-1 J_D' p``. ``M_DD`` is small
(6 per floating base or free body), so it is factorised with a dense Cholesky.
"""

import numpy as np
import pinocchio as pin
from scipy.linalg import cho_factor, cho_solve


def generalized_gravity(world, q):
    """Gravity torques ``g(q)`` (nv,) [N.m or N] of the whole world."""
    return pin.computeGeneralizedGravity(world.model, world.data, q).copy()


def free_motion(world, q, v, tau, h, prescribed=None, v_prescribed=None):
    """Velocity after one step without contact, and the inverse inertia operator.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    q : (nq,) ndarray
    v, tau : (nv,) ndarray
        Velocity [rad/s, m/s] and generalized force [N.m, N].
    h : float
        Time step [s].
    prescribed : (p,) int ndarray, optional
        Velocity indices of prescribed joints; ``v_prescribed`` (p,) their velocities at
        the end of the step.

    Returns
    -------
    v_free : (nv,) ndarray
        Velocity at the end of the step with no contact impulse.
    K : (nv, nv) ndarray
        Symmetric map from generalized impulse to velocity change (``M^-1``, or
        ``M_DD^-1`` embedded with zero rows and columns for the prescribed joints).
    """
    if prescribed is None or len(prescribed) == 0:
        v_free = v + h * world.free_acceleration(q, v, tau)
        return v_free, world.minverse(q)
    nv = v.shape[0]
    P = np.asarray(prescribed, dtype=int)
    D = np.setdiff1d(np.arange(nv), P)
    M = pin.crba(world.model, world.data, q)
    M = np.triu(M) + np.triu(M, 1).T
    b = pin.nle(world.model, world.data, q, v)
    a_P = (np.asarray(v_prescribed, dtype=float) - v[P]) / h
    v_free = v.copy()
    v_free[P] = v_prescribed
    K = np.zeros((nv, nv))
    if D.size:
        L = cho_factor(M[np.ix_(D, D)])
        rhs = tau[D] - b[D] - M[np.ix_(D, P)] @ a_P
        v_free[D] = v[D] + h * cho_solve(L, rhs)
        K[np.ix_(D, D)] = cho_solve(L, np.eye(D.size))
    return v_free, K
