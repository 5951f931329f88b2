"""MuJoCo peer (``implicitfast`` integrator): the scenes of :mod:`peer_scenes` as ``MjSpec``.

Robots: the URDF through MuJoCo's importer (visuals discarded, meshes as their convex
hulls, MuJoCo's only mesh collision), a free joint on the root link, a ``position``
actuator per hinge with the scene's ``kp`` and ``kv = kd`` (implicit damping under
``implicitfast``), force-limited to the URDF effort limits; robot geoms collide with
the floor only. Tower: the scene's boxes with free joints. Everywhere the scene's
friction on every geom (MuJoCo takes the larger of a pair's), default soft-contact
parameters, Newton solver, pyramidal cone.

Contact forces are ``mj_contactForce`` turned to W with each contact's frame; the
engine's penetration is ``-dist`` of its contacts.
"""

import functools
import importlib

import numpy as np

from peer_harness import PeerRun, measuring

NAME = "mujoco"


def _w_first(q):
    return [q[3], q[0], q[1], q[2]]


class _Engine:
    def __init__(self, mujoco, m, d, floor, kind, robot_joints, notes):
        self.mujoco, self.m, self.d, self.floor, self.kind = mujoco, m, d, floor, kind
        self.joints = robot_joints  # name -> qpos address
        self.version, self.notes = mujoco.__version__, notes
        self.step = functools.partial(mujoco.mj_step, m, d)  # one C call per step
        self._f6 = np.zeros(6)
        self._free = [m.jnt_qposadr[j] for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]

    def pose(self):
        q = self.d.qpos
        poses = np.array([np.r_[q[a:a + 3], q[a + 4:a + 7], q[a + 3]] for a in self._free])
        if self.kind == "tower":
            return poses
        return poses[0], {name: float(q[a]) for name, a in self.joints.items()}

    def contacts(self):
        m, d = self.m, self.d
        F, depth = [], [0.0]
        for i in range(d.ncon):
            c = d.contact[i]
            depth.append(-float(c.dist))
            if self.floor not in c.geom:
                continue
            self.mujoco.mj_contactForce(m, d, i, self._f6)
            frame = np.asarray(c.frame).reshape(3, 3)  # rows: normal (geom1 -> geom2), t1, t2
            sign = 1.0 if c.geom[0] == self.floor else -1.0  # the force on the non-floor geom
            F.append(sign * frame.T @ self._f6[:3])
        return np.array(F).reshape(-1, 3), max(depth), int(d.ncon)


def _floor(mujoco, spec, mu):
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                            contype=0, conaffinity=1, friction=[mu, 0.005, 1e-4])


def build_robot(mujoco, scene):
    compiler = ('<mujoco><compiler discardvisual="true" balanceinertia="true" '
                'fusestatic="false" strippath="false"/></mujoco>')
    spec = mujoco.MjSpec.from_string(scene.urdf_text.replace("</robot>", compiler + "</robot>"))
    spec.option.timestep = scene.h
    spec.option.gravity = [0.0, 0.0, -scene.gravity]
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.worldbody.first_body().add_freejoint(name="root_joint")
    for g in spec.geoms:  # robot geoms touch the floor only
        g.contype, g.conaffinity = 1, 0
        g.friction = [scene.friction, 0.005, 1e-4]
    _floor(mujoco, spec, scene.friction)
    hinges = [j.name for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_HINGE]
    for name in hinges:
        act = spec.add_actuator(name=name + "_servo", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=scene.kp, kv=scene.kd)
        act.forcelimited = True
        act.forcerange = [-scene.effort[name], scene.effort[name]]
    m = spec.compile()
    d = mujoco.MjData(m)
    d.qpos[:3], d.qpos[3:7] = scene.base[:3], _w_first(scene.base[3:])
    joints = {name: int(m.jnt_qposadr[m.joint(name).id]) for name in hinges}
    for name, a in joints.items():
        d.qpos[a] = scene.joints.get(name, 0.0)
    d.ctrl[:] = [d.qpos[joints[n]] for n in hinges]
    mujoco.mj_forward(m, d)
    notes = (f"{len(hinges)} position servos kp={scene.kp:g} kv={scene.kd:g} (no gravity compensation); "
             f"convex hulls; soft contacts (default solref); no self-collision")
    return _Engine(mujoco, m, d, m.geom("floor").id, "robot", joints, notes)


