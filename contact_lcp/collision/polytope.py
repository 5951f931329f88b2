"""Convex pieces as plain arrays: vertices, facets, feature edges (for facet sets).

A :class:`Polytope` is read once from a coal shape (a ``coal.Box`` or a ``coal.Convex``
hull, which is what collision meshes become with ``meshes: convex``) and then only
queried with NumPy: facet planes, point-to-facet Euclidean distances and segment-segment
closest points, all in the polytope's own frame [m].
"""

from dataclasses import dataclass
from functools import cached_property

import coal
import numpy as np

#: facets whose unit normals differ by less than this and whose offsets agree to
#: ``PLANE_TOL`` times the size are one facet (qhull splits a face into triangles)
NORMAL_TOL = 1e-6
PLANE_TOL = 1e-7


@dataclass(frozen=True, eq=False)
class Polytope:
    """A convex polytope in its own frame.

    Attributes
    ----------
    vertices : (V, 3) ndarray
        Corners [m].
    normals : (F, 3) ndarray
        Outward unit normals of the facets; the polytope is ``{y : normals y <= offsets}``.
    offsets : (F,) ndarray
        [m].
    triangles : (T, 3) int ndarray
        Vertex indices of a triangulation of the boundary.
    tri_facet : (T,) int ndarray
        The facet each triangle lies in.
    edges : (E, 2) int ndarray
        Feature edges (between two different facets), as vertex index pairs.
    edge_facets : (E, 2) int ndarray
        The two facets that meet at each edge.
    centroid : (3,) ndarray
        Mean of the vertices [m] (an interior point).
    """

    vertices: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray
    triangles: np.ndarray
    tri_facet: np.ndarray
    edges: np.ndarray
    edge_facets: np.ndarray
    centroid: np.ndarray

    @property
    def num_facets(self):
        return int(self.offsets.shape[0])

    @cached_property
    def _triangle_data(self):
        return triangle_data(self.vertices[self.triangles])

    def facet_distances(self, p):
        """(F,) Euclidean distance [m] from the point ``p`` (3,) to each facet polygon
        (0 on the facet; a point inside is at its depth below the facet); (k, F) for
        points ``p`` (k, 3)."""
        p = np.asarray(p, dtype=float)
        d = triangle_distances(p.reshape(-1, 3), self._triangle_data)
        out = np.full((d.shape[0], self.num_facets), np.inf)
        np.minimum.at(out, (np.arange(d.shape[0])[:, None], self.tri_facet[None, :]), d)
        return out[0] if p.ndim == 1 else out


def _box_triangles():
    """Triangles of the 8 corners ordered as ``local_vertices`` (x, y, z in {-1, 1})."""
    idx = lambda sx, sy, sz: 4 * (sx > 0) + 2 * (sy > 0) + (sz > 0)
    quads = []
    for axis in range(3):
        for s in (-1, 1):
            corners = []
            for a in (-1, 1):
                for b in (-1, 1):
                    c = [0, 0, 0]
                    c[axis], c[(axis + 1) % 3], c[(axis + 2) % 3] = s, a, b
                    corners.append(idx(*c))
            quads.append(corners)  # (a, b) = (-,-), (-,+), (+,-), (+,+)
    return np.array([[q[0], q[1], q[3]] for q in quads] + [[q[0], q[3], q[2]] for q in quads])


def _from_triangles(V, T):
    """Merge coplanar triangles into facets; outward normals from the centroid."""
    V = np.asarray(V, dtype=float)
    T = np.asarray(T, dtype=np.int64)
    centroid = V.mean(axis=0)
    scale = max(float(np.ptp(V, axis=0).max()), 1e-12)
    normals, offsets, tri_facet = [], [], []
    for a, b, c in T:
        n = np.cross(V[b] - V[a], V[c] - V[a])
        norm = np.linalg.norm(n)
        if norm <= 1e-14 * scale * scale:
            tri_facet.append(-1)
            continue
        n /= norm
        off = float(n @ V[a])
        if off < float(n @ centroid):
            n, off = -n, -off
        for f, (m, o) in enumerate(zip(normals, offsets)):
            if np.abs(m - n).max() < NORMAL_TOL and abs(o - off) < PLANE_TOL * scale:
                tri_facet.append(f)
                break
        else:
            normals.append(n)
            offsets.append(off)
            tri_facet.append(len(normals) - 1)
    tri_facet = np.array(tri_facet, dtype=np.int64)
    keep = tri_facet >= 0
    T, tri_facet = T[keep], tri_facet[keep]
    owners = {}
    for t, f in zip(T, tri_facet):
        for i, j in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            owners.setdefault((min(i, j), max(i, j)), set()).add(int(f))
    feature = sorted(e for e, fs in owners.items() if len(fs) == 2)
    edges = np.array(feature, dtype=np.int64).reshape(-1, 2)
    edge_facets = np.array([sorted(owners[e]) for e in feature], dtype=np.int64).reshape(-1, 2)
    return Polytope(V, np.array(normals), np.array(offsets), T, tri_facet, edges, edge_facets,
                    centroid)


