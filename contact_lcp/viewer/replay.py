"""The replay page: a recorded run (``contact-lcp simulate --output``) played back at a
real-time factor, with a time slider; the same scene, contacts, text and charts as the
live page (:mod:`contact_lcp.viewer.live`).

The run records the world's configuration and contacts, not its geometry: the scene file
named in the run (``scene_path``, or the one given) rebuilds the world, whose
configuration size must match the run's.
"""

import time

import numpy as np

from contact_lcp.exceptions import SceneError
from contact_lcp.viewer.geometry import WorldParts
from contact_lcp.viewer.live import FRAME_RATE
from contact_lcp.viewer.panel import Panel
from contact_lcp.viewer.scene_view import SceneView

#: points of a replay's charts at most (the run is binned; each bin keeps its largest
#: penetration)
CHART_MAX = 2000
#: wall time [s] one frame of playback may advance at most: a frame that took longer to
#: draw (a busy machine, a slow page) is not made up by a jump, which on a run shorter
#: than the stall wrapped the playback to its start on every frame
MAX_FRAME_ADVANCE = 0.25


def replay_world(run, scene_path=None):
    """``(world, scene)`` of the scene a run was recorded from (``scene_path`` replaces
    the one the run names); SceneError when there is none or it does not fit the run."""
    from contact_lcp.dynamics import World
    from contact_lcp.sim.scene_loader import load_scene

    path = scene_path or run.scene_path
    if not path:
        raise SceneError(f"{run.path}: the run names no scene file (recorded before runs "
                         "kept it); give the scene with --scene SCENE.yaml")
    scene = load_scene(path)
    world = World([r.robot for r in scene.robots], scene.bodies, gravity=scene.gravity,
                  ground_height=None if scene.ground is None else scene.ground.height,
                  mesh_mode=scene.contact.meshes, whole=bool(scene.loops))
    if world.model.nq != run.q.shape[1]:
        raise SceneError(f"{run.path}: its configurations have {run.q.shape[1]} entries, the "
                         f"world of scene {path!r} has nq = {world.model.nq}; expected the "
                         "scene the run was recorded from")
    return world, scene


def binned(t, force, penetration, n=CHART_MAX):
    """The chart curves of a whole run in at most ``n`` points: each bin's first time
    and force and its largest penetration."""
    if len(t) <= n:
        return t, force, penetration
    edges = np.linspace(0, len(t), n + 1).astype(int)[:-1]
    return t[edges], force[edges], np.maximum.reduceat(penetration, edges)


def playback_time(t, elapsed, rtf, end):
    """The run time [s] to show ``elapsed`` wall seconds after the frame at ``t`` when
    playing at ``rtf``: the wall time counts up to :data:`MAX_FRAME_ADVANCE`; None past
    ``end`` (the playback starts again)."""
    t = t + rtf * min(elapsed, MAX_FRAME_ADVANCE)
    return None if t > end else t


class ReplayViewer:
    """Play ``run`` in ``server``.

    Parameters
    ----------
    run : RecordedRun
    server : viser.ViserServer
    world, scene : World, Scene
        Of :func:`replay_world` for this run.
    """

    def __init__(self, run, server, world, scene):
        self.run_data = r = run
        g = float(np.linalg.norm(world.gravity)) or 9.81
        weight = max(g * (sum(x.mass for x in world.robots)
                          or sum(b.mass for b in world.bodies)), 1.0)
        self.view = SceneView(server, WorldParts(world, [x.robot for x in scene.robots]), weight)
        self.panel = Panel(server, self.view, duration=float(r.t[-1]))
        self.panel.chart(*binned(r.t, r.force_total, r.max_penetration))
        self.index = 0
        self.draw()

    def draw(self):
        """Draw the frame at :attr:`index`."""
        frame = self.run_data.frame(self.index)
        self.view.show(frame, collision_q=True)
        self.panel.show(frame, self.panel.rtf if self.panel.playing else None,
                        None if self.run_data.has_contacts else
                        "this run was recorded without per-contact arrays: no contacts shown")

    def handle(self, request):
        """Act on a page request."""
        r = self.run_data
        if request == "reset":
            self.index = 0
        elif request == "step":
            self.panel.set_playing(False)
            self.index = min(self.index + 1, len(r) - 1)
        elif request[0] == "seek":
            self.index = r.index_at(request[1])
        elif request[0] == "collision":
            self.view.set_collision_visible(request[1])
        elif request[0] == "pyramids":
            self.view.set_pyramids_visible(request[1])

    def run(self, stop):
        """Play until ``stop`` (a threading.Event) is set; the playback loops from the end
        to the start."""
        r, panel = self.run_data, self.panel
        wall = time.perf_counter()
        was_playing = panel.playing
        while not stop.is_set():
            time.sleep(1.0 / FRAME_RATE)
            now = time.perf_counter()
            requests = panel.take()
            for request in requests:
                self.handle(request)
            if panel.playing:
                t = playback_time(r.t[self.index], now - wall, panel.rtf, r.t[-1])
                self.index = 0 if t is None else r.index_at(t)
            wall = now
            if panel.playing or requests or was_playing:  # (a pause redraws the text once)
                self.draw()
            was_playing = panel.playing
