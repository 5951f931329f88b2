"""The node's 3-D page (parameter ``viewer_port``): :mod:`contact_lcp.viewer` drawing the
node's simulator from a wall-clock task of the physics thread, so the page reads the
simulator between two steps, as every publisher does, and never from another thread.

The page has no stepping controls (the node's clock is its own: ``paused``,
``real_time_factor``, the services); its display toggles work. A viewer that cannot
start (viser missing) is logged and the node runs on without it; a failing draw is a
throttled task error, never the end of the physics thread.
"""

from contact_lcp.viewer.live import FRAME_RATE


class ViewerPage:
    """A live page following whatever simulator the physics loop steps.

    Build with :meth:`start`; ``close()`` stops its server.
    """

    def __init__(self, server, loop):
        self.server, self.loop = server, loop
        self.viewer = None
        self.task = loop.every(1.0 / FRAME_RATE, self._draw)

    @classmethod
    def start(cls, port, loop, logger):
        """The page on ``port``, or None when ``port`` is 0 or the server cannot start
        (the reason logged as an error)."""
        if not port:
            return None
        from contact_lcp.viewer import ViewerError, start_server

        try:
            server = start_server(port)
        except (ViewerError, OSError) as e:
            logger.error(f"viewer_port {port}: the 3-D page cannot start: {e}")
            return None
        logger.info(f"3-D page at http://127.0.0.1:{server.get_port()}"
                    + ("" if server.get_port() == port else f" (port {port} was busy)"))
        return cls(server, loop)

    def _draw(self, sim):
        from contact_lcp.viewer.live import LiveViewer

        if self.viewer is None or self.viewer.sim is not sim:  # first, or a new simulator
            if self.viewer is not None:
                self.server.scene.reset()
                self.server.gui.reset()
            self.viewer = LiveViewer(sim, self.server, controls=False)
        self.viewer.draw(self.loop.last_info if sim.t > 0 else None)

    def close(self):
        """Stop drawing and stop the server."""
        self.task.cancel()
        self.server.stop()
