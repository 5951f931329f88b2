"""The single definition of the LCP error used to certify every solution."""

import numpy as np


def lcp_error(M, q, z):
    """Natural-map residual of ``z`` for LCP(M, q).

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    z : (n,) ndarray

    Returns
    -------
    error : float
        ``||min(z, M z + q)||_inf``; zero exactly at a solution. Units of ``q``.
    w : (n,) ndarray
        ``M z + q``.
    """
    w = M @ z + q
    if z.size == 0:
        return 0.0, w
    return float(np.max(np.abs(np.minimum(z, w)))), w


def default_tolerance(M, q, z):
    """Certification tolerance scaled from the data.

    ``tol = 1e4 * max(n, 1) * eps * (||M||_inf * ||z||_inf + ||q||_inf) + 1e-14``.

    A backward-stable pivoting method leaves an error of about
    ``n * eps * (||M|| ||z|| + ||q||)`` in ``w = M z + q`` (Drake's Lemke uses
    ``n * ||M||_inf * 10 eps``); the factor 1e4 leaves room for the ill-conditioned,
    rank-deficient Delassus matrices of redundant contact while still rejecting anything
    visibly wrong. For a humanoid contact LCP (n = 320, ||M|| ~ 10, impulses ~ 1 N.s,
    velocities ~ 1 m/s) it is about 1e-8 m/s. Units of ``q``.
    """
    n = q.shape[0]
    if n == 0:
        return 1e-14
    norm_M = float(np.max(np.sum(np.abs(M), axis=1)))
    norm_q = float(np.max(np.abs(q)))
    norm_z = float(np.max(np.abs(z))) if z.size else 0.0
    eps = np.finfo(float).eps
    return 1e4 * n * eps * (norm_M * norm_z + norm_q) + 1e-14
