"""Box against box in closed form, one compiled pass for all such pairs.

Through coal a box pair costs a collision query, then either the face clip of
:mod:`contact_lcp.collision.clip` or coal's contact patch, then the reduction: tens of
microseconds of Python per pair, and a gripper's ridges give dozens of pairs (the grasp
scene: ~1 ms of its ~1.3 ms step). Here, for two oriented boxes A and B (normal from A
to B):

1. **Separating axes.** The 15 axes of two boxes: 3 face normals of each and the 9 cross
   products of their edge directions. The separation along a unit axis ``n`` oriented
   from A to B is ``n.(c_B - c_A) - r_A(n) - r_B(n)`` with ``r(n) = sum_i h_i |n.e_i|``
   (half sizes ``h``, axes ``e``). The largest separation is the penetration depth when
   the boxes overlap and a lower bound on their distance otherwise: above the search
   distance the pair has no contact. The face axis of largest separation (A's faces
   first on a tie, as :func:`~contact_lcp.collision.clip.best_face_normal`) is the
   normal unless an edge-edge axis separates more by over 1 um.
2. **Contact points.** The support features of both boxes along the normal (vertices
   within the search distance, at least 1 um, of each box's extreme towards the other),
   in the contact plane (:func:`feature_patch`): two faces are clipped one by the other
   exactly as the general path's
   :func:`~contact_lcp.collision.clip_kernel.face_patch_gaps` does (the same hull, clip
   and order of points, in fixed buffers: its 3-vector products are BLAS calls and its
   arrays allocations, ~3 us a pair); an edge is clipped by a face (2 points); a vertex
   is kept when it projects inside a face; two edges give their crossing point. The
   order matters: the pyramid model's answer on symmetric contacts depends on it, and
   the cracked ramp's box tumbles or not with it (``test_contact_facet_set.py``).
3. **Gaps** of those points measured along the normal through both boxes, each point
   moved halfway between them; points beyond the search distance are dropped.
4. **Reduction** of each pair's points as the compiled ground pass and the general path's
   face patches do (:func:`~contact_lcp.collision.ground.reduce_patch` in the patch's
   plane): merging within the reduction distance, hull vertices, the cap.

A pair whose features do not overlap in the contact plane (two parallel edges, a vertex
beside a face) is returned as not handled and goes to the general path. Tested against
that path on random placements in ``test_collision_boxes.py`` (same normal and depth, the
same patch). Frames follow :func:`~contact_lcp.collision.contact_point.tangent_basis`.
"""

import numpy as np
from numba import njit

from contact_lcp.collision.clip_kernel import _lift, deepest_points, hull_into
from contact_lcp.collision.ground import reduce_patch
from contact_lcp.collision.spheres import tangent_frame

#: an edge-edge axis is the normal when it separates more than the best face axis by this [m]
EDGE_MARGIN = 1e-6


@njit(cache=True)
def box_polytope(X, half):
    """Vertices (8, 3) [m] and faces ``{x : N x <= c}`` ((6, 3), (6,)) in W of the box of
    half sizes ``half`` (3,) [m] placed at ``X`` (4, 4); the orders of
    :func:`~contact_lcp.collision.support.local_vertices` and ``local_halfspaces``."""
    V = np.empty((8, 3))
    v = 0
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            for sz in (-1.0, 1.0):
                for r in range(3):
                    V[v, r] = (X[r, 3] + sx * half[0] * X[r, 0] + sy * half[1] * X[r, 1]
                               + sz * half[2] * X[r, 2])
                v += 1
    N = np.empty((6, 3))
    c = np.empty(6)
    for f in range(6):
        sign = 1.0 if f < 3 else -1.0
        a = f % 3
        acc = 0.0
        for r in range(3):
            N[f, r] = sign * X[r, a]
            acc += N[f, r] * X[r, 3]
        c[f] = acc + half[a]
    return V, N, c


@njit(cache=True)
def _radius(X, half, n):
    """``sum_i h_i |n . e_i|``: the box's half extent along ``n`` [m]."""
    r = 0.0
    for a in range(3):
        r += half[a] * abs(n[0] * X[0, a] + n[1] * X[1, a] + n[2] * X[2, a])
    return r


