"""Peer simulators for ``bench_sim.py``: Talos standing in MuJoCo and in PyBullet at 1 kHz.

Both load the same files as our simulator (example-robot-data's ``talos_reduced.urdf``,
the SRDF's ``half_sitting`` posture), put Talos on a floor with a free-floating base and
hold the posture with position servos on every actuated joint. Neither uses our
simulator (only ``contact_lcp.dynamics.robot_data`` to find the files); each is optional
and reports ``'not installed'`` when its package is missing.

Settings that differ from our simulator, on purpose, and are written here once:

* self-collision is off in both (our Talos scene only has foot-ground contacts);
* MuJoCo collides the convex hulls of the collision meshes (its only mesh mode) with a
  plane, soft contacts, default solver (Newton, pyramidal cone); PyBullet uses convex
  hulls too, its default sequential-impulse solver (50 iterations);
* MuJoCo servos are ``position`` actuators, ``kp`` [N.m/rad] and ``kv`` [N.m.s/rad],
  force-limited to the URDF effort limits; PyBullet's are ``POSITION_CONTROL`` motors
  (a velocity constraint in its solver, its default gains) with the same force limits.

Timing: after an untimed settle, ``duration`` seconds of simulated time are run in
``chunks`` equal chunks, each timed with ``time.perf_counter``; the step time is the
median over chunks. Real-time factor = simulated time / wall time.
"""

import dataclasses
import importlib
import importlib.metadata
import os
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Talos URDF used by every simulator of the benchmark (example-robot-data).
TALOS_URDF = "talos_reduced.urdf"
#: Nominal standing check: the base must stay within this of its half-sitting height [m].
STAND_TOLERANCE = 0.05


@dataclass(frozen=True)
class TalosFiles:
    """Where Talos lives: URDF, SRDF, and the folder ``package://NAME/rest`` is under."""

    urdf: str
    srdf: str
    package_dir: str


@dataclass(frozen=True)
class PeerRun:
    """One peer's measurement of Talos standing.

    Attributes
    ----------
    name : str
        'mujoco' or 'pybullet'.
    status : str
        'ok', 'not installed', or 'failed: <reason>'.
    version : str
        The package version ('' when not installed).
    time_step : float
        h [s].
    sim_time : float
        Timed simulated time [s].
    step_time : float
        Median wall time per step over the chunks [s].
    steps_per_s, rtf : float
        ``1 / step_time`` [1/s] and ``h / step_time`` (real-time factor).
    base_height : float
        Base height at the end [m] (half-sitting: ``nominal_height``).
    nominal_height : float
        Base height of the half-sitting posture with the soles on the floor [m].
    stands : bool
        The base stayed within ``STAND_TOLERANCE`` of ``nominal_height`` at every chunk end.
    num_contacts : int
        Contacts reported by the peer at the end.
    notes : str
    """

    name: str
    status: str
    version: str = ""
    time_step: float = float("nan")
    sim_time: float = float("nan")
    step_time: float = float("nan")
    steps_per_s: float = float("nan")
    rtf: float = float("nan")
    base_height: float = float("nan")
    nominal_height: float = float("nan")
    stands: bool = False
    num_contacts: int = 0
    notes: str = ""

    def as_row(self):
        """A dict for the CSV/table."""
        return dataclasses.asdict(self)


def talos_files():
    """Locate Talos in the installed example-robot-data (``contact_lcp.dynamics.robot_data``).

    Returns
    -------
    TalosFiles

    Raises
    ------
    FileNotFoundError
        example-robot-data is not installed or has no Talos.
    """
    from contact_lcp.dynamics.robot_data import talos_paths

    try:
        urdf, srdf, package_dir = talos_paths(TALOS_URDF[: -len(".urdf")])
    except Exception as e:  # SceneError: example-robot-data missing
        raise FileNotFoundError(str(e)) from e
    return TalosFiles(str(urdf), str(srdf), str(package_dir))


