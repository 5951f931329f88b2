#!/usr/bin/env python3
"""Node overhead: achieved real-time factor of the ROS 2 node against a plain step loop.

One process, same scene, alternating rounds (so machine load hits both alike):

* **plain** — ``Simulator.step()`` in a ``for`` loop for ``--seconds`` wall seconds;
* **node** — ``ContactLCPNode`` with ``real_time_factor = 0`` (as fast as possible) and
  ``publish_rate`` Hz (markers at 10 Hz; diagnostics 1 Hz), its executor spun in this
  thread, physics in its thread, no subscriber attached: the node sends nothing to a
  topic nobody listens to, so this is the cost of the node itself (tasks, executor,
  diagnostics); what delivering messages costs is measured by ``--mode client``.

Real-time factor = sim seconds advanced / wall seconds. Overhead = 1 - median(node) /
median(plain); target <= 10 %. On a shared machine the wall figure moves with the other
processes' load, so the same is also given per CPU second of this process
(``rtf_cpu`` = sim seconds / process CPU seconds, all threads, DDS included): the cost of
the node itself, whatever the load; and the physics thread's own CPU split
(``publishing_share`` = its CPU time in publishing tasks and requests / its total),
the most load-independent of the three. Rows go to
``benchmarks/results/bench_node_<stamp>_<revision>.csv`` (``common.py``), with the
1-minute load average.

Two more modes measure the node as a user sees it, from an independent client process
(benchmarks/node_client.py; the node is its own process):

* ``--mode client`` — the node as fast as possible (``real_time_factor: 0``) publishing
  at ``--publish-rate`` Hz of sim time; per round the client counts ``/joint_states``
  per wall second and per sim second and takes the RTF from ``/clock``, and the CLI
  (``contact-lcp simulate``) runs the same scene for the same sim time: node RTF vs CLI
  RTF. Targets (issue 14): >= 1 kHz of sim time delivered at >= 200 Hz wall, RTF >= 5,
  node within 10 % of the CLI.
* ``--mode profile`` — the node in this process publishing to a listener process for
  ``--seconds``: Python calls and cProfile time per publish cycle, the physics thread's
  CPU in steps and in publishing per cycle, and the CPU and wall time of each message
  sent (to DDS, or to the relay with ``--publisher-process``). Printed, no CSV.
* ``--mode soak`` — ``--seconds`` of the humanoid at real-time factor 1 with random
  command streams every 50 ms (valid ones, NaN, inf, wrong lengths, unknown joints, on
  ``~/commands``, ``/joint_commands`` and ``~/joint_trajectory``), a parameter flip
  every second (some rebuild the simulator; some are ``scene`` paths that are not
  scenes: /etc/passwd, /dev/zero, a missing file, a folder) and a reset every 10 s. Every 10 s a row:
  node alive, RSS, messages, NaN seen (must stay 0), ERROR diagnostics.

Usage::

    .venv/bin/python benchmarks/bench_node.py [--scene config/humanoid_stand.yaml]
        [--seconds 5] [--rounds 3] [--publish-rate 100]
    .venv/bin/python benchmarks/bench_node.py --mode client --publish-rate 1000
        [--publisher-process]
    .venv/bin/python benchmarks/bench_node.py --mode profile --publish-rate 1000
    .venv/bin/python benchmarks/bench_node.py --mode soak --seconds 600
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

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
    t0, w0, c0 = sim.t, time.perf_counter(), time.process_time()
    while time.perf_counter() - w0 < seconds:
        sim.step()
    sim_s = sim.t - t0
    return sim_s / (time.perf_counter() - w0), sim_s / (time.process_time() - c0), sim_s


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
            executor.spin_once(timeout_sec=0.05)
        t0, w0, c0 = node.loop.time, time.perf_counter(), time.process_time()
        n0, cpu0 = node.publish_cycles, dict(node.loop.cpu)
        while time.perf_counter() - w0 < seconds:
            executor.spin_once(timeout_sec=0.25)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        sim_s = node.loop.time - t0
        used = {k: node.loop.cpu[k] - cpu0[k] for k in cpu0}
        share = (used["tasks"] + used["ops"]) / sum(used.values())
        return sim_s / wall, sim_s / cpu, sim_s, (node.publish_cycles - n0) / wall, share
    finally:
        node.shutdown()
        executor.shutdown()
        node.destroy_node()


def main(argv=None):
    import rclpy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=os.path.join(
        os.path.dirname(HERE), "config", "humanoid_stand.yaml"))
    parser.add_argument("--seconds", type=float, default=3.0, help="wall seconds per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--publish-rate", type=float, default=100.0)
    parser.add_argument("--sensor-rate", type=float, default=100.0,
                        help="the node's sensor_rate [Hz of sim time] (client mode)")
    parser.add_argument("--clock-rate", type=float, default=100.0,
                        help="the node's clock_rate [Hz of sim time] (client mode)")
    parser.add_argument("--publisher-process", action="store_true",
                        help="the node's publisher_process: true (client and soak modes)")
    parser.add_argument("--mode", choices=("overhead", "client", "soak", "profile"),
                        default="overhead")
    args = parser.parse_args(argv)
    if args.mode == "client":
        import node_modes

        return node_modes.client_rounds(args)
    if args.mode == "soak":
        import node_modes

        return node_modes.soak(args)
    if args.mode == "profile":
        import node_modes

        return node_modes.profile(args)

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=1 + os.getpid() % 100)
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    scene = os.path.abspath(args.scene)
    rows = []
    try:
        for r in range(args.rounds):
            rtf, rtf_cpu, sim_s = plain_round(scene, args.seconds)
            rows.append(dict(mode="plain", round=r, rtf=rtf, rtf_cpu=rtf_cpu, sim_s=sim_s))
            rtf, rtf_cpu, sim_s, hz, share = node_round(scene, args.seconds,
                                                        args.publish_rate, context)
            rows.append(dict(mode="node", round=r, rtf=rtf, rtf_cpu=rtf_cpu, sim_s=sim_s,
                             joint_states_hz=hz, publishing_share=share))
            print(f"round {r}: plain rtf {rows[-2]['rtf']:.3f} ({rows[-2]['rtf_cpu']:.3f}/cpu)"
                  f"  node rtf {rtf:.3f} ({rtf_cpu:.3f}/cpu)  /joint_states {hz:.1f} Hz"
                  f"  publishing {100 * share:.1f} % of the physics thread", flush=True)
    finally:
        rclpy.try_shutdown(context=context)

    def med(mode, key):
        return common.median([x[key] for x in rows if x["mode"] == mode])
    plain, node = med("plain", "rtf"), med("node", "rtf")
    overhead = 1.0 - node / plain
    overhead_cpu = 1.0 - med("node", "rtf_cpu") / med("plain", "rtf_cpu")
    share = med("node", "publishing_share")
    load = os.getloadavg()[0]
    for x in rows:
        x.update(revision=revision, date=date, scene=os.path.basename(scene),
                 seconds=args.seconds, publish_rate=args.publish_rate, load_1min=load)
    rows.append(dict(mode="overhead", rtf=overhead, rtf_cpu=overhead_cpu,
                     publishing_share=share,
                     revision=revision, date=date,
                     scene=os.path.basename(scene), seconds=args.seconds,
                     publish_rate=args.publish_rate, load_1min=load))
    columns = ["revision", "date", "scene", "mode", "round", "seconds", "publish_rate",
               "rtf", "rtf_cpu", "sim_s", "joint_states_hz", "publishing_share", "load_1min"]
    path = common.write_csv(common.results_path("bench_node", revision, stamp), rows, columns)
    print(common.format_table(rows, ["mode", "round", "rtf", "rtf_cpu", "sim_s",
                                     "joint_states_hz", "publishing_share"]))
    verdict = "within" if overhead <= 0.10 else "ABOVE"
    print(f"\nnode overhead {100 * overhead:.1f} % of the real-time factor (median plain "
          f"{plain:.3f}, node {node:.3f}; target <= 10 %: {verdict}); per CPU second "
          f"{100 * overhead_cpu:.1f} %; publishing and requests take {100 * share:.1f} % of "
          f"the physics thread's CPU; load {load:.2f}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
