"""The single definition of the LCP error and tolerance used to certify every solution.

:func:`certify` computes both in one compiled pass over ``M`` (it is called after every
solve, so its fixed cost matters on small contact LCPs); :func:`lcp_error` and
:func:`default_tolerance` are the same quantities one at a time.
"""

import numpy as np
from numba import njit

_EPS = float(np.finfo(float).eps)


@njit(cache=True)
def _pass(M, q, z):
    """``w = M z + q``, ``||min(z, w)||_inf``, ``||M||_inf``, ``||q||_inf``, ``||z||_inf``."""
    n = q.shape[0]
    w = np.empty(n)
    err = norm_M = norm_q = norm_z = 0.0
    for i in range(n):
        s = q[i]
        row = 0.0
        for j in range(n):
            s += M[i, j] * z[j]
            row += abs(M[i, j])
        w[i] = s
        err = max(err, abs(min(z[i], s)))
        norm_M = max(norm_M, row)
        norm_q = max(norm_q, abs(q[i]))
        norm_z = max(norm_z, abs(z[i]))
    return w, err, norm_M, norm_q, norm_z


def _tolerance(n, norm_M, norm_q, norm_z):
    if n == 0:
        return 1e-14
    return 1e4 * n * _EPS * (norm_M * norm_z + norm_q) + 1e-14


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
    err, w, _ = certify(M, q, z)
    return err, w


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
    return certify(M, q, z)[2]


def certify(M, q, z):
    """Error and default tolerance of ``z`` in one pass.

    Returns
    -------
    error : float
        As :func:`lcp_error`.
    w : (n,) ndarray
        ``M z + q``.
    tol : float
        As :func:`default_tolerance`.
    """
    M = np.ascontiguousarray(M, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    z = np.ascontiguousarray(z, dtype=float)
    n = q.shape[0]
    if n == 0:
        return 0.0, np.zeros(0), _tolerance(0, 0.0, 0.0, 0.0)
    w, err, norm_M, norm_q, norm_z = _pass(M, q, z)
    return float(err), w, _tolerance(n, norm_M, norm_q, norm_z)
