"""Facet sets (Nguyen & Trinkle): a point of one body against the nearby facets of a
convex piece of another, as plain arrays for the ``facet_set`` contact model.

Which sets are formed, for every candidate collision pair whose shapes are convex
polytopes (boxes, convex hulls) or the ground halfspace and that the detector's broad
phase keeps (its placements are used as they are):

* **vertex sets** (the seed's): each vertex of piece V within ``eps`` of piece F (plane
  test ``max_i psi_i <= eps``) against every facet of F whose polygon is within ``eps``
  of it (the seed's "all facets closer than a threshold"). Both directions are formed,
  V's vertices against F's facets and F's against V's: a hole's rim corner against a
  peg's side is the second kind. The ground gives one facet (``z = height``) to the
  vertices of every piece, and no vertex of its own.
* **edge sets** (our extension to 3-D): a feature edge of V (the first geometry of the
  pair) and one of F that are not parallel, whose closest points are within ``eps`` of
  each other and inside both edges, farther than the activation distance from the ends
  of an edge of a moving piece (nearer such an end, the vertex sets of that vertex hold
  it: an edge-edge plane there would catch a vertex that should slide over a step; a
  static edge's end is a corner of the fixed geometry whose vertex set holds that point
  only, not the edge's run next to it), and whose common normal ``n = ±e_V x e_F`` lies in the normal cones of
  both edges, within about 1 degree (so the edges support each other along it). The closest point on V's
  edge becomes a virtual vertex of V for the step, against a set of one facet: the plane
  through F's edge with normal n (out of F). Its row is the exact first-order edge-edge
  distance. One plane suffices because the free space of a line near a convex edge is
  locally that half-space; the non-convexity the seed is after (several pieces) is still
  handled by giving each piece its own sets. F's face planes are *not* added: the virtual
  vertex lies on F's edge line, on the boundary of both adjacent faces, and a face plane it
  stays on would let the set count as separated while the edge sinks in. A hole's rim
  edge against a peg's side edge, or a ramp's rim under a box's bottom face, is held by
  these sets although no vertex is near.

Facets of static pieces covered by the ground or by another static piece (a wall's
bottom on the floor, the two faces of a seam) are internal to the static union and left
out, with the edges that border them: behind them is not free space.

``eps`` is the activation distance plus the pair's look-ahead (as the detector's).
Each set also carries its edge directions and both bodies' angular Jacobians, so that
the model can take its rows at the material points the step slides to the contact
(:func:`contact_lcp.contact.facet_lcp.sliding_rows`).

Each set has ``psi_i = n_i . p - b_i``, the signed distance of its point to the plane of
facet i (normal out of F), so that the point is outside F iff ``max_i psi_i >= 0`` over
all of F's facets; a set keeps only the nearby ones.
"""

from dataclasses import dataclass

import numpy as np

from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.collision.polytope import polytope_of, segment_closest
from contact_lcp.exceptions import SceneError

#: a static facet is covered when its corners are within this (times the piece's size)
#: of another static piece or the ground
_COVER_TOL = 1e-6
#: tolerance of the normal-cone tests of an edge-edge direction: it may leave an edge's
#: cone by this (sine of about 1 degree), so that an edge lying on a slightly tilted face
#: (a tilted peg's side against a rim) still gets its plane
_CONE_TOL = 0.02
#: the edge directions of a vertex set (none: its point is a material point of V)
_NO_EDGE = np.zeros((2, 3))