def half_sitting(srdf):
    """The SRDF's ``half_sitting`` state.

    Returns
    -------
    base : (7,) ndarray
        Base pose [x y z qx qy qz qw] (m, unit quaternion).
    joints : dict
        joint name -> position [rad].
    """
    root = ET.parse(srdf).getroot()
    for state in root.iter("group_state"):
        if state.get("name") == "half_sitting":
            values = {j.get("name"): [float(x) for x in j.get("value").split()] for j in state.iter("joint")}
            base = np.array(values.pop("root_joint"))
            return base, {name: v[0] for name, v in values.items()}
    raise ValueError(f"{srdf} has no group_state 'half_sitting'")


def resolved_urdf(files):
    """The URDF text with every ``package://NAME/rest`` replaced by ``package_dir/NAME/rest``."""
    text = Path(files.urdf).read_text()
    out, pos = [], 0
    while (i := text.find("package://", pos)) >= 0:
        j = text.find('"', i)
        path = Path(files.package_dir) / text[i + len("package://"):j]
        if not path.is_file():
            raise FileNotFoundError(f"{text[i:j]} is not {path}")
        out += [text[pos:i], str(path)]
        pos = j
    return "".join(out) + text[pos:]


def effort_limits(urdf_text):
    """joint name -> URDF effort limit [N.m] for revolute/prismatic joints."""
    root = ET.fromstring(urdf_text)
    out = {}
    for j in root.iter("joint"):
        lim = j.find("limit")
        if j.get("type") in ("revolute", "prismatic", "continuous") and lim is not None:
            out[j.get("name")] = float(lim.get("effort", "inf"))
    return out


def _time_chunks(step, n_steps, chunks, after_chunk):
    per = max(1, n_steps // chunks)
    walls = []
    for _ in range(chunks):
        t0 = time.perf_counter()
        for _ in range(per):
            step()
        walls.append((time.perf_counter() - t0) / per)
        after_chunk()
    return per * chunks, float(np.median(walls))


def _finish(name, version, h, n, step_time, heights, nominal, ncon, notes):
    return PeerRun(
        name=name, status="ok", version=version, time_step=h, sim_time=n * h,
        step_time=step_time, steps_per_s=1.0 / step_time, rtf=h / step_time,
        base_height=heights[-1], nominal_height=nominal,
        stands=bool(np.all(np.abs(np.asarray(heights) - nominal) < STAND_TOLERANCE)),
        num_contacts=ncon, notes=notes,
    )


def run_mujoco(*, duration=5.0, settle=0.5, h=1e-3, chunks=5, kp=2000.0, kv=50.0, friction=0.8):
    """Talos standing in MuJoCo (URDF importer via ``MjSpec``), timed over ``duration`` [s]."""
    try:
        mujoco = importlib.import_module("mujoco")
    except ImportError:
        return PeerRun("mujoco", "not installed")
    files = talos_files()
    base, joints = half_sitting(files.srdf)
    text = resolved_urdf(files)
    effort = effort_limits(text)
    compiler = ('<mujoco><compiler discardvisual="true" balanceinertia="true" '
                'fusestatic="false" strippath="false"/></mujoco>')
    spec = mujoco.MjSpec.from_string(text.replace("</robot>", compiler + "</robot>"))
    spec.option.timestep = h
    spec.worldbody.first_body().add_freejoint(name="root_joint")
    for g in spec.geoms:  # robot geoms touch the floor only
        g.contype, g.conaffinity = 1, 0
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                            contype=0, conaffinity=1, friction=[friction, 0.005, 1e-4])
    hinges = [j.name for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_HINGE]
    for name in hinges:
        act = spec.add_actuator(name=name + "_servo", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=kp, kv=kv)
        act.forcelimited = True
        act.forcerange = [-effort[name], effort[name]]
    m = spec.compile()
    d = mujoco.MjData(m)
    d.qpos[:3] = base[:3]
    d.qpos[3:7] = [base[6], base[3], base[4], base[5]]  # MuJoCo quaternions are w-first
    for name in hinges:
        d.qpos[m.jnt_qposadr[m.joint(name).id]] = joints.get(name, 0.0)
    d.ctrl[:] = [d.qpos[m.jnt_qposadr[m.joint(n).id]] for n in hinges]
    for _ in range(int(round(settle / h))):
        mujoco.mj_step(m, d)
    heights = []
    n, step_time = _time_chunks(lambda: mujoco.mj_step(m, d), int(round(duration / h)), chunks,
                                lambda: heights.append(float(d.qpos[2])))
    notes = f"{len(hinges)} position servos kp={kp:g} kv={kv:g}; {m.ngeom - 1} convex-hull geoms; no self-collision"
    return _finish("mujoco", mujoco.__version__, h, n, step_time, heights, float(base[2]), int(d.ncon), notes)


