"""PyBullet peer (DIRECT, its default sequential-impulse solver): the scenes of :mod:`peer_scenes`.

Robots: the URDF (``URDF_USE_INERTIA_FROM_FILE``, meshes as convex hulls), every revolute
joint held by a ``POSITION_CONTROL`` motor force-limited to its URDF effort limit.
PyBullet's motors are velocity constraints inside its solver with their own gains, so
the scene's ``kp``/``kd`` cannot be given (said in the notes). Tower: the scene's boxes.
The floor is a plane. PyBullet's friction of a pair is the PRODUCT of the two objects'
coefficients, so every object (floor, links, boxes) gets ``sqrt(mu)``: each pair ``mu``.

Contact forces are ``getContactPoints``: ``normalForce`` along the normal on B (the
floor) plus the two lateral friction forces; the engine's penetration is
``-contactDistance``. PyBullet reports a body's pose at its centre of mass: ``pose()``
moves it back to the link frame.
"""

import functools
import importlib
import importlib.metadata
import os
import tempfile

import numpy as np

from peer_harness import PeerRun, measuring

NAME = "pybullet"


class _Engine:
    def __init__(self, p, c, plane, bodies, kind, joints, notes):
        self.p, self.c, self.plane, self.bodies, self.kind = p, c, plane, bodies, kind
        self.joints = joints  # name -> joint index (robot)
        self.version, self.notes = importlib.metadata.version("pybullet"), notes
        self._inertial = [p.invertTransform(*p.getDynamicsInfo(b, -1, physicsClientId=c)[3:5]) for b in bodies]
        self.step = functools.partial(p.stepSimulation, physicsClientId=c)

    def _link_pose(self, i):
        p, c = self.p, self.c
        pos, orn = p.getBasePositionAndOrientation(self.bodies[i], physicsClientId=c)
        pos, orn = p.multiplyTransforms(pos, orn, *self._inertial[i])
        return np.r_[pos, orn]

    def pose(self):
        if self.kind == "tower":
            return np.array([self._link_pose(i) for i in range(len(self.bodies))])
        states = self.p.getJointStates(self.bodies[0], list(self.joints.values()), physicsClientId=self.c)
        return self._link_pose(0), {name: s[0] for name, s in zip(self.joints, states)}

    def contacts(self):
        p, c = self.p, self.c
        every = p.getContactPoints(physicsClientId=c)
        F = []
        for b in self.bodies:
            for pt in p.getContactPoints(bodyA=b, bodyB=self.plane, physicsClientId=c):
                n = np.array(pt[7])  # on B (the floor), pointing to A
                F.append(pt[9] * n + pt[10] * np.array(pt[11]) + pt[12] * np.array(pt[13]))
        depth = max([0.0] + [-pt[8] for pt in every])
        return np.array(F).reshape(-1, 3), depth, len(every)


def _mu(scene):
    """An object's friction for the pair's ``mu`` (PyBullet multiplies the two)."""
    return float(np.sqrt(scene.friction))


def _world(p, scene):
    c = p.connect(p.DIRECT)
    p.setGravity(0, 0, -scene.gravity, physicsClientId=c)
    p.setTimeStep(scene.h, physicsClientId=c)
    plane = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=c), physicsClientId=c)
    p.changeDynamics(plane, -1, lateralFriction=_mu(scene), physicsClientId=c)
    return c, plane


def _place(p, c, body, pose):
    """Put ``body``'s link frame at ``pose`` (PyBullet places the centre of mass)."""
    local = p.getDynamicsInfo(body, -1, physicsClientId=c)[3:5]
    pos, orn = p.multiplyTransforms(list(pose[:3]), list(pose[3:]), *local)
    p.resetBasePositionAndOrientation(body, pos, orn, physicsClientId=c)


def build_robot(p, scene, tmp):
    c, plane = _world(p, scene)
    urdf = os.path.join(tmp, scene.name + ".urdf")
    with open(urdf, "w") as f:
        f.write(scene.urdf_text)
    robot = p.loadURDF(urdf, useFixedBase=False, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
    _place(p, c, robot, scene.base)
    joints, target, force = {}, [], []
    for j in range(p.getNumJoints(robot, physicsClientId=c)):
        info = p.getJointInfo(robot, j, physicsClientId=c)
        if info[2] == p.JOINT_REVOLUTE:
            name = info[1].decode()
            joints[name] = j
            target.append(scene.joints.get(name, 0.0))
            force.append(scene.effort[name])
            p.resetJointState(robot, j, target[-1], physicsClientId=c)
        p.changeDynamics(robot, j, lateralFriction=_mu(scene), physicsClientId=c)
    p.changeDynamics(robot, -1, lateralFriction=_mu(scene), physicsClientId=c)
    p.setJointMotorControlArray(robot, list(joints.values()), p.POSITION_CONTROL, targetPositions=target,
                                forces=force, physicsClientId=c)
    notes = (f"{len(joints)} POSITION_CONTROL motors, PyBullet's default gains (kp/kd cannot be set "
             "as N.m/rad); convex hulls; no self-collision")
    return _Engine(p, c, plane, [robot], "robot", joints, notes)


def build_tower(p, scene, tmp):
    c, plane = _world(p, scene)
    bodies = []
    for b in scene.boxes:
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(b.size / 2), physicsClientId=c)
        body = p.createMultiBody(b.mass, shape, basePosition=list(b.pose[:3]), baseOrientation=list(b.pose[3:]),
                                 physicsClientId=c)
        p.changeDynamics(body, -1, lateralFriction=_mu(scene), physicsClientId=c)
        bodies.append(body)
    return _Engine(p, c, plane, bodies, "tower", {}, "default solver (50 iterations), default contact ERP")


def runs(scene, **options):
    """Measure ``scene`` (a :mod:`peer_scenes` scene) in PyBullet: a generator of
    :func:`peer_harness.measuring`'s kind, whose value is a :class:`PeerRun`."""
    try:
        p = importlib.import_module("pybullet")
    except ImportError:
        return PeerRun(NAME, scene.name, "not installed")
    with tempfile.TemporaryDirectory() as tmp:
        engine = (build_robot if scene.kind == "robot" else build_tower)(p, scene, tmp)
        try:
            return (yield from measuring(engine, scene, name=NAME, **options))
        finally:
            p.disconnect(physicsClientId=engine.c)