@njit(cache=True)
def separating_axes(XA, hA, XB, hB, stop=np.inf):
    """``(face_n, face_sep, edge_n, edge_sep, ea, eb)`` of the module notes, step 1.

    ``face_n`` (3,) is the face axis of largest separation ``face_sep`` [m] (from A to
    B), ``edge_n`` the edge-edge axis of largest separation ``edge_sep`` (``-inf`` when
    every pair of edges is parallel), ``ea``, ``eb`` the edge directions (box axes) that
    give it. The search ends at the first axis that separates the boxes by more than
    ``stop`` [m] (then reported as ``face_sep`` or ``edge_sep``: the pair is out of reach).
    """
    d = np.empty(3)
    for r in range(3):
        d[r] = XB[r, 3] - XA[r, 3]
    face_n = np.zeros(3)
    face_sep = -np.inf
    n = np.empty(3)
    for box in range(2):  # A's faces then B's: A wins ties, as best_face_normal
        X = XA if box == 0 else XB
        for f in range(6):
            sign = 1.0 if f < 3 else -1.0
            sign = sign if box == 0 else -sign  # minus B's outward normal: from A to B
            for r in range(3):
                n[r] = sign * X[r, f % 3]
            sep = n[0] * d[0] + n[1] * d[1] + n[2] * d[2] - _radius(XA, hA, n) - _radius(XB, hB, n)
            if sep > face_sep:
                face_sep = sep
                face_n[0], face_n[1], face_n[2] = n[0], n[1], n[2]
                if sep > stop:
                    return face_n, face_sep, np.zeros(3), -np.inf, -1, -1
    edge_n = np.zeros(3)
    edge_sep = -np.inf
    ea = eb = -1
    for a in range(3):
        for b in range(3):
            n[0] = XA[1, a] * XB[2, b] - XA[2, a] * XB[1, b]
            n[1] = XA[2, a] * XB[0, b] - XA[0, a] * XB[2, b]
            n[2] = XA[0, a] * XB[1, b] - XA[1, a] * XB[0, b]
            s = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            if s < 1e-6:  # parallel edges: the face axes cover it
                continue
            proj = (n[0] * d[0] + n[1] * d[1] + n[2] * d[2]) / s
            sign = 1.0 if proj >= 0.0 else -1.0
            for r in range(3):
                n[r] *= sign / s
            sep = abs(proj) - _radius(XA, hA, n) - _radius(XB, hB, n)
            if sep > edge_sep:
                edge_sep = sep
                edge_n[0], edge_n[1], edge_n[2] = n[0], n[1], n[2]
                ea, eb = a, b
                if sep > stop:
                    return face_n, face_sep, edge_n, edge_sep, ea, eb
    return face_n, face_sep, edge_n, edge_sep, ea, eb


@njit(cache=True)
def _plane(n):
    """Unit tangents (t1, t2) of :func:`~contact_lcp.collision.contact_point.tangent_basis`."""
    R = np.empty((3, 3))
    tangent_frame(n, R)
    return R[:, 1].copy(), R[:, 2].copy()


@njit(cache=True)
def _clip_segment(a, b, poly):
    """``(ok, a', b')``: the part of the 2-d segment ``a b`` inside the convex CCW polygon
    ``poly`` (Cyrus-Beck); ``ok`` False when none is."""
    t0, t1 = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    m = poly.shape[0]
    for e in range(m):
        px, py = poly[e]
        qx, qy = poly[(e + 1) % m]
        ex, ey = qx - px, qy - py
        slack = 1e-9 * np.hypot(ex, ey)
        fa = ex * (a[1] - py) - ey * (a[0] - px) + slack  # >= 0 inside (left of the edge)
        fd = ex * dy - ey * dx
        if abs(fd) < 1e-300:
            if fa < 0.0:
                return False, a, b
            continue
        t = -fa / fd
        if fd > 0.0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False, a, b
    return True, a + t0 * (b - a), a + t1 * (b - a)


