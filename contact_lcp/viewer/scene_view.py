"""The 3-D scene of the page (viser): parts placed from ``q``, the ground, contacts.

Contacts: a point per contact, an arrow per contact force (length ``force_scale`` [m/N]
times its magnitude, so the weight of the robots is :data:`WEIGHT_LENGTH` long), and on a
toggle the friction pyramid of each contact (the four edges ``n ± mu t`` of the cone's
inscribed pyramid, :data:`PYRAMID_HEIGHT` high).
"""

import numpy as np
import pinocchio as pin

#: length of an arrow carrying the weight of the scene's robots (or bodies) [m]
WEIGHT_LENGTH = 1.0
#: height of a drawn friction pyramid [m]
PYRAMID_HEIGHT = 0.08
#: half the side of the drawn ground square [m]
GROUND_HALF = 5.0


def _wxyz(R):
    """(w, x, y, z) of the rotation matrix ``R`` (3, 3)."""
    x, y, z, w = pin.Quaternion(np.ascontiguousarray(R)).coeffs()
    return np.array([w, x, y, z])


def tangents(n_W):
    """(k, 3), (k, 3) unit tangents t1, t2 with (n, t1, t2) right-handed, per normal."""
    k = len(n_W)
    a = np.where(np.abs(n_W[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    t1 = np.cross(n_W, a)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True).clip(1e-12)
    return t1.reshape(k, 3), np.cross(n_W, t1).reshape(k, 3)


def pyramid_segments(p_W, n_W, mu, height=PYRAMID_HEIGHT):
    """(4k, 2, 3) segments from each contact point along its pyramid's four edges
    ``n ± mu t1``, ``n ± mu t2`` (height ``height`` along n) [m]."""
    if len(p_W) == 0:
        return np.zeros((0, 2, 3))
    t1, t2 = tangents(n_W)
    m = mu[:, None]
    edges = [n_W + m * t1, n_W - m * t1, n_W + m * t2, n_W - m * t2]
    seg = np.empty((len(p_W), 4, 2, 3))
    for j, e in enumerate(edges):
        seg[:, j, 0] = p_W
        seg[:, j, 1] = p_W + height * e
    return seg.reshape(-1, 2, 3)


class SceneView:
    """Draw a :class:`~contact_lcp.viewer.geometry.WorldParts` in a viser server and move
    it to each :class:`~contact_lcp.viewer.frames.Frame`.

    Parameters
    ----------
    server : viser.ViserServer
    parts : WorldParts
    weight : float
        The weight the arrows are scaled to [N] (> 0; the scene's robots' m g).
    """

    def __init__(self, server, parts, weight):
        self.server, self.parts = server, parts
        self.force_scale = WEIGHT_LENGTH / max(float(weight), 1e-9)
        self.show_collision = False
        self.show_pyramids = False
        scene = server.scene
        scene.set_up_direction("+z")
        ground = parts.world.ground_height
        if ground is not None:
            scene.add_grid("/ground", width=2 * GROUND_HALF, height=2 * GROUND_HALF,
                           position=(0.0, 0.0, ground), plane_color=(235, 235, 228),
                           plane_opacity=1.0, cell_size=0.1, section_size=1.0)
        self._visual = [None if p is None else scene.add_mesh_simple(
            f"/visual/{i}", p.vertices, p.faces, color=p.color, opacity=p.opacity
            if p.opacity < 1 else None) for i, p in enumerate(parts.visual)]
        self._collision = [scene.add_mesh_simple(
            f"/collision/{i}", p.vertices, p.faces, color=p.color, opacity=p.opacity,
            visible=False) for i, p in enumerate(parts.collision)]
        self._points = self._arrows = self._pyramids = None
        self._last = None
        self.aim_camera(parts.world.q0)

    def aim_camera(self, q):
        """Point the page's initial camera at the parts at ``q``, from the front right
        and above, at a distance that frames them."""
        X = self.parts.visual_placements(q)
        p = X[:, :3, 3] if len(X) else np.zeros((1, 3))
        centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
        size = max(float(np.ptp(p, axis=0).max()), 0.5)
        cam = self.server.initial_camera
        cam.look_at = tuple(centre - np.array([0.0, 0.0, 0.15 * size]))
        cam.position = tuple(centre + size * np.array([1.0, -1.0, 0.3]))

    def set_collision_visible(self, on):
        """Show or hide the collision geometry (placed at the next :meth:`show`)."""
        self.show_collision = bool(on)
        for h in self._collision:
            h.visible = self.show_collision
        if self._last is not None:
            self.show(self._last, replace=True)

    def set_pyramids_visible(self, on):
        """Show or hide the friction pyramids."""
        self.show_pyramids = bool(on)
        if self._last is not None:
            self.show(self._last, replace=True)

    def show(self, frame, collision_q=False, replace=False):
        """Place every part and the contacts at ``frame``. ``collision_q``: place the
        collision geometry by a ``forward`` at ``frame.q`` (a replay's own world) rather
        than from the world's last one (the live simulator's)."""
        self._last = frame
        with self.server.atomic():
            X = self.parts.visual_placements(frame.q)
            for h, X_i in zip(self._visual, X):
                if h is not None:
                    h.position, h.wxyz = X_i[:3, 3], _wxyz(X_i[:3, :3])
            if self.show_collision:
                Xc = self.parts.collision_placements(frame.q if collision_q else None)
                for h, X_i in zip(self._collision, Xc):
                    h.position, h.wxyz = X_i[:3, 3], _wxyz(X_i[:3, :3])
            self._contacts(frame)

    def _contacts(self, frame):
        """Points, arrows and pyramids of ``frame``'s contacts: each node is created once
        and its arrays replaced (viser needs at least one element: a frame without
        contacts hides the nodes)."""
        scene = self.server.scene
        k = len(frame.p_W)
        p = frame.p_W if k else np.zeros((1, 3))
        seg = np.zeros((1, 2, 3))
        if k:
            seg = np.stack([frame.p_W, frame.p_W + self.force_scale * frame.force_W], axis=1)
        pyr = (pyramid_segments(frame.p_W, frame.n_W, frame.mu)
               if k and (self.show_pyramids or self._pyramids is None) else np.zeros((1, 2, 3)))
        if self._points is None:
            self._points = scene.add_point_cloud(
                "/contacts/points", p.astype(np.float32), colors=(220, 30, 30),
                point_size=0.025, point_shape="circle", precision="float32")
            self._arrows = scene.add_arrows("/contacts/forces", seg, colors=(30, 110, 230),
                                            shaft_radius=0.008, head_radius=0.02,
                                            head_length=0.04)
            self._pyramids = scene.add_line_segments("/contacts/pyramids", pyr,
                                                     colors=(20, 160, 60), thickness=0.003)
        else:
            if len(self._points.points) != len(p):  # one colour per point
                self._points.colors = np.tile(np.array([220, 30, 30], np.uint8), (len(p), 1))
            self._points.points = p.astype(np.float32)
            self._arrows.points = seg.astype(np.float32)
            if self.show_pyramids:
                self._pyramids.points = pyr.astype(np.float32)
        self._points.visible = self._arrows.visible = k > 0
        self._pyramids.visible = self.show_pyramids and k > 0
