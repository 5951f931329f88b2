"""Contact reduction (Yamane & Nakamura 2008, section 5.1) and friction combination."""

import numpy as np
from numba import njit


def remove_close(P, reduction_distance, d=None):
    """Indices of the points kept when dropping points close to a kept one.

    Points are visited deepest first (smallest signed distance ``d``; detection order
    among equals), so every cluster is represented by its deepest point: dropping a
    deeper point than the one kept would let it penetrate unconstrained.

    Parameters
    ----------
    P : (k, 3) ndarray
        Contact points of one pair, in detection order [m].
    reduction_distance : float
        A point within this distance of an already kept point is dropped [m].
    d : (k,) ndarray, optional
        Signed distances of the points [m]; default all equal (detection order).

    Returns
    -------
    keep : list of int
        Increasing indices into ``P``.
    """
    P = np.ascontiguousarray(P, dtype=float)
    order = (np.arange(len(P)) if d is None
             else np.argsort(np.asarray(d, dtype=float), kind="stable"))
    return _remove_close(P, float(reduction_distance) ** 2, order).tolist()


@njit(cache=True)
def _remove_close(P, r2, order):
    """Greedy in ``order``: keep a point unless within sqrt(r2) of a kept one; sorted."""
    k = P.shape[0]
    dropped = np.zeros(k, dtype=np.bool_)
    kept = np.zeros(k, dtype=np.bool_)
    for a in range(k):
        i = order[a]
        if dropped[i]:
            continue
        kept[i] = True
        for j in range(k):
            dx, dy, dz = P[i, 0] - P[j, 0], P[i, 1] - P[j, 1], P[i, 2] - P[j, 2]
            if dx * dx + dy * dy + dz * dz <= r2:
                dropped[j] = True
    return np.flatnonzero(kept)


def support_vertices(xy, d, flat_tol=1e-9):
    """Indices of the points that can carry load: vertices of the lower convex hull of
    ``(x, y, d)`` (increasing order).

    For a rigid body moving a little, the gap of each of its points changes by an affine
    function of its position in the contact plane; a point on or above the lower hull of
    the others (over their 2-D hull) therefore cannot close its gap before them, and is
    dropped. On a flat patch (``d`` all equal, or affine in x, y) this is exactly the 2-D
    convex hull of the points; on a nearly flat sole it also keeps interior points that
    lie deeper than their neighbours.

    Parameters
    ----------
    xy : (k, 2) ndarray
        Coordinates in the contact plane [m].
    d : (k,) ndarray
        Signed distances [m].
    """
    from scipy.spatial import ConvexHull, QhullError

    xy = np.ascontiguousarray(xy, dtype=float)
    d = np.ascontiguousarray(d, dtype=float)
    if len(xy) <= 3 or np.ptp(d) <= flat_tol:
        return hull_vertices(xy)
    if len(xy) <= _SMALL:
        rim = hull_vertices(xy)  # kept in any case: only interior points are tested
        skip = np.zeros(len(xy), dtype=np.bool_)
        skip[rim] = True
        return sorted(set(np.flatnonzero(~_above_lower_hull(xy, d, 1e-12, skip)).tolist()))
    pts = np.column_stack([xy, d])
    try:
        hull = ConvexHull(pts)
    except QhullError:  # coplanar points: d is affine in (x, y)
        return hull_vertices(xy)
    lower = hull.equations[:, 2] < -1e-12  # outward normal pointing to smaller d
    keep = set(np.unique(hull.simplices[lower]).tolist())
    # The rim of the lower hull is the 2-D hull; keep it whole so the support polygon stays.
    keep.update(hull_vertices(xy))
    return sorted(keep)


_SMALL = 24  # up to this many points the direct test beats qhull (23: 50 vs 93 us)


@njit(cache=True)
def stable_order(key, tie):
    """Indices that sort the points by ``key`` (k,), then ``tie`` (k,), then index: numpy's
    stable order (``argsort(kind="stable")`` of ``tie``, then of ``key`` in that order) for
    finite keys. A bottom-up merge sort in plain loops: numba's own sorts compile for
    seconds each on a cold cache, and these patches are small."""
    k = key.shape[0]
    a = np.empty(k, dtype=np.int64)
    b = np.empty(k, dtype=np.int64)
    for i in range(k):
        a[i] = i
    width = 1
    while width < k:
        for lo in range(0, k, 2 * width):
            mid, hi = min(lo + width, k), min(lo + 2 * width, k)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                x, y = a[i], a[j]
                if key[y] < key[x] or (key[y] == key[x] and tie[y] < tie[x]):
                    b[o] = y
                    j += 1
                else:
                    b[o] = x
                    i += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
        a, b = b, a
        width *= 2
    return a


