"""Sleep: islands of free bodies that have been still for a while leave the step.

An island here is a set of free bodies connected by the last step's contacts (a contact
with the ground or with a robot that cannot move couples nothing). When every body of an
island has moved slower than ``contact.sleep_speed`` for ``contact.sleep_time``, and no
body of it touches a robot that can move, the island falls asleep: its velocities are set
to zero and held there as prescribed coordinates (its bodies do not move, and take no
part in the free motion or in any contact problem), and the collision stage skips every
pair of two geometries that cannot move (sleeping bodies, the ground, robots without
velocity coordinates). An island wakes, before the step solves anything, when the step's
collision stage finds a contact (within the activation distance plus the look-ahead of
the bodies' speeds) between one of its bodies and a moving one: an awake free body or a
robot link; the step then recomputes its free motion and contacts with the island
awake, so the island takes part in the very step in which it is touched (the woken
bodies may wake further islands in turn).

Robots never sleep (a robot is commanded every step), nor does an island touching a
robot that can move. Sleep is off by default (``contact.sleep``): a body's state edited
from outside the step (a new pose or velocity set through the ROS interface) does not
wake its island, and a state file does not hold the sleep state (a resumed run starts
with every body awake).
"""

import math

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from contact_lcp.dynamics.world import GROUND


class Sleep:
    """Which free bodies sleep, and their bookkeeping.

    Parameters
    ----------
    world : contact_lcp.dynamics.World
    speed : float
        A body is still while ``|v_lin| + r |omega|`` [m/s] stays below this (``r`` its
        largest size entry [m]: a half-extent or radius).
    time : float
        How long [s] every body of an island must be still before it sleeps.
    h : float
        Time step [s].
    """

    def __init__(self, world, speed, time, h):
        self.speed = float(speed)
        self.steps = max(1, int(math.ceil(float(time) / float(h) - 1e-9)))
        self.bodies = list(world.bodies)
        nb = len(self.bodies)
        index = {b.name: i for i, b in enumerate(self.bodies)}
        owners = list(world.geometry_owner)
        #: (ngeom,) the free body of each geometry, -1 for robot links and the ground
        self.geom_body = np.array([index.get(o, -1) for o in owners], dtype=np.int64)
        fixed = {r.name for r in world.robots if r.v_slice.stop == r.v_slice.start}
        #: (ngeom,) geometries that can move whatever sleeps (robot links that can move)
        self.geom_moving_robot = np.array([o != GROUND and o not in index and o not in fixed
                                           for o in owners])
        #: (ngeom,) geometries that never move (the ground, robots without coordinates)
        self.geom_static = np.array([o == GROUND or o in fixed for o in owners])
        self.extent = np.array([max(b.size) for b in self.bodies]) if nb else np.zeros(0)
        self.v_index = [np.arange(b.v_slice.start, b.v_slice.stop) for b in self.bodies]
        self.reset()

    def reset(self):
        """Everything awake, no body still."""
        nb = len(self.bodies)
        self.still = np.zeros(nb, dtype=np.int64)
        self.asleep = np.zeros(nb, dtype=bool)
        self.group = np.full(nb, -1, dtype=np.int64)  # the island each sleeper fell asleep in
        self._next_group = 0

    @property
    def count(self):
        """Bodies asleep now."""
        return int(self.asleep.sum())

    def still_geometries(self):
        """(ngeom,) geometries that cannot move this step, or None when nothing sleeps
        (the collision stage skips pairs of two of them)."""
        if not self.asleep.any():
            return None
        body = self.geom_body
        return self.geom_static | ((body >= 0) & self.asleep[np.maximum(body, 0)])

    def prescribe(self, prescribed, v_prescribed):
        """The step's prescribed coordinates and their velocities with the sleeping
        bodies' held at zero: ``(idx, v)`` (None, None when there are none)."""
        if not self.asleep.any():
            return prescribed, v_prescribed
        idx = np.concatenate([self.v_index[i] for i in np.flatnonzero(self.asleep)])
        if prescribed is None:
            return idx, np.zeros(idx.size)
        return (np.concatenate([np.asarray(prescribed, dtype=int), idx]),
                np.concatenate([np.asarray(v_prescribed, dtype=float), np.zeros(idx.size)]))

    def wake(self, contacts):
        """Wake every sleeping island that one of ``contacts`` (a ContactSet: the step's
        candidates) joins to a moving body; True when one woke."""
        if not self.asleep.any() or len(contacts) == 0:
            return False
        ba, bb = self.geom_body[contacts.body_a], self.geom_body[contacts.body_b]
        sa = (ba >= 0) & self.asleep[np.maximum(ba, 0)]
        sb = (bb >= 0) & self.asleep[np.maximum(bb, 0)]
        moving_a = ((ba >= 0) & ~sa) | self.geom_moving_robot[contacts.body_a]
        moving_b = ((bb >= 0) & ~sb) | self.geom_moving_robot[contacts.body_b]
        groups = np.union1d(self.group[ba[sa & moving_b]], self.group[bb[sb & moving_a]])
        if groups.size == 0:
            return False
        woken = np.isin(self.group, groups) & self.asleep
        self.asleep[woken] = False
        self.group[woken] = -1
        self.still[woken] = 0
        return True

    def update(self, v, contacts):
        """After a step with velocity ``v`` (nv,) and problem contacts ``contacts``: count
        still bodies and put to sleep the islands still for long enough."""
        nb = len(self.bodies)
        if nb == 0:
            return
        speed = np.array([np.linalg.norm(v[i[:3]]) + r * np.linalg.norm(v[i[3:6]])
                          for i, r in zip(self.v_index, self.extent)])
        awake = ~self.asleep
        self.still = np.where(awake & (speed < self.speed), self.still + 1, 0)
        ba, bb = self.geom_body[contacts.body_a], self.geom_body[contacts.body_b]
        both = (ba >= 0) & (bb >= 0)
        graph = sparse.coo_matrix((np.ones(int(both.sum())), (ba[both], bb[both])),
                                  shape=(nb, nb))
        _, label = connected_components(graph, directed=False)
        ready = awake & (self.still >= self.steps)
        # an island touching a robot that can move never sleeps
        touch = np.concatenate([ba[self.geom_moving_robot[contacts.body_b] & (ba >= 0)],
                                bb[self.geom_moving_robot[contacts.body_a] & (bb >= 0)]])
        blocked = np.zeros(label.max() + 1, dtype=bool)
        blocked[label[touch]] = True
        blocked[label[~ready]] = True
        fall = ~blocked[label] & awake
        for lab in np.unique(label[fall]):
            members = fall & (label == lab)
            self.asleep[members] = True
            self.group[members] = self._next_group
            self._next_group += 1
