"""The face-clip patch of :mod:`contact_lcp.collision.clip` and its gap measurement in one
compiled pass (two convex polytopes whose closest features are faces)."""

import numpy as np
from numba import njit

from contact_lcp.collision.reduction import stable_order


@njit(cache=True)
def _hull(P, tol):
    """CCW convex hull (m, 2) of the rows of P (k, 2), repeated points removed."""
    H = np.empty((2 * P.shape[0], 2))
    return H[:hull_into(P, P.shape[0], H, tol)].copy()


@njit(cache=True)
def hull_into(P, k, H, tol):
    """:func:`_hull` of the first ``k`` rows of ``P`` written into ``H`` (at least (2k, 2));
    returns its vertex count. Sorted by x, then y (stably), repeated points dropped, then
    the lower and the upper chain; in loops (numba's sorts, fancy indexing and slice
    assignments would each compile machinery of their own on a cold cache)."""
    x = np.empty(k)
    y = np.empty(k)
    for i in range(k):
        x[i], y[i] = P[i, 0], P[i, 1]
    order = stable_order(x, y)
    Q = np.empty((k, 2))
    m = 0
    for a in range(k):
        i = order[a]
        if m and P[i, 0] == Q[m - 1, 0] and P[i, 1] == Q[m - 1, 1]:
            continue
        Q[m, 0], Q[m, 1] = P[i, 0], P[i, 1]
        m += 1
    if m < 3:
        for i in range(m):
            H[i, 0], H[i, 1] = Q[i, 0], Q[i, 1]
        return m
    h = 0
    for i in range(m):  # lower chain
        while h >= 2 and ((H[h - 1, 0] - H[h - 2, 0]) * (Q[i, 1] - H[h - 2, 1])
                          - (H[h - 1, 1] - H[h - 2, 1]) * (Q[i, 0] - H[h - 2, 0])) <= tol:
            h -= 1
        H[h, 0], H[h, 1] = Q[i, 0], Q[i, 1]
        h += 1
    lower = h + 1
    for i in range(m - 2, -1, -1):  # upper chain
        while h >= lower and ((H[h - 1, 0] - H[h - 2, 0]) * (Q[i, 1] - H[h - 2, 1])
                              - (H[h - 1, 1] - H[h - 2, 1]) * (Q[i, 0] - H[h - 2, 0])) <= tol:
            h -= 1
        H[h, 0], H[h, 1] = Q[i, 0], Q[i, 1]
        h += 1
    return h - 1  # the last point is the first


@njit(cache=True)
def _clip(subject, clip, tol):
    """Sutherland-Hodgman clip of the convex CCW polygon ``subject`` by ``clip``."""
    out = subject.copy()
    n_out = out.shape[0]
    c = clip.shape[0]
    for e in range(c):
        if n_out == 0:
            break
        buf = np.empty((2 * n_out, 2))  # each point adds itself and at most one crossing
        ax, ay = clip[e, 0], clip[e, 1]
        bx, by = clip[(e + 1) % c, 0], clip[(e + 1) % c, 1]
        slack = -tol * np.hypot(bx - ax, by - ay)
        m = 0
        px, py = out[n_out - 1, 0], out[n_out - 1, 1]
        d1 = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
        for i in range(n_out):
            cx, cy = out[i, 0], out[i, 1]
            d2 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
            if (d2 >= slack) != (d1 >= slack):
                s = d1 / (d1 - d2)
                buf[m, 0], buf[m, 1] = px + (cx - px) * s, py + (cy - py) * s
                m += 1
            if d2 >= slack:
                buf[m, 0], buf[m, 1] = cx, cy
                m += 1
            px, py, d1 = cx, cy, d2
        out = buf[:m].copy()
        n_out = m
    return out[:n_out]


