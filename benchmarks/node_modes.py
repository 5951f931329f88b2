"""``bench_node.py --mode client`` and ``--mode soak``: the node seen from another process.

See the docstring of benchmarks/bench_node.py for what is measured and why.
"""

import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import common
from node_client import NS, ROOT, Client, NodeProcess, tree_cpu_seconds

CLI_RTF = re.compile(r"\(([0-9.]+)x real time\)")


def cli_rtf(scene, sim_seconds):
    """Real-time factor printed by ``contact-lcp simulate`` for ``sim_seconds``."""
    out = subprocess.run(
        [sys.executable, "-m", "contact_lcp.cli", "simulate", scene, "--duration",
         f"{sim_seconds:g}"], cwd=ROOT, capture_output=True, text=True, timeout=3600,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])))
    match = CLI_RTF.search(out.stdout)
    if match is None:
        raise RuntimeError(f"no real-time factor in the CLI's output:\n{out.stdout}{out.stderr}")
    return float(match.group(1))


def client_rounds(args):
    """Rates and RTF of the node (own process) against the CLI, alternating rounds."""
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    scene = os.path.abspath(args.scene)
    log = os.path.join(tempfile.mkdtemp(prefix="bench_node_"), "node.log")
    client = Client(raw=True)
    rows = []
    try:
        for r in range(args.rounds):
            node = NodeProcess({"scene": scene, "real_time_factor": 0.0,
                                "publish_rate": args.publish_rate,
                                "sensor_rate": args.sensor_rate,
                                "clock_rate": args.clock_rate, "marker_rate": 0.0,
                                "publisher_process": str(args.publisher_process).lower()},
                               log)
            try:
                node.wait_ready()
                client.window(1.0)  # discovery and settling
                c0, n0, w0 = time.process_time(), tree_cpu_seconds(node.pid), time.monotonic()
                wall_hz, sim_hz, rtf = client.window(args.seconds)
                wall = time.monotonic() - w0
                client_cpu = (time.process_time() - c0) / wall
                node_cpu = (tree_cpu_seconds(node.pid) - n0) / wall
            finally:
                node.stop()
            sim_s = max(rtf * args.seconds, 0.5)
            cli = cli_rtf(scene, round(sim_s, 3))
            rows.append(dict(mode="client", round=r, rtf=rtf, cli_rtf=cli,
                             joint_states_hz=wall_hz, joint_states_sim_hz=sim_hz,
                             ratio=rtf / cli if cli else float("nan"),
                             node_cpu=node_cpu, client_cpu=client_cpu,
                             load_1min=os.getloadavg()[0]))
            print(f"round {r}: node rtf {rtf:.3f} (CLI {cli:.3f}, ratio {rtf / cli:.3f}); "
                  f"/joint_states {wall_hz:.1f} Hz wall, {sim_hz:.1f} Hz sim; CPU node "
                  f"{node_cpu:.2f}, client {client_cpu:.2f} cores; load "
                  f"{rows[-1]['load_1min']:.2f}", flush=True)
    finally:
        client.close()
    load = os.getloadavg()[0]
    for x in rows:
        x.update(revision=revision, date=date, scene=os.path.basename(scene),
                 seconds=args.seconds, publish_rate=args.publish_rate,
                 sensor_rate=args.sensor_rate, clock_rate=args.clock_rate,
                 publisher_process=args.publisher_process)
    columns = ["revision", "date", "scene", "mode", "round", "seconds", "publish_rate",
               "sensor_rate", "clock_rate", "publisher_process", "rtf", "cli_rtf", "ratio",
               "joint_states_hz",
               "joint_states_sim_hz", "node_cpu", "client_cpu", "load_1min"]
    path = common.write_csv(common.results_path("bench_node_client", revision, stamp),
                            rows, columns)
    med = {k: common.median([x[k] for x in rows]) for k in
           ("rtf", "cli_rtf", "ratio", "joint_states_hz", "joint_states_sim_hz")}
    print(f"\nmedian: node rtf {med['rtf']:.3f}, CLI rtf {med['cli_rtf']:.3f}, node/CLI "
          f"{med['ratio']:.3f} (target >= 0.9); /joint_states {med['joint_states_hz']:.1f} Hz "
          f"wall (target >= 200), {med['joint_states_sim_hz']:.1f} Hz sim (asked "
          f"{args.publish_rate:g}); load {load:.2f}; wrote {path}")
    return 0


