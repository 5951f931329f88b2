"""The scenes every peer engine of ``bench_sim.py`` builds, read from OUR scene files.

A peer does not get its own idea of the scene: the humanoid, Talos, Go1 and the 5-box
tower are read from ``config/humanoid_stand.yaml``, ``config/talos_stand.yaml``,
``config/go1_stand.yaml`` and ``config/tower_5.yaml``
(time step, gravity, ground friction, URDF + SRDF posture or the boxes' sizes, masses and
poses, PD gains), so a change to a bundled scene changes every engine's copy of it.

Conventions shared by every peer module (``peers_*.py``):

* poses are ``[x y z qx qy qz qw]`` (scalar last) of the URDF link frame (robots) or of
  the box centre (tower), in W, z up, the ground the plane z = 0;
* a robot's actuated joints hold the scene's posture with PD servos of the scene's ``kp``
  and ``kd`` (no gravity compensation in the peers: our scenes add a g(q) feed-forward,
  which the notes column says);
* robot links collide with the ground only (our robot scenes have no self-collision);
* the URDF's joint ``<dynamics>`` (damping, Coulomb friction) is dropped: ours has none.
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
#: peer scene name -> our scene file (relative to the repository root)
SCENE_FILES = {"humanoid": "config/humanoid_stand.yaml", "talos": "config/talos_stand.yaml",
               "go1": "config/go1_stand.yaml", "tower": "config/tower_5.yaml"}
ROBOT_DATA = "example-robot-data://"
#: A robot stands while its base stays within this of its start height [m].
STAND_TOLERANCE = 0.05
#: The tower stands while every box stays within this of its start position [m].
TOWER_TOLERANCE = 0.01


@dataclass(frozen=True)
class RobotScene:
    """A floating-base robot standing on the ground, as one of our scene files sets it.

    ``urdf_text`` is the URDF given to the peers: every ``package://`` URI replaced by an
    absolute path (each engine's own package lookup differs), no visuals, no joint
    ``<dynamics>`` (:func:`without_joint_dynamics`); ``mass`` is Pinocchio's total mass of
    the URDF [kg], the ``m`` of every engine's ``sum F_z / (m g)``.
    """

    name: str
    urdf: str
    package_dir: str
    urdf_text: str
    base: np.ndarray
    joints: dict
    kp: float
    kd: float
    effort: dict
    friction: float
    h: float
    gravity: float
    mass: float
    notes: list = field(default_factory=list)
    kind: str = "robot"


@dataclass(frozen=True)
class Box:
    """A free box: full side lengths [m], mass [kg], initial pose."""

    name: str
    size: np.ndarray
    mass: float
    pose: np.ndarray


@dataclass(frozen=True)
class TowerScene:
    """Free boxes resting on each other and on the ground (``config/tower_5.yaml``)."""

    name: str
    boxes: tuple
    friction: float
    h: float
    gravity: float
    mass: float
    kind: str = "tower"
    notes: list = field(default_factory=list)


def robot_data_share():
    """The folder ``example-robot-data://`` stands for; FileNotFoundError when missing."""
    from contact_lcp.dynamics.robot_data import robot_data_share as share

    try:
        return share()
    except Exception as e:  # SceneError: the optional wheel is not installed
        raise FileNotFoundError(str(e)) from e


def _resolve(path):
    if path.startswith(ROBOT_DATA):
        rest = path[len(ROBOT_DATA):]
        share = robot_data_share()
        return str(Path(share, "example-robot-data", "robots", rest)) if rest else share
    return str((ROOT / "config" / path).resolve())


def resolved_urdf_text(urdf, package_dir):
    """The URDF text with every ``package://NAME/rest`` replaced by ``package_dir/NAME/rest``."""
    text = Path(urdf).read_text()
    out, pos = [], 0
    while (i := text.find("package://", pos)) >= 0:
        j = text.find('"', i)
        path = Path(package_dir) / text[i + len("package://"):j]
        if not path.is_file():
            raise FileNotFoundError(f"{text[i:j]} is not {path}")
        out += [text[pos:i], str(path)]
        pos = j
    return "".join(out) + text[pos:]


def srdf_state(srdf, name):
    """The SRDF group state ``name``: base pose (7,) and joint name -> position [rad]."""
    root = ET.parse(srdf).getroot()
    for state in root.iter("group_state"):
        if state.get("name") == name:
            values = {j.get("name"): [float(x) for x in j.get("value").split()] for j in state.iter("joint")}
            base = np.array(values.pop("root_joint"))
            return base, {k: v[0] for k, v in values.items()}
    raise ValueError(f"{srdf} has no group_state {name!r}")


def repaired_inertias(urdf_text):
    """``(text, links)``: the URDF with each inertia that is not a physical one (not
    positive definite or against the triangle inequality, e.g. Go1's 1e-6 placeholder on
    its massless root link, all six entries 1e-6) replaced by its diagonal, and the names
    of the links changed. MuJoCo and Drake refuse such an inertia; Pinocchio takes it."""
    root = ET.fromstring(urdf_text)
    fixed = []
    for link in root.iter("link"):
        el = link.find("inertial/inertia")
        if el is None:
            continue
        v = {k: float(el.get(k, 0.0)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        I = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
        ev = np.linalg.eigvalsh(I)
        if (ev[0] > 0 and 2 * ev[-1] <= ev.sum() * (1 + 1e-9)) or not any(v[k] for k in ("ixy", "ixz", "iyz")):
            continue
        for k in ("ixy", "ixz", "iyz"):
            el.set(k, "0")
        fixed.append(link.get("name"))
    return (ET.tostring(root, encoding="unicode") if fixed else urdf_text), fixed


def without_joint_dynamics(urdf_text):
    """``(text, n)``: the URDF without its joints' ``<dynamics>`` (viscous damping and
    Coulomb friction), ``n`` how many there were, and without ``<visual>`` elements. Our
    simulator does not model joint damping or friction, so no peer does either: every
    engine integrates the same system. Visuals do nothing in a physics step (and loading
    Go1's COLLADA meshes took DART and PyBullet seconds)."""
    root = ET.fromstring(urdf_text)
    for link in root.findall("link"):
        for el in link.findall("visual"):
            link.remove(el)
    n = 0
    for joint in root.findall("joint"):
        for el in joint.findall("dynamics"):
            joint.remove(el)
            n += 1
    return ET.tostring(root, encoding="unicode"), n


def effort_limits(urdf_text):
    """joint name -> URDF effort limit [N.m] of revolute/prismatic/continuous joints."""
    out = {}
    for j in ET.fromstring(urdf_text).iter("joint"):
        lim = j.find("limit")
        if j.get("type") in ("revolute", "prismatic", "continuous") and lim is not None:
            out[j.get("name")] = float(lim.get("effort", "inf"))
    return out


def _read(name):
    if name not in SCENE_FILES:
        raise KeyError(f"unknown peer scene {name!r}; expected one of {sorted(SCENE_FILES)}")
    with open(ROOT / SCENE_FILES[name]) as f:
        return yaml.safe_load(f)


def load_robot(name):
    """:class:`RobotScene` of ``humanoid``, ``talos`` or ``go1``; FileNotFoundError
    without example-robot-data (Talos, Go1)."""
    import pinocchio

    data = _read(name)
    (robot,) = data["robots"]
    urdf = _resolve(robot["urdf"])
    package_dir = _resolve(robot["package_dirs"][0]) if robot.get("package_dirs") else str(Path(urdf).parent)
    if not Path(urdf).is_file():
        raise FileNotFoundError(f"{robot['urdf']} is not {urdf}")
    base, joints = np.array([0, 0, 0, 0, 0, 0, 1.0]), {}
    if robot.get("reference_configuration"):
        base, joints = srdf_state(_resolve(robot["srdf"]), robot["reference_configuration"])
    if robot.get("base_pose") is not None:
        base = np.array(robot["base_pose"], dtype=float)
    joints.update(robot.get("initial_joints") or {})
    text, repaired = repaired_inertias(resolved_urdf_text(urdf, package_dir))
    text, dynamics = without_joint_dynamics(text)
    ctrl = robot["controller"]
    return RobotScene(
        name=name, urdf=urdf, package_dir=package_dir, urdf_text=text, base=base, joints=joints,
        kp=float(ctrl["kp"]), kd=float(ctrl["kd"]), effort=effort_limits(text),
        friction=float(data["ground"]["friction"]), h=float(data["time_step"]),
        gravity=float(-data["gravity"][2]),
        mass=float(pinocchio.computeTotalMass(pinocchio.buildModelFromUrdf(urdf, pinocchio.JointModelFreeFlyer()))),
        notes=([f"diagonal inertia on {', '.join(repaired)} (not physical in the URDF)"] if repaired else [])
        + ([f"{dynamics} joint <dynamics> (damping, friction) dropped, as ours has none"] if dynamics else []))


def load_tower(name="tower"):
    """:class:`TowerScene` from ``config/tower_5.yaml`` (every box, as the file sets it)."""
    data = _read(name)
    mu = float(data["ground"]["friction"])
    boxes = []
    for b in data["bodies"]:
        if b["shape"] != "box" or b.get("friction", mu) != mu:
            raise ValueError(f"{SCENE_FILES[name]}: peers build boxes of the ground's friction only, got {b}")
        boxes.append(Box(b["name"], np.array(b["size"], float), float(b["mass"]), np.array(b["pose"], float)))
    return TowerScene(name=name, boxes=tuple(boxes), friction=mu, h=float(data["time_step"]),
                      gravity=float(-data["gravity"][2]), mass=sum(b.mass for b in boxes))


def load(name):
    """The peer scene ``name`` (a key of :data:`SCENE_FILES`)."""
    return load_tower(name) if name == "tower" else load_robot(name)


def quat_to_R(q):
    """Rotation matrix of a unit quaternion ``[qx qy qz qw]``."""
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


class NotAPour(ValueError):
    """A scene :func:`pour_from_simulator` cannot give the peers (not spheres in boxes)."""


@dataclass(frozen=True)
class Sphere:
    """A free sphere: radius [m], mass [kg], initial pose ``[x y z qx qy qz qw]``."""

    name: str
    radius: float
    mass: float
    pose: np.ndarray


@dataclass(frozen=True)
class PourScene:
    """Free spheres poured into fixed boxes (the walls of ``urdf/walled_box.urdf``) on
    the ground, read from OUR simulator of the scene (``bench_large.py``): the spheres'
    radii, masses and poses from its world and state, every wall as a box ``(size (3,),
    pose (7,))`` from its collision model's placements, the ground's friction ``friction``
    and the spheres' ``body_friction``."""

    name: str
    spheres: tuple
    walls: tuple
    friction: float
    body_friction: float
    h: float
    gravity: float
    mass: float
    kind: str = "pour"
    notes: list = field(default_factory=list)


def pour_from_simulator(sim, name):
    """:class:`PourScene` of a :class:`contact_lcp.sim.Simulator` whose free bodies are
    all spheres and whose robots' collision shapes are boxes that do not move (at the
    simulator's current state)."""
    import pinocchio

    world, q = sim.world, sim.q
    spheres = []
    for b in world.bodies:
        if b.shape != "sphere":
            raise NotAPour(f"{name}: a pour has spheres only; body {b.name} is a {b.shape}")
        spheres.append(Sphere(b.name, float(b.size[0]), float(b.mass), np.array(q[b.q_slice])))
    bodies = {b.name for b in world.bodies}
    walls = []
    for gobj, owner, X in zip(world.collision_model.geometryObjects, world.geometry_owner,
                              world.geometry_placements()):
        if owner in bodies or owner == "ground":
            continue
        shape = gobj.geometry
        if type(shape).__name__ != "Box":
            raise NotAPour(f"{name}: walls must be boxes; {gobj.name} is a {type(shape).__name__}")
        quat = pinocchio.Quaternion(X[:3, :3]).coeffs()  # [x y z w]
        walls.append((2.0 * np.asarray(shape.halfSide, dtype=float), np.r_[X[:3, 3], quat]))
    scene = sim.scene
    if scene.ground is None:
        raise NotAPour(f"{name}: a pour needs the ground")
    body_mu = {b.friction for b in world.bodies}
    if len(body_mu) != 1:
        raise NotAPour(f"{name}: the spheres' frictions differ ({sorted(map(str, body_mu))})")
    (mu_b,) = body_mu
    return PourScene(name=name, spheres=tuple(spheres), walls=tuple(walls),
                     friction=float(scene.ground.friction),
                     body_friction=float(scene.contact.friction if mu_b is None else mu_b),
                     h=float(sim.h), gravity=float(-scene.gravity[2]),
                     mass=sum(s.mass for s in spheres))
