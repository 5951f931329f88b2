"""Our own re-check of a peer engine's physics, from the poses and forces it reports.

What is re-verified, and how (nothing here asks the peer engine anything):

* **penetration** — from the poses the engine reports (robot: base pose + joint
  positions; tower: box poses) we place OUR geometry of the same scene: Pinocchio's
  model of the same URDF with coal's collision objects (robots), the scene file's box
  sizes (tower). Depth below the ground is exact (lowest point of each shape: mesh
  vertices, i.e. the convex hull every engine collides; box corners; sphere and cylinder
  support points), box-box depth is coal's signed distance. This is compared with the
  largest depth the engine itself reports;
* **force balance** — the engine's ground contact forces, summed by us in W, against
  ``m g`` with ``m`` OUR mass of the URDF (Pinocchio) or the scene file's box masses:
  at rest the mean ground force must carry the weight;
* **friction cone** — every reported ground contact force must lie in the Coulomb cone
  of the scene's friction coefficient about the ground's normal +z (largest
  ``|F_t| / F_n`` against ``mu``; the engines' own normals are not used: FCL's on a
  mesh can be a triangle's, not the ground's). An engine with a pyramidal or box
  friction law (DART; MuJoCo's default) may reach ``sqrt(2) mu`` along a diagonal.

``verdict`` turns these into the ``check`` column: ``'ok'`` or the failed items.
"""

import numpy as np

from peer_scenes import quat_to_R

#: |mean sum F_z / (m g) - 1| beyond this fails the force balance.
FORCE_TOL = 0.05
#: Engine and our penetration disagree when they differ by more than this [m] and 50 %.
DEPTH_TOL = 5e-4
#: Slack on the friction cone (engines solve to a tolerance; MuJoCo's cone is a pyramid).
CONE_TOL = 0.05


def _lowest(geometry, R, p):
    """Lowest z of a coal shape placed at (R, p), or None for a shape not handled."""
    kind = type(geometry).__name__
    if kind == "Sphere":
        return p[2] - geometry.radius
    if kind == "Box":
        return p[2] - np.abs(R[2]) @ geometry.halfSide
    if kind in ("Cylinder", "Capsule"):
        c = abs(R[2, 2])  # local z is the axis
        radial = geometry.radius * (1.0 if kind == "Capsule" else np.sqrt(max(0.0, 1.0 - c * c)))
        return p[2] - c * geometry.halfLength - radial
    if hasattr(geometry, "vertices"):  # a mesh (BVH) or convex: its hull's lowest vertex
        return float(np.min(np.asarray(geometry.vertices()) @ R[2] + p[2]))
    return None


class RobotGeometry:
    """Our model of a :class:`~peer_scenes.RobotScene`: depth below the ground of a pose."""

    def __init__(self, scene):
        import pinocchio

        self._pin = pinocchio
        self.model = pinocchio.buildModelFromUrdf(scene.urdf, pinocchio.JointModelFreeFlyer())
        self.geom = pinocchio.buildGeomFromUrdf(self.model, scene.urdf, pinocchio.GeometryType.COLLISION,
                                                package_dirs=[scene.package_dir])
        self.data, self.gdata = self.model.createData(), self.geom.createData()
        self.idx_q = {self.model.names[j]: self.model.idx_qs[j] for j in range(2, self.model.njoints)}

    def penetration(self, base, joints):
        """Largest depth of any collision shape below z = 0 [m] (0 when none is)."""
        q = self._pin.neutral(self.model)
        q[:7] = base
        for name, x in joints.items():
            if name in self.idx_q:
                q[self.idx_q[name]] = x
        self._pin.updateGeometryPlacements(self.model, self.data, self.geom, self.gdata, q)
        low = [_lowest(g.geometry, M.rotation, M.translation)
               for g, M in zip(self.geom.geometryObjects, self.gdata.oMg)]
        return max(0.0, -min(z for z in low if z is not None))


