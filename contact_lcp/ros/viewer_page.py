"""The node's 3-D page (parameter ``viewer_port``): :mod:`contact_lcp.viewer`'s live page
fed from a wall-clock task of the physics thread, so the simulator is read between two
steps, as every publisher reads it; the drawing is the page process's, not this one's.

The page has no stepping controls (the node's clock is its own: ``paused``,
``real_time_factor``, the services); its display toggles work. A page that cannot start
is logged and the node runs on without it; a failing frame is a throttled task error,
never the end of the physics thread. A new simulator (a rebuild) gets a new page on the
same port, started from the physics thread (seconds, as the rebuild itself takes).
"""

from contact_lcp.viewer.live import FRAME_RATE


class ViewerPage:
    """A live page following whatever simulator the physics loop steps; build it with
    :meth:`start`, end it with :meth:`close`."""

    def __init__(self, viewer, loop, logger):
        self.viewer, self.loop, self.logger = viewer, loop, logger
        self.task = loop.every(1.0 / FRAME_RATE, self._draw)

    @classmethod
    def start(cls, port, sim, loop, logger):
        """The page of ``sim`` on ``port``, or None when ``port`` is 0 or the page
        cannot start (the reason logged as an error)."""
        if not port:
            return None
        viewer = cls._open(port, sim, logger)
        return None if viewer is None else cls(viewer, loop, logger)

    @staticmethod
    def _open(port, sim, logger):
        from contact_lcp.exceptions import ContactLCPError
        from contact_lcp.viewer.live import LiveViewer

        try:
            viewer = LiveViewer(sim, port, controls=False)
        except (ContactLCPError, OSError) as e:
            logger.error(f"viewer_port {port}: the 3-D page cannot start: {e}")
            return None
        logger.info(f"3-D page at http://127.0.0.1:{viewer.port}"
                    + ("" if viewer.port == port else f" (port {port} was busy)"))
        return viewer

    def _draw(self, sim):
        if self.viewer is not None and self.viewer.sim is not sim:  # a rebuilt simulator
            port = self.viewer.port
            self.viewer.close()
            self.viewer = self._open(port, sim, self.logger)
        if self.viewer is not None:
            self.viewer.draw(self.loop.last_info if sim.t > 0 else None)

    def close(self):
        """Stop sending frames and end the page."""
        self.task.cancel()
        if self.viewer is not None:
            self.viewer.close()
