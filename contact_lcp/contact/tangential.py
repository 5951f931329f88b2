"""Normal-only LCPs for models whose tangential impulse is linear in the tangential velocity.

Drumwright's viscous and no-slip models (S4, sections IV and VI) both make the tangential
impulse ``f_t`` of the touching contacts an affine function of the normal impulse
``f_n``, so that only the normal rows remain complementary. In the problem's row
coordinates (``w = u + G f``, ``G = J K J'``):

* viscous: ``f_t = -h B v_t+`` with ``B = diag(b)`` [N.s/m] and ``v_t+ = u_t + G_tn f_n +
  G_tt f_t``, hence ``W f_t = -(u_t + G_tn f_n)`` with ``W = G_tt + (h B)^-1``;
* no-slip: ``v_t+ = 0`` on an independent subset of the tangential rows (FIND-INDICES),
  hence the same with ``W = G_tt`` restricted to that subset.

Eliminating ``f_t`` leaves the LCP on the normal rows (contacts, then joint limits)::

    A = G_nn - G_nt W^-1 G_tn,   c = u_n + bias - G_nt W^-1 u_t,   w_n = A f_n + c,

a Schur complement of the PSD matrix ``[[G_nn, G_nt], [G_tn, W]]`` (``W`` positive
definite), hence symmetric PSD (S4, eqs. 41 and 56). Written with the generalized inertia
it is ``N K~ N'`` with ``K~ = (K^-1 + h T'BT)^-1`` (viscous: the inertia augmented by
the damping, by the Woodbury identity) or ``K~`` the inertia restricted to ``T v = 0``.

With ``W = L L'`` (Cholesky), ``Y = L^-1 G_tn`` and ``y = L^-1 u_t``: ``A = G_nn - Y'Y``
(symmetric by construction), ``c = u_n + bias - Y'y`` and the eliminated impulses are
``f_t = -L'^-1 (y + Y f_n)``. These are compiled (:func:`schur`,
:func:`tangent_impulse`, :func:`cholesky_lower`) and shared by :func:`reduce_to_normal_rows`
and the models' one-call step (:mod:`contact_lcp.contact.normal_kernel`).
"""

from dataclasses import dataclass

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_lower(W):
    """``(ok, L)`` with ``L L' = W`` for a symmetric positive definite ``W`` (t, t); ``ok``
    False when a pivot is not positive (``W`` not positive definite)."""
    t = W.shape[0]
    L = np.zeros((t, t))
    for j in range(t):
        d = W[j, j]
        for p in range(j):
            d -= L[j, p] * L[j, p]
        if not d > 0.0:
            return False, L
        root = np.sqrt(d)
        L[j, j] = root
        for i in range(j + 1, t):
            x = W[i, j]
            for p in range(j):
                x -= L[i, p] * L[j, p]
            L[i, j] = x / root
    return True, L


@njit(cache=True)
def schur(G, u, bias, nr, t, L):
    """``(A, c, Y, y)`` of the module notes.

    Parameters
    ----------
    G : (r, r) ndarray
        The problem's Delassus matrix [1/kg]; ``u`` (r,) its free velocities [m/s].
    bias : (n,) ndarray
        Stabilization of the normal rows [m/s].
    nr, t : (n,), (m,) int64 ndarray
        Normal rows and eliminated tangential rows.
    L : (m, m) ndarray
        Lower Cholesky factor of ``W`` (``G[t, t]``, plus the damping for viscous).
    """
    n, m = nr.shape[0], t.shape[0]
    Y = np.empty((m, n))
    y = np.empty(m)
    for i in range(m):
        ti = t[i]
        yi = u[ti]
        for j in range(n):
            Y[i, j] = G[ti, nr[j]]
        for p in range(i):
            a = L[i, p]
            yi -= a * y[p]
            for j in range(n):
                Y[i, j] -= a * Y[p, j]
        inv = 1.0 / L[i, i]
        y[i] = yi * inv
        for j in range(n):
            Y[i, j] *= inv
    A = np.empty((n, n))
    c = np.empty(n)
    for a in range(n):  # row by row: A[a, b] and A[b, a] are the same sums (G symmetric)
        ra = nr[a]
        ca = u[ra] + bias[a]
        for b in range(n):
            A[a, b] = G[ra, nr[b]]
        for p in range(m):
            ya = Y[p, a]
            ca -= ya * y[p]
            for b in range(n):
                A[a, b] -= ya * Y[p, b]
        c[a] = ca
    return A, c, Y, y


