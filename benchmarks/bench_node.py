#!/usr/bin/env python3
"""Node overhead: achieved real-time factor of the ROS 2 node against a plain step loop.

One process, same scene, alternating rounds (so machine load hits both alike):

* **plain** — ``Simulator.step()`` in a ``for`` loop for ``--seconds`` wall seconds;
* **node** — ``ContactLCPNode`` with ``real_time_factor = 0`` (as fast as possible) and
  ``publish_rate`` Hz (default 100: /clock, /joint_states, /odom, wrenches; markers at
  10 Hz; diagnostics 1 Hz), its executor spun in this thread, physics in its thread, no
  subscriber attached (DDS still serializes every message).

Real-time factor = sim seconds advanced / wall seconds. Overhead = 1 - median(node) /
median(plain); target <= 10 %. Rows go to
``benchmarks/results/bench_node_<stamp>_<revision>.csv`` (``common.py``).

Usage::

    .venv/bin/python benchmarks/bench_node.py [--scene config/humanoid_stand.yaml]
        [--seconds 5] [--rounds 3] [--publish-rate 100]
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import common  # noqa: E402


def plain_round(scene, seconds):
    """Real-time factor of a bare step loop on a fresh simulator (after a short settle)."""
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(scene)
    for _ in range(50):
        sim.step()
    t0, w0 = sim.t, time.perf_counter()
    while time.perf_counter() - w0 < seconds:
        sim.step()
    return (sim.t - t0) / (time.perf_counter() - w0), sim.t - t0


def node_round(scene, seconds, publish_rate, context):
    """Real-time factor of the node stepping as fast as it can while publishing."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from contact_lcp.ros.node import ContactLCPNode

    node = ContactLCPNode(context=context, parameter_overrides=[
        Parameter("scene", value=scene), Parameter("real_time_factor", value=0.0),
        Parameter("publish_rate", value=float(publish_rate))])
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        while node.loop.time < 0.05:  # the same settle as the plain loop
            executor.spin_once(timeout_sec=0.01)
        t0, w0, n0 = node.loop.time, time.perf_counter(), node.publish_cycles
        while time.perf_counter() - w0 < seconds:
            executor.spin_once(timeout_sec=0.01)
        wall = time.perf_counter() - w0
        return (node.loop.time - t0) / wall, node.loop.time - t0, (node.publish_cycles - n0) / wall
    finally:
        node.shutdown()
        executor.shutdown()
        node.destroy_node()


def main(argv=None):
    import rclpy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=os.path.join(
        os.path.dirname(HERE), "config", "humanoid_stand.yaml"))
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--publish-rate", type=float, default=100.0)
    args = parser.parse_args(argv)

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=1 + os.getpid() % 100)
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    scene = os.path.abspath(args.scene)
    rows = []
    try:
        for r in range(args.rounds):
            rtf, sim_s = plain_round(scene, args.seconds)
            rows.append(dict(mode="plain", round=r, rtf=rtf, sim_s=sim_s))
            rtf, sim_s, hz = node_round(scene, args.seconds, args.publish_rate, context)
            rows.append(dict(mode="node", round=r, rtf=rtf, sim_s=sim_s, joint_states_hz=hz))
            print(f"round {r}: plain rtf {rows[-2]['rtf']:.3f}  node rtf {rtf:.3f}  "
                  f"/joint_states {hz:.1f} Hz", flush=True)
    finally:
        rclpy.try_shutdown(context=context)

    plain = common.median([x["rtf"] for x in rows if x["mode"] == "plain"])
    node = common.median([x["rtf"] for x in rows if x["mode"] == "node"])
    overhead = 1.0 - node / plain
    load = os.getloadavg()[0]
    for x in rows:
        x.update(revision=revision, date=date, scene=os.path.basename(scene),
                 seconds=args.seconds, publish_rate=args.publish_rate, load_1min=load)
    rows.append(dict(mode="overhead", rtf=overhead, revision=revision, date=date,
                     scene=os.path.basename(scene), seconds=args.seconds,
                     publish_rate=args.publish_rate, load_1min=load))
    columns = ["revision", "date", "scene", "mode", "round", "seconds", "publish_rate",
               "rtf", "sim_s", "joint_states_hz", "load_1min"]
    path = common.write_csv(common.results_path("bench_node", revision, stamp), rows, columns)
    print(common.format_table(rows, ["mode", "round", "rtf", "sim_s", "joint_states_hz"]))
    verdict = "within" if overhead <= 0.10 else "ABOVE"
    print(f"\nnode overhead {100 * overhead:.1f} % (median rtf plain {plain:.3f}, node "
          f"{node:.3f}; target <= 10 %: {verdict}); load {load:.2f}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