# -- soak -------------------------------------------------------------------------------
FLIPS = [("publish_rate", [50.0, 100.0, 200.0]),
         ("command_mode", ["position", "velocity", "effort"]),
         ("real_time_factor", [1.0, 0.0, 1.0]),
         ("kp", [0.0, 300.0]),
         ("paused", [False, False, True]),
         ("wrench_links", [["l_foot"], ["l_foot", "r_foot"]]),
         ("solver_method", ["", "lexicographic"]),  # rebuilds the simulator
         ("time_step", [0.0, 0.002]),  # rebuilds the simulator
         ("sensor_rate", [50.0, 100.0, 200.0]),
         ("clock_rate", [50.0, 100.0, 1000.0])]


def _hostile_values(folder):
    """Parameter values a careless or hostile peer may send (issue 35), each to be
    rejected with the node alive: URDFs whose geometry crashed coal's convex-hull build (a
    planar mesh, zero scales), URDFs that urdfdom reads with elements dropped (a NaN
    origin), XML that is no URDF, and ``scene`` values naming a secret file, a missing
    file, a folder and a device. Files go to ``folder``."""
    stl = os.path.join(folder, "flat.stl")
    with open(stl, "w") as f:  # two triangles in the plane z = 0
        f.write("solid flat\n")
        for tri in (((0, 0, 0), (1, 0, 0), (1, 1, 0)), ((0, 0, 0), (1, 1, 0), (0, 1, 0))):
            f.write("facet normal 0 0 1\nouter loop\n")
            f.writelines(f"vertex {x} {y} {z}\n" for x, y, z in tri)
            f.write("endloop\nendfacet\n")
        f.write("endsolid flat\n")
    secret = os.path.join(folder, "secrets.yaml")
    with open(secret, "w") as f:
        f.write("db_password: s3cr3t-value\n")

    def urdf(geometry, origin="0 0 0"):
        return (f'<robot name="hostile"><link name="base"><inertial><mass value="1"/>'
                f'<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'
                f'<collision><origin xyz="{origin}"/><geometry>{geometry}</geometry>'
                f'</collision></link></robot>')

    return [("robot_description", [urdf(f'<mesh filename="{stl}"/>'),
                                   urdf(f'<mesh filename="{stl}" scale="0 0 0"/>'),
                                   urdf(f'<mesh filename="{stl}" scale="1 1 0"/>'),
                                   urdf('<box size="1 1 1"/>', origin="nan 0 0"),
                                   urdf('<box size="0 -1 1"/>'),
                                   "<robot name='broken'><link", "not xml at all"]),
            ("scene", [secret, os.path.join(folder, "missing.yaml"), folder, "/dev/zero",
                       "/etc/passwd", os.path.join(ROOT, "config", "contact_lcp.params.yaml")])]


def _parameter_request(name, value):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    if isinstance(value, bool):
        v = ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)
    elif isinstance(value, float):
        v = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
    elif isinstance(value, str):
        v = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)
    else:
        v = ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY, string_array_value=value)
    return SetParameters.Request(parameters=[Parameter(name=name, value=v)])


def _random_command(rng, joints, pubs):
    """Publish one random command, good or bad; return its kind."""
    from builtin_interfaces.msg import Duration
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    n = len(joints)
    kind = rng.choice(["valid", "valid", "nan", "inf", "length", "unknown", "jc_valid",
                       "jc_mixed", "jc_bad", "trajectory", "trajectory_bad"])
    values = [rng.uniform(-0.3, 0.3) for _ in range(n)]
    if kind == "valid":
        pubs["commands"].publish(Float64MultiArray(data=values))
    elif kind == "nan":
        values[rng.randrange(n)] = math.nan
        pubs["commands"].publish(Float64MultiArray(data=values))
    elif kind == "inf":
        values[rng.randrange(n)] = math.inf
        pubs["commands"].publish(Float64MultiArray(data=values))
    elif kind == "length":
        wrong = values[:rng.randrange(n)] if rng.random() < 0.5 else values + [0.0]
        pubs["commands"].publish(Float64MultiArray(data=wrong))
    elif kind == "unknown":
        pubs["joint_commands"].publish(JointState(name=["no_such_joint"], position=[0.1]))
    elif kind == "jc_valid":
        pubs["joint_commands"].publish(JointState(name=list(joints), position=values))
    elif kind == "jc_mixed":
        pos = [v if i % 2 else math.nan for i, v in enumerate(values)]
        vel = [math.nan if i % 2 else 0.1 * v for i, v in enumerate(values)]
        pubs["joint_commands"].publish(JointState(name=list(joints), position=pos, velocity=vel))
    elif kind == "jc_bad":
        pubs["joint_commands"].publish(JointState(name=list(joints), position=values[:-1]))
    else:
        j = rng.choice(joints)
        times = [0.2, 0.4] if kind == "trajectory" else [0.4, 0.2]
        msg = JointTrajectory(joint_names=[j])
        for t in times:
            msg.points.append(JointTrajectoryPoint(
                positions=[rng.uniform(-0.3, 0.0)],
                time_from_start=Duration(sec=0, nanosec=int(t * 1e9))))
        pubs["trajectory"].publish(msg)
    return kind


