"""Face-to-face contact patches of two convex polytopes by polygon clipping.

coal's contact patch needs the shapes to overlap; two boxes of a tower that rest exactly on
each other (gap 0 to a few micrometres) then come back with one point one step and eight
the next, and the upper box tips. For two polytopes whose closest features are faces
(a box on a box, a foot on a block), the patch is computed here instead: each shape's
support face towards the other (vertices within ``face_tol`` of its extreme along the
normal), both projected on the contact plane, the first clipped by the second
(Sutherland-Hodgman, both convex); the caller measures each clipped vertex's gap along
the normal through both shapes. The normal is the face normal of largest separation (a
separating-axis test over both shapes' faces), not the closest-point normal, which is
arbitrary when two equal boxes touch along coincident edges.
"""

import numpy as np


def ccw_hull(P):
    """(m, 2) convex hull of points P (k, 2), counter-clockwise, no repeated or collinear
    vertices (Andrew's monotone chain); fewer than 3 rows when the points are collinear."""
    P = np.round(np.asarray(P, dtype=float), 12)
    P = P[np.lexsort((P[:, 1], P[:, 0]))]  # by x, then y
    if len(P) > 1:  # drop repeated points
        P = P[np.concatenate([[True], np.any(P[1:] != P[:-1], axis=1)])]
    if len(P) < 3:
        return P

    def chain(points):
        out = []
        for p in points:
            while len(out) >= 2 and _cross2(out[-2], out[-1], p) <= 1e-18:
                out.pop()
            out.append(p)
        return out

    lower, upper = chain(P), chain(P[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _cross2(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def clip_convex(subject, clip, tol=1e-9):
    """Intersection of two convex CCW polygons (m, 2) and (c, 2); (r, 2), maybe empty.

    A subject vertex within ``tol`` [m] outside a clip edge counts as inside, so that
    coincident polygons (two equal boxes stacked) come back whole, not split at round-off.
    """
    out = [np.asarray(p, dtype=float) for p in subject]
    c = len(clip)
    for e in range(c):
        a, b = clip[e], clip[(e + 1) % c]
        slack = -tol * np.hypot(b[0] - a[0], b[1] - a[1])  # cross = distance * |b - a|
        inp, out = out, []
        if not inp:
            break
        prev = inp[-1]
        prev_in = _cross2(a, b, prev) >= slack
        for cur in inp:
            cur_in = _cross2(a, b, cur) >= slack
            if cur_in != prev_in:
                d1, d2 = _cross2(a, b, prev), _cross2(a, b, cur)
                out.append(prev + (cur - prev) * (d1 / (d1 - d2)))
            if cur_in:
                out.append(cur)
            prev, prev_in = cur, cur_in
    return np.array(out).reshape(-1, 2)


def best_face_normal(VA, HA, VB, HB):
    """The face normal (from A to B) along which A and B are the most separated.

    Parameters
    ----------
    VA, VB : (a, 3), (b, 3) ndarray
        Vertices in W [m].
    HA, HB : tuple of ((fa, 3), (fa,)) and ((fb, 3), (fb,)) ndarray
        Each shape's faces ``{x : N x <= c}`` in W (unit outward normals N).

    Returns
    -------
    n : (3,) ndarray
        Unit normal from A to B: an outward face normal of A, or minus one of B.
    separation : float
        The gap between A and B along it [m] (negative: overlap). Equal to the distance
        (or the penetration depth) when the closest features include a face; smaller
        for edge-edge contacts.
    """
    NA, cA = HA
    NB, cB = HB
    sepA = (NA @ VB.T).min(axis=1) - cA
    sepB = (NB @ VA.T).min(axis=1) - cB
    a, b = int(np.argmax(sepA)), int(np.argmax(sepB))
    if sepA[a] >= sepB[b]:
        return NA[a], float(sepA[a])
    return -NB[b], float(sepB[b])


def face_patch(VA, VB, n, face_tol):
    """Candidate contact points of polytope A (below) and B along the unit normal ``n``
    from A to B: the vertices of the clipped support faces, lifted to the plane halfway
    between the faces. None when either support face is an edge or a vertex (no area).

    Parameters
    ----------
    VA, VB : (a, 3), (b, 3) ndarray
        Vertices in W [m].
    n : (3,) ndarray
    face_tol : float
        Vertices within this of a shape's extreme along n form its support face [m].
    """
    hA, hB = VA @ n, VB @ n
    FA = VA[hA >= hA.max() - face_tol]
    FB = VB[hB <= hB.min() + face_tol]
    if len(FA) < 3 or len(FB) < 3:
        return None
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = ref - (ref @ n) * n
    t1 /= np.linalg.norm(t1)
    t2 = np.array([n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2],
                   n[0] * t1[1] - n[1] * t1[0]])  # n x t1
    T = np.column_stack([t1, t2])
    polyA, polyB = ccw_hull(FA @ T), ccw_hull(FB @ T)
    if len(polyA) < 3 or len(polyB) < 3:
        return None
    xy = clip_convex(polyA, polyB)
    if len(xy) == 0:
        return None
    # pull the vertices 1e-7 of the way to the centroid: a ray along n through a corner
    # of both faces would graze the side faces and be measured at round-off
    c = xy.mean(axis=0)
    xy = c + (1.0 - 1e-7) * (xy - c)
    mid = 0.5 * (hA.max() + hB.min())
    return xy @ T.T + mid * n
