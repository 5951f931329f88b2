"""The live page: a simulator stepped at a real-time factor, drawn at most
:data:`FRAME_RATE` times per wall-clock second.

:meth:`LiveViewer.publish` is all a stepping loop calls after a step: it keeps the
chart's running values (two floats a step) and draws a frame only when
``1 / FRAME_RATE`` s have passed since the last one, so the drawing costs the same
whatever the time step. :meth:`LiveViewer.run` is the ``contact-lcp view`` loop: it paces
the steps to the real-time factor and acts on the page's requests between steps.
"""

import collections
import time

import numpy as np

from contact_lcp.viewer.frames import frame_from_sim
from contact_lcp.viewer.geometry import WorldParts
from contact_lcp.viewer.panel import CHART_POINTS, Panel
from contact_lcp.viewer.scene_view import SceneView

#: frames drawn per wall-clock second at most
FRAME_RATE = 30.0
#: charts redrawn per wall-clock second at most
CHART_RATE = 10.0
#: a paced run that falls this far behind its real-time target [s of sim time] stops
#: catching up (the machine is slower than the factor asked): it re-anchors instead
MAX_LAG = 0.1


def scene_weight(sim):
    """m g of the robots [N] (of the free bodies if there is no robot; 1 N if neither
    weighs anything), the force the arrows are scaled to."""
    g = float(np.linalg.norm(sim.world.gravity)) or 9.81
    m = sum(r.mass for r in sim.world.robots) or sum(b.mass for b in sim.world.bodies)
    return max(m * g, 1.0)


class LiveViewer:
    """Draw ``sim`` in ``server`` and take the page's requests.

    Parameters
    ----------
    sim : contact_lcp.sim.Simulator
    server : viser.ViserServer
    controls : bool
        Page controls (play/pause, step, reset, real-time factor); the ROS node's page
        has none (the node keeps its own clock).
    """

    def __init__(self, sim, server, controls=True):
        self.sim, self.server = sim, server
        self.view = SceneView(server, WorldParts(sim.world, [r.robot for r in sim.scene.robots]),
                              scene_weight(sim))
        self.panel = Panel(server, self.view, controls=controls)
        self._history = collections.deque(maxlen=CHART_POINTS)
        self._pen = 0.0  # the largest penetration since the last chart sample
        self._last_frame = self._last_chart = -np.inf
        self._chart_due = False
        self._rate_mark = (time.perf_counter(), sim.t)
        self.rtf = None
        self.frames = 0
        self.error = None
        self._pending = []
        self.draw(None)

    def publish(self, info):
        """After a step with :class:`StepInfo` ``info``: draw a frame if one is due and
        a page is open (with none, a frame would only be kept for pages to come: the
        first one gets the frame after it connects)."""
        self._pen = max(self._pen, info.max_penetration)
        now = time.perf_counter()
        if now - self._last_frame >= 1.0 / FRAME_RATE:
            if self.server.get_clients():
                self.draw(info, now)
            else:
                self._last_frame = now

    def draw(self, info, now=None):
        """Draw the simulator's current state (``info`` its last step, None after a
        reset) and handle the page's display toggles."""
        now = time.perf_counter() if now is None else now
        for request in self.panel.take():
            self.handle(request)
        frame = frame_from_sim(self.sim, info)
        wall0, t0 = self._rate_mark
        if now - wall0 >= 0.5:
            self.rtf = (self.sim.t - t0) / (now - wall0)
            self._rate_mark = (now, self.sim.t)
        fresh = not self._history or self._history[-1][0] != frame.t  # (paused: the same)
        if fresh:
            self._history.append((frame.t, frame.force_total,
                                  max(self._pen, frame.max_penetration)))
            self._pen = 0.0
            self._chart_due = True
        self.view.show(frame)
        self.panel.show(frame, self.rtf if self.panel.playing else None, self.error)
        if self._chart_due and now - self._last_chart >= 1.0 / CHART_RATE:
            self.panel.chart(*np.array(self._history).T)
            self._last_chart, self._chart_due = now, False
        self._last_frame = now
        self.frames += 1

    def handle(self, request):
        """Act on a page request; the stepping ones (step, reset) only in :meth:`run`."""
        if isinstance(request, tuple) and request[0] == "collision":
            self.view.set_collision_visible(request[1])
        elif isinstance(request, tuple) and request[0] == "pyramids":
            self.view.set_pyramids_visible(request[1])
        else:
            self._pending.append(request)

    def run(self, stop, end=None):
        """Step and draw until ``stop`` (a threading.Event) is set, paced to the page's
        real-time factor; pause when sim time reaches ``end`` [s] (None: never). A
        :class:`SimulationError` pauses the run and is shown on the page."""
        from contact_lcp.sim.simulator import SimulationError

        sim, panel = self.sim, self.panel
        end = np.inf if end is None else float(end)
        anchor = None  # (wall, sim time, rtf) the pacing counts from
        info = None
        while not stop.is_set():
            for request in self.panel.take():
                self.handle(request)
            pending, self._pending = self._pending, []
            for request in pending:
                if request == "reset":
                    sim.reset()
                    info, anchor, self.error = None, None, None
                    self._history.clear()
                    self.draw(None)
                elif request == "step":
                    panel.set_playing(False)
                    info = self._step(SimulationError) or info
                    self.draw(info)
            if not panel.playing:
                anchor = None
                if time.perf_counter() - self._last_frame >= 1.0 / FRAME_RATE:
                    self.draw(info)  # the text says paused; toggles still apply
                time.sleep(0.01)
                continue
            if sim.t >= end - 0.5 * sim.h:
                panel.set_playing(False)
                end = np.inf  # Play again carries on past the end
                self.draw(info)
                continue
            now = time.perf_counter()
            if anchor is None or anchor[2] != panel.rtf:
                anchor = (now, sim.t, panel.rtf)
            target = anchor[1] + anchor[2] * (now - anchor[0])
            if sim.t + sim.h > target:  # ahead of real time: wait for it
                time.sleep(min((sim.t + sim.h - target) / anchor[2], 1.0 / FRAME_RATE))
                continue
            if target - sim.t > MAX_LAG * anchor[2]:
                anchor = (now, sim.t, panel.rtf)
            step_info = self._step(SimulationError)
            if step_info is None:
                continue
            info = step_info
            self.publish(info)

    def _step(self, error_type):
        """One step; None (and the run paused, the error on the page) if it fails."""
        try:
            return self.sim.step()
        except error_type as e:
            self.panel.set_playing(False)
            self.error = f"simulation stopped: {e}"
            return None
