"""The detector's closed forms in one compiled pass over the near pairs.

:meth:`~contact_lcp.collision.detector.ContactDetector.detect` runs the collision stage in
one call, :func:`collide`: the geometry placements (from ``q`` when the kinematic tree
allows it, :mod:`contact_lcp.dynamics.placements`), the broad phase's bounding spheres
and near pairs (:mod:`~contact_lcp.collision.broadphase`), then every near pair to
:func:`closed_forms` first: polytopes on the ground (:func:`~.ground.polytopes_on_ground`),
spheres against the ground, spheres and boxes (:func:`~.spheres.sphere_contacts`), boxes
against boxes (:func:`~.boxes.box_contacts`), each reduced as the detector reduces a
patch, merged in pair order. The pairs no closed form takes (other shapes, or a case a
closed form declines, such as a sphere's centre inside a box) come back as ``rest`` for
coal. One call instead of one per kind with a merge of their contact sets in Python
between them, which cost more than the closed forms themselves.

It and the reduction it calls are written in loops, without boolean masks, numba's sorts
or slice assignments of arrays: it is the longest compile of a robot's first step on a
cold cache, and each of those array expressions compiles numba machinery of its own (the
first slice assignment of an array in a process compiles numba's shape-mismatch message,
some 6 s). The closed forms it calls once each (and their single-caller helpers) are
inlined by numba (``inline="always"``): numba links a separately compiled kernel into its
callers and LLVM optimizes the linked code again at every level, so each level less is
that much less to compile.
"""

import numpy as np
from numba import njit

from contact_lcp.collision.boxes import box_contacts
from contact_lcp.collision.broadphase import near_pairs, update_centres
from contact_lcp.collision.ground import marked, polytopes_on_ground
from contact_lcp.collision.reduction import stable_order
from contact_lcp.collision.spheres import sphere_contacts
from contact_lcp.dynamics.placements import tree_pass


@njit(cache=True)
def _split(pairs, flag):
    """``(pairs[flag[pairs]], pairs[~flag[pairs]])`` in loops (``flag`` per pair)."""
    n = 0
    for a in range(pairs.shape[0]):
        if flag[pairs[a]]:
            n += 1
    yes = np.empty(n, dtype=np.int64)
    no = np.empty(pairs.shape[0] - n, dtype=np.int64)
    i = j = 0
    for a in range(pairs.shape[0]):
        if flag[pairs[a]]:
            yes[i] = pairs[a]
            i += 1
        else:
            no[j] = pairs[a]
            j += 1
    return yes, no


@njit(cache=True)
def _merged(a, b):
    """The pair positions of ``a`` and ``b`` (disjoint, each increasing), increasing."""
    out = np.empty(a.shape[0] + b.shape[0], dtype=np.int64)
    i = j = 0
    for o in range(out.shape[0]):
        if j == b.shape[0] or (i < a.shape[0] and a[i] < b[j]):
            out[o] = a[i]
            i += 1
        else:
            out[o] = b[j]
            j += 1
    return out


@njit(cache=True)
def collide(q, fk, tree, X, c, centres, all_geoms, la, radii, is_ground, still, verts, start,
            ground_h, eps0, r2, flat, interior, cap, first, second, on_ground, sphere_kind,
            box_pair, sphere_r, box_half, ground_frame, joints, pair_mu, spheres, boxes):
    """The collision stage's compiled part in one call: placements, near pairs and the
    contacts of the near pairs that have a closed form.

    ``fk``: the placements are computed from ``q`` (nq,) by the tree recursion of
    :func:`~contact_lcp.dynamics.placements.tree_pass` (``tree``: its arrays after
    ``q``) and the bounding-sphere centres ``c`` (G, 3) updated in place from them (the
    geometries' local centres ``centres``, every one of ``all_geoms``); else ``X`` (G, 4,
    4) holds them and ``c`` is current (the detector read them from Pinocchio). The near
    pairs are :func:`~contact_lcp.collision.broadphase.near_pairs` of ``c``, ``la``,
    ``radii`` and ``is_ground`` (ground pairs), less the pairs of two geometries that
    ``still`` (G,) marks (sleeping bodies; empty: none). The other arguments are
    :func:`closed_forms`'; ``joints`` (G,) each geometry's joint and ``pair_mu`` (P,)
    each pair's friction.

    Returns ``(X, near, P, R, d, a, b, joint_a, joint_b, mu, rest)``: the placements, the
    near pairs, and the contacts' points, frames, distances, geometries (A, B), joints and
    friction (the arrays of a :class:`~contact_lcp.collision.contact_set.ContactSet`),
    and the near pairs left for coal.
    """
    if fk:
        X = tree_pass(q, *tree)
        update_centres(c, X, centres, all_geoms)
    near = near_pairs(c, la, radii, first, second, is_ground, ground_h, eps0)
    if still.shape[0]:  # two geometries that cannot move: no pair
        n = 0
        for t in range(near.shape[0]):
            p = near[t]
            if not (still[first[p]] and still[second[p]]):
                near[n] = p
                n += 1
        near = near[:n]
    P, R, d, pair, rest = closed_forms(X, near, la, verts, start, ground_h, eps0, r2, flat,
                                       interior, cap, first, second, on_ground, sphere_kind,
                                       box_pair, sphere_r, box_half, ground_frame, spheres,
                                       boxes)
    k = pair.shape[0]
    a = np.empty(k, dtype=np.int64)
    b = np.empty(k, dtype=np.int64)
    joint_a = np.empty(k, dtype=np.int64)
    joint_b = np.empty(k, dtype=np.int64)
    mu = np.empty(k)
    for i in range(k):
        p = pair[i]
        a[i], b[i], mu[i] = first[p], second[p], pair_mu[p]
        joint_a[i], joint_b[i] = joints[a[i]], joints[b[i]]
    return X, near, P, R, d, a, b, joint_a, joint_b, mu, rest