@njit(cache=True)
def _copy_rows(dst, src, n):
    """``dst[:n] = src[:n]`` of two (m, 2) arrays in loops: a slice assignment compiles
    numba's shape-mismatch message, seconds on a cold cache (module notes of
    :mod:`contact_lcp.collision.closed_forms`)."""
    for i in range(n):
        dst[i, 0] = src[i, 0]
        dst[i, 1] = src[i, 1]


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _clip_into(S, ns, C, nc, out):
    """:func:`~contact_lcp.collision.clip_kernel._clip` (tolerance 1e-9) of the first
    ``ns`` rows of ``S`` by the first ``nc`` of ``C``, the same arithmetic in fixed
    buffers; the result in ``out``, its count returned."""
    cur = np.empty((2 * ns + 2 * nc + 2, 2))
    buf = np.empty_like(cur)
    _copy_rows(cur, S, ns)
    n_out = ns
    for e in range(nc):
        if n_out == 0:
            break
        ax, ay = C[e, 0], C[e, 1]
        bx, by = C[(e + 1) % nc, 0], C[(e + 1) % nc, 1]
        slack = -1e-9 * np.hypot(bx - ax, by - ay)
        m = 0
        px, py = cur[n_out - 1, 0], cur[n_out - 1, 1]
        d1 = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
        for i in range(n_out):
            cx, cy = cur[i, 0], cur[i, 1]
            d2 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
            if (d2 >= slack) != (d1 >= slack):
                t = d1 / (d1 - d2)
                buf[m, 0], buf[m, 1] = px + (cx - px) * t, py + (cy - py) * t
                m += 1
            if d2 >= slack:
                buf[m, 0], buf[m, 1] = cx, cy
                m += 1
            px, py, d1 = cx, cy, d2
        _copy_rows(cur, buf, m)
        n_out = m
    _copy_rows(out, cur, n_out)
    return n_out


@njit(cache=True)
def _ray(N, c, x, n):
    """:func:`~contact_lcp.collision.clip_kernel._intervals` (tolerance 1e-9) of one point:
    ``(s_in, s_out, hit)`` of the line ``x + s n`` through ``{y : N y <= c}``."""
    s_in, s_out, hit = -np.inf, np.inf, True
    for f in range(N.shape[0]):
        den = N[f, 0] * n[0] + N[f, 1] * n[1] + N[f, 2] * n[2]
        num = c[f] - (N[f, 0] * x[0] + N[f, 1] * x[1] + N[f, 2] * x[2])
        if den > 1e-12:
            s_out = min(s_out, num / den)
        elif den < -1e-12:
            s_in = max(s_in, num / den)
        elif num < -1e-9:
            hit = False
    return s_in, s_out, hit and s_in <= s_out + 1e-9


