"""Entities of a running simulation: list them, move them, add and remove them.

An entity is a robot (by its scene name) or a free body (by its name). Adding or removing
one changes the world's layout (its ``q`` and ``v``), so :func:`with_body` and
:func:`without` build a new :class:`~contact_lcp.sim.Simulator` of the changed scene and
carry the running one's state over to it, entity by entity: time, every remaining
robot's and body's configuration and velocity, the robots' commands and trajectories, the
continuous joints' turns and the counters. What is not carried is the contact model's
guess (the contacts change with the world: the first step after solves without it) and
the last step's record. This is what the simulation_interfaces spawn and delete services
do; the same functions serve Python users.
"""

import dataclasses

import numpy as np

from contact_lcp.dynamics.specs import check_pose
from contact_lcp.exceptions import SceneError
from contact_lcp.sim.views import quat_to_R

ROBOT, BODY = "robot", "body"


def entities(sim):
    """``[(name, kind)]`` of every robot and free body, in world order."""
    return ([(r.name, ROBOT) for r in sim.world.robots]
            + [(b.name, BODY) for b in sim.world.bodies])


def kind_of(sim, name):
    """``"robot"`` or ``"body"``; raises KeyError naming the entities there are."""
    for n, kind in entities(sim):
        if n == name:
            return kind
    names = [n for n, _ in entities(sim)]
    raise KeyError(f"no entity {name!r}; entities: {', '.join(names) or 'none'}")


def _slices(sim, name):
    for info in list(sim.world.robots) + list(sim.world.bodies):
        if info.name == name:
            return info.q_slice, info.v_slice, info
    raise KeyError(name)


def pose_and_twist(sim, name):
    """``(pose (7,) [x y z qx qy qz qw], twist (6,) [v w] in W)`` of an entity's root:
    a body, a floating base, or a fixed base's placement (zero twist)."""
    if kind_of(sim, name) == BODY:
        s = sim.body_state(name)
        return s.pose, s.twist
    index = [r.name for r in sim.world.robots].index(name)
    base = sim.base_state(index)
    if base is not None:
        return base.pose, base.twist
    placed = sim.scene.robots[index].robot.base_pose  # None: at the origin
    pose = np.array([0.0, 0, 0, 0, 0, 0, 1]) if placed is None else np.asarray(placed, float)
    return pose, np.zeros(6)


def set_pose_and_twist(sim, name, pose=None, twist=None):
    """Move a body or a floating base to ``pose`` (7,) and/or give it ``twist`` (6,)
    [v w] in W (None keeps it). The contacts are found afresh at the next step.

    Raises
    ------
    KeyError
        No such entity; ValueError: a fixed-base robot or a non-finite twist;
        SceneError: a pose that is not 7 finite numbers with a non-zero quaternion.
    """
    kind = kind_of(sim, name)
    sq, sv, info = _slices(sim, name)
    if kind == ROBOT and not info.floating_base:
        raise ValueError(f"robot {name!r} has a fixed base: its pose is the scene's base_pose")
    if pose is not None:
        sim._q[sq.start:sq.start + 7] = check_pose(pose, "pose")  # (unit quaternion)
    if twist is not None:
        twist = np.asarray(twist, dtype=float).ravel()
        if twist.shape != (6,) or not np.all(np.isfinite(twist)):
            raise ValueError(f"twist: expected 6 finite numbers [vx vy vz wx wy wz], got {twist.tolist()}")
        R = quat_to_R(*sim._q[sq.start + 3:sq.start + 7])
        sim._v[sv.start:sv.start + 3] = R.T @ twist[:3]  # free-flyer velocity: local frame
        sim._v[sv.start + 3:sv.start + 6] = R.T @ twist[3:]
    sim._last = None
    sim.world.forward(sim._q, sim._v)


def _new_name(sim, name):
    """SceneError when an entity of ``sim`` is already called ``name``."""
    taken = [n for n, _ in entities(sim)]
    if name in taken:
        raise SceneError(f"an entity named {name!r} exists already; entities: {', '.join(taken)}")


def with_body(sim, body):
    """A simulator of ``sim``'s scene plus the free body ``body``
    (:class:`~contact_lcp.dynamics.BodySpec`), in ``sim``'s state."""
    _new_name(sim, body.name)
    return _rebuilt(sim, sim.scene.replace(bodies=tuple(sim.scene.bodies) + (body,)))


def with_robot(sim, robot):
    """A simulator of ``sim``'s scene plus ``robot``
    (:class:`~contact_lcp.sim.scene.RobotSceneSpec`), in ``sim``'s state."""
    _new_name(sim, robot.robot.name)
    return _rebuilt(sim, sim.scene.replace(robots=tuple(sim.scene.robots) + (robot,)))


def without(sim, name):
    """A simulator of ``sim``'s scene without the robot or body ``name``, in ``sim``'s
    state. Raises KeyError for an unknown name, SceneError when nothing would be left."""
    scene = sim.scene
    if kind_of(sim, name) == BODY:
        scene = scene.replace(bodies=tuple(b for b in scene.bodies if b.name != name))
    else:
        keep = [r for r, info in zip(scene.robots, sim.world.robots) if info.name != name]
        scene = scene.replace(robots=tuple(keep))
    return _rebuilt(sim, scene)


def _rebuilt(sim, scene):
    """A Simulator of ``scene`` in ``sim``'s state, entity by entity."""
    from contact_lcp.sim.simulator import Simulator

    new = Simulator(scene)
    new.t = sim.t
    new.stats = dataclasses.replace(sim.stats)
    for info in list(new.world.robots) + list(new.world.bodies):
        try:
            sq, sv, old = _slices(sim, info.name)
        except KeyError:
            continue  # the new entity: its scene pose and velocity
        new._q[info.q_slice] = sim._q[sq]
        new._v[info.v_slice] = sim._v[sv]
    old_controls = {c.info.name: c for c in sim.controls}
    for control in new.controls:
        before = old_controls.get(control.info.name)
        if before is not None:
            for key in control.COMMAND_FIELDS:
                setattr(control, key, getattr(before, key))
    new._joint_positions.reset(new._q)
    anchors = _anchors(sim)
    for info in new.world.robots:
        for joint, angle in anchors.get(info.name, {}).items():
            new._joint_positions.anchor[_anchor_index(new, info.name, joint)] = angle
    new.world.forward(new._q, new._v)
    return new


def _anchors(sim):
    """``{robot: {joint: unwrapped angle}}`` of the continuous joints."""
    out, k = {}, 0
    for info in sim.world.robots:
        for joint, cont in zip(info.joint_names, info.continuous):
            if cont:
                out.setdefault(info.name, {})[joint] = float(sim._joint_positions.anchor[k])
                k += 1
    return out


def _anchor_index(sim, robot, joint):
    k = 0
    for info in sim.world.robots:
        for name, cont in zip(info.joint_names, info.continuous):
            if cont:
                if info.name == robot and name == joint:
                    return k
                k += 1
    raise KeyError(joint)
