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

from contact_lcp.collision.reduction import (_above_lower_hull, _remove_close, _spread, hull_mark,
                                             stable_order)


@njit(cache=True, inline="always")  # (its one caller compiles it: see closed_forms)
def _hull_keep(xy, idx):
    """The points ``idx`` (increasing) that are vertices of their 2-D hull, increasing."""
    mark = hull_mark(xy, idx, 1e-12)
    return marked(idx, mark, np.True_)


@njit(cache=True)
def marked(idx, mark, value):
    """The entries of ``idx`` whose ``mark`` is ``value``, in order."""
    n = 0
    for a in range(idx.shape[0]):
        if mark[a] == value:
            n += 1
    out = np.empty(n, dtype=np.int64)
    n = 0
    for a in range(idx.shape[0]):
        if mark[a] == value:
            out[n] = idx[a]
            n += 1
    return out


@njit(cache=True)
def _rows(xy, idx):
    """``xy[idx]`` (m, 2) as a new C array."""
    out = np.empty((idx.shape[0], 2))
    for a in range(idx.shape[0]):
        out[a, 0], out[a, 1] = xy[idx[a], 0], xy[idx[a], 1]
    return out


@njit(cache=True)
def _at(d, idx):
    """``d[idx]`` as a new array."""
    out = np.empty(idx.shape[0])
    for a in range(idx.shape[0]):
        out[a] = d[idx[a]]
    return out


@njit(cache=True)
def _sorted_take(keep, chosen):
    """``np.sort(keep[chosen])`` (an insertion sort: ``chosen`` holds a few points)."""
    out = np.empty(chosen.shape[0], dtype=np.int64)
    for a in range(chosen.shape[0]):
        v = keep[chosen[a]]
        j = a
        while j > 0 and out[j - 1] > v:
            out[j] = out[j - 1]
            j -= 1
        out[j] = v
    return out


@njit(cache=True)
def reduce_patch(P, d, r2, flat_tol, remove_interior, cap):
    """Indices (increasing) of the points ``P`` (k, 3) of one patch kept by the reduction
    (see the module notes), ``P`` in coordinates whose first two axes span the patch's
    plane; ``d`` (k,) their gaps (finite), flattened in place. Loops only, no array
    expressions or numba sorts: this runs on every step of a robot on its soles, and its
    compile is on the first step's path."""
    k = P.shape[0]
    if flat_tol > 0.0:
        dmin = d.min()
        for i in range(k):
            if d[i] <= dmin + flat_tol:
                d[i] = dmin
    keep = _remove_close(P, r2, stable_order(d, d))
    xy = np.empty((k, 2))
    for i in range(k):
        xy[i, 0], xy[i, 1] = P[i, 0], P[i, 1]
    if cap > 0 and remove_interior and keep.shape[0] > 2 * cap:
        keep = _sorted_take(keep, _spread(_rows(xy, keep), _at(d, keep), 2 * cap))
    if remove_interior and keep.shape[0] > 3:
        dk = _at(d, keep)
        if dk.max() - dk.min() <= 1e-9:
            keep = _hull_keep(xy, keep)
        else:
            rim = hull_mark(xy, keep, 1e-12)  # (the rim is kept whole: not tested)
            above = _above_lower_hull(_rows(xy, keep), dk, 1e-12, rim)
            keep = marked(keep, above, np.False_)
    if cap > 0 and keep.shape[0] > cap:
        keep = _sorted_take(keep, _spread(_rows(xy, keep), _at(d, keep), cap))
    return keep


@njit(cache=True, inline="always")  # (its one caller compiles it: see closed_forms)
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


@njit(cache=True, inline="always")  # (its one caller compiles it: see closed_forms)
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
            for c in range(3):
                P[n, c] = pp[keep[i], c]
            d[n] = dd[keep[i]]
            owner[n] = a
            n += 1
    return P[:n], d[:n], owner[:n]