def soak(args):
    """The soak described in bench_node.py; a CSV row every 10 s."""
    from rcl_interfaces.srv import SetParameters
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory

    from contact_lcp.sim import Simulator

    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    scene = os.path.abspath(args.scene)
    joints = list(Simulator.from_file(scene).joint_names)
    rng = random.Random(14)
    folder = tempfile.mkdtemp(prefix="bench_node_soak_")
    log = os.path.join(folder, "node.log")
    flip_table = FLIPS + _hostile_values(folder)
    node = NodeProcess({"scene": scene, "real_time_factor": 1.0, "marker_rate": 5.0,
                        "publisher_process": str(args.publisher_process).lower()}, log)
    client = Client()
    rows, sent = [], {}
    flips = {"accepted": 0, "rejected": 0, "unanswered": 0, "hostile_accepted": 0}
    futures = []
    try:
        node.wait_ready()
        pubs = {"commands": client.node.create_publisher(Float64MultiArray, f"{NS}/commands", 10),
                "joint_commands": client.node.create_publisher(JointState, "/joint_commands", 10),
                "trajectory": client.node.create_publisher(
                    JointTrajectory, f"{NS}/joint_trajectory", 10)}
        time.sleep(1.0)
        t0 = time.monotonic()
        next_flip, next_reset, next_row, k = t0 + 1.0, t0 + 10.0, t0, 0
        while True:
            now = time.monotonic()
            if now >= next_row:
                for f, hostile in futures:
                    if f.done():
                        ok = f.result() is not None and f.result().results[0].successful
                        flips["accepted" if ok else "rejected"] += 1
                        flips["hostile_accepted"] += ok and hostile
                flips["unanswered"] = sum(not f.done() for f, _ in futures)
                futures = [(f, h) for f, h in futures if not f.done()]
                with client.lock:
                    counts = dict(client.counts)
                clock = client.clock[1] if client.clock else float("nan")
                rows.append(dict(t_wall=now - t0, alive=node.alive(), rss_kib=node.rss_kib(),
                                 rss_anon_kib=node.rss_kib("RssAnon"),
                                 joint_states=counts["joint_states"], nan=counts["nan"],
                                 error_diagnostics=counts["errors"], sim_time=clock,
                                 commands=sum(sent.values()), **flips))
                print(f"{now - t0:6.0f} s  alive {node.alive()}  rss {node.rss_kib()} KiB "
                      f"(anonymous {node.rss_kib('RssAnon')} KiB)  "
                      f"joint_states {counts['joint_states']}  NaN {counts['nan']}  "
                      f"errors {counts['errors']}  sim {clock:.1f} s  flips {flips}",
                      flush=True)
                next_row += 10.0
                if now - t0 >= args.seconds or not node.alive():
                    break
            kind = _random_command(rng, joints, pubs)
            sent[kind] = sent.get(kind, 0) + 1
            if now >= next_flip:
                name, values = flip_table[k % len(flip_table)]
                k += 1
                fut = client.call_async(SetParameters, f"{NS}/set_parameters",
                                        _parameter_request(name, rng.choice(values)))
                if fut is not None:
                    futures.append((fut, name in ("robot_description", "scene")))
                next_flip += 1.0
            if now >= next_reset:
                client.call_async(Trigger, f"{NS}/reset", Trigger.Request())
                next_reset += 10.0
            time.sleep(0.05)
    finally:
        exit_code = node.stop()
        client.close()
    for x in rows:
        x.update(revision=revision, date=date, scene=os.path.basename(scene),
                 publisher_process=args.publisher_process)
    columns = ["revision", "date", "scene", "publisher_process", "t_wall", "alive", "rss_kib",
               "rss_anon_kib",
               "joint_states", "nan",
               "error_diagnostics", "sim_time", "commands", "accepted", "rejected",
               "unanswered", "hostile_accepted"]
    path = common.write_csv(common.results_path("bench_node_soak", revision, stamp), rows,
                            columns)
    first, last = rows[0], rows[-1]
    print(f"\nsoak {last['t_wall']:.0f} s: alive to the end {all(x['alive'] for x in rows)}, "
          f"exit code {exit_code} (SIGINT); RSS {first['rss_kib']} -> {last['rss_kib']} KiB, "
          f"anonymous {first['rss_anon_kib']} -> {last['rss_anon_kib']} KiB; "
          f"NaN published {last['nan']}; ERROR diagnostics {last['error_diagnostics']}; "
          f"commands sent {sent}; parameter flips {flips}; wrote {path}")
    ok = all(x["alive"] for x in rows) and last["nan"] == 0 and not last["hostile_accepted"]
    return 0 if ok else 1


