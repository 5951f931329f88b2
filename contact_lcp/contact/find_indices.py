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
:class:`~contact_lcp.lcp.cholesky.IncrementalCholesky` at a fraction of the Python cost.
"""

import numpy as np

from contact_lcp.lcp.cholesky import IncrementalCholesky


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
    # Right-looking Cholesky over the candidates in order: ``C[:, j]`` is the column of
    # the j-th kept row for every candidate and ``d`` each candidate's pivot left after
    # the kept rows (its squared distance to their span, in the metric G). A dependent
    # candidate then costs one comparison; a kept one an O(c k) update.
    Gc = G[np.ix_(candidates, candidates)]
    diag = np.diag(Gc).copy()
    d = diag.copy()
    C = np.zeros((c, max(limit, 1)))
    selected = []
    for i in range(c):
        if len(selected) >= limit:
            break
        if not (diag[i] > 0.0 and d[i] > singular_tol * diag[i]):
            continue
        k = len(selected)
        root = np.sqrt(d[i])
        C[i, k] = root
        rest = slice(i + 1, c)
        C[rest, k] = (Gc[rest, i] - C[rest, :k] @ C[i, :k]) / root
        d[rest] -= C[rest, k] ** 2
        selected.append(i)
    chol = IncrementalCholesky(max(limit, 1), singular_tol)
    k = len(selected)
    chol.L[:k, :k] = C[selected, :k]
    chol.size = k
    return candidates[selected], chol
