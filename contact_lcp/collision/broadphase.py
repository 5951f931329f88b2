"""Broad phase of the detector: bounding spheres against the ground plane and each other.

Each geometry g has a bounding sphere (centre ``c[g]`` in W, radius ``r[g]``). A pair is
*near* when the spheres, grown by the pair's search distance (activation distance plus
each geometry's look-ahead ``la``), touch; only near pairs go to the narrow phase.

Reading a placement from Pinocchio costs a Python call, so the detector keeps each
geometry's last reading and a bound ``drift[g]`` on how far any of its points moved since
(see :meth:`ContactDetector.advance`): a geometry whose sphere grown by its drift cannot
reach anything is not read again. Both tests are compiled here, with the levers that
bound each geometry's speed (:func:`lever_matrix`) and the look-ahead kernels of the
step (:func:`reach_bound`, :func:`farther`).
"""

import numpy as np
from numba import njit


@njit(cache=True)
def to_read(c, drift, la, radii, first, second, is_ground, is_moving, h, eps0):
    """Moving geometries that may be in a near pair when each may have moved by ``drift``.

    Parameters
    ----------
    c : (G, 3) ndarray
        Sphere centres at the last reading [m].
    drift, la, radii : (G,) ndarray
        Motion bound since the reading, look-ahead, sphere radius [m].
    first, second : (P,) int ndarray
        The pairs' geometries (``first`` is the ground for ground pairs).
    is_ground : (P,) bool ndarray
    is_moving : (G,) bool ndarray
        Not fixed to the world (fixed ones never need a new reading).
    h, eps0 : float
        Ground height, activation distance [m].

    Returns
    -------
    (r,) int ndarray
        Increasing geometry indices.
    """
    mark = np.zeros(c.shape[0], dtype=np.bool_)
    for p in range(first.shape[0]):
        i, j = first[p], second[p]
        if is_ground[p]:
            if c[j, 2] - radii[j] - drift[j] - la[j] <= h + eps0:
                mark[j] = True
            continue
        dx = c[i, 0] - c[j, 0]
        dy = c[i, 1] - c[j, 1]
        dz = c[i, 2] - c[j, 2]
        gap = np.sqrt(dx * dx + dy * dy + dz * dz) - radii[i] - radii[j] - drift[i] - drift[j] \
            - la[i] - la[j]
        if gap <= eps0:
            mark[i] = True
            mark[j] = True
    out = np.empty(c.shape[0], dtype=np.int64)
    n = 0
    for g in range(c.shape[0]):
        if mark[g] and is_moving[g]:
            out[n] = g
            n += 1
    return out[:n]


@njit(cache=True)
def near_pairs(c, la, radii, first, second, is_ground, h, eps0):
    """Positions of the near pairs (increasing) and which of them are ground pairs.

    Same arguments as :func:`to_read` with exact centres (no drift).
    """
    near = np.empty(first.shape[0], dtype=np.int64)
    n = 0
    for p in range(first.shape[0]):
        i, j = first[p], second[p]
        if is_ground[p]:
            ok = c[j, 2] - radii[j] <= h + eps0 + la[j]
        else:
            dx = c[i, 0] - c[j, 0]
            dy = c[i, 1] - c[j, 1]
            dz = c[i, 2] - c[j, 2]
            ok = (np.sqrt(dx * dx + dy * dy + dz * dz) - radii[i] - radii[j] - la[i] - la[j]
                  <= eps0)
        if ok:
            near[n] = p
            n += 1
    return near[:n]


@njit(cache=True)
def update_centres(c, X, centres_local, read):
    """``c[g] = R_g centres_local[g] + t_g`` for the geometries ``read`` (in place)."""
    for a in range(read.shape[0]):
        g = read[a]
        for r in range(3):
            c[g, r] = (X[g, r, 0] * centres_local[g, 0] + X[g, r, 1] * centres_local[g, 1]
                       + X[g, r, 2] * centres_local[g, 2] + X[g, r, 3])