# -- profile ----------------------------------------------------------------------------
def profile(args):
    """The node in this process, a listener process subscribed to its joint states and
    clock; per publish cycle: Python calls and time under cProfile, and the CPU and wall
    time of each message handed to DDS (or to the relay). No CSV: a diagnosis, printed."""
    import cProfile
    import pstats

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from contact_lcp.ros import packed, relay
    from contact_lcp.ros.node import ContactLCPNode

    spent = {"cpu": 0.0, "wall": 0.0, "n": 0}

    def timed(send):
        def wrapper(self, values, stamp):
            c, w = time.thread_time(), time.perf_counter()
            send(self, values, stamp)
            spent["cpu"] += time.thread_time() - c
            spent["wall"] += time.perf_counter() - w
            spent["n"] += 1
        return wrapper
    packed.Stream.send = timed(packed.Stream.send)
    relay.RelayStream.send = timed(relay.RelayStream.send)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    domain = int(os.environ.get("ROS_DOMAIN_ID") or 1 + os.getpid() % 100)
    listener = subprocess.Popen(
        [sys.executable, os.path.join(ROOT, "benchmarks", "node_client.py"),
         str(2 * args.seconds + 15)], env=dict(os.environ, ROS_DOMAIN_ID=str(domain)))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = ContactLCPNode(context=context, parameter_overrides=[
        Parameter("scene", value=os.path.abspath(args.scene)),
        Parameter("real_time_factor", value=0.0),
        Parameter("publish_rate", value=float(args.publish_rate)),
        Parameter("clock_rate", value=float(args.clock_rate)),
        Parameter("sensor_rate", value=float(args.sensor_rate)),
        Parameter("publisher_process", value=bool(args.publisher_process)),
        Parameter("marker_rate", value=0.0)])
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    prof = cProfile.Profile()
    publish = node._publish

    def profiled(sim):
        prof.enable()
        try:
            publish(sim)
        finally:
            prof.disable()
    def window():
        """(cycles, wall s, sim s, physics-thread CPU by kind) over args.seconds."""
        n0, cpu0, s0 = node.publish_cycles, dict(node.loop.cpu), node.loop.time
        w0 = time.perf_counter()
        while time.perf_counter() - w0 < args.seconds:
            executor.spin_once(timeout_sec=0.25)
        return (node.publish_cycles - n0, time.perf_counter() - w0, node.loop.time - s0,
                {k: node.loop.cpu[k] - cpu0[k] for k in cpu0})
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 8.0:  # the listener's discovery
            executor.spin_once(timeout_sec=0.1)
        # first without cProfile: what publishing takes of the physics thread
        cycles, wall, sim_s, cpu = window()
        share = cpu["tasks"] / (cpu["steps"] + cpu["tasks"])
        print(f"without cProfile: {cycles} cycles, RTF {sim_s / wall:.2f}; physics thread "
              f"{1e6 * cpu['steps'] / max(cycles, 1):.0f} us CPU stepping and "
              f"{1e6 * cpu['tasks'] / max(cycles, 1):.1f} us publishing per cycle: "
              f"{100 * share:.1f} % of its CPU", flush=True)
        node._publish = profiled
        node._make_tasks()
        for key in spent:
            spent[key] = 0 * spent[key]
        cycles, wall, sim_s, cpu = window()
    finally:
        node.shutdown()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        listener.wait(30)
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(12)
    sends = max(spent["n"], 1)
    print(f"under cProfile: {cycles} publish cycles in {wall:.1f} s, RTF "
          f"{sim_s / wall:.2f}; per cycle: {stats.total_calls / max(cycles, 1):.0f} Python "
          f"calls, "
          f"{1e6 * stats.total_tt / max(cycles, 1):.0f} us under cProfile; physics thread "
          f"{1e6 * cpu['steps'] / max(cycles, 1):.0f} us CPU stepping and "
          f"{1e6 * cpu['tasks'] / max(cycles, 1):.0f} us in tasks per cycle; "
          f"{spent['n']} messages sent, each {1e6 * spent['cpu'] / sends:.1f} us CPU, "
          f"{1e6 * spent['wall'] / sends:.1f} us wall; load {os.getloadavg()[0]:.2f}")
    return 0
