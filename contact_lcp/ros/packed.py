"""Pre-serialized messages: the bytes are built once, only the numbers change per publish.

Filling a typed rclpy message and publishing it makes rclpy convert every field to C
and serialize it (about 5 us for a 20-joint ``JointState``, most of it the joint names);
publishing the serialized bytes (``Publisher.publish(bytes)``) skips both (about 1 us).
A :class:`PackedMessage` keeps the serialized bytes (CDR) of one message whose layout
is fixed (same names, same frame ids, same array lengths), and per publish writes the
stamp and the doubles into them.

Where each number lives in the bytes is found by serializing the message once with
sentinel values and looking them up (no CDR alignment rules written here), and the
result is checked by deserializing a packing of random values: a message whose layout
cannot be found this way raises ``ValueError`` and the caller publishes it typed.
"""

import struct

import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

#: Stamp sentinels: seconds and nanoseconds unlikely to occur in any message.
_SEC, _NSEC = 0x6D3A1B2C, 0x2B3C4D5E


def _sentinels(n):
    """``n`` distinct doubles whose bytes do not occur in ordinary data."""
    return [struct.unpack("<d", struct.pack("<Q", 0x7FE5A3C1_00000000 | (0x9E37 << 16) | k))[0]
            for k in range(n)]


def _find(raw, pattern, what):
    at = raw.find(pattern)
    if at < 0 or raw.find(pattern, at + 1) >= 0:
        raise ValueError(f"cannot locate {what} in the serialized message")
    return at


