"""The no-slip step's normal-row LCP, reduced through the velocities the rows leave free.

No-slip (Drumwright, S4 section VI) imposes ``T v+ = 0`` on the tangential rows ``T`` of
the held contacts. Eliminating their impulses through the Gram block ``G_tt = T K T'``
(a Schur complement, :mod:`contact_lcp.contact.tangential`) needs an independent subset
of rows, and a nearly dependent one makes ``G_tt`` ill-conditioned: with relative
distance ``delta`` between rows, the complement ``G_nn - G_nt G_tt^-1 G_tn`` is a
difference of terms ``1 / delta^2`` larger than itself and loses that much precision,
so a bound on ``delta`` has to drop rows, and a dropped row slips.

This module reduces in the velocities instead. With ``K = R R'`` (``R = Q Lambda^1/2``
from the eigenvalues of ``K``) the coordinates ``xi`` with ``v = R xi`` make the kinetic
metric the identity, the rows ``T~ = T R`` and ``N~ = N R``. The SVD
``T~ = U S V'`` splits them into the directions the rows fix (``V1``: singular value
above ``singular_tol`` times the largest) and those they leave free (``V2``). The step's
velocity is the projection of the free one onto the free directions, moved by the normal
impulses ``f_n`` through them::

    xi+ = V2 V2' (xi_free + N~' f_n) + V1 g,    g = -S1^-1 U1' T v_rest

(``v_rest`` the part of ``v_free`` outside the range of ``K``, the motion of prescribed
joints; zero otherwise), so the normal rows' LCP is

    M = B B',  B = N~ V2,    q = bias + N v_rest + N~ V1 g + B V2' xi_free,

symmetric PSD and formed without a subtraction: a direction fixed at ``delta`` costs no
precision, and every direction above ``singular_tol`` (default 1e-10) is held. What the
rows leave unheld is a slip of at most ``singular_tol`` times the largest singular value
times the speed. The tangential impulses are the least-norm ones giving ``xi+``::

    f_t = U1 S1^-1 (g - V1' xi_free - V1' N~' f_n)

on every tangential row of the held contacts (none dropped: the least-norm ones spread
over them). Along a weakly fixed direction they are large when the normal impulses
leave it a moment to balance (a vertex of the normal answer that loads one corner of a
face a few um out of plane); the model's :meth:`redistribute` step then takes the
least-norm impulse of the answer's face (:mod:`contact_lcp.contact.min_norm_normal`).
"""

from dataclasses import dataclass

import numpy as np


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


def kinetic_factor(K):
    """``(R, xi_free_map)``: ``R`` (nv, r) with ``R R' = K`` over its range (eigenvalues
    above ``nv eps`` of the largest) and ``P`` (r, nv) with ``P v = xi`` for ``v = R xi``
    (``R`` has orthogonal columns: ``P = Lambda^-1/2 Q'``)."""
    lam, Q = np.linalg.eigh(0.5 * (K + K.T))
    cut = K.shape[0] * np.finfo(float).eps * max(float(lam[-1]), 0.0)
    on = lam > cut
    root = np.sqrt(lam[on])
    return Q[:, on] * root, (Q[:, on] / root).T


def reduce_no_slip(problem, tangent_rows, singular_tol):
    """The :class:`NullSpaceLCP` holding ``tangent_rows`` (t,) at ``v+``; see the notes."""
    nr = problem.normal_rows
    t = np.asarray(tangent_rows, dtype=np.int64)
    R, P = kinetic_factor(np.asarray(problem.K, dtype=float))
    xi_free = P @ problem.v_free
    v_rest = problem.v_free - R @ xi_free
    N = problem.J[nr] @ R
    T = problem.J[t] @ R
    r = R.shape[1]
    if t.size:
        U, s, Vt = np.linalg.svd(T, full_matrices=True)
        rank = int(np.sum(s > singular_tol * s[0])) if s.size and s[0] > 0.0 else 0
    else:
        U, s, Vt, rank = np.zeros((0, 0)), np.zeros(0), np.eye(r), 0
    U1, s1, V1, V2 = U[:, :rank], s[:rank], Vt[:rank].T, Vt[rank:].T
    rest = np.max(np.abs(v_rest), initial=0.0) > 0.0
    g = -(U1.T @ (problem.J[t] @ v_rest)) / s1 if rest else np.zeros(rank)
    B = N @ V2
    M = B @ B.T
    q = problem.bias + B @ (V2.T @ xi_free) + N @ (V1 @ g)
    if rest:
        q = q + problem.J[nr] @ v_rest
    scaled = U1 / s1  # U1 S1^-1
    f_0 = scaled @ (g - V1.T @ xi_free)
    F_n = -scaled @ (V1.T @ N.T)
    # xi+ - xi_free = V1 (g - V1' xi_free) + V2 B' f_n
    d_0 = R @ (V1 @ (g - V1.T @ xi_free))
    D_n = R @ (V2 @ B.T)
    return NullSpaceLCP(0.5 * (M + M.T), q, nr, t, rank, F_n, f_0, D_n, d_0)
