"""A helper process that sends the node's high-rate messages (``publisher_process: true``).

Why a process: sending one message through DDS costs the calling thread ~25 us in a
quiet process and ~50 us of CPU (~110 us of wall time) in the node between two steps
(measured with bench_node's client), and rclpy holds the GIL while it does, so a thread
cannot take it off the physics thread (tried: a publishing thread calling rcl without the
GIL still cost the physics thread as much, in GIL hand-offs). A process has its own GIL.

The node writes each message, already serialized (:mod:`contact_lcp.ros.packed`), into a
ring of slots in shared memory (a copy of ~1 kB); the relay, ``python -m
contact_lcp.ros.relay``, polls the ring every millisecond and publishes what is new as
raw bytes. A slot carries a sequence number written before (invalidated) and after its
bytes, and the relay re-reads it after copying, so a slot overwritten meanwhile is
dropped, never sent torn (a seqlock). Topics are announced on the relay's stdin, one JSON
line each; the relay writes its subscriber count per topic back into the shared memory,
so the node still sends nothing to a topic nobody listens to. The relay exits when its
stdin closes (the node stopped or died) or its parent changes.

The seqlock relies on stores reaching the other process in program order, which x86-64
guarantees (total store order); on a weaker memory model a torn slot could in principle
pass the check (no fences are available from Python).
"""

import json
import os
import select
import signal
import subprocess
import sys
import time

import numpy as np

from contact_lcp.ros.process import die_with_parent

#: Slots in the ring (~0.4 s of 2.5 kHz), bytes per slot (a 20-joint JointState is
#: ~0.8 kB, a 100-joint one ~5 kB).
SLOTS = 1024
SLOT_BYTES = 8192
#: Topics the relay can carry.
MAX_TOPICS = 64
#: Header of a slot: sequence number (int64), topic id (int32), length (int32).
_SLOT_HEAD = 16
#: Poll period of the relay [s].
POLL = 0.001


def _layout(shm_buf):
    """Views of the shared memory: write count and count of messages the relay dropped
    (fell behind by more than the ring), subscriber counts, slot heads, slots."""
    count = np.ndarray((2,), dtype=np.int64, buffer=shm_buf, offset=0)
    subscribers = np.ndarray((MAX_TOPICS,), dtype=np.int32, buffer=shm_buf, offset=16)
    base = 16 + 4 * MAX_TOPICS
    size = _SLOT_HEAD + SLOT_BYTES
    heads = np.ndarray((SLOTS, 2), dtype=np.int64, buffer=shm_buf, offset=base,
                       strides=(size, 8))
    data = np.ndarray((SLOTS, size), dtype=np.uint8, buffer=shm_buf, offset=base)
    return count, subscribers, heads, data


def _size():
    return 16 + 4 * MAX_TOPICS + SLOTS * (_SLOT_HEAD + SLOT_BYTES)


