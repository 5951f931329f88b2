"""Polytopes against the ground plane in one compiled pass (the common case of robots'
feet and boxes), with the same point reduction as the general path.

For every candidate geometry given by its vertex block, the vertices within its search
distance of the plane ``z = h`` are its contact points (witness point halfway between the
vertex and the plane, normal +z). Then, per geometry, exactly as
:meth:`ContactDetector._reduce`: points within ``flat_tolerance`` of the deepest are
flattened to its depth; points within ``reduction_distance`` of a deeper kept point are
dropped; with ``remove_interior`` a large patch is thinned to twice the cap by
farthest-point sampling and only the points of the lower hull of ``(x, y, d)`` are kept;
at most ``cap`` well-spread points remain, those in contact first.
"""

import numpy as np
from numba import njit

from contact_lcp.collision.reduction import _above_lower_hull, _monotone_chain, _remove_close, _spread


@njit(cache=True)
def _hull_keep(xy, idx):
    """Sorted unique hull vertices of the points ``idx`` (2-D, by x then y)."""
    sub = xy[idx]
    by_y = np.argsort(np.ascontiguousarray(sub[:, 1]), kind="mergesort")  # one signature
    order = by_y[np.argsort(sub[by_y, 0], kind="mergesort")]  # by x, then y
    chain = _monotone_chain(sub, order, 1e-12)
    mark = np.zeros(idx.shape[0], dtype=np.bool_)
    for c in chain:
        mark[c] = True
    return idx[np.flatnonzero(mark)]


@njit(cache=True)
def reduce_patch(P, d, r2, flat_tol, remove_interior, cap):
    """Indices (increasing) of the points ``P`` (k, 3) of one patch kept by the reduction
    (see the module notes), ``P`` in coordinates whose first two axes span the patch's
    plane; ``d`` (k,) their gaps, flattened in place."""
    k = P.shape[0]
    if flat_tol > 0.0:
        dmin = d.min()
        for i in range(k):
            if d[i] <= dmin + flat_tol:
                d[i] = dmin
    keep = _remove_close(P, r2, np.argsort(d, kind="mergesort"))
    xy = np.ascontiguousarray(P[:, :2])
    if cap > 0 and remove_interior and keep.shape[0] > 2 * cap:
        keep = np.sort(keep[_spread(np.ascontiguousarray(xy[keep]), d[keep], 2 * cap)])
    if remove_interior and keep.shape[0] > 3:
        dk = d[keep]
        if dk.max() - dk.min() <= 1e-9:
            keep = _hull_keep(xy, keep)
        else:
            rim = _hull_keep(xy, keep)
            skip = np.zeros(keep.shape[0], dtype=np.bool_)
            for i in range(keep.shape[0]):
                for r in rim:
                    if keep[i] == r:
                        skip[i] = True
            above = _above_lower_hull(np.ascontiguousarray(xy[keep]), dk, 1e-12, skip)
            keep = keep[~above]
    if cap > 0 and keep.shape[0] > cap:
        keep = np.sort(keep[_spread(np.ascontiguousarray(xy[keep]), d[keep], cap)])
    return keep


@njit(cache=True)
def _reduced(P, d, r2, flat_tol, remove_interior, cap):
    """One geometry's points ``P`` (m, 3) on the ground with gaps ``d`` (m,), reduced as
    :meth:`ContactDetector._reduce` reduces a face patch: the indices kept (increasing)
    and the gaps with those within ``flat_tol`` of the deepest flattened to it."""
    keep = reduce_patch(P.copy(), d.copy(), r2, flat_tol, remove_interior, cap)
    dd = d.copy()
    if flat_tol > 0.0:
        dmin = dd.min()
        for i in range(dd.shape[0]):
            if dd[i] <= dmin + flat_tol:
                dd[i] = dmin
    return keep, dd


@njit(cache=True)
def polytopes_on_ground(verts, start, geoms, X, h, eps, r2, flat_tol, remove_interior, cap):
    """Reduced contact points of polytopes against the plane ``z = h``.

    Parameters
    ----------
    verts : (V, 3) ndarray
        Local vertices of every geometry, concatenated; geometry g's are
        ``verts[start[g]:start[g + 1]]``.
    start : (G + 1,) int ndarray
    geoms : (m,) int ndarray
        Candidate geometries.
    X : (m, 4, 4) ndarray
        Their placements in W.
    h : float
        Ground height [m].
    eps : (m,) ndarray
        Search distance of each candidate [m].
    r2, flat_tol : float
        Squared reduction distance [m^2]; flat tolerance [m].
    remove_interior : bool
    cap : int
        Points per pair at most (0: no cap).

    Returns
    -------
    P : (n, 3) ndarray
        Contact points (halfway between vertex and plane) [m].
    d : (n,) ndarray
        Signed distances [m].
    owner : (n,) int ndarray
        Index into ``geoms`` of each point's geometry (non-decreasing).
    """
    total = 0
    for a in range(geoms.shape[0]):
        total += start[geoms[a] + 1] - start[geoms[a]]
    P = np.empty((total, 3))
    d = np.empty(total)
    owner = np.empty(total, dtype=np.int64)
    n = 0
    for a in range(geoms.shape[0]):
        g = geoms[a]
        m = 0
        base = n
        for v in range(start[g], start[g + 1]):
            x = X[a, 0, 0] * verts[v, 0] + X[a, 0, 1] * verts[v, 1] + X[a, 0, 2] * verts[v, 2] + X[a, 0, 3]
            y = X[a, 1, 0] * verts[v, 0] + X[a, 1, 1] * verts[v, 1] + X[a, 1, 2] * verts[v, 2] + X[a, 1, 3]
            z = X[a, 2, 0] * verts[v, 0] + X[a, 2, 1] * verts[v, 1] + X[a, 2, 2] * verts[v, 2] + X[a, 2, 3]
            dist = z - h
            if dist <= eps[a]:
                P[base + m, 0], P[base + m, 1], P[base + m, 2] = x, y, z - 0.5 * dist
                d[base + m] = dist
                m += 1
        if m == 0:
            continue
        keep, dd = _reduced(P[base:base + m], d[base:base + m], r2, flat_tol,
                            remove_interior, cap)
        pp = P[base:base + m].copy()
        for i in range(keep.shape[0]):
            P[n, :] = pp[keep[i]]
            d[n] = dd[keep[i]]
            owner[n] = a
            n += 1
    return P[:n], d[:n], owner[:n]
