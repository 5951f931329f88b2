"""Rebuilding states of the robust search (:mod:`contact_lcp.lcp.robust`).

* :func:`cold_root`: the root of a cold search, Step 0 from the slack basis; the search
  rebuilds it at its first backtrack rather than copying it on entry.
* :func:`restore`: a node's state, replayed from its nearest cached ancestor.
"""

import numpy as np
from numba import njit

from contact_lcp.lcp import heap as hp
from contact_lcp.lcp import tableau as tb


@njit(cache=True)
def cold_root(q, r):
    """Step 0 from the slack basis (``B = I``, covering vector 1): ``z0`` enters in row
    ``r``. Returns ``(Binv, qbar, basis, where, leaving)``."""
    n = q.shape[0]
    Binv = np.eye(n)
    basis = np.arange(n)
    where = -np.ones(2 * n + 1, dtype=np.int64)
    for i in range(n):
        where[i] = i
    qbar = q.copy()
    leaving = tb.pivot(Binv, qbar, basis, where, -np.ones(n), r, 2 * n, np.empty(n))
    return Binv, qbar, basis, where, leaving


@njit(cache=True)
def copy_state(Binv, qbar, basis, where, B0, q0, b0, w0):
    """The state ``(Binv, qbar, basis, where)`` overwritten by ``(B0, q0, b0, w0)`` (a node's
    by a saved one, or a cache slot's by a node's)."""
    n = qbar.shape[0]
    for i in range(n):
        for j in range(n):
            Binv[i, j] = B0[i, j]
        qbar[i] = q0[i]
        basis[i] = b0[i]
    for i in range(where.shape[0]):
        where[i] = w0[i]


@njit(cache=True)
def restore(p, root, slot_of, parent, prow, leave, MT, c, Binv, qbar, basis, where, d,
            work, cB, cq, cb, cw, path):
    """Rebuild node ``p``'s state: copy its nearest cached ancestor (or the root) and
    replay the pivots down to ``p``. Returns ``(pivots replayed, path buffer)``."""
    n = qbar.shape[0]
    a, m = p, 0
    while a != 0 and slot_of[a] < 0:
        if m == path.shape[0]:
            path = hp.grow(path)
        path[m] = a
        m += 1
        a = parent[a]
    rB, rq, rb, rw = root
    s = slot_of[a]
    if a == 0:
        copy_state(Binv, qbar, basis, where, rB, rq, rb, rw)
    else:
        copy_state(Binv, qbar, basis, where, cB[s], cq[s], cb[s], cw[s])
    for k in range(m - 1, -1, -1):
        y = path[k]
        ey = tb.complement(leave[parent[y]], n)
        tb.entering_column(Binv, MT, c, ey, d, where)
        tb.pivot(Binv, qbar, basis, where, d, prow[y], ey, work)
    return m, path