class TowerGeometry:
    """Our model of a :class:`~peer_scenes.TowerScene`: depth of box poses, ground and pairs."""

    def __init__(self, scene):
        import coal

        self._coal = coal
        self.boxes = [coal.Box(*b.size) for b in scene.boxes]
        self.half = [b.size / 2 for b in scene.boxes]

    def penetration(self, poses):
        """Largest depth [m]: any box below z = 0, or any two boxes overlapping (coal)."""
        coal = self._coal
        R = [quat_to_R(p[3:]) for p in poses]
        depth = max(0.0, max(-(p[2] - np.abs(r[2]) @ h) for p, r, h in zip(poses, R, self.half)))
        req = coal.DistanceRequest()
        req.enable_signed_distance = True
        for i in range(len(poses)):
            for j in range(i + 1, len(poses)):
                res = coal.DistanceResult()
                d = coal.distance(self.boxes[i], coal.Transform3s(R[i], poses[i][:3]),
                                  self.boxes[j], coal.Transform3s(R[j], poses[j][:3]), req, res)
                depth = max(depth, -d)
        return depth


def cone_ratio(forces):
    """Largest ``|F_t| / F_n`` over ground contact forces (k, 3) in W (normal +z); NaN if none."""
    forces = np.asarray(forces, float).reshape(-1, 3)
    fn, ft = forces[:, 2], np.linalg.norm(forces[:, :2], axis=1)
    keep = fn > 1e-9 * max(1.0, float(np.max(np.abs(fn), initial=0.0)))
    return float(np.max(ft[keep] / fn[keep])) if np.any(keep) else float("nan")


def verdict(force_ratio, engine_depth, our_depth, cone, mu):
    """The ``check`` column: ``'ok'`` or the failed checks, ``'; '``-separated."""
    bad = []
    if not np.isfinite(force_ratio):
        bad.append("no contact force reported")
    elif abs(force_ratio - 1.0) > FORCE_TOL:
        bad.append(f"sum Fz / mg = {force_ratio:.3f}, not 1 +- {FORCE_TOL:g}")
    if np.isfinite(engine_depth):
        gap = abs(engine_depth - our_depth)
        if gap > DEPTH_TOL and gap > 0.5 * max(engine_depth, our_depth):
            bad.append(f"penetration {1e3 * engine_depth:.3g} mm (engine) vs {1e3 * our_depth:.3g} mm (ours)")
    if np.isfinite(cone) and cone > mu * (1 + CONE_TOL):
        bad.append(f"|Ft|/Fn up to {cone:.3g} > mu = {mu:g}")
    return "ok" if not bad else "; ".join(bad)


def pour_penetration(scene, centres):
    """The deepest overlap [m] of a :class:`peer_scenes.PourScene`'s spheres at
    ``centres`` (n, 3) [m] with each other, the ground (z = 0) and the walls, from the
    positions alone (exact for spheres and boxes); 0 when nothing overlaps."""
    from scipy.spatial import cKDTree

    centres = np.asarray(centres, dtype=float)
    r = np.array([s.radius for s in scene.spheres])
    deepest = float(np.max(r - centres[:, 2], initial=0.0))
    pairs = cKDTree(centres).query_pairs(2.0 * r.max(), output_type="ndarray")
    if pairs.size:
        i, j = pairs[:, 0], pairs[:, 1]
        gap = np.linalg.norm(centres[i] - centres[j], axis=1) - r[i] - r[j]
        deepest = max(deepest, float(np.max(-gap, initial=0.0)))
    for size, pose in scene.walls:
        R = quat_to_R(pose[3:])
        local = (centres - pose[:3]) @ R  # centres in the box frame
        half = 0.5 * np.asarray(size)
        outside = np.linalg.norm(np.maximum(np.abs(local) - half, 0.0), axis=1)
        inside = np.min(half - np.abs(local), axis=1)  # > 0: the centre is in the box
        depth = np.where(inside > 0.0, r + inside, r - outside)
        deepest = max(deepest, float(np.max(depth, initial=0.0)))
    return deepest


def pile_height(scene, centres):
    """The top of the highest sphere at ``centres`` (n, 3) [m] above the ground [m]."""
    r = np.array([s.radius for s in scene.spheres])
    return float(np.max(np.asarray(centres)[:, 2] + r))