@njit(cache=True)
def lever_bound(L, v, h, out):
    """``out += h L |v|`` (in place): the distance each geometry's points can travel in
    a step of ``h`` at velocity ``v``, ``L`` (G, nv) the levers of the detector."""
    for g in range(L.shape[0]):
        acc = 0.0
        for c in range(L.shape[1]):
            acc += L[g, c] * abs(v[c])
        out[g] += h * acc


def chain_joints(model, joint):
    """``(j, kind, cols)`` for joint ``joint`` and each of its ancestors up to the world:
    the joint index, its ``shortname()`` and its velocity coordinates (a list)."""
    j = int(joint)
    while j > 0:
        yield j, model.joints[j].shortname(), list(range(model.idx_vs[j],
                                                          model.idx_vs[j] + model.nvs[j]))
        j = int(model.parents[j])


def lever_matrix(model, objs, centers, radii):
    """(ngeoms, nv) levers ``L``: the speed of any point of geometry g is at most
    ``sum_c L[g, c] |v_c|`` for every configuration.

    A joint's translational velocity coordinates (prismatic, the free-flyer's linear
    part) move every point at their own rate (lever 1); its rotational ones move a point
    at most at the distance from the joint to the point, bounded over all configurations
    by the lengths of the joint placements down the chain, plus the geometry's offset and
    bounding radius. Unknown joint types get ``max(1, lever)`` on every coordinate.
    """
    L = np.zeros((len(objs), model.nv))
    for g, o in enumerate(objs):
        j = int(o.parentJoint)
        if j == 0 or not np.isfinite(radii[g]):
            continue
        reach = float(np.linalg.norm(o.placement.act(centers[g]))) + float(radii[g])
        for j, kind, cols in chain_joints(model, j):
            if "FreeFlyer" in kind:
                L[g, cols[:3]] = 1.0
                L[g, cols[3:]] = reach
            elif "Planar" in kind or "Composite" in kind:
                L[g, cols] = max(1.0, reach)
            elif "Prismatic" in kind or kind.startswith("JointModelP"):
                L[g, cols] = 1.0
            elif "Revolute" in kind or "Spherical" in kind or kind.startswith(("JointModelR",)):
                L[g, cols] = reach
            else:
                L[g, cols] = max(1.0, reach)
            reach += float(np.linalg.norm(model.jointPlacements[j].translation))
    return L


@njit(cache=True)
def reach_bound(L, v_a, v_b, h, cap):
    """(G,) ``min(h L max(|v_a|, |v_b|), cap)``: see :meth:`ContactDetector.reach`.
    Four geometries at a time (four chains of additions in flight), each summed in
    column order."""
    n, nv = L.shape
    speed = np.empty(nv)
    for c in range(nv):
        speed[c] = max(abs(v_a[c]), abs(v_b[c]))
    out = np.empty(n)
    g = 0
    while g + 4 <= n:
        a0 = a1 = a2 = a3 = 0.0
        for c in range(nv):
            s = speed[c]
            a0 += L[g, c] * s
            a1 += L[g + 1, c] * s
            a2 += L[g + 2, c] * s
            a3 += L[g + 3, c] * s
        out[g], out[g + 1] = min(h * a0, cap), min(h * a1, cap)
        out[g + 2], out[g + 3] = min(h * a2, cap), min(h * a3, cap)
        g += 4
    while g < n:
        a0 = 0.0
        for c in range(nv):
            a0 += L[g, c] * speed[c]
        out[g] = min(h * a0, cap)
        g += 1
    return out


@njit(cache=True)
def farther(wider, lookahead, activation):
    """Whether some geometry may travel farther than the search looked (``wider`` (G,)
    beyond ``lookahead`` (G,) by more than ``activation``) [m]."""
    for g in range(wider.shape[0]):
        if wider[g] > lookahead[g] + activation:
            return True
    return False
