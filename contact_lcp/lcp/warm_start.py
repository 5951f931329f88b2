"""The warm-start basis of the pivot methods: a principal pivot on a block of ``z``.

Variables and state arrays as in :mod:`contact_lcp.lcp.tableau`.
"""

import numpy as np
import scipy.linalg
from numba import njit

from contact_lcp.exceptions import InvalidProblem


def _block_condition(A):
    """1-norm condition number of a small square block (inf when singular)."""
    try:
        X = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return np.inf, None
    return np.abs(A).sum(axis=0).max() * np.abs(X).sum(axis=0).max(), X


@njit(cache=True)
def _fill_block_pivot(Binv, M, kept, X):
    """Binv of the basis with ``z_kept`` basic in rows ``kept``, from ``X = M_KK^-1``.

    ``B = [[-M_KK, 0], [-M_NK, I]]`` (rows and columns K, N) has
    ``B^-1 = [[-M_KK^-1, 0], [-M_NK M_KK^-1, I]]``.
    """
    n = Binv.shape[0]
    nk = kept.shape[0]
    in_k = np.zeros(n, dtype=np.bool_)
    for a in range(nk):
        in_k[kept[a]] = True
    for b in range(nk):  # rows K: -X
        kb = kept[b]
        for a in range(nk):
            Binv[kb, kept[a]] = -X[b, a]
    acc = np.empty(nk)
    for i in range(n):  # rows N: -M_NK X, along the rows of X (the same sums, in order)
        if in_k[i]:
            continue
        acc[:] = 0.0
        for b in range(nk):
            m = M[i, kept[b]]
            for a in range(nk):
                acc[a] += m * X[b, a]
        for a in range(nk):
            Binv[i, kept[a]] = -acc[a]


def principal_pivot_basis(M, q, indices, singular_tol):
    """Basis with ``z_i`` basic in row ``i`` for ``i`` in ``indices`` (a block pivot).

    Returns ``(Binv, basis, where, kept, dropped)``. A numerically singular block is
    reduced to a well-conditioned subset (:func:`well_conditioned_block`). Only the
    |K| x |K| block is inverted (the loaded contacts of a two-step solve: a handful).
    """
    kept, dropped, X = well_conditioned_block(M, indices, singular_tol)
    Binv, basis, where = _block_pivot_state(M, kept, X)
    return Binv, basis, where, kept, dropped


def well_conditioned_block(M, indices, singular_tol):
    """The warm start's block: ``(kept, dropped, X)`` with ``X = M_KK^-1``.

    ``indices`` (sorted and deduplicated) whose block has a 1-norm condition number above
    ``1 / singular_tol`` are reduced to a well-conditioned subset chosen by a
    rank-revealing QR with column pivoting: its numerical rank's leading columns, and if
    their block is still ill conditioned, the longest leading run of the QR's order (its
    most independent columns first) whose block is well conditioned, found by bisection
    (about log2(rank) inversions, where dropping one column at a time would invert a
    pile's block of a thousand columns hundreds of times: minutes).
    """
    n = M.shape[0]
    idx = np.unique(np.asarray(indices, dtype=np.int64))
    if idx.size and (idx[0] < 0 or idx[-1] >= n):
        raise InvalidProblem(f"initial_basis must hold indices in [0, {n}); received {idx}")
    kept = idx
    cond, X = _block_condition(M[np.ix_(kept, kept)]) if kept.size else (1.0, None)
    if cond > 1.0 / singular_tol:
        R, perm = scipy.linalg.qr(M[np.ix_(idx, idx)], mode="r", pivoting=True)
        diag = np.abs(np.diag(R))
        rank = int(np.sum(diag > singular_tol * diag[0])) if diag.size and diag[0] > 0 else 0
        order = idx[perm[:rank]]
        kept = np.sort(order)
        cond, X = _block_condition(M[np.ix_(kept, kept)]) if kept.size else (1.0, None)
        if cond > 1.0 / singular_tol:
            good, bad, good_X = 0, rank, None  # order[:good] passes, order[:bad] fails
            while bad - good > 1:
                mid = (good + bad) // 2
                trial = np.sort(order[:mid])
                cond, X = _block_condition(M[np.ix_(trial, trial)])
                if cond <= 1.0 / singular_tol:
                    good, good_X = mid, X
                else:
                    bad = mid
            kept, X = np.sort(order[:good]), good_X
    X = np.zeros((0, 0)) if X is None else np.ascontiguousarray(X)
    dropped = idx[~np.isin(idx, kept)] if kept.size < idx.size else idx[:0]
    return kept, dropped, X


@njit(cache=True)
def _block_pivot_state(M, kept, X):
    """The slack basis with ``z_kept`` pivoted in: ``Binv, basis, where`` (one pass)."""
    n = M.shape[0]
    Binv = np.eye(n)
    basis = np.arange(n)
    where = -np.ones(2 * n + 1, dtype=np.int64)
    for i in range(n):
        where[i] = i
    if kept.shape[0]:
        _fill_block_pivot(Binv, M, kept, X)
        for a in range(kept.shape[0]):
            i = kept[a]
            basis[i] = n + i
            where[i] = -1
            where[n + i] = i
    return Binv, basis, where


@njit(cache=True)
def warm_start_vectors(M, q, Binv, kept):
    """Covering vector ``c = B 1`` (so the z0 column is -1 in basis coordinates) and
    ``qbar = B^-1 q`` of a block-pivoted basis, in one pass."""
    n = q.shape[0]
    c = np.ones(n)
    for a in range(kept.shape[0]):
        c[kept[a]] = 0.0
    for i in range(n):
        for a in range(kept.shape[0]):
            c[i] -= M[i, kept[a]]
    qbar = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += Binv[i, j] * q[j]
        qbar[i] = s
    return c, qbar
