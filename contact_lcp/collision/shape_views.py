"""Plain descriptions of the collision shapes (for markers and plots), no coal types."""

from dataclasses import dataclass
from typing import Optional

import coal
import numpy as np


@dataclass(frozen=True)
class ShapeView:
    """A collision shape placed in the world.

    ``kind`` and ``size``: 'box' (lx, ly, lz) full extents; 'sphere' (r,); 'cylinder'
    (r, length); 'capsule' (r, length of the segment); 'ellipsoid' (a, b, c) semi-axes;
    'halfspace' (nx, ny, nz, d) for ``n . x <= d``; 'mesh' () with ``mesh_path``. All [m].
    ``X_W`` (4, 4) is the shape's pose in W; ``link`` the frame it is attached to.
    """

    name: str
    link: str
    kind: str
    size: tuple
    X_W: np.ndarray
    mesh_path: Optional[str] = None


def _describe(geom):
    if isinstance(geom, coal.Box):
        return "box", tuple(2.0 * np.asarray(geom.halfSide))
    if isinstance(geom, coal.Sphere):
        return "sphere", (float(geom.radius),)
    if isinstance(geom, coal.Capsule):
        return "capsule", (float(geom.radius), 2.0 * float(geom.halfLength))
    if isinstance(geom, coal.Cylinder):
        return "cylinder", (float(geom.radius), 2.0 * float(geom.halfLength))
    if isinstance(geom, coal.Ellipsoid):
        return "ellipsoid", tuple(np.asarray(geom.radii, dtype=float))
    if isinstance(geom, coal.Halfspace):
        return "halfspace", tuple(np.asarray(geom.n, dtype=float)) + (float(geom.d),)
    return "mesh", ()


def shape_views(world):
    """Every collision shape of ``world`` at its current placement (after ``forward``).

    Returns
    -------
    list of ShapeView
    """
    gm, X = world.collision_model, world.geometry_placements()
    out = []
    for i, go in enumerate(gm.geometryObjects):
        kind, size = _describe(go.geometry)
        frame = world.model.frames[go.parentFrame].name if go.parentFrame < len(world.model.frames) else "world"
        out.append(ShapeView(go.name, frame, kind, size, X[i],
                             go.meshPath or None if kind == "mesh" else None))
    return out
