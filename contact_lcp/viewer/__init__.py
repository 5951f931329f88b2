"""A 3-D view of the simulation in the browser, live (``contact-lcp view``, the node's
``viewer_port``) or replayed (``contact-lcp replay``), served by viser.

The numerical core never imports this package; it reads the simulator's public views
(:meth:`Simulator.contact_arrays`, ``q``, the world's models) and the run recordings.
"""

from contact_lcp.exceptions import ContactLCPError


class ViewerError(ContactLCPError):
    """The viewer cannot start (its library is missing, or the port is not usable)."""


def start_server(port=8080, host="127.0.0.1"):
    """A viser server on ``host:port`` (0: any free port); its actual port is
    ``server.get_port()`` (viser takes the next free port when ``port`` is busy).

    Raises
    ------
    ViewerError
        viser is not installed, or ``port`` is not an integer in [0, 65535].
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ViewerError(f"port: expected an integer in [0, 65535], got {port!r}")
    try:
        import viser
    except ImportError as e:
        raise ViewerError("the viewer needs the viser package (pip install viser, or "
                          f"reinstall contact_lcp): {e}") from None
    return viser.ViserServer(host=host, port=port, verbose=False)