def polytope_of(shape):
    """The :class:`Polytope` of a coal shape, or None when it is not a convex polytope
    (spheres, cylinders, halfspaces, triangle-mesh BVHs)."""
    if isinstance(shape, coal.Box):
        h = np.asarray(shape.halfSide, dtype=float)
        V = np.array([[sx * h[0], sy * h[1], sz * h[2]]
                      for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        return _from_triangles(V, _box_triangles())
    if isinstance(shape, coal.ConvexBase) and hasattr(shape, "polygons"):
        V = np.array(shape.points(), dtype=float)
        T = []
        for i in range(shape.num_polygons):
            tri = shape.polygons(i)
            T.append([tri[0], tri[1], tri[2]])
        return _from_triangles(V, T)
    return None


def triangle_data(tris):
    """What :func:`triangle_distances` needs of triangles ``tris`` (T, 3, 3), computed once:
    corners, edges, unit normals, in-plane edge normals, doubled areas."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    n = np.cross(b - a, c - a)
    area2 = np.linalg.norm(n, axis=1)
    n = n / area2[:, None]
    corners = np.stack([a, b, c])                          # (3, T, 3)
    edges = np.stack([b - a, c - b, a - c])                # (3, T, 3), from each corner
    inward = np.cross(n[None], edges)                      # n x e: into the triangle
    return corners, edges, n, inward, np.einsum("eti,eti->et", edges, edges)


def triangle_distances(p, tris):
    """Euclidean distance from points ``p`` (k, 3) to triangles [m]: (k, T); (T,) for one
    point ``p`` (3,). ``tris``: (T, 3, 3) corners or :func:`triangle_data` of them."""
    corners, edges, n, inward, ee = triangle_data(tris) if isinstance(tris, np.ndarray) else tris
    p = np.asarray(p, dtype=float)
    P = p.reshape(-1, 3)
    d_plane = np.abs(P @ n.T - np.einsum("ti,ti->t", corners[0], n))  # (k, T)
    inside = np.ones(d_plane.shape, dtype=bool)
    d_edge = np.full(d_plane.shape, np.inf)
    for u, e, m, l2 in zip(corners, edges, inward, ee):
        r = P[:, None, :] - u                              # (k, T, 3)
        inside &= np.einsum("kti,ti->kt", r, m) >= 0.0
        t = np.clip(np.einsum("kti,ti->kt", r, e) / np.maximum(l2, 1e-300), 0.0, 1.0)
        d_edge = np.minimum(d_edge, np.linalg.norm(r - t[:, :, None] * e, axis=2))
    d = np.where(inside, d_plane, d_edge)
    return d[0] if p.ndim == 1 else d


def segment_closest(p0, p1, q0, q1):
    """Closest points of segments ``p0 p1`` (m, 3) and ``q0 q1`` (n, 3), all pairs.

    Returns
    -------
    s, t : (m, n) ndarray
        Parameters on each segment (0 at ``p0``/``q0``, 1 at ``p1``/``q1``); nan for
        parallel segments (they are left to the vertex sets).
    x, y : (m, n, 3) ndarray
        The closest points on the first and on the second segment [m].
    """
    d1 = (p1 - p0)[:, None, :]
    d2 = (q1 - q0)[None, :, :]
    r = p0[:, None, :] - q0[None, :, :]
    a = np.sum(d1 * d1, axis=2)
    e = np.sum(d2 * d2, axis=2)
    b = np.sum(d1 * d2, axis=2)
    c = np.sum(d1 * r, axis=2)
    f = np.sum(d2 * r, axis=2)
    den = a * e - b * b
    parallel = den <= 1e-6 * a * e  # sin^2 of the angle below 1e-6
    den = np.where(parallel, 1.0, den)
    s = np.clip((b * f - c * e) / den, 0.0, 1.0)
    t = (b * s + f) / e
    t_c = np.clip(t, 0.0, 1.0)
    s = np.where(t_c != t, np.clip((b * t_c - c) / a, 0.0, 1.0), s)
    t = t_c
    s, t = np.where(parallel, np.nan, s), np.where(parallel, np.nan, t)
    x = p0[:, None, :] + np.nan_to_num(s)[:, :, None] * d1
    y = q0[None, :, :] + np.nan_to_num(t)[:, :, None] * d2
    return s, t, x, y