@njit(cache=True)
def hull_mark(xy, idx, tol):
    """(len(idx),) bool: which of the points ``idx`` are vertices of their own 2-D hull
    (all of them when there are at most two)."""
    m = idx.shape[0]
    mark = np.zeros(m, dtype=np.bool_)
    if m <= 2:
        for a in range(m):
            mark[a] = True
        return mark
    sub = np.empty((m, 2))
    x, y = np.empty(m), np.empty(m)
    for a in range(m):
        x[a], y[a] = xy[idx[a], 0], xy[idx[a], 1]
        sub[a, 0], sub[a, 1] = x[a], y[a]
    order = stable_order(x, y)  # by x, then y
    for c in _monotone_chain(sub, order, tol):
        mark[c] = True
    return mark


@njit(cache=True)
def _above_lower_hull(xy, d, tol, skip):
    """Points that lie on or above the lower hull of the others in (x, y, d).

    Points with ``skip`` set are not tested (reported False); ``skip`` holds at least the
    vertices of the 2-D hull of all points (with ``tol``), which no segment or triangle
    of the others covers: both callers keep that rim whole and pass it, so it is not
    computed twice.

    Point p is such a point when a segment or triangle of other points covers p's (x, y)
    with an interpolated d <= d_p + tol (Caratheodory: three points suffice in 2-D).
    Two cases are decided without a search: p at the deepest level (d within ``tol`` of
    the minimum) is covered exactly when it is not a vertex of the 2-D hull of that level
    (any other point would raise the interpolated d); any other p at least as high as
    every point is covered (it lies inside the 2-D hull). The others take the O(k^3)
    search of :func:`_covered` (the depth order it needs is sorted on the first): a
    flattened sole (most points at one depth) costs O(k log k) instead of O(k^4).
    """
    k = xy.shape[0]
    out = np.zeros(k, dtype=np.bool_)
    if k == 0:
        return out
    dmin, dmax = d.min(), d.max()
    n_level = 0
    for p in range(k):
        if d[p] <= dmin + tol:
            n_level += 1
    level = np.empty(n_level, dtype=np.int64)
    n_level = 0
    for p in range(k):
        if d[p] <= dmin + tol:
            level[n_level] = p
            n_level += 1
    rim_low = hull_mark(xy, level, tol)
    o = np.empty(0, dtype=np.int64)
    at = 0
    for p in range(k):
        low = d[p] <= dmin + tol
        if skip[p]:
            at += low
            continue
        if low:
            out[p] = not rim_low[at]
            at += 1
        elif d[p] + tol >= dmax:
            out[p] = True
        else:
            if o.shape[0] == 0:
                o = stable_order(d, d)
            out[p] = _covered(xy, d, tol, o, p)
    return out


@njit(cache=True)
def _covered(xy, d, tol, o, p):
    """Whether a segment or triangle of points other than ``p`` covers p's (x, y) with an
    interpolated d <= d_p + tol; ``o`` orders the points deepest first."""
    k = xy.shape[0]
    px, py = xy[p, 0], xy[p, 1]
    for ia in range(k):
        a = o[ia]
        if a == p:
            continue
        if d[a] > d[p] + tol:  # b and c are no deeper than a: no cover from here on
            return False
        for ib in range(ia + 1, k):
            b = o[ib]
            if b == p:
                continue
            # segment a-b through p?
            ex, ey = xy[b, 0] - xy[a, 0], xy[b, 1] - xy[a, 1]
            fx, fy = px - xy[a, 0], py - xy[a, 1]
            ll = ex * ex + ey * ey
            if ll > 0.0 and abs(ex * fy - ey * fx) <= tol * (ll ** 0.5):
                s = (ex * fx + ey * fy) / ll
                if -tol <= s <= 1.0 + tol and d[a] + s * (d[b] - d[a]) <= d[p] + tol:
                    return True
            for ic in range(ib + 1, k):
                c = o[ic]
                if c == p:
                    continue
                gx, gy = xy[c, 0] - xy[a, 0], xy[c, 1] - xy[a, 1]
                det = ex * gy - ey * gx
                if abs(det) <= tol * tol:
                    continue
                u = (fx * gy - fy * gx) / det
                w = (ex * fy - ey * fx) / det
                if u >= -tol and w >= -tol and u + w <= 1.0 + tol:
                    if d[a] + u * (d[b] - d[a]) + w * (d[c] - d[a]) <= d[p] + tol:
                        return True
    return False