@dataclass(frozen=True, eq=False)
class FacetSets:
    """``S`` facet sets with ``F`` facets in all, facet-major arrays.

    Attributes
    ----------
    point : (S, 3) ndarray
        The set's point in W (vertex of V, or virtual vertex on V's edge) [m].
    joint_v, joint_f : (S,) int ndarray
        World-model joints moving V (the point) and F (the facets); 0 = fixed to W.
    geom_v, geom_f : (S,) int ndarray
        Geometry indices of V and F.
    kind : (S,) int ndarray
        0 vertex of V, 1 virtual vertex on an edge of V.
    mu : (S,) ndarray
        Friction coefficient of the pair.
    start : (S + 1,) int ndarray
        Facets of set s are ``start[s]:start[s + 1]``.
    normal : (F, 3) ndarray
        Unit facet normals in W, out of F.
    psi : (F,) ndarray
        Signed distance of the set's point to each facet plane [m].
    R_WC : (F, 3, 3) ndarray
        Frames (n, t1, t2) of the facets (``tangent_basis`` of the normal).
    J : (3F, nv) ndarray
        Rows ``3f + j``: axis j of facet f's frame dotted with ``v_V - v_F`` at the point
        [m/s per unit of v]; the first of each three gives ``d psi_f / dt``.
    edge : (S, 2, 3) ndarray, optional
        Unit directions in W of V's edge and F's edge of an edge set (zeros for a vertex
        set): the lines along which the closest points slide during a step.
    Jw : (S, 2, 3, nv) ndarray, optional
        Angular velocities in W of V and of F [rad/s per unit of v]; with ``edge`` they
        give the set's rows at the material points the step carries to the contact (see
        :func:`contact_lcp.contact.facet_lcp.sliding_rows`). None: rows at the point only.
    """

    point: np.ndarray
    joint_v: np.ndarray
    joint_f: np.ndarray
    geom_v: np.ndarray
    geom_f: np.ndarray
    kind: np.ndarray
    mu: np.ndarray
    start: np.ndarray
    normal: np.ndarray
    psi: np.ndarray
    R_WC: np.ndarray
    J: np.ndarray
    edge: np.ndarray = None
    Jw: np.ndarray = None

    def __len__(self):
        return int(self.point.shape[0])

    @property
    def num_facets(self):
        return int(self.psi.shape[0])

    @property
    def set_of(self):
        """(F,) index of the set of each facet."""
        return np.repeat(np.arange(len(self)), np.diff(self.start))

    def gap(self):
        """(S,) ``max_i psi_i`` of each set [m]: < 0 when its point is inside F."""
        if not len(self):
            return np.zeros(0)
        return np.maximum.reduceat(self.psi, self.start[:-1])


