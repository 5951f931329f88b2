"""The general path of :class:`~contact_lcp.collision.detector.ContactDetector`: pairs
without a closed form go through coal (collision, contact patch, each point re-measured
along the normal through both shapes), ground pairs of other shapes through
:func:`~contact_lcp.collision.support.ground_points`, then the reduction.

A mixin: it reads the detector's shapes, requests and settings (see its ``_setup``).
"""

import warnings

import coal
import numpy as np

from contact_lcp.collision.clip import best_face_normal
from contact_lcp.collision.clip_kernel import DEEPER, face_patch_gaps
from contact_lcp.collision.contact_point import tangent_basis
from contact_lcp.collision.contact_set import frames_of
from contact_lcp.collision.ground import reduce_patch
from contact_lcp.collision.reduction import (
    remove_close,
    spread_subset,
    support_vertices,
)
from contact_lcp.collision.support import ground_points, ray_interval, ray_intervals

_E_Z = np.array([0.0, 0.0, 1.0])
_PLANE_FIRST = np.array([1, 2, 0])  # frame columns (t1, t2, n): the patch's plane first


class GeneralPairs:
    """Pairs through coal and the reduction (mixed into the contact detector)."""

    def _ground_pair(self, j, placement, h, eps):
        """(P, N, d): points (k, 3), normals (k, 3), distances (k,) of shape j vs ground."""
        R, t = placement
        P, d = ground_points(self._shapes[j], self._verts[j], R, t, h, eps, self.segments)
        if P is None:  # shape without a closed form: one coal distance query
            plane = coal.Halfspace(_E_Z, h)
            res = coal.DistanceResult()
            dist = coal.distance(self._shapes[j], coal.Transform3s(R, t), plane,
                                 coal.Transform3s(), coal.DistanceRequest(), res)
            if dist > eps:
                return None
            P, d = np.array(res.getNearestPoint1())[None], np.array([dist])
        if len(d) == 0:
            return None
        return P - 0.5 * np.outer(d, _E_Z), np.tile(_E_Z, (len(d), 1)), d

    def _shape_pair(self, i, j, X, eps):
        """(P, N, d) between shapes i (A) and j (B) via coal, or None."""
        (Ri, ti), (Rj, tj) = (X[i, :3, :3], X[i, :3, 3]), (X[j, :3, :3], X[j, :3, 3])
        Ti, Tj = coal.Transform3s(Ri, ti), coal.Transform3s(Rj, tj)
        mesh = self._is_mesh[i] or self._is_mesh[j]
        request = self._mesh_request if mesh else self._request
        request.security_margin = eps
        res = coal.CollisionResult()
        coal.collide(self._shapes[i], Ti, self._shapes[j], Tj, request, res)
        if not res.isCollision():
            return None
        contacts = [res.getContact(k) for k in range(res.numContacts())]
        # A depth that is not finite or deeper than the smaller shape is wide, or a normal
        # pointing from B's centre towards A's, is not a contact: coal 3.0.3's GJK/EPA
        # returns such for a cylinder lying on a box face at gap 0 (8 deep with the
        # normal reversed, or 1.8e308; test_sim_disks). Left out, with a warning naming
        # the pair, rather than applied.
        deepest = 2.0 * min(self._radii[i], self._radii[j])
        towards = self._c[j] - self._c[i]
        closest = []
        for c in contacts:
            depth = float(c.penetration_depth)
            if not (np.isfinite(depth) and depth >= -deepest
                    and float(np.dot(c.normal, towards)) >= 0.0):
                self._implausible(i, j, depth)
            elif depth <= eps:
                closest.append((np.array(c.pos), np.array(c.normal), depth))
        if mesh or not closest:
            return _stack(closest)
        out = None
        if self._halfspaces[i] is not None and self._halfspaces[j] is not None:
            out = self._face_patch(i, j, (Ri, ti), (Rj, tj), closest[0][2], eps)
        if out is None:
            out = self._patch(i, j, Ti, Tj, res, closest[0][2], eps)
        if out and min(o[2] for o in out) > closest[0][2] + DEEPER:
            # the patch missed the deepest point (a deep edge crossing: its points are
            # measured along the normal where the overlap is shallower); coal's own point
            # joins it, measured along the patch's normal as the others
            pos = closest[0][0]
            out += self._measure(i, j, (Ri, ti), (Rj, tj), [pos], out[0][1], closest[0][2], eps)
        return _stack(out or closest[:1])

    def _implausible(self, i, j, depth):
        """Warn (once per pair) that coal gave pair (i, j) an implausible contact."""
        seen = self.__dict__.setdefault("_implausible_pairs", set())
        if (i, j) not in seen:
            seen.add((i, j))
            warnings.warn(
                f"coal returned an implausible contact ({-depth:.3g} m deep) between "
                f"{self._names[i]!r} and {self._names[j]!r}: deeper than either shape is "
                "wide, or its normal reversed; left out (a known coal GJK/EPA failure at "
                "touching cylinders; spheres or boxes avoid it)",
                RuntimeWarning, stacklevel=3)

    def _patch(self, i, j, Ti, Tj, res, d0, eps):
        """Contact patch points of a shape pair, each re-measured along the normal."""
        try:
            patches = coal.ContactPatchResult(self._patch_request)
            coal.computeContactPatch(self._shapes[i], Ti, self._shapes[j], Tj, res,
                                     self._patch_request, patches)
        except Exception:  # shapes without patch support keep the closest point
            return []
        if patches.numContactPatches() == 0:
            return []
        patch = patches.getContactPatch(0)
        points = [np.array(patch.getPoint(k)) for k in range(patch.size())]
        return self._measure(i, j, (Ti.getRotation(), Ti.getTranslation()),
                             (Tj.getRotation(), Tj.getTranslation()), points,
                             np.array(patch.getNormal()), d0, eps)

    def _face_patch(self, i, j, placement_i, placement_j, d0, eps):
        """Clipped support faces of two polytopes when a face realises their distance
        ``d0`` (see :mod:`contact_lcp.collision.clip`); None otherwise (edge-edge)."""
        (Ri, ti), (Rj, tj) = placement_i, placement_j
        VA, VB = self._verts[i] @ Ri.T + ti, self._verts[j] @ Rj.T + tj
        (Na, ba), (Nb, bb) = self._halfspaces[i], self._halfspaces[j]
        NA, NB = Na @ Ri.T, Nb @ Rj.T
        cA, cB = ba + NA @ ti, bb + NB @ tj
        n, sep = best_face_normal(VA, (NA, cA), VB, (NB, cB))
        if sep < d0 - 1e-6:  # the closest features are edges: coal's patch
            return None
        X, gaps, measured = face_patch_gaps(VA, NA, cA, VB, NB, cB, n, max(eps, 1e-6))
        if X.shape[0] == 0:
            return None
        return [(X[k], n, float(gaps[k]) if measured[k] else d0) for k in range(X.shape[0])
                if not measured[k] or gaps[k] <= eps]

    def _measure(self, i, j, placement_i, placement_j, points, n, d0, eps):
        """Each patch point's gap re-measured along the normal ``n`` (from i to j) through
        both shapes; points farther than ``eps`` dropped; ``d0`` for shapes that cannot be
        measured (neither polytope nor sphere)."""
        (Ri, ti), (Rj, tj) = placement_i, placement_j
        Hi, Hj = self._halfspaces[i], self._halfspaces[j]
        if Hi is not None and Hj is not None and len(points):  # two polytopes: all at once
            X = np.asarray(points, dtype=float)
            ai, bi, hi = ray_intervals(Hi, Ri, ti, X, n)
            aj, bj, hj = ray_intervals(Hj, Rj, tj, X, n)
            d = aj - bi
            out = []
            for x, ok, dk, m in zip(X, hi & hj, d, 0.5 * (aj + bi)):
                if not ok:
                    out.append((x, n, d0))
                elif dk <= eps:
                    out.append((x + m * n, n, float(dk)))
            return out
        out = []
        for x in points:
            si = ray_interval(self._shapes[i], Hi, Ri, ti, x, n)
            sj = ray_interval(self._shapes[j], Hj, Rj, tj, x, n)
            if si is None or sj is None:  # not a polytope or sphere: the pair distance
                out.append((x, n, d0))
                continue
            d = sj[0] - si[1]
            if d <= eps:
                out.append((x + 0.5 * (sj[0] + si[1]) * n, n, float(d)))
        return out

    def _reduce(self, i, j, mu, found):
        """The pair's block ``(i, j, joint_i, joint_j, P, R, d, mu)`` after the reduction,
        or None."""
        if found is None:
            return None
        P, N, d = found
        if self.max_points_per_pair is not None and (N == N[0]).all():
            P, R, d = self._reduce_face(P, N[0], d)  # one normal: a face patch
        else:
            P, R, d = self._reduce_points(P, N, d)
        return (i, j, self._joints[i], self._joints[j], P, R, d, mu)

    def _reduce_face(self, P, n, d):
        """:meth:`_reduce_points` for points sharing the normal ``n``, in one compiled call
        (the polytope-ground pass's reduction, in the patch's plane)."""
        R = tangent_basis(n / np.linalg.norm(n))
        Q = np.ascontiguousarray(P @ R[:, _PLANE_FIRST])  # (t1, t2, n) coordinates
        keep = reduce_patch(Q, d.copy(), self.reduction_distance ** 2, self.flat_tolerance,
                            self.remove_interior, self.max_points_per_pair)
        if self.flat_tolerance > 0.0:
            d = np.where(d <= d.min() + self.flat_tolerance, d.min(), d)
        return P[keep], np.repeat(R[None], keep.shape[0], axis=0), d[keep]

    def _reduce_points(self, P, N, d):
        """Reduction of points ``P`` (m, 3) with normals ``N`` and gaps ``d``: flat
        tolerance, merging within ``reduction_distance`` (the deepest kept), load-carrying
        points, the cap. Returns ``(P, R, d)`` of the kept points."""
        if self.flat_tolerance > 0.0:
            d = np.where(d <= d.min() + self.flat_tolerance, d.min(), d)
        keep = remove_close(P, self.reduction_distance, d)
        cap = self.max_points_per_pair
        xy = P @ tangent_basis(N[0])[:, 1:]  # every point in the contact plane, once
        if cap is not None and self.remove_interior and len(keep) > 2 * cap:
            # thin a large patch to its deepest and most spread points before the
            # (superlinear) load-carrying test; the final cap keeps fewer still
            keep = [keep[k] for k in spread_subset(xy[keep], d[keep], 2 * cap)]
        if self.remove_interior and len(keep) > 3:
            keep = [keep[k] for k in support_vertices(xy[keep], d[keep])]
        if cap is not None and len(keep) > cap:
            keep = [keep[k] for k in spread_subset(xy[keep], d[keep], cap)]
        N = N[keep] / np.linalg.norm(N[keep], axis=1)[:, None]
        return P[keep], frames_of(N), d[keep]


def _stack(found):
    """List of (p, n, d) tuples -> (P, N, d) arrays, None when empty."""
    if not found:
        return None
    return (np.array([f[0] for f in found], dtype=float),
            np.array([f[1] for f in found], dtype=float),
            np.array([f[2] for f in found], dtype=float))
