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

    xy = np.asarray(xy, dtype=float)
    d = np.asarray(d, dtype=float)
    if len(xy) <= 3 or np.ptp(d) <= flat_tol:
        return hull_vertices(xy)
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


def hull_vertices(xy, tol=1e-12):
    """Indices of the vertices of the 2-D convex hull of ``xy`` (k, 2), in increasing order.

    qhull when the points span an area, else Andrew's monotone chain (collinear or
    repeated points); points on hull edges and duplicates are not vertices. With fewer
    than 3 distinct points every distinct point is returned.
    """
    xy = np.asarray(xy, dtype=float)
    if len(xy) >= 4:
        from scipy.spatial import ConvexHull, QhullError

        try:
            return sorted(ConvexHull(xy).vertices.tolist())
        except QhullError:
            pass
    return _monotone_chain(xy, tol)


def _monotone_chain(xy, tol):
    order = sorted(range(len(xy)), key=lambda i: (xy[i, 0], xy[i, 1]))

    def cross(o, a, b):
        return (xy[a, 0] - xy[o, 0]) * (xy[b, 1] - xy[o, 1]) - (
            xy[a, 1] - xy[o, 1]) * (xy[b, 0] - xy[o, 0])

    def chain(idx):
        out = []
        for i in idx:
            while len(out) >= 2 and cross(out[-2], out[-1], i) <= tol:
                out.pop()
            out.append(i)
        return out

    lower, upper = chain(order), chain(order[::-1])
    hull = set(lower[:-1] + upper[:-1]) if len(order) > 2 else set(order)
    return sorted(hull)


def spread_subset(xy, d, count):
    """At most ``count`` indices: the deepest point, then farthest-point sampling in xy.

    Each next point is the one farthest (in the contact plane) from those already chosen,
    which keeps the support polygon's extent while bounding the LCP size. Increasing order.

    Parameters
    ----------
    xy : (k, 2) ndarray
        Coordinates in the contact plane [m].
    d : (k,) ndarray
        Signed distances [m] (the smallest is always kept).
    count : int
        Maximum number of points, >= 1.
    """
    xy = np.asarray(xy, dtype=float)
    k = len(xy)
    if k <= count:
        return list(range(k))
    chosen = [int(np.argmin(d))]
    gap = np.linalg.norm(xy - xy[chosen[0]], axis=1)
    while len(chosen) < count:
        i = int(np.argmax(gap))
        chosen.append(i)
        gap = np.minimum(gap, np.linalg.norm(xy - xy[i], axis=1))
    return sorted(chosen)


def combine_friction(mu_a, mu_b):
    """Friction of a pair from its two surfaces: ``2 mu_a mu_b / (mu_a + mu_b)``.

    Drake's rule: equal surfaces keep their value, a frictionless surface makes the pair
    frictionless, and the result never exceeds the larger of the two. 0 when both are 0.
    """
    if mu_a == mu_b:
        return float(mu_a)
    return 2.0 * mu_a * mu_b / (mu_a + mu_b)