@njit(cache=True)
def _intervals(N, c, X, n, tol):
    """Entry and exit parameters of the lines X + s n through {x : N x <= c} (in W)."""
    k = X.shape[0]
    s_in = np.full(k, -np.inf)
    s_out = np.full(k, np.inf)
    hit = np.ones(k, dtype=np.bool_)
    for f in range(N.shape[0]):
        den = N[f, 0] * n[0] + N[f, 1] * n[1] + N[f, 2] * n[2]
        for i in range(k):
            num = c[f] - (N[f, 0] * X[i, 0] + N[f, 1] * X[i, 1] + N[f, 2] * X[i, 2])
            if den > 1e-12:
                s_out[i] = min(s_out[i], num / den)
            elif den < -1e-12:
                s_in[i] = max(s_in[i], num / den)
            elif num < -tol:
                hit[i] = False
    for i in range(k):
        hit[i] = hit[i] and s_in[i] <= s_out[i] + tol
    return s_in, s_out, hit


@njit(cache=True)
def _lift(xy, cx, cy, t1, t2, n, mid):
    """(r, 3) points in W of the plane points ``xy`` (r, 2) (coordinates along ``t1``,
    ``t2``) at height ``mid`` along ``n``, inset by 1e-7 towards ``(cx, cy)``: rays
    along ``n`` through a polygon's corners then hit both polytopes."""
    X = np.empty((xy.shape[0], 3))
    for i in range(xy.shape[0]):
        x = cx + (1.0 - 1e-7) * (xy[i, 0] - cx)
        y = cy + (1.0 - 1e-7) * (xy[i, 1] - cy)
        for j in range(3):
            X[i, j] = x * t1[j] + y * t2[j] + mid * n[j]
    return X


#: an extreme vertex (or crossing of extreme edges) joins a clipped patch when its gap is
#: below the patch's smallest by more than this [m]
DEEPER = 1e-8


@njit(cache=True)
def deepest_points(VA, NA, cA, VB, NB, cB, n, t1, t2, cx, cy, mid, patch_min):
    """The points of deepest overlap along ``n`` that a clipped patch can miss.

    A support feature taken within a search distance of its extreme is a set of vertices
    at several heights; their hull in the contact plane hides the extreme vertex (the tip
    of a box that points into the other). Along ``n`` the gap ``B_low(x) - A_up(x)`` is
    then a convex function of the plane's point, and its minimum lies inside the patch,
    at A's extreme vertex, B's, or (extreme edges) where the two cross; it equals the
    separation along ``n`` when ``n`` is a separating axis. Each such candidate, inset
    towards ``(cx, cy)`` as the patch's points, is measured along ``n`` through both
    polytopes and returned ``(X (k, 3), gaps (k,))`` when the rays hit both and its gap
    is below ``patch_min`` (the patch's smallest gap [m]) by more than :data:`DEEPER`.
    """
    hA = VA @ n
    hB = VB @ n
    topA, botB = hA.max(), hB.min()
    if patch_min < botB - topA + DEEPER:  # no gap along n is below botB - topA: a flat
        return np.empty((0, 3)), np.empty(0)  # face on a face ends here
    ia = np.flatnonzero(hA >= topA - 1e-9)
    ib = np.flatnonzero(hB <= botB + 1e-9)
    xy = np.empty((ia.size + ib.size + 1, 2))
    k = 0
    for i in ia:
        xy[k, 0], xy[k, 1] = VA[i] @ t1, VA[i] @ t2
        k += 1
    for i in ib:
        xy[k, 0], xy[k, 1] = VB[i] @ t1, VB[i] @ t2
        k += 1
    if ia.size == 2 and ib.size == 2:  # two extreme edges: where they cross
        p0, p1, q0, q1 = xy[0], xy[1], xy[2], xy[3]
        d1 = p1 - p0
        d2 = q1 - q0
        den = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(den) > 1e-9 * np.hypot(d1[0], d1[1]) * np.hypot(d2[0], d2[1]):
            w = q0 - p0
            s = (w[0] * d2[1] - w[1] * d2[0]) / den
            t = (w[0] * d1[1] - w[1] * d1[0]) / den
            if -1e-9 <= s <= 1.0 + 1e-9 and -1e-9 <= t <= 1.0 + 1e-9:
                xy[k, 0], xy[k, 1] = p0[0] + s * d1[0], p0[1] + s * d1[1]
                k += 1
    X = _lift(xy[:k], cx, cy, t1, t2, n, mid)
    _, bi, hi = _intervals(NA, cA, X, n, 1e-9)
    aj, _, hj = _intervals(NB, cB, X, n, 1e-9)
    gaps = aj - bi
    keep = np.flatnonzero(hi & hj & (gaps < patch_min - DEEPER))
    out = X[keep]
    for r in range(keep.size):
        m = 0.5 * (aj[keep[r]] + bi[keep[r]])
        for j in range(3):
            out[r, j] += m * n[j]
    return out, gaps[keep]


