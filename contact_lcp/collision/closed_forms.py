"""The detector's closed forms in one compiled pass over the near pairs.

:meth:`~contact_lcp.collision.detector.ContactDetector.detect` hands every near pair to
:func:`closed_forms` first: polytopes on the ground (:func:`~.ground.polytopes_on_ground`),
spheres against the ground, spheres and boxes (:func:`~.spheres.sphere_contacts`), boxes
against boxes (:func:`~.boxes.box_contacts`), each reduced as the detector reduces a
patch, merged in pair order. The pairs no closed form takes (other shapes, or a case a
closed form declines, such as a sphere's centre inside a box) come back as ``rest`` for
coal. One call instead of one per kind with a merge of their contact sets in Python
between them, which cost more than the closed forms themselves.
"""

import numpy as np
from numba import njit

from contact_lcp.collision.boxes import box_contacts
from contact_lcp.collision.ground import polytopes_on_ground
from contact_lcp.collision.spheres import sphere_contacts


@njit(cache=True)
def _sorted_union(a, b):
    """The pair positions of ``a`` and ``b`` (disjoint) in increasing order."""
    out = np.concatenate((a, b))
    out.sort()
    return out


@njit(cache=True)
def closed_forms(X, near, la, verts, start, ground_h, eps0, r2, flat, interior, cap, first,
                 second, on_ground, sphere_kind, box_pair, sphere_r, box_half, ground_frame,
                 spheres, boxes):
    """Contacts of the near pairs that have a closed form, and the pairs left for coal.

    Parameters
    ----------
    X : (G, 4, 4) ndarray
        Geometry placements in W.
    near : (p,) int ndarray
        Positions of the near pairs in the detector's pair list, increasing.
    la : (G,) ndarray
        Look-ahead distance of each geometry [m]; ``eps0`` the activation distance [m].
    verts, start
        Every geometry's vertices, concatenated (:func:`~.ground.polytopes_on_ground`).
    ground_h : float
        Ground height [m].
    r2, flat, interior, cap
        The reduction's squared distance [m^2], flat tolerance [m], interior removal and
        points per pair (0: no cap).
    first, second : (P,) int ndarray
        Each pair's geometries; ``on_ground`` (P,) bool: a polytope on the ground;
        ``sphere_kind`` (P,) int: a sphere pair's kind (0: none); ``box_pair`` (P,) bool.
    sphere_r, box_half
        Per geometry: sphere radius [m], box half sizes (3,) [m].
    ground_frame : (3, 3) ndarray
        The ground contacts' frame (normal +z).
    spheres, boxes : bool or None
        None when the scene has no pair of that kind: numba then prunes the branch, so
        that closed form is not compiled for it (a pair of that kind then goes to coal).

    Returns
    -------
    P : (n, 3), R : (n, 3, 3), d : (n,) ndarray
        Contact points [m], frames and signed distances [m], in pair order (stable).
    pair : (n,) int ndarray
        Each contact's pair position.
    rest : (r,) int ndarray
        Near pairs no closed form took, increasing.
    """
    ground = np.zeros(near.shape[0], dtype=np.bool_)
    for a in range(near.shape[0]):
        ground[a] = on_ground[near[a]]
    g_pairs = near[ground]
    rest = near[~ground]
    geoms = second[g_pairs]
    Xg = np.empty((geoms.shape[0], 4, 4))
    eps = np.empty(geoms.shape[0])
    for a in range(geoms.shape[0]):
        Xg[a] = X[geoms[a]]
        eps[a] = eps0 + la[geoms[a]]
    P1, d1, own1 = polytopes_on_ground(verts, start, geoms, Xg, ground_h, eps, r2, flat,
                                       interior, cap)
    P2, R2, d2, own2 = np.empty((0, 3)), np.empty((0, 3, 3)), np.empty(0), near[:0]
    if spheres is not None:
        is_sphere = np.zeros(rest.shape[0], dtype=np.bool_)
        for a in range(rest.shape[0]):
            is_sphere[a] = sphere_kind[rest[a]] > 0
        if is_sphere.any():
            ana = rest[is_sphere]
            done2, P2, R2, d2, own2 = sphere_contacts(ana, sphere_kind, first, second, X,
                                                      sphere_r, box_half, la, eps0, ground_h)
            rest = _sorted_union(rest[~is_sphere], ana[~done2])
    P3, R3, d3, own3 = np.empty((0, 3)), np.empty((0, 3, 3)), np.empty(0), near[:0]
    if boxes is not None:
        is_box = np.zeros(rest.shape[0], dtype=np.bool_)
        for a in range(rest.shape[0]):
            is_box[a] = box_pair[rest[a]]
        if is_box.any():
            bb = rest[is_box]
            done3, P3, R3, d3, own3 = box_contacts(bb, first, second, X, box_half, la, eps0,
                                                   r2, flat, interior, cap)
            rest = _sorted_union(rest[~is_box], bb[~done3])
    n1, n2, n3 = d1.shape[0], d2.shape[0], d3.shape[0]
    n = n1 + n2 + n3
    pair = np.empty(n, dtype=np.int64)
    P = np.empty((n, 3))
    R = np.empty((n, 3, 3))
    d = np.empty(n)
    for i in range(n1):
        pair[i] = g_pairs[own1[i]]
        P[i] = P1[i]
        R[i] = ground_frame
        d[i] = d1[i]
    for i in range(n2):
        pair[n1 + i] = own2[i]
        P[n1 + i] = P2[i]
        R[n1 + i] = R2[i]
        d[n1 + i] = d2[i]
    for i in range(n3):
        pair[n1 + n2 + i] = own3[i]
        P[n1 + n2 + i] = P3[i]
        R[n1 + n2 + i] = R3[i]
        d[n1 + n2 + i] = d3[i]
    if max(n1, n2, n3) == n:  # one part: already in pair order
        return P, R, d, pair, rest
    order = np.argsort(pair, kind="mergesort")  # stable, as the detector's merge
    return P[order], R[order], d[order], pair[order], rest
