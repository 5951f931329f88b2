"""The contact_lcp node in the test process, and an independent client node beside it.

Both nodes talk over real DDS (localhost only), each spun by its own executor thread;
an exception escaping a callback of the simulator node is recorded in ``errors`` (the
node process would have died of it). ``ROS_DOMAIN_ID`` is taken from the environment
when set (a session picks its own), else derived from the pid.
"""

import gc
import os
import threading
import time

import rclpy
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

DOMAIN_ID = int(os.environ.get("ROS_DOMAIN_ID") or 1 + os.getpid() % 100)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"


def stamp(msg):
    """Seconds of a message's header stamp."""
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def clock_of(msg):
    """Seconds of a rosgraph_msgs/Clock."""
    return msg.clock.sec + msg.clock.nanosec * 1e-9


def _value(value):
    if isinstance(value, bool):
        return ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=value)
    if isinstance(value, float):
        return ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
    if isinstance(value, int):
        return ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)
    if isinstance(value, str):
        return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)
    return ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY,
                          string_array_value=list(value))


def interrupt(proc, grace):
    """End a node process as Ctrl-C would (SIGINT, ``grace`` seconds to exit), killing
    it only if it does not."""
    import signal
    import subprocess

    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class Spinner:
    """One executor spinning ``nodes`` of ``context`` in a daemon thread until
    :meth:`stop`; an exception escaping a callback is appended to ``errors``."""

    def __init__(self, context, *nodes, errors=None):
        self.context = context
        self.errors = [] if errors is None else errors
        self.executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            self.executor.add_node(node)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stopped.is_set() and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception as e:  # a defect, unless we are stopping
                if self._stopped.is_set() or not self.context.ok():
                    return
                self.errors.append(e)

    def stop(self):
        """End the thread (within one 0.05 s wait), then shut the executor down."""
        self._stopped.set()
        self._thread.join(10.0)
        assert not self._thread.is_alive(), "the executor thread did not stop"
        self.executor.shutdown()


_closed = 0  # contexts closed since the last collect_closed()


def close_ros(context, spinners=(), nodes=()):
    """Tear down in the one safe order: stop every executor thread, then destroy the
    nodes and the context from this thread; conftest.py collects the garbage in the main
    thread once the test has let go of it (:func:`collect_closed`).

    rclpy entities destroyed while another thread waits on them, or finalized by a
    garbage collection that happens to run in some later test's executor thread (a
    node, its context and their callbacks form reference cycles), can crash the whole
    process: CI once died of a segfault in such a collection."""
    global _closed
    try:
        for spinner in spinners:
            spinner.stop()
    finally:
        for node in nodes:
            if node is not None:
                node.destroy_node()
        rclpy.try_shutdown(context=context)
        context.destroy()
        _closed += 1


def collect_closed():
    """Collect the garbage here if a ROS context was closed since the last call (called
    before each test, in the main thread, by conftest.py)."""
    global _closed
    if _closed:
        _closed = 0
        gc.collect()


def wait_for(predicate, timeout, what):
    """``predicate()``'s first truthy value within ``timeout`` [s]; AssertionError
    naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def call(node, kind, name, request, timeout=10.0):
    """The response of service ``name`` to ``request``, called from ``node`` (spun
    elsewhere)."""
    client = node.create_client(kind, name)
    try:
        assert client.wait_for_service(timeout_sec=timeout), f"no service {name}"
        future = client.call_async(request)
        wait_for(future.done, timeout, f"{name} to answer")
        return future.result()
    finally:
        node.destroy_client(client)


def set_parameter(node, name, value, timeout=30.0, simulator="/contact_lcp"):
    """SetParametersResult of setting the simulator node's ``name`` from ``node``
    (``simulator``: the node's full name)."""
    request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=_value(value))])
    return call(node, SetParameters, f"{simulator}/set_parameters", request,
                timeout).results[0]


class Harness:
    """A ContactLCPNode with ``params`` and a client node, in one fresh context."""

    def __init__(self, params, *, namespace=None):
        from contact_lcp.ros.node import ContactLCPNode

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN_ID)
        self.errors = []
        self.log = {}
        self.node = None
        try:
            self.node = ContactLCPNode(
                context=self.context, **({"namespace": namespace} if namespace else {}),
                parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
            self.client = rclpy.create_node("contact_lcp_test_client", context=self.context)
        except BaseException:
            self.close()
            raise
        self._spinners = [Spinner(self.context, node, errors=self.errors)
                          for node in (self.node, self.client)]

    # -- the client side ----------------------------------------------------------------
    def record(self, kind, topic, qos=50):
        """Keep every message of ``topic``; returns the list they are appended to."""
        self.log[topic] = []
        self.client.create_subscription(
            kind, topic, lambda m: self.log[topic].append((time.monotonic(), m)), qos)
        return self.log[topic]

    def latest(self, topic):
        return self.log[topic][-1][1] if self.log[topic] else None

    def messages(self, topic, since=0.0):
        return [m for w, m in list(self.log[topic]) if w >= since]

    def wait_for(self, predicate, timeout, what):
        return wait_for(predicate, timeout, what)

    def call(self, kind, name, request, timeout=10.0):
        return call(self.client, kind, name, request, timeout)

    def set_parameter(self, name, value, timeout=30.0):
        """SetParametersResult of setting ``name`` through the node's service."""
        return set_parameter(self.client, name, value, timeout)

    def get_parameter(self, name):
        """The node's value of ``name``, read through its service."""
        response = self.call(GetParameters, "/contact_lcp/get_parameters",
                             GetParameters.Request(names=[name]))
        v = response.values[0]
        return {ParameterType.PARAMETER_BOOL: v.bool_value,
                ParameterType.PARAMETER_DOUBLE: v.double_value,
                ParameterType.PARAMETER_STRING: v.string_value}.get(v.type)

    def close(self):
        if self.node is not None:
            self.node.shutdown()
        close_ros(self.context, getattr(self, "_spinners", ()),
                  (self.node, getattr(self, "client", None)))
