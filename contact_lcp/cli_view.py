"""``contact-lcp view`` and ``contact-lcp replay``: the simulation in the browser.

Both serve the page until Ctrl-C (exit code 0: stopping the server is how a viewer
ends) and print its address; ``--no-browser`` leaves opening it to the user.
"""

import sys
import threading

from contact_lcp.cli_simulate import check_seconds


def add_parsers(sub):
    """The ``view`` and ``replay`` subcommands of the ``contact-lcp`` parser ``sub``."""
    v = sub.add_parser("view", help="simulate a scene live and show it in the browser")
    v.add_argument("scene", help="scene YAML file (e.g. config/humanoid_squat.yaml)")
    v.add_argument("--port", type=int, default=8080, help="HTTP port (default 8080; 0: any "
                   "free port; a busy one: the next free one)")
    v.add_argument("--no-browser", action="store_true", help="do not open a browser")
    v.add_argument("--model", help="contact model instead of the scene's (e.g. frictionless)")
    v.add_argument("--duration", type=float, help="pause at this sim time [s] (default: the "
                   "scene's duration; Play carries on)")
    v.set_defaults(func=cmd_view)
    r = sub.add_parser("replay", help="show a recorded run (simulate --output) in the browser")
    r.add_argument("run", help=".npz written by simulate --output")
    r.add_argument("--port", type=int, default=8080, help="HTTP port (default 8080)")
    r.add_argument("--no-browser", action="store_true", help="do not open a browser")
    r.add_argument("--scene", help="scene YAML to draw the run with (default: the one the "
                   "run names; runs recorded before they kept it need this)")
    r.set_defaults(func=cmd_replay)


def _check_port(port):
    if not 0 <= port <= 65535:
        raise ValueError(f"--port: expected an integer in [0, 65535], got {port}")


def _serve(port, requested, loop, no_browser, close):
    """Print the address, open a browser unless ``no_browser``, run ``loop(stop)`` in
    this thread until Ctrl-C, then ``close()`` the page."""
    url = f"http://127.0.0.1:{port}"
    busy = "" if requested in (0, port) else f" (port {requested} was busy)"
    print(f"viewer at {url}{busy}; Ctrl-C stops it", flush=True)
    if not no_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    stop = threading.Event()
    try:
        loop(stop)
    except KeyboardInterrupt:
        print("viewer stopped", file=sys.stderr)
    finally:
        stop.set()
        close()
    return 0


def cmd_view(args):
    from contact_lcp.sim import Simulator
    from contact_lcp.viewer.live import LiveViewer

    check_seconds(args.duration, "--duration", positive=True)
    _check_port(args.port)
    sim = Simulator.from_file(args.scene, contact_model=args.model)
    end = sim.scene.duration if args.duration is None else args.duration
    viewer = LiveViewer(sim, args.port)
    return _serve(viewer.port, args.port, lambda stop: viewer.run(stop, end), args.no_browser,
                  viewer.close)


def cmd_replay(args):
    from contact_lcp.viewer import start_server
    from contact_lcp.viewer.frames import RecordedRun
    from contact_lcp.viewer.replay import ReplayViewer, replay_world

    _check_port(args.port)
    run = RecordedRun(args.run)
    world, scene = replay_world(run, args.scene)  # a wrong scene fails before the server
    server = start_server(args.port)
    try:
        viewer = ReplayViewer(run, server, world, scene)
    except BaseException:
        server.stop()
        raise
    return _serve(server.get_port(), args.port, viewer.run, args.no_browser, server.stop)
