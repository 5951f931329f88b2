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


#: curved shapes whose points on the ground have a closed form (:func:`curved_on_ground`)
CURVED_NONE, CURVED_CYLINDER, CURVED_CAPSULE, CURVED_CONE, CURVED_ELLIPSOID = 0, 1, 2, 3, 4


@njit(cache=True)
def _rim(P, n, c, axis, e1, e2, r, segments, level_tol):
    """Append to ``P`` (from row ``n``) the lowest point of a circle of radius ``r``
    (normal ``axis``, in-plane axes ``e1``, ``e2``) and, when it is level to
    ``level_tol``, ``segments`` samples of it, as ``support._rim``; returns the new count."""
    az = axis[2]
    down = np.array([az * axis[0], az * axis[1], az * axis[2] - 1.0])
    norm = np.sqrt(down[0] ** 2 + down[1] ** 2 + down[2] ** 2)
    if norm > 1e-9:
        P[n] = c + r * down / norm
        n += 1
        if r * norm > level_tol:
            return n
    for k in range(segments):
        a = 2.0 * np.pi * k / segments
        P[n] = c + r * (np.cos(a) * e1 + np.sin(a) * e2)
        n += 1
    return n


@njit(cache=True)
def curved_on_ground(kind, size, X, h, eps, segments, r2, flat_tol, remove_interior, cap):
    """Reduced contact points ``(P, d)`` of one curved shape placed at ``X`` (4, 4) in W
    against the plane ``z = h``: the points of
    :func:`contact_lcp.collision.support.ground_points` within ``eps`` [m] (a rim's lowest
    point, and ``segments`` samples of a level rim; a capsule's end spheres; a cone's apex
    and rim; an ellipsoid's support point), halfway to the plane, reduced as
    :func:`polytopes_on_ground` reduces a patch. ``kind`` is a ``CURVED_*`` code;
    ``size`` (3,): radius and half length of a cylinder, capsule or cone (axis z, the
    cone's apex at +half length), or an ellipsoid's semi-axes."""
    R = X[:3, :3]
    t = X[:3, 3].copy()
    a = R[:, 2].copy()
    e1, e2 = R[:, 0].copy(), R[:, 1].copy()
    P = np.empty((2 * segments + 3, 3))
    n = 0
    if kind == CURVED_ELLIPSOID:
        dl = -R[2, :]  # -z in the shape's frame
        s = 0.0
        for i in range(3):
            s += size[i] ** 2 * dl[i] ** 2
        loc = np.empty(3)
        for i in range(3):
            loc[i] = size[i] ** 2 * dl[i] / np.sqrt(s)
        for i in range(3):  # R loc + t (R is a strided view of X)
            P[0, i] = R[i, 0] * loc[0] + R[i, 1] * loc[1] + R[i, 2] * loc[2] + t[i]
        n = 1
    elif kind == CURVED_CAPSULE:
        r, hl = size[0], size[1]
        for sgn in (1.0, -1.0):
            P[n] = t + sgn * hl * a
            P[n, 2] -= r
            n += 1
    elif kind == CURVED_CYLINDER:
        r, hl = size[0], size[1]
        # int64 counts: a literal one would compile _rim again
        n = _rim(P, np.int64(n), t + hl * a, a, e1, e2, r, segments, eps)
        n = _rim(P, np.int64(n), t - hl * a, a, e1, e2, r, segments, eps)
    elif kind == CURVED_CONE:
        r, hl = size[0], size[1]
        P[0] = t + hl * a
        n = _rim(P, np.int64(1), t - hl * a, a, e1, e2, r, segments, eps)
    m = 0
    d = np.empty(n)
    for i in range(n):
        dist = P[i, 2] - h
        if dist <= eps:
            P[m] = P[i]
            P[m, 2] -= 0.5 * dist
            d[m] = dist
            m += 1
    if m == 0:
        return np.zeros((0, 3)), np.zeros(0)
    keep, dd = _reduced(P[:m], d[:m], r2, flat_tol, remove_interior, cap)
    return P[:m][keep].copy(), dd[keep].copy()