@njit(cache=True, inline="always")  # (its one caller, collide, compiles it)
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
    g_pairs, rest = _split(near, on_ground)
    Xg = np.empty((g_pairs.shape[0], 4, 4))
    eps = np.empty(g_pairs.shape[0])
    geoms = np.empty(g_pairs.shape[0], dtype=np.int64)
    for a in range(g_pairs.shape[0]):
        g = second[g_pairs[a]]
        geoms[a] = g
        for r in range(4):
            for c in range(4):
                Xg[a, r, c] = X[g, r, c]
        eps[a] = eps0 + la[g]
    P1, d1, own1 = polytopes_on_ground(verts, start, geoms, Xg, ground_h, eps, r2, flat,
                                       interior, cap)
    P2, R2, d2, own2 = np.empty((0, 3)), np.empty((0, 3, 3)), np.empty(0), near[:0]
    if spheres is not None:
        ana, rest = _split(rest, sphere_kind > 0)
        if ana.shape[0]:
            done2, P2, R2, d2, own2 = sphere_contacts(ana, sphere_kind, first, second, X,
                                                      sphere_r, box_half, la, eps0, ground_h)
            rest = _merged(rest, marked(ana, done2, np.False_))
    P3, R3, d3, own3 = np.empty((0, 3)), np.empty((0, 3, 3)), np.empty(0), near[:0]
    if boxes is not None:
        bb, rest = _split(rest, box_pair)
        if bb.shape[0]:
            done3, P3, R3, d3, own3 = box_contacts(bb, first, second, X, box_half, la, eps0,
                                                   r2, flat, interior, cap)
            rest = _merged(rest, marked(bb, done3, np.False_))
    n1, n2, n3 = d1.shape[0], d2.shape[0], d3.shape[0]
    n = n1 + n2 + n3
    pair = np.empty(n, dtype=np.int64)
    for i in range(n1):
        pair[i] = g_pairs[own1[i]]
    for i in range(n2):
        pair[n1 + i] = own2[i]
    for i in range(n3):
        pair[n1 + n2 + i] = own3[i]
    # in pair order, stable (as the detector's merge); each part is in pair order, so
    # one part (the common case) already is
    order = np.arange(n)
    for i in range(1, n):
        if pair[i] < pair[i - 1]:
            order = stable_order(pair.astype(np.float64), np.zeros(n))
            break
    P = np.empty((n, 3))
    R = np.empty((n, 3, 3))
    d = np.empty(n)
    sorted_pair = np.empty(n, dtype=np.int64)
    for o in range(n):
        i = order[o]
        sorted_pair[o] = pair[i]
        if i < n1:
            for r in range(3):
                P[o, r] = P1[i, r]
                for c in range(3):
                    R[o, r, c] = ground_frame[r, c]
            d[o] = d1[i]
        elif i < n1 + n2:
            _put(P, R, d, o, P2, R2, d2, i - n1)
        else:
            _put(P, R, d, o, P3, R3, d3, i - n1 - n2)
    return P, R, d, sorted_pair, rest


@njit(cache=True)
def _put(P, R, d, o, Ps, Rs, ds, i):
    """Contact ``i`` of ``(Ps, Rs, ds)`` written at row ``o`` of ``(P, R, d)``."""
    for r in range(3):
        P[o, r] = Ps[i, r]
        for c in range(3):
            R[o, r, c] = Rs[i, r, c]
    d[o] = ds[i]