@njit(cache=True)
def face_patch_gaps(VA, NA, cA, VB, NB, cB, n, face_tol):
    """Points (r, 3) halfway between the clipped support faces, their gaps (r,) along n
    and whether each was measured through both shapes (r,); r = 0 when a support face is
    an edge or a vertex."""
    hA = VA @ n
    hB = VB @ n
    topA = hA.max() - face_tol
    botB = hB.min() + face_tol
    ref0, ref1, ref2 = (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0)
    dot = ref0 * n[0] + ref1 * n[1] + ref2 * n[2]
    t1 = np.array([ref0 - dot * n[0], ref1 - dot * n[1], ref2 - dot * n[2]])
    t1 /= np.sqrt(t1 @ t1)
    t2 = np.array([n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2],
                   n[0] * t1[1] - n[1] * t1[0]])
    FA = np.empty((VA.shape[0], 2))
    a = 0
    for i in range(VA.shape[0]):
        if hA[i] >= topA:
            FA[a, 0], FA[a, 1] = round(VA[i] @ t1, 12), round(VA[i] @ t2, 12)
            a += 1
    FB = np.empty((VB.shape[0], 2))
    b = 0
    for i in range(VB.shape[0]):
        if hB[i] <= botB:
            FB[b, 0], FB[b, 1] = round(VB[i] @ t1, 12), round(VB[i] @ t2, 12)
            b += 1
    empty = np.zeros((0, 3))
    if a < 3 or b < 3:
        return empty, np.zeros(0), np.zeros(0, dtype=np.bool_)
    polyA = _hull(FA[:a], 1e-18)
    polyB = _hull(FB[:b], 1e-18)
    if polyA.shape[0] < 3 or polyB.shape[0] < 3:
        return empty, np.zeros(0), np.zeros(0, dtype=np.bool_)
    xy = _clip(polyA, polyB, 1e-9)
    r = xy.shape[0]
    if r == 0:
        return empty, np.zeros(0), np.zeros(0, dtype=np.bool_)
    cx, cy = 0.0, 0.0
    for i in range(r):
        cx += xy[i, 0]
        cy += xy[i, 1]
    cx /= r
    cy /= r
    mid = 0.5 * (hA.max() + hB.min())
    X = _lift(xy, cx, cy, t1, t2, n, mid)
    ai, bi, hi = _intervals(NA, cA, X, n, 1e-9)
    aj, bj, hj = _intervals(NB, cB, X, n, 1e-9)
    gaps = aj - bi
    patch_min = np.inf
    for i in range(r):
        if hi[i] and hj[i]:
            m = 0.5 * (aj[i] + bi[i])
            for j in range(3):
                X[i, j] += m * n[j]
            patch_min = min(patch_min, gaps[i])
    Xd, gd = deepest_points(VA, NA, cA, VB, NB, cB, n, t1, t2, cx, cy, mid, patch_min)
    if gd.size == 0:
        return X, gaps, hi & hj
    return (np.concatenate((X, Xd)), np.concatenate((gaps, gd)),
            np.concatenate((hi & hj, np.ones(gd.size, dtype=np.bool_))))
