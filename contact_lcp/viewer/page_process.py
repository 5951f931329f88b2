"""The live page's server in a process of its own.

Drawing a frame in viser costs milliseconds of Python (a message per part pose, their
serialization to every open page), which in the simulator's process would take that
time from the steps at 30 frames per second. So the simulator's process only sends each
frame's arrays (:class:`~contact_lcp.viewer.frames.Frame`, a few kB) through a pipe, and
this process rebuilds the world's geometry from the same specs, places the parts (its own
Pinocchio Data), serves the page and sends the page's requests back.

Messages to the page process: first ``(world_spec, port, weight, controls)``, then
``("frame", Frame, rtf, penetration_max, playing, note)`` and ``("stop",)``. From it: ``("port", int)`` once started (or ``("error", str)``), then
``("request", r)`` for the stepping requests of :class:`~contact_lcp.viewer.panel.Panel`,
``("playing", bool)`` and ``("rtf", float)`` when the page changes them.
"""

import collections
import socket
import subprocess
import sys
import time
from multiprocessing.connection import Connection

import numpy as np

#: seconds to wait for the page process to serve (imports, the world's meshes)
START_TIMEOUT = 300.0


def world_spec(sim):
    """What the page process needs to rebuild ``sim``'s world (picklable specs)."""
    s = sim.scene
    return {"robots": [r.robot for r in s.robots], "bodies": list(s.bodies),
            "gravity": tuple(np.asarray(s.gravity, dtype=float)),
            "ground_height": None if s.ground is None else s.ground.height,
            "mesh_mode": s.contact.meshes, "whole": bool(s.loops)}


class PageProcess:
    """Start the page process for ``sim``'s world on ``port`` (0: any free port) and
    wait until it serves; :attr:`port` is the port it got.

    The process is ``python -m contact_lcp.viewer.page_process FD`` with one end of a
    socket pair as its connection (not multiprocessing's spawn, which would run the
    caller's ``__main__`` script again in the child).

    Raises
    ------
    ViewerError
        The process could not serve (its reason), or not within :data:`START_TIMEOUT`.
    """

    def __init__(self, sim, port, weight, controls=True):
        from contact_lcp.viewer import ViewerError

        mine, theirs = socket.socketpair()
        self.conn = Connection(mine.detach())
        fd = theirs.fileno()
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "contact_lcp.viewer.page_process",
                                          str(fd)], pass_fds=[fd])
        finally:
            theirs.close()
        self.conn.send((world_spec(sim), port, weight, controls))
        if not self.conn.poll(START_TIMEOUT):
            self.close()
            raise ViewerError(f"the page process did not start within {START_TIMEOUT:.0f} s")
        try:
            kind, value = self.conn.recv()
        except EOFError:
            kind, value = "error", f"the page process ended (exit code {self.proc.wait()})"
        if kind != "port":
            self.close()
            raise ViewerError(value)
        self.port = value

    def send(self, frame, rtf, penetration_max, playing, note):
        """Send a frame to draw (never blocks for long: the page process reads them all)."""
        try:
            self.conn.send(("frame", frame, rtf, penetration_max, playing, note))
        except (BrokenPipeError, EOFError, OSError):  # the page process ended (Ctrl-C)
            pass

    def messages(self):
        """The page's messages since the last call."""
        out = []
        try:
            while self.conn.poll():
                out.append(self.conn.recv())
        except (EOFError, OSError):
            pass
        return out

    def close(self):
        """Stop the page process."""
        try:
            self.conn.send(("stop",))
        except (BrokenPipeError, EOFError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.conn.close()


def serve_page(conn, spec, port, weight, controls):
    """The page process: serve until ``("stop",)``, the pipe closes or Ctrl-C."""
    from contact_lcp.dynamics import World
    from contact_lcp.viewer import start_server
    from contact_lcp.viewer.geometry import WorldParts
    from contact_lcp.viewer.panel import CHART_POINTS, CHART_RATE, Panel
    from contact_lcp.viewer.scene_view import SceneView

    server = None
    try:
        try:
            world = World(spec["robots"], spec["bodies"], gravity=spec["gravity"],
                          ground_height=spec["ground_height"], mesh_mode=spec["mesh_mode"],
                          whole=spec["whole"])
            parts = WorldParts(world, spec["robots"])
            server = start_server(port)
            view = SceneView(server, parts, weight)
            panel = Panel(server, view, controls=controls)
        except Exception as e:  # SceneError, ViewerError, OSError: the parent says it
            conn.send(("error", f"{type(e).__name__}: {e}"))
            return
        conn.send(("port", server.get_port()))
        _loop(conn, server, view, panel, collections.deque(maxlen=CHART_POINTS), CHART_RATE)
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass
    finally:
        if server is not None:
            server.stop()


def _loop(conn, server, view, panel, history, chart_rate):
    """Draw the newest frame of the pipe, send the page's requests back. The simulator's
    process owns ``playing``: a frame's value is applied when it changed there (its end
    time, a step, an error), never to undo a click whose message is still on its way."""
    playing, rtf, last_chart, chart_due = panel.playing, panel.rtf, -np.inf, False
    sim_playing = panel.playing
    while True:
        msgs = []
        while conn.poll(0 if msgs else 0.05):
            msgs.append(conn.recv())
        if any(m[0] == "stop" for m in msgs):
            return
        for request in panel.take():
            if request[0] == "collision":
                view.set_collision_visible(request[1])
            elif request[0] == "pyramids":
                view.set_pyramids_visible(request[1])
            else:
                conn.send(("request", request))
        if panel.playing != playing:
            playing = panel.playing
            conn.send(("playing", playing))
        if panel.rtf != rtf:
            rtf = panel.rtf
            conn.send(("rtf", rtf))
        frames = [m for m in msgs if m[0] == "frame"]
        if not frames:
            continue
        _, frame, achieved, pen_max, now_playing, note = frames[-1]
        if now_playing != sim_playing:
            sim_playing = playing = now_playing
            panel.set_playing(now_playing)
        for m in frames:  # every frame's chart sample, drawn or not
            if not history or history[-1][0] != m[1].t:
                history.append((m[1].t, m[1].force_total, m[3]))
                chart_due = True
        if not server.get_clients():
            continue  # nobody looks: the frame is not drawn (a new page gets the next)
        view.show(frame, collision_q=True)
        panel.show(frame, achieved, note)
        now = time.perf_counter()
        if chart_due and now - last_chart >= 1.0 / chart_rate:
            panel.chart(*np.array(history).T)
            last_chart, chart_due = now, False


def main(argv=None):
    """``python -m contact_lcp.viewer.page_process FD``: serve on the connection FD."""
    argv = sys.argv[1:] if argv is None else argv
    conn = Connection(int(argv[0]))
    try:
        spec, port, weight, controls = conn.recv()
    except (EOFError, KeyboardInterrupt):
        return
    serve_page(conn, spec, port, weight, controls)


if __name__ == "__main__":
    main()