@njit(cache=True)
def tangent_impulse(L, Y, y, f_n):
    """(m,) eliminated impulses ``f_t = -L'^-1 (y + Y f_n)`` [N.s]."""
    m, n = Y.shape
    x = y.copy()
    for i in range(m):
        for j in range(n):
            x[i] += Y[i, j] * f_n[j]
    for i in range(m - 1, -1, -1):
        for p in range(i + 1, m):
            x[i] -= L[p, i] * x[p]
        x[i] /= L[i, i]
    return -x


@dataclass(frozen=True, eq=False)
class ReducedLCP:
    """The normal-row LCP of a viscous or no-slip step and the map back to impulses.

    Attributes
    ----------
    M : (n, n) ndarray
        ``A`` above, symmetric PSD [1/kg]; ``n = k + l`` normal rows.
    q : (n,) ndarray
        ``c`` above [m/s].
    normal_rows : (n,) int ndarray
        Rows of the problem the unknowns belong to.
    tangent_rows : (t,) int ndarray
        Rows of the problem whose impulse is eliminated.
    L, Y, y : (t, t), (t, n), (t,) ndarray
        ``W = L L'``, ``Y = L^-1 G_tn``, ``y = L^-1 u_t`` (module notes).
    """

    M: np.ndarray
    q: np.ndarray
    normal_rows: np.ndarray
    tangent_rows: np.ndarray
    L: np.ndarray
    Y: np.ndarray
    y: np.ndarray

    def impulses(self, problem, f_n):
        """Impulses (3k + l,) in the problem's rows [N.s] from normal impulses ``f_n`` (n,)."""
        f = np.zeros(problem.num_rows)
        f[self.normal_rows] = f_n
        if self.tangent_rows.size:
            f[self.tangent_rows] = tangent_impulse(self.L, self.Y, self.y,
                                                   np.asarray(f_n, dtype=float))
        return f


def reduce_to_normal_rows(problem, tangent_rows, W_factor=None, damping=None):
    """Eliminate the impulses of ``tangent_rows``; see the module notes.

    Parameters
    ----------
    problem : contact_lcp.contact.problem.ContactProblem
    tangent_rows : (t,) int ndarray
        Tangential rows whose impulse is eliminated.
    W_factor : IncrementalCholesky or (t, t) ndarray, optional
        The factor (or its lower ``L``) of ``G[tangent_rows, tangent_rows]`` (no-slip, from
        FIND-INDICES).
    damping : (t,) ndarray, optional
        ``1 / (h b)`` per row [s/kg] added to the diagonal of ``G_tt`` (viscous).

    Returns
    -------
    ReducedLCP

    Raises
    ------
    ValueError
        ``G_tt`` plus the damping is not positive definite.
    """
    nr = problem.normal_rows
    t = np.asarray(tangent_rows, dtype=np.int64)
    G = np.ascontiguousarray(problem.G, dtype=float)
    if W_factor is not None:
        L = W_factor.factor() if hasattr(W_factor, "factor") else np.asarray(W_factor)
    elif t.size:
        W = G[np.ix_(t, t)] + np.diag(np.asarray(damping, dtype=float))
        ok, L = cholesky_lower(W)
        if not ok:
            raise ValueError("G_tt + damping: expected a positive definite matrix, got a "
                             "non-positive pivot")
    else:
        L = np.zeros((0, 0))
    A, c, Y, y = schur(G, np.asarray(problem.u, dtype=float),
                       np.asarray(problem.bias, dtype=float), nr, t,
                       np.ascontiguousarray(L, dtype=float))
    return ReducedLCP(A, c, nr, t, L, Y, y)


def tangent_rows_of(contacts):
    """(2c,) rows (t1, t2 of each contact index in ``contacts``), in contact order."""
    contacts = np.asarray(contacts, dtype=np.int64)
    return (3 * contacts[:, None] + np.array([1, 2])).ravel()
