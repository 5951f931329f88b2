"""Spheres against the ground, other spheres and boxes in one compiled pass.

These pairs have closed forms, and a pile of spheres has hundreds of them: through coal
(collision, contact patch, re-measurement along the normal) each costs tens of
microseconds of Python. The results are the same points as the general path's:

* sphere - ground (plane ``z = h``): the point halfway between the sphere's lowest point
  and the plane, normal +z, gap ``c_z - r - h``;
* sphere i - sphere j: normal ``(c_j - c_i) / |c_j - c_i|``, gap ``|c_j - c_i| - r_i -
  r_j``, the point halfway between the two surface points on the centre line;
* box - sphere: the box's closest point ``p`` to the centre ``c`` (clamped in the box
  frame), normal ``(c - p) / |c - p|`` out of the box, gap ``|c - p| - r``, the point
  halfway between ``p`` and the sphere's surface. A centre inside the box has no unique
  normal: such a pair is returned as not handled and goes to the general path.

Normals point from the pair's first geometry (A) to its second (B); a pair given as
(sphere, box) gets the box's normal reversed. Frames follow
:func:`contact_lcp.collision.contact_point.tangent_basis`.
"""

import numpy as np
from numba import njit

#: pair kinds of :func:`sphere_contacts`
GROUND_SPHERE, SPHERE_SPHERE, BOX_SPHERE, SPHERE_BOX = 1, 2, 3, 4


@njit(cache=True)
def tangent_frame(n, R):
    """Fill ``R`` (3, 3) with the columns (n, t1, t2) of ``tangent_basis(n)``."""
    if abs(n[0]) < 0.9:
        r0, r1, r2 = 1.0, 0.0, 0.0
    else:
        r0, r1, r2 = 0.0, 1.0, 0.0
    rn = r0 * n[0] + r1 * n[1] + r2 * n[2]
    t0, t1, t2 = r0 - rn * n[0], r1 - rn * n[1], r2 - rn * n[2]
    s = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    t0, t1, t2 = t0 / s, t1 / s, t2 / s
    R[0, 0], R[1, 0], R[2, 0] = n[0], n[1], n[2]
    R[0, 1], R[1, 1], R[2, 1] = t0, t1, t2
    R[0, 2] = n[1] * t2 - n[2] * t1
    R[1, 2] = n[2] * t0 - n[0] * t2
    R[2, 2] = n[0] * t1 - n[1] * t0


@njit(cache=True, inline="always")  # (its one caller compiles it: see closed_forms)
def sphere_contacts(pairs, kind, first, second, X, radius, half, la, eps0, h):
    """Contacts of the pairs ``pairs`` (positions in the detector's pair list).

    Parameters
    ----------
    pairs : (p,) int ndarray
    kind : (P,) int ndarray
        Kind of every pair of the detector (constants above; 0: not handled here).
    first, second : (P,) int ndarray
        Geometries of every pair (``first`` is the ground for ground pairs).
    X : (G, 4, 4) ndarray
        Placements [m].
    radius : (G,) ndarray
        Sphere radii [m].
    half : (G, 3) ndarray
        Box half sizes [m].
    la : (G,) ndarray
        Look-ahead of each geometry [m].
    eps0, h : float
        Activation distance, ground height [m].

    Returns
    -------
    handled : (p,) bool ndarray
        False for a box-sphere pair with the centre inside the box.
    P, R, d : (n, 3), (n, 3, 3), (n,) ndarray
        Points [m], frames, gaps [m] of the pairs within their search distance.
    owner : (n,) int ndarray
        Pair position of each contact (non-decreasing).
    """
    m = pairs.shape[0]
    handled = np.ones(m, dtype=np.bool_)
    P = np.empty((m, 3))
    R = np.empty((m, 3, 3))
    d = np.empty(m)
    owner = np.empty(m, dtype=np.int64)
    nrm = np.empty(3)
    cnt = 0
    for a in range(m):
        p = pairs[a]
        i, j = first[p], second[p]
        k = kind[p]
        eps = eps0 + la[i] + la[j]
        if k == GROUND_SPHERE:
            gap = X[j, 2, 3] - radius[j] - h
            if gap > eps:
                continue
            nrm[0], nrm[1], nrm[2] = 0.0, 0.0, 1.0
            P[cnt, 0], P[cnt, 1] = X[j, 0, 3], X[j, 1, 3]
            P[cnt, 2] = X[j, 2, 3] - radius[j] - 0.5 * gap
        elif k == SPHERE_SPHERE:
            dx = X[j, 0, 3] - X[i, 0, 3]
            dy = X[j, 1, 3] - X[i, 1, 3]
            dz = X[j, 2, 3] - X[i, 2, 3]
            dist = np.sqrt(dx * dx + dy * dy + dz * dz)
            gap = dist - radius[i] - radius[j]
            if gap > eps:
                continue
            if dist == 0.0:  # concentric: no normal
                handled[a] = False
                continue
            nrm[0], nrm[1], nrm[2] = dx / dist, dy / dist, dz / dist
            s = radius[i] + 0.5 * gap  # from centre i to the midpoint
            for c in range(3):
                P[cnt, c] = X[i, c, 3] + s * nrm[c]
        else:  # a box and a sphere, in either order
            b, s_ = (i, j) if k == BOX_SPHERE else (j, i)
            # sphere centre in the box frame, clamped to the box
            loc = np.empty(3)
            inside = True
            for c in range(3):
                acc = 0.0
                for r in range(3):
                    acc += X[b, r, c] * (X[s_, r, 3] - X[b, r, 3])
                lim = half[b, c]
                if acc > lim:
                    acc, inside = lim, False
                elif acc < -lim:
                    acc, inside = -lim, False
                loc[c] = acc
            if inside:
                handled[a] = False
                continue
            q0 = np.empty(3)
            for r in range(3):
                q0[r] = X[b, r, 3] + X[b, r, 0] * loc[0] + X[b, r, 1] * loc[1] + X[b, r, 2] * loc[2]
            dx = X[s_, 0, 3] - q0[0]
            dy = X[s_, 1, 3] - q0[1]
            dz = X[s_, 2, 3] - q0[2]
            dist = np.sqrt(dx * dx + dy * dy + dz * dz)
            gap = dist - radius[s_]
            if gap > eps:
                continue
            sign = 1.0 if k == BOX_SPHERE else -1.0
            nrm[0], nrm[1], nrm[2] = sign * dx / dist, sign * dy / dist, sign * dz / dist
            for c in range(3):  # halfway between the box point and the sphere's surface
                P[cnt, c] = q0[c] + sign * 0.5 * gap * nrm[c]
        d[cnt] = gap
        tangent_frame(nrm, R[cnt])
        owner[cnt] = p
        cnt += 1
    return handled, P[:cnt], R[:cnt], d[:cnt], owner[:cnt]