class FacetSetFinder:
    """Finds the facet sets of a world's candidate pairs.

    Parameters
    ----------
    detector : contact_lcp.collision.ContactDetector
        Gives the world, the candidate pairs with their friction and the activation
        distance.

    Raises
    ------
    SceneError
        A candidate pair with a shape that is neither a convex polytope nor the ground
        (the facet-set model needs polytopes).
    """

    def __init__(self, detector):
        self.detector = detector
        self.world = detector.world
        self._pairs = detector.candidate_pairs
        gm = self.world.collision_model
        objs = list(gm.geometryObjects)
        self._joints = [int(o.parentJoint) for o in objs]
        self._ground = [self.world.geometry_owner[i] == "ground" for i in range(len(objs))]
        self._poly = [None if g else polytope_of(o.geometry) for g, o in zip(self._ground, objs)]
        for i, j, _ in self._pairs:
            for g in (i, j):
                if not self._ground[g] and self._poly[g] is None:
                    raise SceneError(
                        f"facet sets need convex polytopes (box or convex mesh hull) or the "
                        f"ground; geometry {objs[g].name!r} is a "
                        f"{type(objs[g].geometry).__name__}")
        self._outer = self._boundary_facets(objs)
        self._outer_edges = [None if P is None else np.all(o[P.edge_facets], axis=1)
                             for P, o in zip(self._poly, self._outer)]
        self._joined_ends = self._joined_edge_ends(objs)

    def _joined_edge_ends(self, objs):
        """(E, 2) bool per geometry: the end of a static edge lies on another static piece
        (a hole's rim edge ending on the next wall), so the edge's line goes on into solid
        and its edge-edge contacts are searched a little past that end (an edge sliding in
        from the neighbour's side within the step is then already held)."""
        static = [k for k, P in enumerate(self._poly) if P is not None and self._joints[k] == 0]
        out = [None if P is None else np.zeros((len(P.edges), 2), dtype=bool)
               for P in self._poly]
        for a in static:
            P, Xa = self._poly[a], objs[a].placement.homogeneous
            V = P.vertices @ Xa[:3, :3].T + Xa[:3, 3]
            tol = _COVER_TOL * float(np.ptp(V, axis=0).max())
            for b in static:
                if b == a:
                    continue
                Q, Xb = self._poly[b], objs[b].placement.homogeneous
                psi = ((V - Xb[:3, 3]) @ Xb[:3, :3]) @ Q.normals.T - Q.offsets
                on = psi.max(axis=1) <= tol
                out[a] |= on[P.edges]
        return out

    def _boundary_facets(self, objs):
        """(F,) bool per geometry: the facet is on the boundary of the static parts.

        A facet of a static piece is internal when its outward side is covered by the
        ground or by another static piece (a wall's bottom on the floor, two ramp boxes
        abutting at a seam): a point behind such a facet is inside the union, so the facet
        must not count as free space in a set. Moving pieces keep every facet.
        """
        static = [k for k, P in enumerate(self._poly) if P is not None and self._joints[k] == 0]
        X = {k: objs[k].placement.homogeneous for k in static}
        h = self.world.ground_height
        out = [None if P is None else np.ones(P.num_facets, dtype=bool) for P in self._poly]
        for a in static:
            P, Ra, ta = self._poly[a], X[a][:3, :3], X[a][:3, 3]
            V = P.vertices @ Ra.T + ta
            scale = float(np.ptp(V, axis=0).max())
            tol = _COVER_TOL * scale
            for f in range(P.num_facets):
                tri = P.triangles[P.tri_facet == f]
                corners = V[np.unique(tri)]
                probe = corners.mean(axis=0) + tol * (Ra @ P.normals[f])
                if h is not None and probe[2] < h and np.all(corners[:, 2] <= h + tol):
                    out[a][f] = False
                    continue
                for b in static:
                    if b == a:
                        continue
                    Q, Rb, tb = self._poly[b], X[b][:3, :3], X[b][:3, 3]
                    inside = ((np.vstack([corners, probe]) - tb) @ Rb) @ Q.normals.T - Q.offsets
                    if np.all(inside[:-1].max(axis=1) <= tol) and inside[-1].max() < 0.0:
                        out[a][f] = False
                        break
        return out

    def find(self, q, lookahead=None):
        """The facet sets at ``q``, on the pairs and placements of the detector's broad
        phase (:meth:`ContactDetector.broad_phase`: those of its last ``detect`` when that
        was at ``q`` and ``lookahead``; a pair it leaves out has no set, since a set's
        facets are within ``eps`` of its point).

        Parameters
        ----------
        q : (nq,) ndarray
        lookahead : (ngeoms,) ndarray, optional
            Extra distance per geometry [m], as for the detector.

        Returns
        -------
        FacetSets
        """
        X, near = self.detector.broad_phase(q, lookahead)
        eps0 = self.detector.activation_distance
        sets = []
        for p in near.tolist():
            i, j, mu = self._pairs[p]
            eps = eps0 if lookahead is None else eps0 + lookahead[i] + lookahead[j]
            if self._ground[i] or self._ground[j]:
                body = j if self._ground[i] else i
                sets += self._ground_sets(body, i if body == j else j, X[body], eps, mu)
                continue
            sets += self._vertex_sets(i, j, X, eps, mu) + self._vertex_sets(j, i, X, eps, mu)
            sets += self._edge_sets(i, j, X, eps, mu, eps0)
        return self._pack(sets, q)

    # --------------------------------------------------------------- set kinds
    def _ground_sets(self, v, g, X, eps, mu):
        h = self.world.ground_height
        P = self._poly[v].vertices @ X[:3, :3].T + X[:3, 3]
        n = np.array([0.0, 0.0, 1.0])
        return [(p, v, g, 0, mu, n[None], np.array([p[2] - h]), _NO_EDGE)
                for p in P if p[2] - h <= eps]

    def _vertex_sets(self, v, f, X, eps, mu):
        """Vertices of piece v against the facets of piece f."""
        Pv, Pf = self._poly[v], self._poly[f]
        Rv, tv, Rf, tf = X[v][:3, :3], X[v][:3, 3], X[f][:3, :3], X[f][:3, 3]
        P_W = Pv.vertices @ Rv.T + tv
        P_F = (P_W - tf) @ Rf  # in f's frame
        psi = P_F @ Pf.normals.T - Pf.offsets  # (V, F)
        cand = np.flatnonzero(psi.max(axis=1) <= eps)
        if not cand.size:
            return []
        close = (Pf.facet_distances(P_F[cand]) <= eps) & self._outer[f]  # (k, F)
        normals_W = Pf.normals @ Rf.T
        return [(P_W[k], v, f, 0, mu, normals_W[near], psi[k, near], _NO_EDGE)
                for k, row in zip(cand.tolist(), close) if (near := np.flatnonzero(row)).size]

    def _edge_sets(self, v, f, X, eps, mu, margin):
        """Edges of piece v crossing edges of piece f: one facet, the edge-edge plane."""
        Pv, Pf = self._poly[v], self._poly[f]
        if not (len(Pv.edges) and len(Pf.edges)):
            return []
        Rv, Rf = X[v][:3, :3], X[f][:3, :3]
        Vv = Pv.vertices @ Rv.T + X[v][:3, 3]
        Vf = Pf.vertices @ Rf.T + X[f][:3, 3]
        a0, a1 = _extend(Vv[Pv.edges[:, 0]], Vv[Pv.edges[:, 1]], self._joined_ends[v], eps)
        b0, b1 = _extend(Vf[Pf.edges[:, 0]], Vf[Pf.edges[:, 1]], self._joined_ends[f], eps)
        # Only edges whose boxes reach the other piece's box grown by 2 eps (its edges
        # lengthened by up to eps, then eps between them) can be within eps of its edges.
        ev = np.flatnonzero(self._outer_edges[v] & _boxes_meet(a0, a1, Vf, 2.0 * eps))
        ef = np.flatnonzero(self._outer_edges[f] & _boxes_meet(b0, b1, Vv, 2.0 * eps))
        if not (ev.size and ef.size):
            return []
        a0, a1, b0, b1 = a0[ev], a1[ev], b0[ef], b1[ef]
        s, t, x, y = segment_closest(a0, a1, b0, b1)
        dist = np.linalg.norm(x - y, axis=2)
        la = np.linalg.norm(a1 - a0, axis=1)[:, None]
        lb = np.linalg.norm(b1 - b0, axis=1)[None, :]
        mv = margin if self._joints[v] else 0.0
        mf = margin if self._joints[f] else 0.0
        with np.errstate(invalid="ignore"):  # nan for parallel edges: not kept
            ok = ((dist <= eps) & (np.minimum(s, 1 - s) * la > mv)
                  & (np.minimum(t, 1 - t) * lb > mf))
        ka, kb = np.nonzero(ok)
        if not ka.size:
            return []
        ia, ib = ev[ka], ef[kb]
        e = np.stack([a1[ka] - a0[ka], b1[kb] - b0[kb]], axis=1)   # (K, 2, 3)
        e /= np.linalg.norm(e, axis=2)[:, :, None]
        n = np.cross(e[:, 0], e[:, 1])
        n /= np.linalg.norm(n, axis=1)[:, None]
        # n must leave f's edge (within both its facets' normal cones) and enter v's edge
        cone_f = np.einsum("kji,ki->kj", (Pf.normals @ Rf.T)[Pf.edge_facets[ib]], n)
        cone_v = np.einsum("kji,ki->kj", (Pv.normals @ Rv.T)[Pv.edge_facets[ia]], n)
        flip = np.all(cone_f <= _CONE_TOL, axis=1) & np.all(cone_v >= -_CONE_TOL, axis=1)
        sign = np.where(flip, -1.0, 1.0)
        n, cone_f, cone_v = n * sign[:, None], cone_f * sign[:, None], cone_v * sign[:, None]
        # not a supporting direction of both edges: no edge-edge contact
        keep = ~(np.any(cone_f < -_CONE_TOL, axis=1) | np.any(cone_v > _CONE_TOL, axis=1))
        xs, ys = x[ka, kb], y[ka, kb]
        psi = np.einsum("ki,ki->k", n, xs - ys)
        return [(xs[k], v, f, 1, mu, n[k][None], psi[k:k + 1], e[k])
                for k in np.flatnonzero(keep).tolist()]

    # -------------------------------------------------------------------- pack
    def _pack(self, sets, q):
        nv = self.world.model.nv
        if not sets:
            z = np.zeros(0, dtype=np.int64)
            return FacetSets(np.zeros((0, 3)), z, z, z, z, z, np.zeros(0), np.zeros(1, np.int64),
                             np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3, 3)), np.zeros((0, nv)),
                             np.zeros((0, 2, 3)), np.zeros((0, 2, 3, nv)))
        sizes = np.array([len(s[6]) for s in sets])
        start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        normal = np.vstack([s[5] for s in sets])
        psi = np.concatenate([s[6] for s in sets])
        R = _tangent_bases(normal)
        jv = np.array([self._joints[s[1]] for s in sets], dtype=np.int64)
        jf = np.array([self._joints[s[2]] for s in sets], dtype=np.int64)
        point = np.array([s[0] for s in sets], dtype=float)
        rep = lambda a: np.repeat(a, sizes, axis=0)
        F = int(start[-1])
        # One Jacobian call: the facet rows, then for each moving joint the velocity rows
        # at the points 0, e_x, e_y, e_z, which differ by w x e (its angular velocity).
        joints = np.unique(np.concatenate([jv, jf]))
        joints = joints[joints != 0]
        m = joints.size
        ja = np.concatenate([rep(jf), np.zeros(4 * m, np.int64)])
        jb = np.concatenate([rep(jv), np.repeat(joints, 4)])
        p_W = np.vstack([rep(point), np.tile(np.vstack([np.zeros(3), np.eye(3)]), (m, 1))])
        R_all = np.concatenate([R, np.broadcast_to(np.eye(3), (4 * m, 3, 3))])
        z = np.zeros(F + 4 * m, np.int64)
        rows = ContactSet((), z, z, ja, jb, p_W, R_all, np.zeros(F + 4 * m), np.zeros(F + 4 * m))
        J_all = self.world.contact_jacobian(q, rows)
        J = J_all[: 3 * F]
        D = J_all[3 * F:].reshape(m, 4, 3, nv)
        D = D[:, 1:] - D[:, :1]                      # D[:, a] = w x e_a
        W = np.zeros((self.world.model.njoints, 3, nv))
        W[joints, 0] = D[:, 1, 2]                    # (w x e_y)_z = w_x
        W[joints, 1] = D[:, 2, 0]                    # (w x e_z)_x = w_y
        W[joints, 2] = D[:, 0, 1]                    # (w x e_x)_y = w_z
        Jw = np.stack([W[jv], W[jf]], axis=1)
        return FacetSets(point, jv, jf, np.array([s[1] for s in sets], dtype=np.int64),
                         np.array([s[2] for s in sets], dtype=np.int64),
                         np.array([s[3] for s in sets], dtype=np.int64),
                         np.array([s[4] for s in sets], dtype=float), start, normal, psi, R, J,
                         np.array([s[7] for s in sets], dtype=float), Jw)


