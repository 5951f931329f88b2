"""DART peer (dartpy 6.20, boxed LCP with the Dantzig solver, FCL collision): the scenes of :mod:`peer_scenes`.

Robots: the URDF through ``DartLoader`` with a floating root; every revolute joint holds
the posture with a joint spring of stiffness ``kp`` at the posture and damping ``kd``
(DART integrates both implicitly; a spring is passive, so no effort limit applies, as
the notes say). Robot self-collision off. Tower: one skeleton per box. The ground is a
welded 10 m x 10 m x 0.1 m box whose top is z = 0. Friction: the scene's on every body
node. DART's body deactivation (sleeping, on by default in 6.20) is turned off: every
engine of the benchmark does the work of every step.

Contact forces are ``Contact.force`` of the world's last collision result (filled by the
constraint solver), on the body of ``collisionObject1``; penetration its
``penetrationDepth``.
"""

import importlib
import importlib.metadata
import os
import tempfile

import numpy as np

from peer_harness import PeerRun, measuring

NAME = "dart"


class _Engine:
    def __init__(self, dart, world, ground, kind, roots, joints, notes):
        self.dart, self.world, self.ground, self.kind, self.roots = dart, world, ground, kind, roots
        self.joints = joints  # name -> Joint (robot)
        self.version, self.notes = importlib.metadata.version("dartpy"), notes
        self.step = world.step

    def _pose(self, body):
        T = body.getWorldTransform()
        x, y, z, w = _quat_xyzw(T.rotation())
        return np.r_[T.translation(), x, y, z, w]

    def pose(self):
        if self.kind == "tower":
            return np.array([self._pose(b) for b in self.roots])
        return self._pose(self.roots[0]), {name: float(j.getPosition(0)) for name, j in self.joints.items()}

    def contacts(self):
        contacts = self.world.getLastCollisionResult().getContacts()
        F, depth = [], [0.0]
        for c in contacts:
            depth.append(float(c.penetrationDepth))
            a = c.collisionObject1.getShapeFrame().getName()
            b = c.collisionObject2.getShapeFrame().getName()
            if self.ground not in (a, b):
                continue
            sign = -1.0 if a == self.ground else 1.0  # force on the non-ground body
            F.append(sign * np.asarray(c.force))
        return np.array(F).reshape(-1, 3), max(depth), len(contacts)


def _quat_xyzw(R):
    """``[qx qy qz qw]`` of a rotation matrix (w >= 0)."""
    w = 0.5 * np.sqrt(max(0.0, 1.0 + np.trace(R)))
    if w > 1e-6:
        return [(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w), w]
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
    q[i], q[j], q[k] = s / 4, (R[j, i] + R[i, j]) / s, (R[k, i] + R[i, k]) / s
    return q


def _isometry(dart, pose):
    from peer_scenes import quat_to_R

    T = dart.math.Isometry3()
    T.set_rotation(quat_to_R(pose[3:]))
    T.set_translation(np.asarray(pose[:3], float))
    return T


def _world(dart, scene):
    world = dart.simulation.World()
    world.setTimeStep(scene.h)
    world.setGravity([0.0, 0.0, -scene.gravity])
    opts = world.getDeactivationOptions()
    opts.mEnabled = False
    world.setDeactivationOptions(opts)
    solver = world.getConstraintSolver().getBoxedLcpSolver().getType()
    if solver != "DantzigBoxedLcpSolver":  # 6.20's default; dartpy cannot make one to set it
        raise RuntimeError(f"DART's boxed LCP solver is {solver}, not DantzigBoxedLcpSolver")
    ground = dart.dynamics.Skeleton("ground")
    _, body = ground.createWeldJointAndBodyNodePair()
    _shape(dart, body, dart.dynamics.BoxShape([10.0, 10.0, 0.1]), "ground_shape", [0, 0, -0.05])
    _friction(body, scene.friction)
    world.addSkeleton(ground)
    return world


def _friction(body, mu):
    """``mu`` on every collision shape of ``body`` (DART keeps it per shape node)."""
    for i in range(body.getNumShapeNodes()):
        node = body.getShapeNode(i)
        if node.hasDynamicsAspect():
            node.getDynamicsAspect().setFrictionCoeff(mu)


def _shape(dart, body, shape, name, offset):
    node = body.createShapeNode(shape)
    node.setName(name)
    node.setRelativeTranslation(np.asarray(offset, float))
    node.createCollisionAspect()
    node.createDynamicsAspect()
    return node


def build_robot(dart, scene, tmp):
    world = _world(dart, scene)
    path = os.path.join(tmp, scene.name + ".urdf")
    with open(path, "w") as f:
        f.write(scene.urdf_text)
    skel = dart.utils.DartLoader().parseSkeleton(path)
    skel.disableSelfCollisionCheck()
    root = skel.getRootBodyNode()
    root.getParentJoint().setPositions(dart.dynamics.FreeJoint.convertToPositions(_isometry(dart, scene.base)))
    joints = {}
    for i in range(skel.getNumJoints()):
        j = skel.getJoint(i)
        if j.getType() == "RevoluteJoint":
            joints[j.getName()] = j
            q0 = scene.joints.get(j.getName(), 0.0)
            j.setPosition(0, q0)
            j.setRestPosition(0, q0)
            j.setSpringStiffness(0, scene.kp)
            j.setDampingCoefficient(0, scene.kd)
    for i in range(skel.getNumBodyNodes()):
        _friction(skel.getBodyNode(i), scene.friction)
    world.addSkeleton(skel)
    notes = (f"{len(joints)} joint springs kp={scene.kp:g} + damping kd={scene.kd:g} (implicit; no effort "
             "limit; no gravity compensation); FCL mesh collision; deactivation off; no self-collision")
    return _Engine(dart, world, "ground_shape", "robot", [root], joints, notes)


def build_tower(dart, scene, tmp):
    world = _world(dart, scene)
    roots = []
    for b in scene.boxes:
        skel = dart.dynamics.Skeleton(b.name)
        joint, body = skel.createFreeJointAndBodyNodePair()
        _shape(dart, body, dart.dynamics.BoxShape(b.size), b.name, [0.0, 0.0, 0.0])
        lx, ly, lz = b.size
        I = b.mass / 12.0 * np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])
        body.setInertia(dart.dynamics.Inertia(b.mass, np.zeros(3), I))
        _friction(body, scene.friction)
        joint.setPositions(dart.dynamics.FreeJoint.convertToPositions(_isometry(dart, b.pose)))
        world.addSkeleton(skel)
        roots.append(body)
    return _Engine(dart, world, "ground_shape", "tower", roots, {}, "FCL box-box; deactivation off")


def runs(scene, **options):
    """Measure ``scene`` (a :mod:`peer_scenes` scene) in DART: a generator of
    :func:`peer_harness.measuring`'s kind, whose value is a :class:`PeerRun`."""
    try:
        dart = importlib.import_module("dartpy")
    except ImportError:
        return PeerRun(NAME, scene.name, "not installed")
    with tempfile.TemporaryDirectory() as tmp:
        engine = (build_robot if scene.kind == "robot" else build_tower)(dart, scene, tmp)
    return (yield from measuring(engine, scene, name=NAME, **options))
