"""The no-slip step's normal-row LCP, reduced through the velocities the rows leave free.

No-slip (Drumwright, S4 section VI) imposes ``T v+ = 0`` on the tangential rows ``T`` of
the held contacts. Eliminating their impulses through the Gram block ``G_tt = T K T'``
(a Schur complement, :mod:`contact_lcp.contact.tangential`) needs an independent subset
of rows, and a nearly dependent one makes ``G_tt`` ill-conditioned: with relative
distance ``delta`` between rows, the complement ``G_nn - G_nt G_tt^-1 G_tn`` is a
difference of terms ``1 / delta^2`` larger than itself and loses that much precision,
so a bound on ``delta`` has to drop rows, and a dropped row slips.

This module reduces in the velocities instead. With ``K = R R'`` (a Cholesky factor, or
``Q Lambda^1/2`` over the range of a singular ``K``) the coordinates ``xi`` with
``v = R xi`` make the kinetic metric the identity, the rows ``T~ = T R`` and
``N~ = N R``. The SVD ``T~ = U S V'`` splits them into the directions the rows fix
(``V1``: singular value above ``singular_tol`` times the largest) and those they leave
free (``V2``). The step's velocity is the projection of the free one onto the free
directions, moved by the normal impulses ``f_n`` through them::

    xi+ = V2 V2' (xi_free + N~' f_n) + V1 g,    g = -S1^-1 U1' T v_rest

(``v_rest`` the part of ``v_free`` outside the range of ``K``, the motion of prescribed
joints; zero otherwise), so the normal rows' LCP is

    M = B B',  B = N~ V2,    q = bias + N v_rest + N~ V1 g + B V2' xi_free,

symmetric PSD and formed without a subtraction: a direction fixed at ``delta`` costs
``eps / delta`` of precision (the accuracy of the SVD's free directions) instead of
``eps / delta^2``, so every direction above ``singular_tol`` (default 1e-10) can be
held. What the rows leave unheld is a slip of at most ``singular_tol`` times the largest
singular value times the speed. The tangential impulses are the least-norm ones giving
``xi+``::

    f_t = U1 S1^-1 (g - V1' xi_free - V1' N~' f_n)

on every tangential row of the held contacts (none dropped: the least-norm ones spread
over them). Along a weakly fixed direction they are large when the normal impulses
leave it a moment to balance (a vertex of the normal answer that loads one corner of a
face a few um out of plane); the no-slip model (:mod:`contact_lcp.contact.no_slip`)
then takes the least-norm impulse of the answer's face
(:mod:`contact_lcp.contact.min_norm_normal`), or holds fewer directions.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from contact_lcp.contact.tangential import cholesky_lower


_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class NullSpaceLCP:
    """The no-slip normal-row LCP and the map back to impulses (module notes).

    Attributes
    ----------
    M, q : (n, n), (n,) ndarray
        The normal rows' LCP [1/kg], [m/s]; ``n = k + l``.
    normal_rows, tangent_rows : (n,), (t,) int ndarray
        Rows of the problem: the unknowns', and the held tangential rows.
    rank : int
        Directions the tangential rows hold.
    F_n, f_0 : (t, n), (t,) ndarray
        ``f_t = f_0 + F_n f_n`` [N.s].
    D_n, d_0 : (nv, n), (nv,) ndarray
        ``v+ - v_free = d_0 + D_n f_n`` [m/s or rad/s], formed without the tangential
        impulses (which are large along weakly held directions, and their round-off
        with them).
    """

    M: np.ndarray
    q: np.ndarray
    normal_rows: np.ndarray
    tangent_rows: np.ndarray
    rank: int
    F_n: np.ndarray
    f_0: np.ndarray
    D_n: np.ndarray
    d_0: np.ndarray

    def velocity_change(self, f_n):
        """(nv,) ``v+ - v_free`` of normal impulses ``f_n`` (n,)."""
        return self.d_0 + self.D_n @ np.asarray(f_n, dtype=float)

    def impulses(self, problem, f_n):
        """Impulses (3k + l,) in the problem's rows [N.s] from normal impulses ``f_n``."""
        f = np.zeros(problem.num_rows)
        f_n = np.asarray(f_n, dtype=float)
        f[self.normal_rows] = f_n
        if self.tangent_rows.size:
            f[self.tangent_rows] = self.f_0 + self.F_n @ f_n
        return f