@njit(cache=True)
def feature_patch(VA, NA, cA, VB, NB, cB, n, tol):
    """Contact points of two boxes along the normal ``n`` (from A to B) from their support
    features (vertices within ``tol`` of each box's extreme towards the other).

    Two faces: the first clipped by the second in the contact plane, as
    :func:`~contact_lcp.collision.clip_kernel.face_patch_gaps` (the same rounding, hull and
    Sutherland-Hodgman clip, in scalar loops). A face and an edge: the edge clipped by the
    face (2 points); a face and a vertex: the vertex if it projects inside the face; two
    edges: their crossing point; otherwise the vertex. Each point lies halfway between the
    boxes along ``n`` and its gap is measured along ``n`` through both boxes. Returns
    ``(X, gaps, measured)`` as ``face_patch_gaps``; no point when the features do not
    overlap in the contact plane.
    """
    hA = np.empty(VA.shape[0])
    hB = np.empty(VB.shape[0])
    for i in range(VA.shape[0]):
        hA[i] = _dot(VA[i], n)
    for i in range(VB.shape[0]):
        hB[i] = _dot(VB[i], n)
    topA, botB = hA.max(), hB.min()
    sA = np.flatnonzero(hA >= topA - tol)
    sB = np.flatnonzero(hB <= botB + tol)
    t1, t2 = _plane(n)
    FA = np.empty((sA.size, 2))
    for k in range(sA.size):  # rounded as face_patch_gaps (a steady hull)
        FA[k, 0], FA[k, 1] = round(_dot(VA[sA[k]], t1), 12), round(_dot(VA[sA[k]], t2), 12)
    FB = np.empty((sB.size, 2))
    for k in range(sB.size):
        FB[k, 0], FB[k, 1] = round(_dot(VB[sB[k]], t1), 12), round(_dot(VB[sB[k]], t2), 12)
    xy = np.empty((2 * (sA.size + sB.size) + 2, 2))
    r = 0
    if sA.size >= 3 and sB.size >= 3:  # two faces
        polyA = np.empty((2 * sA.size, 2))
        polyB = np.empty((2 * sB.size, 2))
        na = hull_into(FA, sA.size, polyA, 1e-18)
        nb = hull_into(FB, sB.size, polyB, 1e-18)
        if na >= 3 and nb >= 3:
            r = _clip_into(polyA, na, polyB, nb, xy)
    elif sA.size >= 3 or sB.size >= 3:  # a face and an edge or a vertex
        face = FA if sA.size >= 3 else FB
        poly = np.empty((2 * face.shape[0], 2))
        poly = poly[:hull_into(face, face.shape[0], poly, 1e-18)]
        other = FB if sA.size >= 3 else FA
        if poly.shape[0] >= 3:
            ok, a, b = _clip_segment(other[0], other[other.shape[0] - 1], poly)
            if ok:
                xy[0, 0], xy[0, 1], xy[1, 0], xy[1, 1] = a[0], a[1], b[0], b[1]
                r = 2 if other.shape[0] == 2 else 1
    elif sA.size == 2 and sB.size == 2:  # two edges: where they cross
        d1 = FA[1] - FA[0]
        d2 = FB[1] - FB[0]
        den = d1[0] * d2[1] - d1[1] * d2[0]
        scale = np.hypot(d1[0], d1[1]) * np.hypot(d2[0], d2[1])
        if abs(den) > 1e-9 * scale:
            w = FB[0] - FA[0]
            s = (w[0] * d2[1] - w[1] * d2[0]) / den
            t = (w[0] * d1[1] - w[1] * d1[0]) / den
            if -1e-9 <= s <= 1.0 + 1e-9 and -1e-9 <= t <= 1.0 + 1e-9:
                xy[0, 0], xy[0, 1] = FA[0, 0] + s * d1[0], FA[0, 1] + s * d1[1]
                r = 1
    else:  # a vertex against an edge or a vertex: the vertex
        V = FA if sA.size == 1 else FB
        xy[0, 0], xy[0, 1] = V[0, 0], V[0, 1]
        r = 1
    if r == 0:
        return np.empty((0, 3)), np.zeros(0), np.zeros(0, dtype=np.bool_)
    cx = 0.0
    cy = 0.0
    for i in range(r):
        cx += xy[i, 0]
        cy += xy[i, 1]
    cx /= r
    cy /= r
    mid = 0.5 * (topA + botB)
    X = _lift(xy[:r], cx, cy, t1, t2, n, mid)  # inset as face_patch_gaps: rays through corners hit
    gaps = np.empty(r)
    measured = np.empty(r, dtype=np.bool_)
    patch_min = np.inf
    for i in range(r):
        _, bi, hi = _ray(NA, cA, X[i], n)
        aj, _, hj = _ray(NB, cB, X[i], n)
        gaps[i] = aj - bi
        measured[i] = hi and hj
        if measured[i]:
            m = 0.5 * (aj + bi)
            for j in range(3):
                X[i, j] += m * n[j]
            patch_min = min(patch_min, gaps[i])
    if sA.size >= 3 or sB.size >= 3:  # a hull of vertices at several heights
        Xd, gd = deepest_points(VA, NA, cA, VB, NB, cB, n, t1, t2, cx, cy, mid, patch_min)
        if gd.size:
            return (np.concatenate((X, Xd)), np.concatenate((gaps, gd)),
                    np.concatenate((measured, np.ones(gd.size, dtype=np.bool_))))
    return X, gaps, measured


