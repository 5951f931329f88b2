"""Contact reduction (Yamane & Nakamura 2008, section 5.1) and friction combination."""

import numpy as np


def remove_close(P, reduction_distance):
    """Indices of the points kept when dropping points close to an earlier kept one.

    Parameters
    ----------
    P : (k, 3) ndarray
        Contact points of one pair, in detection order [m].
    reduction_distance : float
        A point within this distance of an already kept point is dropped [m].

    Returns
    -------
    keep : list of int
        Increasing indices into ``P`` (the first point of every cluster is kept).
    """
    P = np.asarray(P, dtype=float)
    diff = P[:, None, :] - P[None, :, :]
    close = np.einsum("ijk,ijk->ij", diff, diff) <= reduction_distance**2
    keep, dropped = [], np.zeros(len(P), dtype=bool)
    for i in range(len(P)):
        if not dropped[i]:
            keep.append(i)
            dropped |= close[i]
    return keep


def hull_vertices(xy, tol=1e-12):
    """Indices of the vertices of the 2-D convex hull of ``xy`` (k, 2), in increasing order.

    Andrew's monotone chain; points on hull edges and duplicates are not vertices. With
    fewer than 3 distinct points every distinct point is returned.
    """
    xy = np.asarray(xy, dtype=float)
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


def combine_friction(mu_a, mu_b):
    """Friction of a pair from its two surfaces: ``2 mu_a mu_b / (mu_a + mu_b)``.

    Drake's rule: equal surfaces keep their value, a frictionless surface makes the pair
    frictionless, and the result never exceeds the larger of the two. 0 when both are 0.
    """
    if mu_a == mu_b:
        return float(mu_a)
    return 2.0 * mu_a * mu_b / (mu_a + mu_b)