@njit(cache=True)
def kinetic_factor(K):
    """``(R, P)``: ``R`` (nv, r) with ``R R' = K`` over its range and ``P`` (r, nv) with
    ``P v = xi`` for ``v = R xi``. ``R`` is the Cholesky factor of ``K`` (``P = R^-1``)
    when its pivots stay above ``nv eps`` of the largest diagonal entry; else (``K``
    singular: prescribed joints) ``R = Q Lambda^1/2`` over the eigenvalues above
    ``nv eps`` of the largest (orthogonal columns: ``P = Lambda^-1/2 Q'``)."""
    nv = K.shape[0]
    eps = nv * _EPS
    top = 0.0
    for i in range(nv):
        top = max(top, K[i, i])
    ok, L = cholesky_lower(K)
    if ok:
        for i in range(nv):
            if not L[i, i] * L[i, i] > eps * top:
                ok = False
    if ok:
        return L, np.ascontiguousarray(np.linalg.solve(L, np.eye(nv)))
    lam, Q = np.linalg.eigh(0.5 * (K + K.T))
    cut = eps * max(lam[nv - 1], 0.0)
    on = np.flatnonzero(lam > cut)
    r = on.shape[0]
    R = np.empty((nv, r))
    P = np.empty((r, nv))
    for j in range(r):
        root = np.sqrt(lam[on[j]])
        for i in range(nv):
            R[i, j] = Q[i, on[j]] * root
            P[j, i] = Q[i, on[j]] / root
    return R, P


@njit(cache=True)
def null_space(J, K, v_free, bias, nr, t, singular_tol):
    """The compiled reduction of the module notes: ``(M, q, F_n, f_0, D_n, d_0, rank)``
    (see :class:`NullSpaceLCP`) for normal rows ``nr`` and held tangential rows ``t`` of
    the row Jacobian ``J`` (r, nv)."""
    R, P = kinetic_factor(K)
    nv, r = R.shape
    J = np.ascontiguousarray(J)
    Jn = np.empty((nr.shape[0], nv))
    for a in range(nr.shape[0]):
        Jn[a] = J[nr[a]]
    Jt = np.empty((t.shape[0], nv))
    for a in range(t.shape[0]):
        Jt[a] = J[t[a]]
    xi_free = P @ v_free
    N = Jn @ R
    rank = 0
    if t.shape[0]:
        U, s, Vt = np.linalg.svd(Jt @ R)  # full matrices
        if s.shape[0] and s[0] > 0.0:
            for x in s:
                if x > singular_tol * s[0]:
                    rank += 1
    else:
        U, s, Vt = np.zeros((0, 0)), np.zeros(0), np.eye(r)
    U1 = np.ascontiguousarray(U[:, :rank])
    s1 = s[:rank]
    V1 = np.ascontiguousarray(Vt[:rank].T)
    V2 = np.ascontiguousarray(Vt[rank:].T)
    # the part of v_free the impulses cannot change (prescribed joints: K singular)
    g = np.zeros(rank)
    q = bias.copy()
    if r < nv:
        v_rest = v_free - R @ xi_free
        g = -(U1.T @ (Jt @ v_rest)) / s1
        q += Jn @ v_rest
    B = N @ V2
    M = B @ B.T
    M = 0.5 * (M + M.T)
    q += B @ (V2.T @ xi_free) + N @ (V1 @ g)
    scaled = U1 / s1  # U1 S1^-1
    held = g - V1.T @ xi_free
    f_0 = scaled @ held
    F_n = -scaled @ (V1.T @ N.T)
    # xi+ - xi_free = V1 (g - V1' xi_free) + V2 B' f_n
    d_0 = R @ (V1 @ held)
    D_n = R @ (V2 @ B.T)
    return M, q, F_n, f_0, D_n, d_0, rank


def reduce_no_slip(problem, tangent_rows, singular_tol):
    """The :class:`NullSpaceLCP` holding ``tangent_rows`` (t,) at ``v+``; see the notes."""
    nr = np.asarray(problem.normal_rows, dtype=np.int64)
    t = np.asarray(tangent_rows, dtype=np.int64)
    M, q, F_n, f_0, D_n, d_0, rank = null_space(
        np.ascontiguousarray(problem.J, dtype=float),
        np.ascontiguousarray(problem.K, dtype=float),
        np.asarray(problem.v_free, dtype=float), np.asarray(problem.bias, dtype=float), nr,
        t, float(singular_tol))
    return NullSpaceLCP(M, q, nr, t, int(rank), F_n, f_0, D_n, d_0)
