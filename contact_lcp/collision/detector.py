"""Contact points of a :class:`~contact_lcp.dynamics.World` at a configuration.

Pairs are the world's candidate collision pairs (``World.pairs``):
robot-ground, robot-body, body-body, body-ground, robot-robot and, with
``self_collision=True``, the robot self-collision pairs left after the SRDF and adjacency
filters. Each pair whose distance is <= ``activation_distance`` contributes points
(Anitescu & Hart's look-ahead: the stepper passes ``v_max h``).

How points are found
    * Ground pairs (exact, per point): vertices of boxes, convex hulls and meshes whose
      height is <= activation (a flat sole gives its polygon); sphere: lowest point;
      capsule: the lowest point of each end sphere; cylinder and cone: the lowest point
      of each rim plus ``segments`` samples per rim (a cylinder on its flat end gives a
      polygon); ellipsoid: its support point; other shapes: one coal distance query.
    * Other pairs: ``coal.collide`` with ``security_margin = activation_distance``, then
      ``coal.computeContactPatch`` (tolerance ``patch_tolerance``) for a polygon. Each
      patch point's distance is re-measured along the normal through both shapes when
      they are boxes, convex polytopes or spheres (else it keeps the pair distance), and
      points farther than the activation distance are dropped. Meshes kept exact give
      coal's per-triangle contacts.

Reduction (Yamane & Nakamura): in each pair, a point within ``reduction_distance`` of an
earlier kept point is dropped; with ``remove_interior`` only the vertices of the convex
hull of the pair's points (in the contact plane) are kept. Points are never dropped
because of their velocity.

Order: pairs in ``World.pairs`` order, then points in detection order, so that the
same configuration always gives the same list.
"""

import coal
import numpy as np

from contact_lcp.collision.broadphase import (
    lever_bound,
    lever_matrix,
    reach_bound,
    to_read,
    update_centres,
)
from contact_lcp.collision.closed_forms import collide
from contact_lcp.collision.contact_point import tangent_basis
from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.collision.general_pairs import GeneralPairs
from contact_lcp.collision.reduction import combine_friction
from contact_lcp.collision.spheres import (
    BOX_SPHERE,
    GROUND_SPHERE,
    SPHERE_BOX,
    SPHERE_SPHERE,
)
from contact_lcp.collision.support import local_halfspaces, local_vertices
from contact_lcp.dynamics.world import same_vector
from contact_lcp.exceptions import SceneError

GROUND = "ground"
_E_Z = np.array([0.0, 0.0, 1.0])
_GROUND_FRAME = tangent_basis(_E_Z)
#: collide()'s tree arrays for a world whose placements are read from Pinocchio
_NO_TREE = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3)),
            np.zeros(0, dtype=np.int64), np.zeros((0, 4, 4)), np.zeros(0, dtype=np.int64),
            np.zeros((0, 4, 4)))