def _tangent_bases(N):
    """(F, 3, 3) frames (n, t1, t2) of the unit normals ``N`` (F, 3): the rule of
    :func:`~contact_lcp.collision.contact_point.tangent_basis`, for all at once."""
    r = np.where((np.abs(N[:, 0]) < 0.9)[:, None], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    t1 = r - np.sum(r * N, axis=1)[:, None] * N
    t1 /= np.sqrt(np.sum(t1 * t1, axis=1))[:, None]
    return np.stack([N, t1, np.cross(N, t1)], axis=2)


def _boxes_meet(p0, p1, V, eps):
    """(E,) bool: the bounding box of segment ``p0 p1`` (E, 3) meets that of the points
    ``V`` (n, 3) grown by ``eps`` [m]."""
    lo, hi = V.min(axis=0) - eps, V.max(axis=0) + eps
    return np.all((np.minimum(p0, p1) <= hi) & (np.maximum(p0, p1) >= lo), axis=1)


def _extend(p0, p1, joined, eps):
    """Edges ``p0 p1`` (E, 3) lengthened by ``eps`` [m] at the ends flagged in ``joined``
    (E, 2)."""
    d = p1 - p0
    d = d / np.linalg.norm(d, axis=1)[:, None]
    return p0 - eps * joined[:, :1] * d, p1 + eps * joined[:, 1:] * d