def run_pybullet(*, duration=5.0, settle=0.5, h=1e-3, chunks=5, friction=0.8):
    """Talos standing in PyBullet (DIRECT, ``POSITION_CONTROL``), timed over ``duration`` [s]."""
    try:
        p = importlib.import_module("pybullet")
    except ImportError:
        return PeerRun("pybullet", "not installed")
    files = talos_files()
    base, joints = half_sitting(files.srdf)
    text = resolved_urdf(files)
    with tempfile.TemporaryDirectory() as tmp:
        urdf = os.path.join(tmp, "talos.urdf")
        Path(urdf).write_text(text)
        c = p.connect(p.DIRECT)
        try:
            return _pybullet_stand(p, c, urdf, base, joints, duration, settle, h, chunks, friction)
        finally:
            p.disconnect(physicsClientId=c)


def _pybullet_stand(p, c, urdf, base, joints, duration, settle, h, chunks, friction):
    p.setGravity(0, 0, -9.81, physicsClientId=c)
    p.setTimeStep(h, physicsClientId=c)
    plane = p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=c), physicsClientId=c)
    p.changeDynamics(plane, -1, lateralFriction=friction, physicsClientId=c)
    robot = p.loadURDF(urdf, list(base[:3]), list(base[3:]), useFixedBase=False,
                       flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
    idx, target, force = [], [], []
    for j in range(p.getNumJoints(robot, physicsClientId=c)):
        info = p.getJointInfo(robot, j, physicsClientId=c)
        if info[2] == p.JOINT_REVOLUTE:
            idx.append(j)
            target.append(joints.get(info[1].decode(), 0.0))
            force.append(info[10])
            p.resetJointState(robot, j, target[-1], physicsClientId=c)
        p.changeDynamics(robot, j, lateralFriction=friction, physicsClientId=c)
    p.setJointMotorControlArray(robot, idx, p.POSITION_CONTROL, targetPositions=target,
                                forces=force, physicsClientId=c)
    com_B = np.array(p.getDynamicsInfo(robot, -1, physicsClientId=c)[3])

    def base_height():  # PyBullet reports the base's centre of mass: go back to the link frame
        pos, quat = p.getBasePositionAndOrientation(robot, physicsClientId=c)
        R = np.array(p.getMatrixFromQuaternion(quat)).reshape(3, 3)
        return float(pos[2] - R[2] @ com_B)

    def step():
        p.stepSimulation(physicsClientId=c)

    for _ in range(int(round(settle / h))):
        step()
    heights = []
    n, step_time = _time_chunks(step, int(round(duration / h)), chunks, lambda: heights.append(base_height()))
    ncon = len(p.getContactPoints(bodyA=robot, physicsClientId=c))
    notes = f"{len(idx)} POSITION_CONTROL motors (default gains); convex hulls; no self-collision"
    version = importlib.metadata.version("pybullet")
    return _finish("pybullet", version, h, n, step_time, heights, float(base[2]), ncon, notes)


#: peer name -> function(**options) -> PeerRun
PEERS = {"mujoco": run_mujoco, "pybullet": run_pybullet}


def run_peers(names=tuple(PEERS), **options):
    """Run the named peers; a peer that raises is reported as ``'failed: ...'``, not raised."""
    out = []
    for name in names:
        try:
            out.append(PEERS[name](**options))
        except Exception as e:  # a broken peer install must not stop the benchmark
            out.append(PeerRun(name, f"failed: {type(e).__name__}: {e}"))
    return out


if __name__ == "__main__":
    for run in run_peers():
        print(run)
