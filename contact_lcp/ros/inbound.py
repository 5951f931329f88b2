"""Incoming messages: unpacking with reasons, throttled warnings about bad ones, and
their counts for ``/diagnostics``.

Only the checks of a message's own structure are here (lengths, missing fields, the
order of its times, as the user wrote them); values (NaN, unknown joints, limits) are
checked by the simulator, whose ``CommandError`` gives the reason that is logged.
"""

import math
import threading
import time

from contact_lcp.ros.messages import from_time


def trajectory_arrays(msg):
    """``(joints, start, t_rel, positions, velocities)`` of a ``JointTrajectory``.

    ``start`` is the header stamp [s] (ROS time), ``None`` when zero (= start now);
    ``t_rel`` the points' ``time_from_start`` [s]; ``positions`` (k, n) and
    ``velocities`` (k, n) or ``None`` as lists of lists.

    Raises
    ------
    ValueError
        No joint names, no points, times that do not increase, or a point whose
        positions/velocities do not have one value per joint.
    """
    joints = list(msg.joint_names)
    if not joints:
        raise ValueError("no joint_names")
    if not msg.points:
        raise ValueError("no points")
    n = len(joints)
    positions, velocities, t_rel = [], [], []
    for i, p in enumerate(msg.points):
        if len(p.positions) != n:
            raise ValueError(f"point {i} has {len(p.positions)} positions for {n} joints")
        if len(p.velocities) not in (0, n):
            raise ValueError(f"point {i} has {len(p.velocities)} velocities for {n} joints")
        positions.append(list(p.positions))
        velocities.append(list(p.velocities))
        t_rel.append(p.time_from_start.sec + p.time_from_start.nanosec * 1e-9)
    if any(b <= a for a, b in zip(t_rel, t_rel[1:])):
        raise ValueError(f"time_from_start must be strictly increasing, got {t_rel}")
    given = [len(v) > 0 for v in velocities]
    if any(given) and not all(given):
        raise ValueError("velocities given for some points only")
    stamp = msg.header.stamp
    start = None if (stamp.sec, stamp.nanosec) == (0, 0) else from_time(stamp)
    return joints, start, t_rel, positions, (velocities if all(given) else None)


#: The fields of a sensor_msgs/JointState command, in the order a joint's mode is chosen.
COMMAND_FIELDS = (("position", "position"), ("velocity", "velocity"), ("effort", "effort"))


def joint_command_groups(names, position, velocity, effort):
    """``{mode: (joints, values)}`` of a ``sensor_msgs/JointState`` used as a command.

    As topic_based_ros2_control publishes them: ``name`` lists the commanded joints; each
    of ``position`` [rad], ``velocity`` [rad/s], ``effort`` [N.m] is empty (not
    commanded) or has one value per name. A joint takes the first of position,
    velocity, effort that has a finite value for it (NaN = "not through this field"),
    so one message may command joints in different modes.

    Raises
    ------
    ValueError
        No names, a repeated name, a field whose length is neither 0 nor
        ``len(names)``, or a joint with no finite value in any field.
    """
    names = list(names)
    if not names:
        raise ValueError("no joint names")
    if len(set(names)) != len(names):
        raise ValueError(f"joint names repeated: {names}")
    fields = {"position": list(position), "velocity": list(velocity),
              "effort": list(effort)}
    for field, values in fields.items():
        if len(values) not in (0, len(names)):
            raise ValueError(f"{field} has {len(values)} values for {len(names)} joints "
                             "(expected 0 or one per name)")
    groups = {}
    for i, joint in enumerate(names):
        for field, mode in COMMAND_FIELDS:
            values = fields[field]
            if values and math.isfinite(values[i]):
                joints, vals = groups.setdefault(mode, ([], []))
                joints.append(joint)
                vals.append(float(values[i]))
                break
        else:
            raise ValueError(f"joint {joint!r} has no finite position, velocity or effort")
    return groups


class Throttle:
    """Warnings about bad input, at most one per ``period`` s per source.

    A different reason from the same source is logged at once (so each distinct mistake
    is seen), unless the previous line is less than ``min_gap`` s old; the count of
    suppressed lines is appended to the next one. Thread-safe.
    """

    def __init__(self, logger, period=1.0, min_gap=0.1, clock=time.monotonic):
        self._logger = logger
        self._period = period
        self._min_gap = min_gap
        self._clock = clock
        self._last = {}  # source -> [time, text, suppressed]
        self._lock = threading.Lock()

    def warn(self, source, text):
        """Log ``text`` for ``source`` unless throttled; return True when logged."""
        with self._lock:
            now = self._clock()
            t, last_text, suppressed = self._last.get(source, (-float("inf"), None, 0))
            age = now - t
            if age < self._min_gap or (text == last_text and age < self._period):
                self._last[source] = [t, last_text, suppressed + 1]
                return False
            self._last[source] = [now, text, 0]
        more = f" ({suppressed} more rejected since)" if suppressed else ""
        self._logger.warning(text + more)
        return True


class Rejections:
    """Counts of rejected incoming commands, per source (topic), with the last reason;
    reported on ``/diagnostics`` beside the throttled log line. Thread-safe (commands are
    rejected in the executor and, once the simulator has judged them, in the physics
    thread)."""

    def __init__(self):
        self._counts = {}  # source -> count
        self._last = ""
        self._lock = threading.Lock()

    def count(self, source, reason):
        with self._lock:
            self._counts[source] = self._counts.get(source, 0) + 1
            self._last = f"{source}: {reason}"

    def total(self):
        with self._lock:
            return sum(self._counts.values())

    def values(self):
        """Diagnostic key-value pairs: ``rejected_commands`` (the total),
        ``rejected_commands_last`` (source and reason of the last one) and
        ``rejected_commands <source>`` per source."""
        with self._lock:
            out = {"rejected_commands": sum(self._counts.values()),
                   "rejected_commands_last": self._last}
            out.update({f"rejected_commands {s}": n for s, n in sorted(self._counts.items())})
        return out
