"""An independent client of the contact_lcp node, for benchmarks/bench_node.py.

The node runs as its own process (``python -m contact_lcp.ros``), started and ended by
:class:`NodeProcess`; :class:`Client` is an rclpy node in the benchmark's process that
counts what arrives, checks it for NaN, and sends commands, parameter changes and
service calls the way any user's node would.
"""

import math
import os
import signal
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "/contact_lcp"


def domain_id():
    """``ROS_DOMAIN_ID`` when set, else one from the pid (localhost-valid 1..100)."""
    return int(os.environ.get("ROS_DOMAIN_ID") or 1 + os.getpid() % 100)


class NodeProcess:
    """``python -m contact_lcp.ros`` with ``params`` (name -> value) and its log file."""

    def __init__(self, params, log_path):
        cmd = [sys.executable, "-m", "contact_lcp.ros", "--quiet", "--ros-args"]
        for name, value in params.items():
            cmd += ["-p", f"{name}:={value}"]
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id()), PYTHONUNBUFFERED="1",
                   ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                   PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
        self.log_path = log_path
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log,
                                         stderr=subprocess.STDOUT)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self, field="VmRSS"):
        """Resident memory [KiB] of the node process (0 once it has exited).

        ``VmRSS`` counts mapped files too (shared libraries, numba's cache), whose pages
        the kernel drops and reloads under memory pressure; ``RssAnon`` (heap, stacks)
        is what a leak makes grow.
        """
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def wait_ready(self, timeout=180.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError("the node exited:\n" + open(self.log_path).read())
            if "ready:" in open(self.log_path).read():
                return
            time.sleep(0.1)
        raise RuntimeError("the node did not get ready:\n" + open(self.log_path).read())

    def stop(self, timeout=15.0):
        """SIGINT, then SIGKILL after ``timeout``; the exit code (None if killed)."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                return None
        return self.proc.returncode


def cpu_seconds(pid):
    """User + system CPU time [s] of process ``pid`` so far (0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def tree_cpu_seconds(pid):
    """:func:`cpu_seconds` of ``pid`` and its child processes (the node's relay)."""
    total = cpu_seconds(pid)
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                total += sum(cpu_seconds(int(c)) for c in f.read().split())
    except OSError:
        pass
    return total


def _executor(context):
    """rclpy's events executor where there is one (Kilted on): ~10 us of CPU per message
    received instead of ~100 us for the SingleThreadedExecutor, which rebuilds its wait
    set for every message; a client at thousands of messages per second must not take
    the CPU the node needs (they share the machine)."""
    try:
        from rclpy.experimental import EventsExecutor

        return EventsExecutor(context=context)
    except ImportError:
        from rclpy.executors import SingleThreadedExecutor

        return SingleThreadedExecutor(context=context)


class Client:
    """Counting subscriber and command sender, spun in its own thread.

    ``raw``: take ``/joint_states`` and ``/clock`` as serialized bytes and read only
    their stamps (rate measurements: no deserialization, no NaN check of the joints);
    otherwise typed, with every value checked for NaN (the soak).
    """

    def __init__(self, raw=False):
        import rclpy
        from rclpy.qos import QoSProfile
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import Imu, JointState
        from nav_msgs.msg import Odometry
        from diagnostic_msgs.msg import DiagnosticArray

        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id())
        self.node = rclpy.create_node("contact_lcp_bench_client", context=self.context)
        self.lock = threading.Lock()
        self.counts = {"joint_states": 0, "nan": 0, "errors": 0}
        self.arrivals = []  # wall times of /joint_states
        self.stamps = []  # their stamps [s]
        self.clock = None  # (wall, sim) of the last /clock
        self._clients = {}
        qos = QoSProfile(depth=1000)
        if raw:
            self.node.create_subscription(JointState, "/joint_states", self._on_raw_joints,
                                          qos, raw=True)
            self.node.create_subscription(Clock, "/clock", self._on_raw_clock, qos, raw=True)
        else:
            self.node.create_subscription(JointState, "/joint_states", self._on_joints, qos)
            self.node.create_subscription(Clock, "/clock", self._on_clock, qos)
        self.node.create_subscription(Odometry, "/odom", self._check_odom, qos)
        self.node.create_subscription(Imu, "/imu", self._check_imu, qos)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, 10)
        self.executor = _executor(self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while self.rclpy.ok(context=self.context):
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:
                if self.rclpy.ok(context=self.context):
                    raise

    def _bad(self, values):
        if not all(math.isfinite(x) for x in values):
            with self.lock:
                self.counts["nan"] += 1

    def _on_joints(self, msg):
        now = time.monotonic()
        with self.lock:
            self.counts["joint_states"] += 1
            self.arrivals.append(now)
            self.stamps.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
        self._bad([*msg.position, *msg.velocity, *msg.effort])

    def _on_raw_joints(self, raw):
        # CDR: 4-byte encapsulation header, then header.stamp (int32 sec, uint32 nanosec)
        sec, nsec = struct.unpack_from("<iI", raw, 4)
        now = time.monotonic()
        with self.lock:
            self.counts["joint_states"] += 1
            self.arrivals.append(now)
            self.stamps.append(sec + nsec * 1e-9)

    def _on_raw_clock(self, raw):
        sec, nsec = struct.unpack_from("<iI", raw, 4)
        self.clock = (time.monotonic(), sec + nsec * 1e-9)

    def _on_clock(self, msg):
        self.clock = (time.monotonic(), msg.clock.sec + msg.clock.nanosec * 1e-9)

    def _check_odom(self, msg):
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        self._bad([p.x, p.y, p.z, o.x, o.y, o.z, o.w, v.x, v.y, v.z, w.x, w.y, w.z])

    def _check_imu(self, msg):
        a, w = msg.linear_acceleration, msg.angular_velocity
        self._bad([a.x, a.y, a.z, w.x, w.y, w.z])

    def _on_diag(self, msg):
        if msg.status and msg.status[0].level == 2:  # ERROR: a step failed
            with self.lock:
                self.counts["errors"] += 1

    def window(self, seconds):
        """``(joint_states wall Hz, joint_states sim Hz, rtf)`` over ``seconds`` of wall.

        The real-time factor is the sim time the ``/joint_states`` stamps advance over
        the wall time their arrivals span (thousands of samples; ``/clock``, published
        at its own lower rate, gives too few at the ends of the window)."""
        with self.lock:
            n0 = len(self.arrivals)
        time.sleep(seconds)
        with self.lock:
            arrivals, stamps = self.arrivals[n0:], self.stamps[n0:]
        if len(arrivals) < 2 or arrivals[-1] <= arrivals[0]:
            return 0.0, 0.0, 0.0
        wall = arrivals[-1] - arrivals[0]
        span = max(stamps) - min(stamps)
        sim_hz = (len(set(stamps)) - 1) / span if span > 0 else 0.0
        return (len(arrivals) - 1) / wall, sim_hz, (stamps[-1] - stamps[0]) / wall

    def call_async(self, kind, name, request):
        """Fire a service request; the future (callers may ignore it)."""
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.node.create_client(kind, name)
        if not client.wait_for_service(timeout_sec=5.0):
            return None
        return client.call_async(request)

    def close(self):
        self.rclpy.try_shutdown(context=self.context)
        self._thread.join(5.0)
        self.executor.shutdown()
        self.node.destroy_node()


def listen(seconds):
    """Subscribe (raw) to /joint_states and /clock for ``seconds``; print the count."""
    client = Client(raw=True)
    try:
        time.sleep(seconds)
        print(f"received {client.counts['joint_states']} joint states", flush=True)
    finally:
        client.close()


if __name__ == "__main__":  # a listener process for bench_node.py --mode profile
    listen(float(sys.argv[1]))
