"""Shape geometry used by the detector: ground support points and ray intervals.

All functions take the shape's placement ``R`` (3, 3), ``t`` (3,) in W and work in W;
the ground is the halfspace ``z <= h`` with normal ``+z`` (pointing from the ground to
the body).
"""

import coal
import numpy as np

_E_Z = np.array([0.0, 0.0, 1.0])


def local_vertices(shape):
    """(N, 3) vertices of a polytope or mesh in its own frame, None for curved shapes."""
    if isinstance(shape, coal.Box):
        hx, hy, hz = shape.halfSide
        return np.array([[sx * hx, sy * hy, sz * hz]
                         for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    if isinstance(shape, coal.ConvexBase):
        return np.array(shape.points(), dtype=float)
    if isinstance(shape, coal.BVHModelBase):
        return np.array(shape.vertices(), dtype=float)
    return None


def local_halfspaces(shape):
    """``(N, b)`` with the shape = {y : N y <= b} in its frame, None when not a polytope."""
    if isinstance(shape, coal.Box):
        h = np.asarray(shape.halfSide, dtype=float)
        return np.vstack((np.eye(3), -np.eye(3))), np.concatenate((h, h))
    if isinstance(shape, coal.ConvexBase) and shape.num_normals_and_offsets > 0:
        # coal stores normal . y + offset <= 0
        return np.array(shape.normals(), dtype=float), -np.array(shape.offsets(), dtype=float)
    return None


def _rim(center, axis, e1, e2, r, segments, level_tol):
    """Lowest point of a circle of radius r (normal ``axis``), and ``segments`` samples of
    it when the circle is level to ``level_tol`` [m] (a flat end on the ground: the
    samples are its support polygon). A tilted circle gives its lowest point only:
    samples near the bottom of a rolling wheel would act as the corners of a polygon."""
    down = -_E_Z + axis[2] * axis  # -z projected on the circle's plane
    norm = np.linalg.norm(down)
    lowest = center + r * down / norm if norm > 1e-9 else center
    if norm > 1e-9 and r * norm > level_tol:  # the rim's height varies by 2 r norm
        return lowest[None]
    angles = 2.0 * np.pi * np.arange(segments) / segments
    pts = center + r * (np.outer(np.cos(angles), e1) + np.outer(np.sin(angles), e2))
    return np.vstack((lowest, pts)) if norm > 1e-9 else pts


def ground_points(shape, verts, R, t, h, activation, segments=8):
    """Points of a shape within ``activation`` of the ground, with their distances.

    Parameters
    ----------
    shape : coal.CollisionGeometry
    verts : (N, 3) ndarray or None
        ``local_vertices(shape)``, precomputed.
    R, t : (3, 3), (3,) ndarray
        Placement of the shape in W.
    h : float
        Ground height [m].
    activation : float
        Keep points whose signed distance is <= activation [m].
    segments : int
        Samples per rim circle of cylinders and cones when the rim is level within
        ``activation`` (a flat end on the ground); a tilted rim gives its exact lowest
        point only.

    Returns
    -------
    points : (k, 3) ndarray or None
        Witness points on the shape [m]; None when the shape is not handled here.
    distances : (k,) ndarray
        Their signed heights above the ground [m].
    """
    if verts is not None:
        P = verts @ R.T + t
    elif isinstance(shape, coal.Sphere):
        P = (t - shape.radius * _E_Z)[None]
    elif isinstance(shape, coal.Capsule):
        ends = t + np.outer((shape.halfLength, -shape.halfLength), R[:, 2])
        P = ends - shape.radius * _E_Z
    elif isinstance(shape, coal.Cylinder):
        a, hl = R[:, 2], shape.halfLength
        P = np.vstack([_rim(t + s * hl * a, a, R[:, 0], R[:, 1], shape.radius, segments,
                            activation) for s in (1.0, -1.0)])
    elif isinstance(shape, coal.Cone):
        a, hl = R[:, 2], shape.halfLength
        rim = _rim(t - hl * a, a, R[:, 0], R[:, 1], shape.radius, segments, activation)
        P = np.vstack(((t + hl * a)[None], rim))
    elif isinstance(shape, coal.Ellipsoid):
        A2 = np.asarray(shape.radii, dtype=float) ** 2
        d = R.T @ -_E_Z
        P = (R @ (A2 * d / np.sqrt(d @ (A2 * d))) + t)[None]
    else:
        return None, None
    dist = P[:, 2] - h
    keep = dist <= activation
    return P[keep], dist[keep]


def ray_intervals(halfspaces, R, t, X, n, tol=1e-9):
    """:func:`ray_interval` of a convex polytope for many points ``X`` (k, 3) at once.

    Returns ``(s_in, s_out, hit)``, each (k,): entry and exit parameters [m] and whether
    the line through each point meets the polytope.
    """
    N, b = halfspaces
    O = (np.asarray(X, dtype=float) - t) @ R  # points in the shape's frame
    den = N @ (R.T @ np.asarray(n, dtype=float))
    num = b[None, :] - O @ N.T  # (k, F)
    up, lo = den > 1e-12, den < -1e-12
    par = ~(up | lo)
    hit = ~np.any(num[:, par] < -tol, axis=1) if np.any(par) else np.ones(len(O), dtype=bool)
    s_out = (num[:, up] / den[up]).min(axis=1) if np.any(up) else np.full(len(O), np.inf)
    s_in = (num[:, lo] / den[lo]).max(axis=1) if np.any(lo) else np.full(len(O), -np.inf)
    return s_in, s_out, hit & (s_in <= s_out + tol)


def ray_interval(shape, halfspaces, R, t, x, n, tol=1e-9):
    """Entry and exit parameters of the line ``x + s n`` through a shape.

    Returns ``(s_in, s_out)`` [m] or None when the shape is not a box, convex polytope or
    sphere, or when the line misses it.
    """
    o = R.T @ (np.asarray(x) - t)
    d = R.T @ np.asarray(n)
    if halfspaces is not None:
        N, b = halfspaces
        den = N @ d
        num = b - N @ o
        up, lo = den > 1e-12, den < -1e-12
        if np.any(num[~(up | lo)] < -tol):
            return None
        s_out = np.min(num[up] / den[up]) if np.any(up) else np.inf
        s_in = np.max(num[lo] / den[lo]) if np.any(lo) else -np.inf
        return (s_in, s_out) if s_in <= s_out + tol else None
    if isinstance(shape, coal.Sphere):
        bq = o @ d
        disc = bq * bq - (o @ o - shape.radius**2)
        if disc < -tol:
            return None
        root = np.sqrt(max(disc, 0.0))
        return -bq - root, -bq + root
    return None
