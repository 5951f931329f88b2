"""The live page: a simulator stepped at a real-time factor, drawn at most
:data:`FRAME_RATE` times per wall-clock second by a page process
(:mod:`contact_lcp.viewer.page_process`).

:meth:`LiveViewer.publish` is all a stepping loop calls after a step: it keeps the
largest penetration since the last frame (one float a step) and sends a frame only when
``1 / FRAME_RATE`` s have passed since the last one; sending is a pipe write of the
frame's arrays, the drawing is the page process's. :meth:`LiveViewer.run` is the
``contact-lcp view`` loop: it paces the steps to the page's real-time factor and acts on
its requests between steps.
"""

import time

import numpy as np

from contact_lcp.viewer.frames import frame_from_sim
from contact_lcp.viewer.page_process import PageProcess

#: frames drawn per wall-clock second at most
FRAME_RATE = 30.0
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
    """Serve a page of ``sim`` on ``port`` (0: any free port; :attr:`port` is the one
    served) and take its requests; ``close()`` ends the page.

    Parameters
    ----------
    sim : contact_lcp.sim.Simulator
    port : int
    controls : bool
        Page controls (play/pause, step, reset, real-time factor); the ROS node's page
        has none (the node keeps its own clock).
    """

    def __init__(self, sim, port, controls=True):
        self.sim = sim
        self.page = PageProcess(sim, port, scene_weight(sim), controls)
        self.port = self.page.port
        self.playing, self.rtf = True, 1.0
        self.achieved = None
        self.error = None
        self.frames = 0
        self._pen = 0.0  # the largest penetration since the last frame
        self._last_frame = -np.inf
        self._rate_mark = (time.perf_counter(), sim.t)
        self._requests = []
        self.draw(None)

    def publish(self, info):
        """After a step with :class:`StepInfo` ``info``: send a frame if one is due."""
        self._pen = max(self._pen, info.max_penetration)
        now = time.perf_counter()
        if now - self._last_frame >= 1.0 / FRAME_RATE:
            self.draw(info, now)

    def draw(self, info, now=None):
        """Send the simulator's current state (``info`` its last step, None after a
        reset) and take the page's messages."""
        now = time.perf_counter() if now is None else now
        self._take()
        frame = frame_from_sim(self.sim, info)
        wall0, t0 = self._rate_mark
        if now - wall0 >= 0.5:
            self.achieved = (self.sim.t - t0) / (now - wall0)
            self._rate_mark = (now, self.sim.t)
        self.page.send(frame, self.achieved if self.playing else None,
                       max(self._pen, frame.max_penetration), self.playing, self.error)
        self._pen = 0.0
        self._last_frame = now
        self.frames += 1

    def _take(self):
        for msg in self.page.messages():
            if msg[0] == "playing":
                self.playing = msg[1]
            elif msg[0] == "rtf":
                self.rtf = msg[1]
            elif msg[0] == "request":
                self._requests.append(msg[1])

    def close(self):
        """End the page process."""
        self.page.close()

    def run(self, stop, end=None):
        """Step and draw until ``stop`` (a threading.Event) is set, paced to the page's
        real-time factor; pause when sim time reaches ``end`` [s] (None: never). A
        :class:`SimulationError` pauses the run and is shown on the page."""
        from contact_lcp.sim.simulator import SimulationError

        sim = self.sim
        end = np.inf if end is None else float(end)
        anchor = None  # (wall, sim time, rtf) the pacing counts from
        info = None
        while not stop.is_set():
            requests, self._requests = self._requests, []
            for request in requests:
                if request == "reset":
                    sim.reset()
                    info, anchor, self.error = None, None, None
                    self.draw(None)
                elif request == "step":
                    self.playing = False
                    info = self._step(SimulationError) or info
                    self.draw(info)
            if not self.playing:
                anchor = None
                self.draw(info)  # the text says paused; the page's requests come in
                time.sleep(1.0 / FRAME_RATE)
                continue
            if sim.t >= end - 0.5 * sim.h:
                self.playing = False
                end = np.inf  # Play again carries on past the end
                self.draw(info)
                continue
            now = time.perf_counter()
            if anchor is None or anchor[2] != self.rtf:
                anchor = (now, sim.t, self.rtf)
            target = anchor[1] + anchor[2] * (now - anchor[0])
            if sim.t + sim.h > target:  # ahead of real time: wait for it
                time.sleep(min((sim.t + sim.h - target) / anchor[2], 1.0 / FRAME_RATE))
                if now - self._last_frame >= 1.0 / FRAME_RATE:
                    self.draw(info, now)
                continue
            if target - sim.t > MAX_LAG * anchor[2]:
                anchor = (now, sim.t, self.rtf)
            step_info = self._step(SimulationError)
            if step_info is not None:
                info = step_info
                self.publish(info)

    def _step(self, error_type):
        """One step; None (and the run paused, the error on the page) if it fails."""
        try:
            return self.sim.step()
        except error_type as e:
            self.playing = False
            self.error = f"simulation stopped: {e}"
            return None
