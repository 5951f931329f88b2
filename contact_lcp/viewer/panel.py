"""The page's control panel (viser GUI): play/pause, step, reset, the real-time factor,
a time slider for replays, the display toggles, the status text and the two charts.

The GUI's callbacks run on viser's server thread; they only set requests here
(:attr:`Panel.playing`, :meth:`Panel.take`), which the thread that owns the simulator
acts on, so the simulator is never touched from two threads.
"""

import threading

import numpy as np

from contact_lcp.viewer.scene_view import WEIGHT_LENGTH

#: points kept on a live chart (its rolling window)
CHART_POINTS = 600
#: charts redrawn per wall-clock second at most
CHART_RATE = 10.0


class Panel:
    """The controls and read-outs of a viewer page.

    Parameters
    ----------
    server : viser.ViserServer
    view : contact_lcp.viewer.scene_view.SceneView
        Its toggles switch the collision geometry and the pyramids.
    duration : float or None
        A replay's length [s]: adds the time slider; None for a live simulation.
    controls : bool
        Offer play/pause, step, reset and the real-time factor (False: a read-only
        page, as the ROS node serves).
    """

    def __init__(self, server, view, duration=None, controls=True):
        gui = self.gui = server.gui
        self.playing = True
        self.rtf = 1.0
        self._requests = set()
        self._lock = threading.Lock()
        self.slider = None
        if controls:
            self.play = gui.add_button("Pause")
            self.play.on_click(lambda _: self.set_playing(not self.playing))
            step = gui.add_button("Step")
            step.on_click(lambda _: self._request("step"))
            reset = gui.add_button("Reset")
            reset.on_click(lambda _: self._request("reset"))
            rtf = gui.add_slider("Real-time factor", 0.1, 4.0, 0.1, 1.0,
                                 hint="sim seconds per wall-clock second")
            rtf.on_update(lambda e: setattr(self, "rtf", float(e.target.value)))
        if duration is not None:
            self.slider = gui.add_slider("Time [s]", 0.0, max(float(duration), 1e-3), 1e-3, 0.0)
            self.slider.on_update(self._slid)
            self._slider_set = False
        collision = gui.add_checkbox("Collision geometry", False)
        collision.on_update(lambda e: self._request(("collision", bool(e.target.value))))
        pyramids = gui.add_checkbox("Friction pyramids", False)
        pyramids.on_update(lambda e: self._request(("pyramids", bool(e.target.value))))
        self.text = gui.add_markdown("starting...")
        self.legend = gui.add_markdown(
            f"Force arrows: 1 m = {1.0 / view.force_scale:.0f} N (the weight is "
            f"{WEIGHT_LENGTH:.1f} m); contact points red, friction pyramids green.")
        self.force_chart = self._chart("total contact force (vertical) [N]", "force", "#1e6ee6")
        self.pen_chart = self._chart("max penetration [mm]", "penetration", "#dc1e1e")

    def _chart(self, title, label, color):
        z = np.zeros(1)
        return self.gui.add_uplot(
            (z, z), ({"label": "t [s]"}, {"label": label, "stroke": color, "width": 2}),
            title=title, aspect=2.0, legend={"show": False}, scales={"x": {"time": False}})

    def set_playing(self, on):
        """Play or pause (the button's label names what a click does next)."""
        self.playing = bool(on)
        if hasattr(self, "play"):
            self.play.label = "Pause" if self.playing else "Play"

    def _request(self, what):
        with self._lock:
            self._requests.add(what)

    def _slid(self, event):
        if self._slider_set:  # our own update of the slider, not the user's
            self._slider_set = False
            return
        self._request(("seek", float(event.target.value)))

    def take(self):
        """The requests since the last call (``"step"``, ``"reset"``, ``("seek", t)``,
        ``("collision", on)``, ``("pyramids", on)``), emptied."""
        with self._lock:
            out, self._requests = self._requests, set()
        return out

    def show(self, frame, rtf, note=None):
        """The status text of ``frame``; ``rtf`` the achieved real-time factor (None:
        not measured); ``note`` a line shown first (an error)."""
        rate = "-" if rtf is None else f"{rtf:.2f}x"
        self.text.content = (
            ("" if note is None else f"**{note}**\n\n") +
            f"**sim time t = {frame.t:.3f} s** | real-time factor {rate} "
            f"({'playing' if self.playing else 'paused'}, target {self.rtf:.1f}x)\n\n"
            f"contacts {len(frame.p_W)}, total force {frame.force_total:.1f} N, "
            f"max penetration {1e3 * frame.max_penetration:.3f} mm\n\n"
            f"solver: {frame.report()}")
        if self.slider is not None and abs(self.slider.value - frame.t) > 5e-4:
            self._slider_set = True
            self.slider.value = round(frame.t, 3)

    def chart(self, t, force, penetration):
        """Replace the charts' curves: ``t`` (m,) [s], ``force`` (m,) [N],
        ``penetration`` (m,) [m] (shown in mm)."""
        t = np.asarray(t, dtype=float)
        if len(t) < 2:
            return
        self.force_chart.data = (t, np.asarray(force, dtype=float))
        self.pen_chart.data = (t, 1e3 * np.asarray(penetration, dtype=float))
