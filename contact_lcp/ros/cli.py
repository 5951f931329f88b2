"""``contact_lcp_node`` / ``python -m contact_lcp.ros``: run the node from a terminal.

Prints one status line per wall second (sim time, real-time factor, contacts, LCP
pivots of the last step, failures) until Ctrl-C or ``--duration`` sim seconds.
Everything after ``--ros-args`` goes to ROS (``-p name:=value``, ``--params-file``).
"""

import argparse
import os
import signal
import sys

from contact_lcp.ros.process import die_with_parent


def build_parser():
    """The command line's options (ROS arguments are removed before parsing)."""
    parser = argparse.ArgumentParser(
        prog="contact_lcp_node",
        description="Simulate a contact_lcp scene and publish it on ROS 2.",
        epilog="ROS arguments: --ros-args -p scene:=config/talos_stand.yaml "
               "-p real_time_factor:=0.5 --params-file config/contact_lcp.params.yaml")
    parser.add_argument("--duration", type=float, metavar="S",
                        help="stop after S seconds of sim time (default: run until Ctrl-C)")
    parser.add_argument("--quiet", action="store_true", help="no status lines on stdout")
    return parser


def parse_args(argv):
    """Options of the command line ``argv`` (program name first), ROS arguments removed."""
    from rclpy.utilities import remove_ros_args

    parser = build_parser()
    opts = parser.parse_args(remove_ros_args(argv)[1:])
    if opts.duration is not None and not opts.duration > 0:
        parser.error(f"--duration must be > 0, got {opts.duration}")
    return opts


def run(argv=None):
    """Run the node; return the exit status (0 done, 2 bad parameters or scene)."""
    parent = os.getppid()
    die_with_parent()
    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.signals import SignalHandlerOptions
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

    from contact_lcp.ros.node import ContactLCPNode, status_line

    argv = list(sys.argv if argv is None else argv)
    opts = parse_args(argv)
    # Our own signal handling (also when started with SIGINT ignored, as a background
    # job is): Ctrl-C / SIGTERM end the spin loop in this thread, then the physics
    # thread (which publishes) stops before the context goes away.
    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGINT, signal.SIGTERM)}
    node = None
    try:
        def status(line):
            print(line, flush=True)
        try:
            node = ContactLCPNode(duration=opts.duration, status=None if opts.quiet else status)
        except (ValueError, ParameterException) as e:
            print(f"contact_lcp_node: {e}", file=sys.stderr, flush=True)
            return 2
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while rclpy.ok() and not node.finished:
            executor.spin_once(timeout_sec=0.25)
            if os.getppid() != parent:  # orphaned (re-parented): the launcher is gone
                print("contact_lcp_node: the parent process is gone; stopping",
                      file=sys.stderr, flush=True)
                break
        if node.finished and not opts.quiet:
            try:
                print(status_line(node.loop.snapshot().result(2.0)), flush=True)
            except Exception:  # the last line is a courtesy: never fail the exit on it
                pass
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.shutdown()
            node.destroy_node()
        rclpy.try_shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _terminate(signum, frame):
    raise KeyboardInterrupt

