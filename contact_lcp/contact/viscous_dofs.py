"""The viscous model's reduction through the degrees of freedom (S4 section IV).

With more damped tangential rows ``m`` than degrees of freedom ``nv`` (a grasp: 72 rows
on 14 dofs), eliminating the viscous impulses through the ``m x m`` block
``W = G_tt + (h B)^-1`` (:mod:`contact_lcp.contact.tangential`) costs O(m^3 + m^2 n).
S4 augments the generalized inertia instead: ``K~ = (K^-1 + h T'BT)^-1``. Written with a
factor ``K = F F'`` (so that ``K`` is never inverted) and the Woodbury identity, with
``P = T F``, ``Q = N F``, ``D^-1 = h B``::

    W = P P' + D,   S = I + P' D^-1 P   (nv x nv),
    A = G_nn - G_nt W^-1 G_tn = Q S^-1 Q',
    c = u_n + bias - Q S^-1 P' D^-1 u_t,
    f_t = -W^-1 (u_t + G_tn f_n),  W^-1 = D^-1 - D^-1 P S^-1 P' D^-1,  G_tn = P Q',

O(nv^2 (m + n) + n^2 nv), and ``A = R'R`` (``R = Ls^-1 Q'``) is symmetric PSD as built.
Used by :func:`contact_lcp.contact.normal_kernel.normal_step` when ``m > nv`` and ``K``
factors (not with prescribed joints or loops, whose ``K`` is singular: the rows' route).
"""

import numpy as np
from numba import njit

from contact_lcp.contact.tangential import cholesky_lower


@njit(cache=True)
def viscous_dofs(J, K, u, bias, nr, t, hb):
    """``(ok, A, c, P, Ls, Q)`` of the module notes (``Ls Ls' = S``).

    Parameters
    ----------
    J, K : (r, nv), (nv, nv) ndarray
        The problem's rows and inverse inertia [1/kg].
    u : (r,) ndarray
        Free row velocities [m/s]; ``bias`` (n,) the normal rows' stabilization [m/s].
    nr, t : (n,), (m,) int64 ndarray
        Normal rows and damped tangential rows.
    hb : (m,) ndarray
        ``h b`` per damped row [N.s^2/m] (``D^-1``).

    Notes
    -----
    ``ok`` is False when ``K`` does not factor (not positive definite).
    """
    nv = K.shape[0]
    n, m = nr.shape[0], t.shape[0]
    ok, F = cholesky_lower(K)
    A = np.zeros((n, n))
    c = np.zeros(n)
    P = np.zeros((m, nv))
    Q = np.zeros((n, nv))
    if not ok:
        return False, A, c, P, F, Q
    for i in range(m):
        for k in range(nv):
            x = J[t[i], k]
            if x != 0.0:
                for j in range(k + 1):
                    P[i, j] += x * F[k, j]
    for i in range(n):
        for k in range(nv):
            x = J[nr[i], k]
            if x != 0.0:
                for j in range(k + 1):
                    Q[i, j] += x * F[k, j]
    S = np.zeros((nv, nv))
    g = np.zeros(nv)
    for i in range(m):
        w = hb[i]
        for a in range(nv):
            pa = w * P[i, a]
            g[a] += pa * u[t[i]]
            for b in range(a + 1):
                S[a, b] += pa * P[i, b]
    for a in range(nv):
        S[a, a] += 1.0
        for b in range(a):
            S[b, a] = S[a, b]
    ok, Ls = cholesky_lower(S)
    if not ok:
        return False, A, c, P, Ls, Q
    # R = Ls^-1 Q' (nv, n), r = Ls^-1 g: A = R'R, c = u_n + bias - R'r
    R = Q.T.copy()
    r = g.copy()
    for a in range(nv):
        for p in range(a):
            x = Ls[a, p]
            r[a] -= x * r[p]
            for j in range(n):
                R[a, j] -= x * R[p, j]
        inv = 1.0 / Ls[a, a]
        r[a] *= inv
        for j in range(n):
            R[a, j] *= inv
    for i in range(n):
        ci = u[nr[i]] + bias[i]
        for a in range(nv):
            ci -= R[a, i] * r[a]
        c[i] = ci
    for a in range(nv):
        for i in range(n):
            x = R[a, i]
            for j in range(i, n):
                A[i, j] += x * R[a, j]
    for i in range(n):
        for j in range(i + 1, n):
            A[j, i] = A[i, j]
    return True, A, c, P, Ls, Q


@njit(cache=True)
def viscous_dofs_impulse(P, Ls, Q, hb, u_t, f_n):
    """(m,) ``f_t = -W^-1 (u_t + G_tn f_n)`` of :func:`viscous_dofs`, with
    ``W^-1 = D^-1 - D^-1 P S^-1 P' D^-1`` and ``G_tn = P Q'`` [N.s]."""
    m, nv = P.shape
    qz = np.zeros(nv)  # Q' f_n
    for i in range(Q.shape[0]):
        for a in range(nv):
            qz[a] += Q[i, a] * f_n[i]
    x = np.empty(m)  # D^-1 (u_t + P Q' f_n)
    for i in range(m):
        acc = u_t[i]
        for a in range(nv):
            acc += P[i, a] * qz[a]
        x[i] = hb[i] * acc
    y = np.zeros(nv)  # S^-1 P' x
    for i in range(m):
        for a in range(nv):
            y[a] += P[i, a] * x[i]
    for a in range(nv):
        for p in range(a):
            y[a] -= Ls[a, p] * y[p]
        y[a] /= Ls[a, a]
    for a in range(nv - 1, -1, -1):
        for p in range(a + 1, nv):
            y[a] -= Ls[p, a] * y[p]
        y[a] /= Ls[a, a]
    f = np.empty(m)
    for i in range(m):
        acc = 0.0
        for a in range(nv):
            acc += P[i, a] * y[a]
        f[i] = -(x[i] - hb[i] * acc)
    return f
