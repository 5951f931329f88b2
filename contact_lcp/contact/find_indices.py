"""FIND-INDICES (Drumwright, S4 Alg. 2): a linearly independent subset of constraint rows.

The no-slip model imposes ``T v+ = 0`` on the tangential rows of its contacts. With
redundant contacts (a foot with many points, a grasp) those rows are linearly dependent
and the equality block ``T K T'`` is singular, so the MLCP cannot be reduced to its normal
rows. FIND-INDICES walks the candidate rows in order and keeps a row only when the Gram
block of the kept rows stays non-singular, tested by appending it to an incremental
Cholesky factor (O(k^2) per candidate, k <= nv kept rows). A dropped row is a combination
of kept ones, so ``T_kept v = 0`` implies ``T_dropped v = 0``: the solution is unchanged.
The factor is built right-looking (each kept row updates every later candidate at once),
which gives the same selection as appending the candidates one by one to
:class:`~contact_lcp.lcp.cholesky.IncrementalCholesky`, in one compiled call
(:func:`select_rows`, also called by the no-slip step kernel).
"""

import numpy as np
from numba import njit

from contact_lcp.lcp.cholesky import IncrementalCholesky


@njit(cache=True)
def select_rows(G, candidates, singular_tol, limit):
    """The compiled FIND-INDICES: ``(kept, L)``.

    Parameters
    ----------
    G : (r, r) ndarray
        Symmetric PSD Gram matrix of the rows [1/kg].
    candidates : (c,) int64 ndarray
        Row indices of ``G`` in the order of preference (valid: not checked here).
    singular_tol : float
        See :func:`find_indices`.
    limit : int
        At most this many rows are kept.

    Returns
    -------
    kept : (s,) int64 ndarray
        Positions in ``candidates`` of the kept rows, increasing.
    L : (s, s) ndarray
        Lower Cholesky factor of ``G[candidates[kept], candidates[kept]]``.
    """
    c = candidates.shape[0]
    width = max(min(limit, c), 1)
    # Right-looking Cholesky over the candidates in order: ``C[:, j]`` is the column of
    # the j-th kept row for every candidate and ``d`` each candidate's pivot left after
    # the kept rows (its squared distance to their span, in the metric G). A dependent
    # candidate then costs one comparison; a kept one an O(c k) update.
    C = np.zeros((c, width))
    d = np.empty(c)
    for i in range(c):
        d[i] = G[candidates[i], candidates[i]]
    kept = np.empty(c, dtype=np.int64)
    s = 0
    for i in range(c):
        if s >= limit:
            break
        diag = G[candidates[i], candidates[i]]
        if not (diag > 0.0 and d[i] > singular_tol * diag):
            continue
        root = np.sqrt(d[i])
        C[i, s] = root
        gi = candidates[i]
        for r in range(i + 1, c):
            x = G[candidates[r], gi]
            for j in range(s):
                x -= C[r, j] * C[i, j]
            x /= root
            C[r, s] = x
            d[r] -= x * x
        kept[s] = i
        s += 1
    L = np.empty((s, s))
    for a in range(s):
        for b in range(s):
            L[a, b] = C[kept[a], b]
    return kept[:s].copy(), L


def find_indices(G, candidates, *, singular_tol=1e-10, max_rank=None):
    """Greedily select rows of ``candidates`` whose Gram block ``G[S, S]`` is non-singular.

    Parameters
    ----------
    G : (r, r) ndarray
        Symmetric PSD Gram matrix of the rows, ``J K J'`` with ``K = M^-1`` (the problem's
        Delassus matrix) [1/kg].
    candidates : (c,) sequence of int
        Row indices of ``G`` in the order of preference (S4: bilateral rows, then per
        contact its first and second tangent rows).
    singular_tol : float
        A row is dependent when its squared pivot is at most ``singular_tol`` times its
        diagonal entry (see :class:`contact_lcp.lcp.cholesky.IncrementalCholesky`).
    max_rank : int, optional
        Stop after this many rows (the number of generalized velocities: no more rows can
        be independent, S4 Lemma 1).

    Returns
    -------
    selected : (s,) int ndarray
        Kept row indices, in candidate order.
    chol : IncrementalCholesky
        Factor of ``G[selected, selected]`` (for the caller's solves).
    """
    candidates = np.asarray(candidates, dtype=np.int64).ravel()
    if candidates.size and (candidates.min() < 0 or candidates.max() >= G.shape[0]):
        raise ValueError(f"candidates: expected row indices in [0, {G.shape[0]}), got "
                         f"{candidates.min()}..{candidates.max()}")
    c = candidates.size
    limit = c if max_rank is None else min(int(max_rank), c)
    kept, L = select_rows(np.ascontiguousarray(G, dtype=float), candidates,
                          float(singular_tol), int(limit))
    k = kept.size
    chol = IncrementalCholesky(max(limit, 1), singular_tol)
    chol.L[:k, :k] = L
    chol.size = k
    return candidates[kept], chol