class PackedMessage:
    """The serialized bytes of ``msg`` with ``n`` doubles and (``stamp``) a stamp to fill.

    Parameters
    ----------
    msg : rclpy message
        Every field that does not change (names, frame ids, array lengths) already set.
    n : int
        How many doubles :meth:`pack` writes.
    fill : callable
        ``fill(msg, values)`` writes the ``n`` doubles ``values`` into a typed ``msg``
        (as the typed path would publish them).
    stamp : callable, optional
        ``stamp(msg)`` returns the ``builtin_interfaces/Time`` to fill (the header's,
        or ``Clock.clock``); None: no stamp.

    Raises
    ------
    ValueError
        The numbers cannot be found in, or do not round-trip through, the bytes.
    """

    def __init__(self, msg, n, fill, stamp=None):
        fill(msg, _sentinels(n))
        if stamp is not None:
            t = stamp(msg)
            t.sec, t.nanosec = _SEC, _NSEC
        raw = serialize_message(msg)
        offsets = [_find(raw, struct.pack("<d", s), f"double {k}")
                   for k, s in enumerate(_sentinels(n))]
        # CDR aligns doubles to 8 bytes after the 4-byte encapsulation header
        if any((o - 4) % 8 for o in offsets):
            raise ValueError("doubles are not 8-byte aligned in the serialized message")
        self._buf = bytearray(raw)
        self._f64 = np.frombuffer(self._buf, dtype="<f8", offset=4, count=(len(raw) - 4) // 8)
        self._index = np.array([(o - 4) // 8 for o in offsets], dtype=np.intp)
        self._stamp = None
        if stamp is not None:
            s = _find(raw, struct.pack("<i", _SEC), "the stamp's seconds")
            ns = _find(raw, struct.pack("<I", _NSEC), "the stamp's nanoseconds")
            if s % 4 or ns != s + 4:
                raise ValueError("unexpected stamp layout in the serialized message")
            self._u32 = np.frombuffer(self._buf, dtype="<u4", count=len(raw) // 4)
            self._stamp = s // 4
        self._check(raw, type(msg), fill, stamp, n)

    def pack(self, values, stamp=None):
        """Bytes of the message with ``values`` (n,) and ``stamp`` ``(sec, nanosec)``."""
        self._f64[self._index] = values
        if self._stamp is not None:
            self._u32[self._stamp] = stamp[0] & 0xFFFFFFFF
            self._u32[self._stamp + 1] = stamp[1]
        return bytes(self._buf)

    def _check(self, raw, kind, fill, stamp, n):
        """The packed bytes of random values must read back as the typed message (the
        bytes themselves may differ: CDR padding is not zeroed by the serializer)."""
        values = np.random.default_rng(0).normal(size=n)
        ref = deserialize_message(raw, kind)  # the template, sentinels included
        fill(ref, values.tolist())
        if stamp is not None:
            stamp(ref).sec, stamp(ref).nanosec = 1234, 5678
        if deserialize_message(self.pack(values, (1234, 5678)), kind) != ref:
            raise ValueError(f"packed {kind.__name__} differs from the typed message")


def to_stamp(t):
    """``(sec, nanosec)`` of ``t`` [s] (rounded to the nanosecond)."""
    ns = int(round(t * 1e9))
    return ns // 1_000_000_000, ns % 1_000_000_000


class Stream:
    """A publisher and the packed message it sends; nothing is packed or sent while the
    topic has no subscriber (``get_subscription_count`` is a C call of ~0.6 us)."""

    def __init__(self, publisher, packer):
        self.publisher, self.packer = publisher, packer

    def listened(self):
        """True while the topic has a subscriber."""
        return self.publisher.get_subscription_count() > 0

    def send(self, values, stamp):
        """Send ``values`` (n,) stamped ``stamp`` ``(sec, nanosec)``."""
        self.publisher.publish(self.packer.pack(values, stamp))

    def publish(self, values, stamp):
        """:meth:`send` if :meth:`listened`; True if sent."""
        if not self.listened():
            return False
        self.send(values, stamp)
        return True


# -- the node's message layouts ----------------------------------------------------------
def _header(msg):
    return msg.header.stamp


def _xyz(v, values):
    v.x, v.y, v.z = values


def joint_state(names):
    """JointState of ``names``; values = position, velocity, effort (3 n,)."""
    n = len(names)
    msg = JointState(name=list(names))

    def fill(m, v):
        m.position, m.velocity, m.effort = v[:n], v[n:2 * n], v[2 * n:3 * n]
    return PackedMessage(msg, 3 * n, fill, _header)


def clock():
    """rosgraph_msgs/Clock; no values, only the stamp."""
    return PackedMessage(Clock(), 0, lambda m, v: None, lambda m: m.clock)


def odometry(frame_id, child_frame_id):
    """nav_msgs/Odometry; values = pose [x y z qx qy qz qw] + twist [v w] (13,)."""
    msg = Odometry(child_frame_id=child_frame_id)
    msg.header.frame_id = frame_id

    def fill(m, v):
        pose, twist = m.pose.pose, m.twist.twist
        _xyz(pose.position, v[0:3])
        o = pose.orientation
        o.x, o.y, o.z, o.w = v[3:7]
        _xyz(twist.linear, v[7:10])
        _xyz(twist.angular, v[10:13])
    return PackedMessage(msg, 13, fill, _header)


def imu(frame_id):
    """sensor_msgs/Imu; values = orientation (x y z w) + angular velocity + linear
    acceleration (10,)."""
    msg = Imu()
    msg.header.frame_id = frame_id

    def fill(m, v):
        o = m.orientation
        o.x, o.y, o.z, o.w = v[0:4]
        _xyz(m.angular_velocity, v[4:7])
        _xyz(m.linear_acceleration, v[7:10])
    return PackedMessage(msg, 10, fill, _header)


def wrench(frame_id):
    """geometry_msgs/WrenchStamped; values = [fx fy fz tx ty tz] (6,)."""
    msg = WrenchStamped()
    msg.header.frame_id = frame_id

    def fill(m, v):
        _xyz(m.wrench.force, v[0:3])
        _xyz(m.wrench.torque, v[3:6])
    return PackedMessage(msg, 6, fill, _header)