@njit(cache=True, inline="always")  # (its one caller compiles it: see closed_forms)
def box_contacts(pairs, first, second, X, half, la, eps0, r2, flat_tol, remove_interior, cap):
    """Reduced contacts of the box-box pairs ``pairs`` (positions in the detector's list).

    Parameters
    ----------
    pairs : (p,) int ndarray
    first, second : (P,) int ndarray
        Geometries A and B of every pair of the detector.
    X : (G, 4, 4) ndarray
        Placements [m].
    half : (G, 3) ndarray
        Box half sizes [m].
    la : (G,) ndarray
        Look-ahead of each geometry [m]; a pair is searched out to ``eps0 + la_A + la_B``.
    eps0 : float
        Activation distance [m].
    r2, flat_tol, remove_interior, cap
        The reduction's squared merge distance [m^2], flat tolerance [m], hull-only
        flag and cap on points per pair (0: none), as
        :func:`~contact_lcp.collision.ground.reduce_patch`.

    Returns
    -------
    handled : (p,) bool ndarray
        False for the pairs left to the general path (module notes).
    P, R, d : (n, 3), (n, 3, 3), (n,) ndarray
        Points [m], frames (columns n, t1, t2; n from A to B), gaps [m].
    owner : (n,) int ndarray
        Pair position of each contact (non-decreasing).
    """
    m = pairs.shape[0]
    handled = np.ones(m, dtype=np.bool_)
    size = 16 * m
    P = np.empty((size, 3))
    R = np.empty((size, 3, 3))
    d = np.empty(size)
    owner = np.empty(size, dtype=np.int64)
    cnt = 0
    for a in range(m):
        p = pairs[a]
        i, j = first[p], second[p]
        eps = eps0 + la[i] + la[j]
        XA, XB = X[i], X[j]
        face_n, face_sep, edge_n, edge_sep, _, _ = separating_axes(XA, half[i], XB, half[j],
                                                                   eps)
        if max(face_sep, edge_sep) > eps:  # separated by more than the search distance
            continue
        edge = edge_sep > face_sep + EDGE_MARGIN
        n, sep = (edge_n, edge_sep) if edge else (face_n, face_sep)
        VA, NA, cA = box_polytope(XA, half[i])
        VB, NB, cB = box_polytope(XB, half[j])
        Y, gaps, measured = feature_patch(VA, NA, cA, VB, NB, cB, n, max(eps, 1e-6))
        if Y.shape[0] == 0:
            handled[a] = False
            continue
        keep = np.empty(Y.shape[0], dtype=np.bool_)
        for k in range(Y.shape[0]):
            if not measured[k]:
                gaps[k] = sep  # the ray missed a box (round-off at a corner)
            keep[k] = not measured[k] or gaps[k] <= eps
        idx = np.flatnonzero(keep)
        if idx.size == 0:
            continue
        frame = np.empty((3, 3))
        tangent_frame(n, frame)
        Q = np.empty((idx.size, 3))  # (t1, t2, n) coordinates: the patch's plane first
        g = np.empty(idx.size)
        for k in range(idx.size):
            for c in range(3):
                col = (c + 1) % 3
                Q[k, c] = (Y[idx[k], 0] * frame[0, col] + Y[idx[k], 1] * frame[1, col]
                           + Y[idx[k], 2] * frame[2, col])
            g[k] = gaps[idx[k]]
        kept = reduce_patch(Q, g, r2, flat_tol, remove_interior, cap)
        if cnt + kept.size > size:
            size = 2 * (cnt + kept.size)
            P2, R2, d2, o2 = np.empty((size, 3)), np.empty((size, 3, 3)), np.empty(size), \
                np.empty(size, dtype=np.int64)
            for i in range(cnt):
                for c in range(3):
                    P2[i, c] = P[i, c]
                    for c2 in range(3):
                        R2[i, c, c2] = R[i, c, c2]
                d2[i], o2[i] = d[i], owner[i]
            P, R, d, owner = P2, R2, d2, o2
        for k in kept:
            for c in range(3):
                P[cnt, c] = Y[idx[k], c]
                for c2 in range(3):
                    R[cnt, c, c2] = frame[c, c2]
            d[cnt] = g[k]  # flattened by reduce_patch when flat_tol > 0
            owner[cnt] = p
            cnt += 1
    return handled, P[:cnt], R[:cnt], d[:cnt], owner[:cnt]
