"""The publisher process (contact_lcp/ros/relay.py): what it sends, in what order, and
what the node does when it dies. Real DDS on localhost (see ros_harness)."""

import contextlib
import os
import signal
import time

import numpy as np
import pytest

pytest.importorskip("rclpy")

import rclpy  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from contact_lcp.ros import packed  # noqa: E402
from contact_lcp.ros.relay import Relay, RelayStream  # noqa: E402
from ros_harness import DOMAIN_ID, Harness, close_ros, stamp, wait_for  # noqa: E402


@contextlib.contextmanager
def relay_and_client(kind, type_name, topic, depth, message, relay_depth):
    """A relay publishing ``topic`` (history ``relay_depth``) and a client subscribed to it
    (``depth``); yields ``(relay, stream, receive)``, ``receive(n)`` spinning the client
    until it holds ``n`` messages (20 s at most) and returning them. The relay is closed
    and the context shut down on exit."""
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    relay = Relay(DOMAIN_ID)
    received = []
    node = executor = None
    try:
        node = rclpy.create_node("relay_test_client", context=context)
        node.create_subscription(kind, topic, lambda m: received.append(m), depth)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        stream = RelayStream(relay, relay.topic(type_name, topic, relay_depth), message)

        def listened():
            executor.spin_once(timeout_sec=0.05)
            return stream.listened()
        # the relay writes its publisher's subscriber count into the shared memory
        wait_for(listened, 30, "the relay to see the subscriber")

        def receive(count):
            deadline = time.monotonic() + 20
            while len(received) < count and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.05)
            return received
        yield relay, stream, receive
    finally:
        relay.close()
        if executor is not None:  # (spun in this thread only: nothing to stop first)
            executor.shutdown()
        close_ros(context, nodes=(node,))


def test_the_relay_sends_every_message_in_order_to_a_subscriber():
    # the relay's DDS history holds all 100 (KEEP_LAST 10 let a writer outrun by a
    # subscriber starved of CPU overwrite its oldest samples, a DDS matter, not the relay's)
    with relay_and_client(JointState, "sensor_msgs/msg/JointState", "/relay_test/joint_states",
                          500, packed.joint_state(["a", "b"]), 100) as (relay, stream, receive):
        for k in range(100):  # faster than the relay polls (1 ms): several per slot read
            stream.send(np.array([k, -k, 0.5 * k, 0, 0, 1.0]), (k, 0))
        received = receive(100)
        assert [m.header.stamp.sec for m in received] == list(range(100))
        assert all(list(m.position) == [k, -k] and list(m.velocity) == [0.5 * k, 0.0]
                   and list(m.name) == ["a", "b"] for k, m in enumerate(received))
        assert relay.dropped == 0
    assert relay.proc.returncode == 0  # it ended on the closed pipe, not killed


@pytest.mark.slow  # ~7 s: a thousand messages through a single-threaded executor
def test_a_relay_that_falls_behind_by_more_than_the_ring_skips_the_oldest():
    """Stopped (SIGSTOP) while SLOTS + 10 messages are written, it sends the newest
    SLOTS, whole and in order, and counts 10 dropped."""
    from contact_lcp.ros.relay import SLOTS

    with relay_and_client(Clock, "rosgraph_msgs/msg/Clock", "/relay_test/clock", 2 * SLOTS,
                          packed.clock(), 2 * SLOTS) as (relay, stream, receive):
        os.kill(relay.proc.pid, signal.SIGSTOP)
        try:
            for k in range(SLOTS + 10):
                stream.send(np.zeros(0), (k, 7))
        finally:
            os.kill(relay.proc.pid, signal.SIGCONT)
        received = receive(SLOTS)
        assert [m.clock.sec for m in received] == list(range(10, SLOTS + 10))
        assert all(m.clock.nanosec == 7 for m in received)
        assert relay.dropped == 10


def test_the_node_publishes_through_the_relay_and_by_itself_once_it_died():
    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 1.0,
                 "publish_rate": 200.0, "clock_rate": 200.0, "marker_rate": 0.0,
                 "publisher_process": True})
    try:
        # (a history of 2 000 samples: a test process starved of the CPU for seconds on a
        # loaded machine keeps what DDS delivered until its executor takes it)
        h.record(JointState, "/joint_states", 2000)
        h.record(Clock, "/clock")
        h.record(Odometry, "/odom")
        h.wait_for(lambda: h.log["/joint_states"], 60, "joint states via the relay")
        # a new subscription's first samples can be lost while DDS discovery completes
        # (volatile durability: a reader gets what is published after it matched); the
        # relay's contract is every sample once, in order, on the established stream
        settled = h.log["/joint_states"][0][0] + 0.5
        h.wait_for(lambda: len(h.messages("/joint_states", settled)) > 20, 60,
                   "joint states via the relay")
        h.wait_for(lambda: h.log["/odom"], 30, "odometry via the relay")
        for topic in ["/joint_states", "/clock", "/odom", "/imu",
                      "/contact_lcp/contact_wrenches/l_foot"]:
            names = {i.node_name for i in h.client.get_publishers_info_by_topic(topic)}
            assert names == {"contact_lcp_relay"}, topic
        steps = np.diff([stamp(m) for m in h.messages("/joint_states")]) / 0.005
        # from the start: on the 1/200 s grid, each sample at most once, in order
        assert np.allclose(steps, np.round(steps), atol=2e-4) and np.all(steps >= 1 - 1e-6)
        # once established: every 1/200 s of sim time, none missing
        got = [(w, stamp(m)) for w, m in list(h.log["/joint_states"]) if w >= settled]
        stamps = [t for _, t in got]
        off = ~np.isclose(np.diff(stamps), 0.005, atol=1e-6)  # (np.allclose's test, per pair)
        gaps = [(stamps[i], stamps[i + 1], round(got[i + 1][0] - got[i][0], 3))
                for i in np.flatnonzero(off)]
        # (the relay skips what falls more than its ring behind, and counts it: a gap with
        # a count is the relay starved of the CPU, without one a sample lost after it; the
        # third number is how long this process received nothing across the gap [s])
        assert not gaps, (f"joint-state stamps missing between {gaps[:5]}; the relay "
                          f"counted {h.node._relay.dropped} messages skipped")
        os.kill(h.node._relay.proc.pid, signal.SIGKILL)
        # the node notices within its 1 Hz report and publishes itself
        # (the killed relay stays in the graph until its DDS lease runs out, ~20 s)
        h.wait_for(lambda: "contact_lcp" in {i.node_name for i in h.client.
                   get_publishers_info_by_topic("/joint_states")}, 30, "the node's publisher")
        since = time.monotonic()
        h.wait_for(lambda: len(h.messages("/joint_states", since)) > 10, 30,
                   "joint states after the relay died")
        assert h.messages("/clock", since)
        assert not h.errors
    finally:
        h.close()
