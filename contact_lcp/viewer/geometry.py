"""What the viewer draws of a world, as triangle meshes with their placements from ``q``.

Three groups of parts:

* ``visual``: each robot's URDF ``<visual>`` geometry (Pinocchio's VISUAL GeometryModel,
  meshes read by Pinocchio's own loader, so STL, DAE and OBJ alike), placed by a
  robot-local Pinocchio model and Data of the viewer's own (never the world's: the
  simulator's Data is the stepper's); the free bodies' shapes;
* ``collision``: the world's collision geometry as the detector uses it (convex hulls of
  meshes included), placed by :meth:`World.geometry_placements`;
* the ground is not a part: the scene view draws it from ``world.ground_height``.

A robot-local model has the world's joint order for that robot (the world appends each
robot's model whole), so its configuration is the robot's slice of the world's ``q``.
"""

from dataclasses import dataclass

import coal
import numpy as np
import pinocchio as pin

from contact_lcp.exceptions import SceneError

#: colour of parts whose URDF gives none, and of the free bodies (RGB 0-255)
DEFAULT_COLOR = (170, 170, 180)
#: colour of the collision geometry (drawn translucent)
COLLISION_COLOR = (255, 140, 40)


@dataclass(frozen=True)
class Part:
    """A triangle mesh in its own frame: ``vertices`` (V, 3) [m], ``faces`` (F, 3) int,
    ``color`` RGB 0-255, ``opacity`` in [0, 1]."""

    name: str
    vertices: np.ndarray
    faces: np.ndarray
    color: tuple
    opacity: float = 1.0


def shape_mesh(shape):
    """``(vertices, faces)`` of a coal shape (primitives tessellated); None for a
    halfspace or plane (the ground) and shapes the viewer does not draw."""
    import trimesh

    if isinstance(shape, coal.Box):
        m = trimesh.creation.box(extents=2.0 * np.asarray(shape.halfSide, dtype=float))
    elif isinstance(shape, coal.Sphere):
        m = trimesh.creation.icosphere(subdivisions=2, radius=float(shape.radius))
    elif isinstance(shape, coal.Capsule):
        m = trimesh.creation.capsule(height=2.0 * float(shape.halfLength),
                                     radius=float(shape.radius), count=[16, 8])
    elif isinstance(shape, coal.Cylinder):
        m = trimesh.creation.cylinder(radius=float(shape.radius),
                                      height=2.0 * float(shape.halfLength), sections=24)
    elif isinstance(shape, coal.Cone):
        m = trimesh.creation.cone(radius=float(shape.radius), height=2.0 * float(shape.halfLength),
                                  sections=24)
        m.apply_translation((0.0, 0.0, -float(shape.halfLength)))  # coal's cone is centred
    elif isinstance(shape, coal.Ellipsoid):
        m = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        m.apply_scale(np.asarray(shape.radii, dtype=float))
    elif isinstance(shape, coal.BVHModelBase):
        V = np.asarray(shape.vertices(), dtype=float).reshape(-1, 3)
        T = np.array([[t[0], t[1], t[2]] for t in
                      (shape.tri_indices(i) for i in range(shape.num_tris))],
                     dtype=np.int64).reshape(-1, 3)
        return V, T
    elif isinstance(shape, coal.ConvexBase):
        points = np.asarray(shape.points(), dtype=float).reshape(-1, 3)
        m = trimesh.convex.convex_hull(points)
    else:
        return None
    return np.asarray(m.vertices, dtype=float), np.asarray(m.faces, dtype=np.int64)


def _color(obj):
    rgba = np.asarray(obj.meshColor, dtype=float)
    if rgba.shape != (4,) or not np.all(np.isfinite(rgba)):
        return DEFAULT_COLOR, 1.0
    return tuple(int(round(255 * min(max(c, 0.0), 1.0))) for c in rgba[:3]), float(rgba[3])


def _visual_model(info, spec):
    """The robot-local model and VISUAL geometry of robot ``info`` (RobotInfo) whose
    ``spec`` (RobotSpec) gives the package directories."""
    joint = pin.JointModelFreeFlyer() if info.floating_base else None
    try:
        model = (pin.buildModelFromXML(info.urdf_xml, joint) if joint is not None
                 else pin.buildModelFromXML(info.urdf_xml))
        geom = pin.buildGeomFromUrdfString(model, info.urdf_xml, pin.VISUAL,
                                           package_dirs=[str(d) for d in spec.package_dirs])
    except Exception as e:  # Pinocchio's loader raises RuntimeError/ValueError
        raise SceneError(f"robot {info.name!r}: cannot load its visual geometry "
                         f"(package_dirs={list(spec.package_dirs)}): {e}") from e
    return model, geom


class WorldParts:
    """The parts of a world to draw and their placements.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    robot_specs : sequence of RobotSpec
        The scene's robots, in the world's order (package directories, fixed-base poses).

    Attributes
    ----------
    visual, collision : list of Part
    """

    def __init__(self, world, robot_specs):
        self.world = world
        self.visual, self.collision = [], []
        self._robots = []  # (model, data, geom, gdata, q_slice, X_weld, first part index)
        for info, spec in zip(world.robots, robot_specs):
            model, geom = _visual_model(info, spec)
            X_weld = np.eye(4)
            if not info.floating_base and spec.base_pose is not None:
                X_weld = pin.XYZQUATToSE3(np.asarray(spec.base_pose, dtype=float)).homogeneous
            first = len(self.visual)
            for obj in geom.geometryObjects:
                mesh = shape_mesh(obj.geometry)
                color, opacity = _color(obj)
                self.visual.append(Part(f"{info.name}/{obj.name}", *mesh, color, opacity)
                                   if mesh is not None else None)
            self._robots.append((model, model.createData(), geom, pin.GeometryData(geom),
                                 info.q_slice, X_weld, first))
        from contact_lcp.dynamics.loading import body_shape

        self._bodies = []
        for b in world.bodies:
            V, F = shape_mesh(body_shape(b.shape, np.asarray(b.size, dtype=float)))
            self._bodies.append((b.q_slice, len(self.visual)))
            self.visual.append(Part(b.name, V, F, DEFAULT_COLOR))
        self._collision_index = []
        for g, obj in enumerate(world.collision_model.geometryObjects):
            mesh = shape_mesh(obj.geometry)
            if mesh is not None:
                self._collision_index.append(g)
                self.collision.append(Part(f"collision/{obj.name}", *mesh, COLLISION_COLOR, 0.5))

    def visual_placements(self, q):
        """(len(visual), 4, 4) placements in W at the world configuration ``q`` (nq,);
        entries of parts that are None (shapes not drawn) are left as the identity."""
        X = np.tile(np.eye(4), (len(self.visual), 1, 1))
        for model, data, geom, gdata, qs, X_weld, first in self._robots:
            pin.forwardKinematics(model, data, q[qs])
            pin.updateGeometryPlacements(model, data, geom, gdata)
            for k in range(geom.ngeoms):
                X[first + k] = X_weld @ gdata.oMg[k].homogeneous
        for qs, k in self._bodies:
            X[k] = pin.XYZQUATToSE3(q[qs]).homogeneous
        return X

    def collision_placements(self, q=None):
        """(len(collision), 4, 4) placements in W: at the world's last ``forward`` (the
        simulator keeps it at its current state), or after a ``forward`` at ``q`` (a
        replay's world is the viewer's own)."""
        if q is not None:
            self.world.forward(q)
        X = self.world.geometry_placements()
        return X[self._collision_index]