def build_tower(mujoco, scene):
    spec = mujoco.MjSpec()
    spec.option.timestep = scene.h
    spec.option.gravity = [0.0, 0.0, -scene.gravity]
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    _floor(mujoco, spec, scene.friction)
    spec.geoms[0].contype = 1
    for b in scene.boxes:
        body = spec.worldbody.add_body(name=b.name, pos=b.pose[:3], quat=_w_first(b.pose[3:]))
        body.add_freejoint()
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=b.size / 2, mass=b.mass,
                      friction=[scene.friction, 0.005, 1e-4])
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return _Engine(mujoco, m, d, m.geom("floor").id, "tower", {},
                   "soft contacts (default solref); box-box and box-floor by MuJoCo's box collider")


def build_pour(mujoco, scene):
    """A :class:`peer_scenes.PourScene` as an ``MjModel``/``MjData``: the floor, the
    walls as static boxes, each sphere on a free joint. Pair frictions as ours
    (``combine_friction``): spheres and walls carry the spheres' friction, the floor the
    sphere-ground pair's, with a higher priority so that MuJoCo takes it for those pairs."""
    from contact_lcp.collision import combine_friction

    spec = mujoco.MjSpec()
    spec.option.timestep = scene.h
    spec.option.gravity = [0.0, 0.0, -scene.gravity]
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    mu_g = combine_friction(scene.friction, scene.body_friction)
    _floor(mujoco, spec, mu_g)
    spec.geoms[0].contype, spec.geoms[0].priority = 1, 1
    for k, (size, pose) in enumerate(scene.walls):
        spec.worldbody.add_geom(name=f"wall{k}", type=mujoco.mjtGeom.mjGEOM_BOX, size=size / 2,
                                pos=pose[:3], quat=_w_first(pose[3:]),
                                friction=[scene.body_friction, 0.005, 1e-4])
    for s in scene.spheres:
        body = spec.worldbody.add_body(name=s.name, pos=s.pose[:3], quat=_w_first(s.pose[3:]))
        body.add_freejoint()
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[s.radius, 0, 0], mass=s.mass,
                      friction=[scene.body_friction, 0.005, 1e-4])
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return m, d


def run_pour(scene, steps):
    """``steps`` steps of a :class:`peer_scenes.PourScene` in MuJoCo: a dict with the
    wall time of the steps [s], the deepest penetration the engine reported (``-dist`` of
    its contacts) and the one :func:`peer_checks.pour_penetration` finds from its sphere
    positions after every step [m], the final pile height [m] and notes (``status``
    ``'not installed'`` without the wheel)."""
    import time

    from peer_checks import pile_height, pour_penetration

    try:
        mujoco = importlib.import_module("mujoco")
    except ImportError:
        return {"engine": NAME, "status": "not installed"}
    m, d = build_pour(mujoco, scene)
    adr = np.array([m.jnt_qposadr[j] for j in range(m.njnt)
                    if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE])
    centres = adr[:, None] + np.arange(3)
    wall, engine_depth, our_depth, ncon = 0.0, 0.0, 0.0, 0
    for _ in range(steps):
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        wall += time.perf_counter() - t0
        if d.ncon:
            engine_depth = max(engine_depth, float(-d.contact.dist[:d.ncon].min()))
        ncon = max(ncon, int(d.ncon))
        our_depth = max(our_depth, pour_penetration(scene, d.qpos[centres]))
    return {"engine": NAME, "version": mujoco.__version__, "status": "ran", "steps": steps,
            "wall_s": wall, "engine_penetration": engine_depth, "our_penetration": our_depth,
            "pile_height": pile_height(scene, d.qpos[centres]), "max_contacts": ncon,
            "notes": "implicitfast, Newton, pyramidal cone, soft contacts (default solref)"}


def runs(scene, **options):
    """Measure ``scene`` (a :mod:`peer_scenes` scene) in MuJoCo: a generator of
    :func:`peer_harness.measuring`'s kind, whose value is a :class:`PeerRun`."""
    try:
        mujoco = importlib.import_module("mujoco")
    except ImportError:
        return PeerRun(NAME, scene.name, "not installed")
    engine = (build_robot if scene.kind == "robot" else build_tower)(mujoco, scene)
    return (yield from measuring(engine, scene, name=NAME, **options))
