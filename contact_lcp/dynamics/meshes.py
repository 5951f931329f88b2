"""Collision geometry checked, and meshes made convex, before coal computes with them.

coal's convex hull (qhull) of a point set that is flat, on one line or a single point
dereferences a failed hull and kills the process (measured with coal 3.0.3: a box mesh
whose thickness is 1e-8 of its length crashes, 1e-7 does not). So each mesh is measured
along its principal axes first:

* vertices that coincide or lie on one line (extents below :data:`FLAT` of the length
  in two directions), fewer than 3 vertices, or non-finite ones: a ``SceneError`` naming
  the link, the geometry and the measured extents;
* flat (thinner than :data:`FLAT` of its length in one direction, e.g. a two-triangle
  STL sole or a floor tile) is a legal shape. With ``meshes: convex`` it becomes the
  convex hull of a slab of thickness :data:`SLAB` times its length, centred on its plane:
  the closed solid its author meant, which every pair test of the detector handles and
  that rests on the ground on its vertices (MuJoCo likewise makes a convex hull of every
  mesh; a triangle set would have no inside and its two faces would both be surfaces).
  With ``meshes: exact`` the triangles are kept as they are (a triangle set, as Gazebo
  uses a trimesh), since coal's BVH needs no hull.

Primitives (box, sphere, cylinder, capsule, cone, ellipsoid) must have finite sizes > 0,
and every placement must be finite.
"""

import coal
import numpy as np

from contact_lcp.exceptions import SceneError

#: Relative extent below which a mesh is flat (one direction) or on a line (two);
#: two orders above where qhull starts to fail.
FLAT = 1e-5
#: Thickness of the slab a flat mesh becomes, relative to its length.
SLAB = 1e-3


def extents(points):
    """``(ext, axes, length)`` of ``points`` (k, 3): the extents [m] along its principal
    axes (rows of ``axes``, by decreasing spread) and its length [m], twice the largest
    distance from the centroid (independent of the orientation, unlike the extents of
    a square whose principal axes are any two orthogonal in-plane directions)."""
    X = points - points.mean(axis=0)
    _, V = np.linalg.eigh(X.T @ X)
    axes = V[:, ::-1].T
    Y = X @ axes.T
    return Y.max(axis=0) - Y.min(axis=0), axes, 2.0 * float(np.sqrt((X * X).sum(1).max()))


def _primitive_sizes(shape):
    """The sizes of a primitive coal shape [m], or None for meshes and convex hulls."""
    if isinstance(shape, coal.Box):
        return 2.0 * np.asarray(shape.halfSide, dtype=float)
    if isinstance(shape, coal.Sphere):
        return np.array([shape.radius], dtype=float)
    if isinstance(shape, (coal.Cylinder, coal.Capsule, coal.Cone)):
        return np.array([shape.radius, 2.0 * shape.halfLength], dtype=float)
    if isinstance(shape, coal.Ellipsoid):
        return np.asarray(shape.radii, dtype=float)
    return None


def _where(model, obj, source):
    link = model.frames[obj.parentFrame].name if obj.parentFrame < model.nframes else "?"
    what = f"{source}: link {link!r} collision {obj.name!r}"
    if isinstance(obj.geometry, coal.BVHModelBase):
        what += f" (mesh {obj.meshPath!r}, scale {np.asarray(obj.meshScale).tolist()})"
    return what


def check_mesh(points, triangles, where):
    """``'solid'`` or ``'flat'`` for a mesh's vertices ``points`` (k, 3) [m] and its
    number of ``triangles``; SceneError (opened by ``where``) for a mesh with no shape."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    if len(points) < 3:
        raise SceneError(f"{where} has {len(points)} vertex(es); expected at least 3 that "
                         "are not on one line")
    if not np.all(np.isfinite(points)):
        raise SceneError(f"{where} has non-finite vertex coordinates; expected finite [m]")
    ext, _, length = extents(points)
    if length <= 1e-9 * max(1.0, float(np.abs(points).max())):
        raise SceneError(f"{where}: all its {len(points)} vertices coincide (extent "
                         f"{length:.3g} m); expected a mesh with an area or a volume")
    if ext[1] < FLAT * length:
        raise SceneError(f"{where}: its vertices lie on one line (extents {ext.tolist()} m "
                         "along its principal axes); expected a mesh with an area or a "
                         "volume")
    if triangles == 0:
        raise SceneError(f"{where} has no triangles; expected a triangle mesh")
    return "flat" if ext[2] < FLAT * length else "solid"


def slab_hull(points):
    """The convex hull of ``points`` (a flat set) thickened by :data:`SLAB` times its
    length (:func:`extents`) along its normal, symmetrically."""
    points = np.asarray(points, dtype=float)
    _, axes, length = extents(points)
    offset = 0.5 * SLAB * length * axes[2]
    vertices = coal.StdVec_Vec3s()
    vertices.extend(list(np.vstack((points - offset, points + offset))))
    return coal.Convex.convexHull(vertices, True, "Qt")


def check_geometry(model, geom, mode, source):
    """Check every object of ``geom`` (on ``model``'s frames) and, when ``mode`` is
    ``'convex'``, replace each mesh by its convex hull (a slab's for a flat one); then
    compute every shape's local AABB. In place."""
    for obj in geom.geometryObjects:
        shape = obj.geometry
        M = obj.placement
        if not (np.all(np.isfinite(M.translation)) and np.all(np.isfinite(M.rotation))):
            raise SceneError(f"{_where(model, obj, source)} has a non-finite placement "
                             f"{M.translation.tolist()}; expected a finite <origin>")
        sizes = _primitive_sizes(shape)
        if sizes is not None:
            if not (np.all(np.isfinite(sizes)) and np.all(sizes > 0)):
                raise SceneError(f"{_where(model, obj, source)} ({type(shape).__name__}) has "
                                 f"sizes {sizes.tolist()}; expected finite sizes > 0 [m]")
        elif isinstance(shape, coal.BVHModelBase):
            points = np.asarray(shape.vertices(), dtype=float).reshape(-1, 3)
            kind = check_mesh(points, shape.num_tris, _where(model, obj, source))
            if mode == "convex":
                obj.geometry = _hull(shape, points, kind, _where(model, obj, source))
        obj.geometry.computeLocalAABB()


def _hull(shape, points, kind, where):
    try:
        if kind == "flat":
            hull = slab_hull(points)
        else:
            shape.buildConvexHull(True, "Qt")  # returns whether the mesh was convex
            hull = shape.convex
    except Exception as e:  # coal raises std::exceptions as RuntimeError/ValueError
        raise SceneError(f"{where}: its convex hull failed: {e}") from e
    if hull is None or hull.num_points < 4:
        raise SceneError(f"{where}: its convex hull failed")
    return hull