class Relay:
    """The node's side: start the relay process, announce topics, hand it messages.

    Raises ``OSError`` when the process or the shared memory cannot be made; the node
    then publishes itself.
    """

    def __init__(self, domain_id):
        from multiprocessing import shared_memory

        self._shm = shared_memory.SharedMemory(create=True, size=_size())
        self._count, self.subscribers, self._heads, self._data = _layout(self._shm.buf)
        self._count[:] = 0
        self.subscribers[:] = 0
        self._heads[:, 0] = -1
        self._topics = {}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "contact_lcp.ros.relay", self._shm.name,
                 str(os.getpid()), str(domain_id)], stdin=subprocess.PIPE, text=True)
        except OSError:
            self._count = self.subscribers = self._heads = self._data = None
            self._shm.close()
            self._shm.unlink()
            raise

    def alive(self):
        """True while the relay process runs."""
        return self.proc.poll() is None

    @property
    def dropped(self):
        """Messages the relay skipped because it fell behind by more than the ring."""
        return int(self._count[1])

    def topic(self, type_name, topic, depth):
        """Id of ``topic`` (a fully resolved name) of ``type_name`` ('pkg/msg/Type')."""
        key = (type_name, topic)
        if key not in self._topics:
            if len(self._topics) >= MAX_TOPICS:
                raise ValueError(f"the relay carries at most {MAX_TOPICS} topics")
            self._topics[key] = len(self._topics)
            line = json.dumps({"id": self._topics[key], "type": type_name, "topic": topic,
                               "depth": depth})
            try:
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError):  # the relay is gone: the node's 1 Hz check
                pass  # sees it and publishes in-process from then on
        return self._topics[key]

    def send(self, topic_id, raw):
        """Queue the serialized message ``raw`` (bytes) on topic ``topic_id``."""
        n = len(raw)
        if n > SLOT_BYTES:
            raise ValueError(f"message of {n} bytes; a relay slot holds {SLOT_BYTES}")
        seq = int(self._count[0])
        slot = seq % SLOTS
        head = self._heads[slot]
        head[0] = -1  # being written: the relay drops it if it reads it now
        self._data[slot, _SLOT_HEAD:_SLOT_HEAD + n] = np.frombuffer(raw, dtype=np.uint8)
        head[1] = (n << 32) | topic_id
        head[0] = seq
        self._count[0] = seq + 1

    def release(self):
        """Unlink the shared memory's name (a dead relay's): the memory itself stays
        mapped, so a stream still holding this relay writes into it harmlessly."""
        try:
            self._shm.unlink()
        except FileNotFoundError:
            pass

    def close(self):
        """Stop the relay (it exits on the closed stdin) and free the shared memory."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5.0)
        self.release()
        self._count = self.subscribers = self._heads = self._data = None
        try:
            self._shm.close()
        except BufferError:  # a view still held elsewhere: unmapped at exit
            pass


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class RelayStream:
    """:class:`contact_lcp.ros.packed.Stream` whose messages the relay sends."""

    def __init__(self, relay, topic_id, packer):
        self.relay, self.topic_id, self.packer = relay, topic_id, packer

    def listened(self):
        """True while the relay's publisher of the topic has a subscriber."""
        return self.relay.subscribers[self.topic_id] > 0

    def send(self, values, stamp):
        """Hand ``values`` (n,) stamped ``stamp`` ``(sec, nanosec)`` to the relay."""
        self.relay.send(self.topic_id, self.packer.pack(values, stamp))

    def publish(self, values, stamp):
        """:meth:`send` if :meth:`listened`; True if sent."""
        if not self.listened():
            return False
        self.send(values, stamp)
        return True


def type_name(kind):
    """'pkg/msg/Type' of a message class."""
    return f"{kind.__module__.split('.')[0]}/msg/{kind.__name__}"


def _message_type(name):
    import importlib

    pkg, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), cls)


def main(argv=None):
    """The relay process: ``python -m contact_lcp.ros.relay SHM_NAME PARENT_PID DOMAIN``."""
    from multiprocessing import resource_tracker, shared_memory

    import rclpy

    argv = sys.argv[1:] if argv is None else argv
    name, parent, domain_id = argv[0], int(argv[1]), int(argv[2])
    die_with_parent()
    shm = shared_memory.SharedMemory(name=name)
    try:  # the node owns (and unlinks) it; Python < 3.13 would track it here too
        resource_tracker.unregister(shm._name, "shared_memory")
    except Exception:
        pass
    count, subscribers, heads, data = _layout(shm.buf)
    from rclpy.signals import SignalHandlerOptions

    # Ctrl-C in a terminal reaches the relay too: it ends the loop, not the context
    signal.signal(signal.SIGTERM, _interrupt)
    rclpy.init(args=[], domain_id=domain_id, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("contact_lcp_relay")
    pubs = {}
    sent = int(count[0])
    fd, pending = sys.stdin.fileno(), b""
    try:
        while os.getppid() == parent:
            ready, _, _ = select.select([fd], [], [], 0.0)
            if ready:  # raw reads: a buffered readline could keep a line unseen
                chunk = os.read(fd, 65536)
                if not chunk:
                    break  # the node closed the pipe
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    t = json.loads(line)
                    pubs[t["id"]] = node.create_publisher(
                        _message_type(t["type"]), t["topic"], t["depth"])
            for i, pub in pubs.items():
                subscribers[i] = pub.get_subscription_count()
            written = int(count[0])
            if written - sent > SLOTS:  # fell behind by more than the ring: skip
                count[1] += written - SLOTS - sent
                sent = written - SLOTS
            while sent < written:
                slot = sent % SLOTS
                if heads[slot, 0] == sent:
                    word = int(heads[slot, 1])
                    n, topic_id = word >> 32, word & 0xFFFFFFFF
                    raw = data[slot, _SLOT_HEAD:_SLOT_HEAD + n].tobytes()
                    pub = pubs.get(topic_id)
                    if heads[slot, 0] == sent and pub is not None:  # not overwritten
                        pub.publish(raw)
                sent += 1
            time.sleep(POLL)
    except KeyboardInterrupt:
        pass
    finally:
        del count, subscribers, heads, data
        shm.close()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