class ContactDetector(GeneralPairs):
    """Finds the contact points of a world.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    activation_distance : float
        Pairs and points with signed distance <= this are reported [m] (>= 0).
    reduction_distance : float
        Points of a pair closer than this to an earlier point are dropped [m].
    remove_interior : bool
        Keep only the hull vertices of each pair's points (in the contact plane).
    friction_of : dict or callable or None
        Friction coefficient of a surface by name (link name, body name or
        ``"ground"``); a callable may return None to fall through. Then the body's
        ``BodySpec.friction``, then ``ground_friction`` for the ground, then
        ``default_friction``.
    default_friction : float
        Friction of robot links and bodies without their own [-].
    ground_friction : float
        Friction of the ground surface [-].
    self_collision : bool
        Include the robot self-collision pairs (False by default: robot links then
        only touch the ground, bodies and other robots).
    patch_tolerance : float or None
        Tolerance of coal's contact patches [m]; None for ``activation_distance``
        (at least 1e-4).
    flat_tolerance : float
        Points of one pair whose distance is within this of the pair's deepest point are
        treated as one flat patch at the deepest distance [m] (0, the default: exact
        distances). For nearly flat soles (a mesh hull flat to 0.5 mm) it gives a steady
        support polygon instead of rocking from vertex to vertex; the body then rests up to
        ``flat_tolerance`` higher than its exact geometry would.
    max_points_per_pair : int or None
        Keep at most this many points per pair after reduction: the deepest, then the
        points farthest from those kept (None: no limit). A flat Talos sole gives about
        10 hull points of which a handful carry load; 4 to 6 keep the support polygon.
    segments : int
        Samples per rim of cylinders and cones, and per curved shape in patches.
    max_contacts_mesh : int
        Contacts asked of coal for exact mesh pairs.
    """

    def __init__(self, world, *, activation_distance, reduction_distance=1e-3,
                 remove_interior=False, friction_of=None, default_friction=0.8,
                 ground_friction=0.8, self_collision=False, patch_tolerance=None,
                 flat_tolerance=0.0, max_points_per_pair=None, segments=8,
                 max_contacts_mesh=16):
        for name, val in (("activation_distance", activation_distance),
                          ("reduction_distance", reduction_distance),
                          ("default_friction", default_friction),
                          ("ground_friction", ground_friction),
                          ("flat_tolerance", flat_tolerance)):
            if not (np.isfinite(val) and val >= 0):
                raise SceneError(f"{name} must be finite and >= 0; received {val!r}")
        if int(segments) < 3:
            raise SceneError(f"segments must be >= 3; received {segments!r}")
        self.world = world
        self.activation_distance = float(activation_distance)
        self.reduction_distance = float(reduction_distance)
        self.remove_interior = bool(remove_interior)
        self.self_collision = bool(self_collision)
        self.flat_tolerance = float(flat_tolerance)
        if max_points_per_pair is not None and int(max_points_per_pair) < 1:
            raise SceneError(f"max_points_per_pair must be >= 1 or None; received {max_points_per_pair!r}")
        self.max_points_per_pair = None if max_points_per_pair is None else int(max_points_per_pair)
        self.segments = int(segments)
        self.patch_tolerance = (max(self.activation_distance, 1e-4) if patch_tolerance is None
                                else float(patch_tolerance))
        self._friction_of = friction_of
        self._default_friction = float(default_friction)
        self._ground_friction = float(ground_friction)
        self._body_friction = {b.name: b.friction for b in world.bodies
                               if getattr(b, "friction", None) is not None}
        self._max_contacts_mesh = int(max_contacts_mesh)
        #: (ngeom,) bool or None: geometries that cannot move this step (sleeping bodies,
        #: the ground); :meth:`detect` skips pairs of two of them (contact_lcp.sim.sleep)
        self.still_geometries = None
        self._setup()

    # ----------------------------------------------------------------- set-up
    def _setup(self):
        w, gm = self.world, self.world.collision_model
        model = w.model
        objs = list(gm.geometryObjects)
        self._shapes = [o.geometry for o in objs]
        self._joints = [int(o.parentJoint) for o in objs]
        self._names = [GROUND if w.geometry_owner[i] == GROUND
                       else model.frames[o.parentFrame].name for i, o in enumerate(objs)]
        self._verts = [local_vertices(s) for s in self._shapes]
        self._halfspaces = [local_halfspaces(s) for s in self._shapes]
        self._is_mesh = [isinstance(s, coal.BVHModelBase) for s in self._shapes]
        centers, radii = [], []
        for s in self._shapes:
            if isinstance(s, (coal.Halfspace, coal.Plane)):
                centers.append(np.zeros(3))
                radii.append(np.inf)
            else:
                s.computeLocalAABB()
                centers.append(np.asarray(s.aabb_center, dtype=float))
                radii.append(float(s.aabb_radius))
        self._centers, self._radii = np.array(centers).reshape(-1, 3), np.array(radii)
        self._levers = lever_matrix(model, objs, self._centers, self._radii)
        # the compiled ground path: every geometry's local vertices in one array
        sizes = [0 if v is None else len(v) for v in self._verts]
        self._vstart = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._vall = (np.concatenate([v for v in self._verts if v is not None]).astype(float)
                      if any(sizes) else np.zeros((0, 3)))
        pairs = []
        for i, j in w.pairs:
            if (i, j) in w.self_pairs and not self.self_collision:
                continue
            if self._names[j] == GROUND:
                i, j = j, i
            pairs.append((i, j, self._pair_friction(self._names[i], self._names[j])))
        self._pairs = pairs
        ground = np.array([self._names[i] == GROUND for i, _, _ in pairs], dtype=bool)
        first = np.array([i for i, _, _ in pairs], dtype=np.int64)
        second = np.array([j for _, j, _ in pairs], dtype=np.int64)
        self._first, self._second = first, second
        self._request = coal.CollisionRequest()
        self._request.security_margin = self.activation_distance
        self._request.enable_contact = True
        self._request.num_max_contacts = 1
        self._mesh_request = coal.CollisionRequest()
        self._mesh_request.security_margin = self.activation_distance
        self._mesh_request.enable_contact = True
        self._mesh_request.num_max_contacts = self._max_contacts_mesh
        self._patch_request = coal.ContactPatchRequest(1, self.segments, self.patch_tolerance)
        # broad-phase state (see advance): placements as last read, the centres of the
        # bounding spheres then, and how far each geometry may have moved since
        ng = len(objs)
        self._is_moving = np.array([j != 0 for j in self._joints], dtype=bool)
        self._moving = np.flatnonzero(self._is_moving)
        self._X = w.geometry_placements()
        self._c = np.einsum("kij,kj->ki", self._X[:, :3, :3], self._centers) + self._X[:, :3, 3]
        self._drift = np.zeros(ng)
        # placements computed from q when the tree allows it (else read from Pinocchio);
        # collide() takes the recursion's arrays (empty ones of the same types without)
        self._fk = w.geometry_fk
        self._tree = _NO_TREE if self._fk is None else self._fk.arrays
        self._no_still = np.zeros(0, dtype=np.bool_)
        self._all_geoms = np.arange(ng)
        self._expect_q = None
        self._h = -np.inf if w.ground_height is None else float(w.ground_height)
        self._is_ground_pair = ground
        self._no_lookahead = np.zeros(ng)
        self._names_t = tuple(self._names)
        self._joints_arr = np.array(self._joints, dtype=np.int64)
        self._pair_mu = np.array([mu for _, _, mu in pairs], dtype=float)
        # ground pairs of polytopes go through the compiled pass (with a cap on points;
        # without one, large patches go through qhull on the general path)
        cap = self.max_points_per_pair or 0
        has_vertices = self._vstart[self._second + 1] > self._vstart[self._second]
        self._compiled_pair = ground & has_vertices & (cap > 0 or not self.remove_interior)
        # spheres against the ground, spheres and boxes: closed forms (spheres.py)
        self._sphere_r = np.array([float(sh.radius) if isinstance(sh, coal.Sphere) else np.nan
                                   for sh in self._shapes])
        self._box_half = np.array([np.asarray(sh.halfSide, dtype=float)
                                   if isinstance(sh, coal.Box) else np.full(3, np.nan)
                                   for sh in self._shapes]).reshape(ng, 3)
        sph, box = ~np.isnan(self._sphere_r), ~np.isnan(self._box_half[:, 0])
        f_, s_ = self._first, self._second
        kind = np.zeros(len(pairs), dtype=np.int64)
        kind[ground & sph[s_]] = GROUND_SPHERE
        kind[~ground & sph[f_] & sph[s_]] = SPHERE_SPHERE
        kind[~ground & box[f_] & sph[s_]] = BOX_SPHERE
        kind[~ground & sph[f_] & box[s_]] = SPHERE_BOX
        kind[self._compiled_pair] = 0
        self._sphere_kind = kind
        # box against box: closed form (boxes.py), reduced as the compiled ground pass
        self._box_pair = ~ground & box[f_] & box[s_] & (cap > 0 or not self.remove_interior)
        # the closed forms a pair of this world takes (closed_forms compiles only those)
        self._kinds = (True if (kind > 0).any() else None,
                       True if self._box_pair.any() else None)
        self._pair_index = -np.ones((ng, ng), dtype=np.int64)
        for p, (i, j, _) in enumerate(pairs):
            self._pair_index[i, j] = p

    def surface_friction(self, name):
        """Friction coefficient of one surface (see the class docstring for the order)."""
        mu = None
        f = self._friction_of
        if isinstance(f, dict):
            mu = f.get(name)
        elif callable(f):
            mu = f(name)
        if mu is None:
            mu = self._body_friction.get(name)
        if mu is None:
            mu = self._ground_friction if name == GROUND else self._default_friction
        mu = float(mu)
        if not (np.isfinite(mu) and mu >= 0):
            raise SceneError(f"friction of surface {name!r} must be finite and >= 0; got {mu!r}")
        return mu

    def _pair_friction(self, a, b):
        return combine_friction(self.surface_friction(a), self.surface_friction(b))

    @property
    def candidate_pairs(self):
        """The searched pairs ``(i, j, mu)``: geometry indices (the ground first) and the
        pair's friction coefficient, in search order."""
        return tuple(self._pairs)

    # ----------------------------------------------------------------- queries
    def lookahead(self, v, h, cap):
        """(ngeoms,) ``min(h L |v|, cap)`` [m]: how far each geometry may travel in a step
        of ``h`` [s] at ``v`` (nv,), at most ``cap`` [m] (one compiled pass). ``L |v|`` bounds
        the speed of any point of each geometry (``L`` the levers of :func:`lever_matrix`,
        0 for geometries fixed to the world)."""
        out = np.zeros(self._levers.shape[0])
        lever_bound(self._levers, v, h, out)
        np.minimum(out, cap, out=out)
        return out

    @property
    def levers(self):
        """(ngeoms, nv) levers ``L``: no point of geometry g moves faster than
        ``sum_c L[g, c] |v_c|`` (:func:`~contact_lcp.collision.broadphase.lever_matrix`)."""
        return self._levers

    def warm_up(self):
        """Reduce a small patch once, as a face patch and as points with their own
        normals: the points of a pair that no closed form takes (or that its closed
        form leaves to the general path, as two boxes' parallel edges) are reduced from
        Python, and that code would otherwise load (tens of milliseconds) at the step
        where such a pair first touches. Nothing the detector keeps changes."""
        P = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.1, 0.1, 0.0],
                      [0.05, 0.05, 0.0]])
        d = np.array([0.0, 1e-4, 2e-4, 3e-4, 4e-4])
        n = np.array([0.0, 0.0, 1.0])
        if self.max_points_per_pair is not None:
            self._reduce_face(P, n, d)
        self._reduce_points(P, np.tile(n, (P.shape[0], 1)), d)

    def reach(self, v_a, v_b, h, cap):
        """:meth:`lookahead` at the larger of ``|v_a|`` and ``|v_b|`` per coordinate (the
        speeds at the start of a step and after its free motion or its impulses)."""
        return reach_bound(self._levers, v_a, v_b, float(h), float(cap))

    def advance(self, q_next, v, h):
        """Tell the broad phase that the world moved to ``q_next`` in a step of ``h`` [s]
        at velocity ``v`` (nv; in the frames of the step's start, as the contact rows): no
        point of geometry g travelled farther than ``h (L |v|)_g``.

        Placements are then read only for geometries that such a bound cannot keep out
        of reach of anything (Python reads of placements cost ~0.5 us each: a robot has
        dozens of links, of which its feet touch the ground). Without this call, or at
        any other ``q``, :meth:`detect` reads them all. Worlds whose placements are
        computed from ``q`` (:mod:`contact_lcp.dynamics.placements`) need none of this.
        """
        if self._expect_q is None or self._fk is not None:
            return
        lever_bound(self._levers, np.asarray(v, dtype=float), float(h), self._drift)
        self._expect_q = np.array(q_next, dtype=float)

    def _read_placements(self, q, lookahead):
        """Placements read from Pinocchio (a world whose placements are not computed
        from ``q``): (ngeoms, 4, 4), exact for every geometry that may be near another,
        and the bounding-sphere centres updated for them; the others keep their last
        reading."""
        oMg = self.world.collision_data.oMg
        X, c, drift = self._X, self._c, self._drift
        if self._expect_q is None or not same_vector(np.asarray(q, dtype=float), self._expect_q):
            read = np.arange(X.shape[0])
        else:  # the spheres grown by the drift bound the geometries: who may be near?
            read = to_read(c, drift, lookahead, self._radii, self._first, self._second,
                           self._is_ground_pair, self._is_moving, self._h, self.activation_distance)
        for g in read.tolist():
            X[g] = oMg[g].homogeneous
        if read.size:
            update_centres(c, X, self._centers, read)
            drift[read] = 0.0
        self._expect_q = np.array(q, dtype=float)
        return X

    def detect(self, q, lookahead=None):
        """Contact points at ``q``, in a deterministic order.

        Runs ``world.forward(q)`` unless it was the last configuration forwarded.

        Parameters
        ----------
        q : (nq,) ndarray
        lookahead : (ngeoms,) ndarray, optional
            Extra distance per geometry [m] (its speed times the step): a pair is searched
            out to ``activation_distance + lookahead[i] + lookahead[j]``, so that a body
            approaching fast is found before it passes through (the caller then keeps the
            points that the step can close).

        Returns
        -------
        ContactSet
        """
        self.world.ensure_forward(q)
        eps0, h = self.activation_distance, self._h
        q = np.asarray(q, dtype=float)
        la = self._no_lookahead if lookahead is None else np.asarray(lookahead, float)
        fk = self._fk is not None
        X = self._X if fk else self._read_placements(q, la)
        still = self._no_still if self.still_geometries is None else self.still_geometries
        # the placements, near pairs and closed forms in one compiled call
        X, near, P, R, d, a, b, ja, jb, mu, rest = collide(
            q, fk, self._tree, X, self._c, self._centers, self._all_geoms, la, self._radii,
            self._is_ground_pair, still, self._vall, self._vstart, h, eps0,
            self.reduction_distance ** 2, self.flat_tolerance, bool(self.remove_interior),
            int(self.max_points_per_pair or 0), self._first, self._second,
            self._compiled_pair, self._sphere_kind, self._box_pair, self._sphere_r,
            self._box_half, _GROUND_FRAME, self._joints_arr, self._pair_mu, *self._kinds)
        self._X = X
        # for broad_phase(); placements of geometries in near pairs are all fresh (a
        # geometry not read this step is out of reach of everything, see
        # _read_placements)
        self._broad = (q.copy(), la, X, near)
        closed = ContactSet(self._names_t, a, b, ja, jb, P, R, d, mu)
        if not rest.size:
            return closed
        parts = [closed] if d.shape[0] else []
        blocks = {}
        for p in rest.tolist():
            i, j, mu = self._pairs[p]
            eps = eps0 + la[i] + la[j]
            if self._names[i] == GROUND:
                hit = self._ground_pair(j, (X[j, :3, :3], X[j, :3, 3]), h, eps)
            else:
                hit = self._shape_pair(i, j, X, eps)
            block = self._reduce(i, j, mu, hit)
            if block is not None:
                blocks[p] = block
        if blocks:
            parts.append(ContactSet.concatenate(self._names, [blocks[p] for p in sorted(blocks)]))
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return ContactSet.empty(self._names_t)
        return self._merge(parts)

    @property
    def surface_names(self):
        """Names of the surfaces (link, body or ``"ground"``) of every geometry, the
        ``names`` of the :class:`ContactSet` s it returns."""
        return self._names_t

    def _merge(self, parts):
        """One ContactSet of sets in pair order (each set is in pair order)."""
        key = np.concatenate([self._pair_index[c.body_a, c.body_b] for c in parts])
        order = np.argsort(key, kind="stable")
        cat = [np.concatenate([getattr(c, f) for c in parts])
               for f in ("body_a", "body_b", "joint_a", "joint_b", "p_W", "R_WC", "distance", "mu")]
        return ContactSet(self._names_t, *cat).select(order)

    def broad_phase(self, q, lookahead=None):
        """The placements and near pairs of :meth:`detect` at ``q`` (run if its last call
        was at another ``q`` or ``lookahead``), for other queries on the same pairs.

        Returns
        -------
        X : (ngeoms, 4, 4) ndarray
            Geometry placements in W (read-only).
        near : (p,) int ndarray
            Positions in :attr:`candidate_pairs` of the pairs whose bounding spheres (the
            ground's plane) are within ``activation_distance + lookahead[i] +
            lookahead[j]``.
        """
        la = self._no_lookahead if lookahead is None else np.asarray(lookahead, dtype=float)
        last = getattr(self, "_broad", None)
        if last is None or not (np.array_equal(last[0], q) and np.array_equal(last[1], la)):
            self.detect(q, la)
            last = self._broad
        return last[2], last[3]