def hull_vertices(xy, tol=1e-12):
    """Indices of the vertices of the 2-D convex hull of ``xy`` (k, 2), in increasing order.

    Andrew's monotone chain (compiled); points on hull edges and duplicates are not
    vertices. With fewer than 3 distinct points every distinct point is returned.
    """
    xy = np.ascontiguousarray(xy, dtype=float)
    if len(xy) == 0:
        return []
    order = np.lexsort((xy[:, 1], xy[:, 0]))  # by x, then y
    return sorted(set(_monotone_chain(xy, order, tol).tolist()))


@njit(cache=True)
def _chain(xy, order, tol, out):
    m = 0
    for i in order:
        while m >= 2:
            o, a = out[m - 2], out[m - 1]
            cr = ((xy[a, 0] - xy[o, 0]) * (xy[i, 1] - xy[o, 1])
                  - (xy[a, 1] - xy[o, 1]) * (xy[i, 0] - xy[o, 0]))
            if cr > tol:
                break
            m -= 1
        out[m] = i
        m += 1
    return m


@njit(cache=True)
def _monotone_chain(xy, order, tol):
    """Hull vertex indices (unsorted, maybe repeated) of the lower and upper chains."""
    k = order.shape[0]
    if k <= 2:
        return order.copy()
    lower = np.empty(k, dtype=np.int64)
    upper = np.empty(k, dtype=np.int64)
    nl = _chain(xy, order, tol, lower)
    nu = _chain(xy, np.ascontiguousarray(order[::-1]), tol, upper)  # one signature
    return np.concatenate((lower[: nl - 1], upper[: nu - 1]))


def spread_subset(xy, d, count):
    """At most ``count`` indices: the deepest point, then farthest-point sampling in xy,
    first over the points in contact, then over the others (see :func:`_spread`).
    Increasing order.

    Parameters
    ----------
    xy : (k, 2) ndarray
        Coordinates in the contact plane [m].
    d : (k,) ndarray
        Signed distances [m], flattened by the flat tolerance if any (the smallest is
        always kept).
    count : int
        Maximum number of points, >= 1.
    """
    xy = np.ascontiguousarray(xy, dtype=float)
    if len(xy) <= count:
        return list(range(len(xy)))
    return sorted(_spread(xy, np.ascontiguousarray(d, dtype=float), int(count)).tolist())


@njit(cache=True)
def _spread(xy, d, count):
    """``count`` indices, in the order chosen: the deepest point, then farthest-point
    sampling in xy (each next point the one farthest from those chosen, which keeps the
    support polygon's extent while bounding the LCP size), first among the points in
    contact (penetrating, or as deep as the deepest: ``d <= max(min d, 0)``, ``d``
    flattened by the flat tolerance), then among the rest.

    Points in contact come first because a dropped one is unconstrained: a limp Talos's
    foot turning at 15 rad/s had 79 vertices within its 40 mm search distance; sampled by
    extent alone, 7 of its 8 points were vertices 6-36 mm up, the two ends of the toe edge
    it stood on were dropped, and one sank 1.6 mm in the next 1 ms step.
    """
    k = xy.shape[0]
    first = int(np.argmin(d))
    near = np.empty(k, dtype=np.bool_)
    level = max(d[first], 0.0)
    for j in range(k):
        near[j] = d[j] <= level
    chosen = np.empty(count, dtype=np.int64)
    chosen[0] = first
    # squared distances to the nearest chosen point: ordered as the distances are,
    # without a square root per pair
    gap = np.empty(k)
    for j in range(k):
        dx, dy = xy[j, 0] - xy[first, 0], xy[j, 1] - xy[first, 1]
        gap[j] = dx * dx + dy * dy
    for m in range(1, count):
        i, best = 0, 0.0
        for j in range(k):  # the farthest point in contact not yet chosen ...
            if near[j] and gap[j] > best:
                i, best = j, gap[j]
        if best <= 0.0:  # ... else the farthest of all
            i = int(np.argmax(gap))
        chosen[m] = i
        for j in range(k):
            dx, dy = xy[j, 0] - xy[i, 0], xy[j, 1] - xy[i, 1]
            gap[j] = min(gap[j], dx * dx + dy * dy)
    return chosen


def combine_friction(mu_a, mu_b):
    """Friction of a pair from its two surfaces: ``2 mu_a mu_b / (mu_a + mu_b)``.

    Drake's rule: equal surfaces keep their value, a frictionless surface makes the pair
    frictionless, and the result never exceeds the larger of the two. 0 when both are 0.
    """
    if mu_a == mu_b:
        return float(mu_a)
    return 2.0 * mu_a * mu_b / (mu_a + mu_b)
