"""Read a scene YAML file into a :class:`contact_lcp.sim.scene.Scene`, key by key."""

import math
from pathlib import Path

import yaml

from contact_lcp.contact.models import model_class, model_names
from contact_lcp.exceptions import SceneError
from contact_lcp.sim.scene import (
    CONTROLLERS,
    SHAPES,
    ContactSettings,
    ControllerSpec,
    GroundSpec,
    OutputSettings,
    RobotSceneSpec,
    Scene,
    SolverSettings,
    TrajectorySpec,
)

_SIZE_LEN = {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2, "ellipsoid": 3}


class _Section:
    """A mapping from the file, read with checks; ``where`` names it in messages."""

    def __init__(self, data, where, allowed):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise SceneError(f"{where}: expected a mapping, got {type(data).__name__} {data!r}")
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise SceneError(
                f"{where}: unknown key {unknown[0]!r}; valid keys: {', '.join(sorted(allowed))}"
            )
        self.data, self.where = data, where

    def has(self, key):
        return key in self.data and self.data[key] is not None

    def is_null(self, key):
        """The key is given as null (YAML ``~`` or ``null``, Python None)."""
        return key in self.data and self.data[key] is None

    def raw(self, key, default=None):
        return self.data.get(key, default)

    def number(self, key, default=None, *, positive=False, nonneg=False, required=False):
        if not self.has(key):
            if required:
                raise SceneError(f"{self.where}: missing required key {key!r} (a number)")
            return default
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise SceneError(f"{self.where}.{key}: expected a finite number, got {v!r}")
        if positive and v <= 0:
            raise SceneError(f"{self.where}.{key}: expected a number > 0, got {v!r}")
        if nonneg and v < 0:
            raise SceneError(f"{self.where}.{key}: expected a number >= 0, got {v!r}")
        return float(v)

    def flag(self, key, default):
        v = self.data.get(key, default)
        if not isinstance(v, bool):
            raise SceneError(f"{self.where}.{key}: expected true or false, got {v!r}")
        return v

    def text(self, key, default=None, *, choices=None, required=False):
        if not self.has(key):
            if required:
                raise SceneError(f"{self.where}: missing required key {key!r} (a string)")
            return default
        v = self.data[key]
        if not isinstance(v, str):
            raise SceneError(f"{self.where}.{key}: expected a string, got {v!r}")
        if choices and v not in choices:
            raise SceneError(f"{self.where}.{key}: expected one of {list(choices)}, got {v!r}")
        return v

    def vector(self, key, length, default=None, *, required=False):
        if not self.has(key):
            if required:
                raise SceneError(f"{self.where}: missing required key {key!r} ({length} numbers)")
            return default
        v = self.data[key]
        ok = isinstance(v, (list, tuple)) and (length is None or len(v) == length)
        ok = ok and all(
            not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) for x in v
        )
        if not ok:
            want = f"{length} finite numbers" if length else "a list of finite numbers"
            raise SceneError(f"{self.where}.{key}: expected {want}, got {v!r}")
        return tuple(float(x) for x in v)


ROBOT_DATA = "example-robot-data://"


def _resolve(base, path):
    """A path relative to the scene file, or ``example-robot-data://<robot>_data/...``
    inside the optional example-robot-data wheel (``example-robot-data://`` alone is its
    share folder, the package dir for its ``package://`` URIs)."""
    if path.startswith(ROBOT_DATA):
        from contact_lcp.dynamics.robot_data import robot_data_share

        rest = path[len(ROBOT_DATA):]
        share = robot_data_share()
        return str(Path(share, "example-robot-data", "robots", rest)) if rest else share
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else (base / p).resolve())


def _gains(sec, key, default):
    v = sec.raw(key, default)
    if isinstance(v, dict):
        for j, g in v.items():
            if isinstance(g, bool) or not isinstance(g, (int, float)) or g < 0:
                raise SceneError(f"{sec.where}.{key}.{j}: expected a number >= 0, got {g!r}")
        return {str(j): float(g) for j, g in v.items()}
    return sec.number(key, default, nonneg=True)


def _trajectory(data, where, base):
    sec = _Section(data, where, {"type", "joints", "file"})
    kind = sec.text("type", required=True, choices=("sinusoid", "csv"))
    if kind == "csv":
        return TrajectorySpec("csv", csv=_resolve(base, sec.text("file", required=True)))
    joints = _Section(sec.raw("joints"), where + ".joints", set(sec.raw("joints") or {}))
    sinus = {}
    for name in joints.data:
        s = _Section(joints.data[name], f"{where}.joints.{name}", {"amplitude", "period", "phase"})
        sinus[str(name)] = (
            s.number("amplitude", required=True),
            s.number("period", required=True, positive=True),
            s.number("phase", 0.0),
        )
    if not sinus:
        raise SceneError(f"{where}.joints: expected at least one joint with amplitude and period")
    return TrajectorySpec("sinusoid", sinusoids=sinus)


def _controller(data, where, base):
    sec = _Section(data, where, {"type", "kp", "kd", "gravity_compensation", "trajectory"})
    traj = sec.raw("trajectory")
    return ControllerSpec(
        kind=sec.text("type", "pd", choices=CONTROLLERS),
        kp=_gains(sec, "kp", 400.0),
        kd=_gains(sec, "kd", 20.0),
        gravity_compensation=sec.flag("gravity_compensation", True),
        trajectory=None if traj is None else _trajectory(traj, where + ".trajectory", base),
    )


def _robot(data, where, base):
    from contact_lcp.dynamics import RobotSpec

    keys = {"name", "urdf", "package_dirs", "srdf", "floating_base", "base_pose",
            "initial_joints", "reference_configuration", "locked_joints", "controller"}
    sec = _Section(data, where, keys)
    name = sec.text("name", required=True)
    urdf = _resolve(base, sec.text("urdf", required=True))
    dirs = sec.raw("package_dirs", []) or []
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise SceneError(f"{where}.package_dirs: expected a list of paths, got {dirs!r}")
    init = sec.raw("initial_joints", {}) or {}
    if not isinstance(init, dict):
        raise SceneError(f"{where}.initial_joints: expected a joint -> position mapping, got {init!r}")
    for j, x in init.items():
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise SceneError(f"{where}.initial_joints.{j}: expected a finite number, got {x!r}")
    locked = sec.raw("locked_joints", []) or []
    if not isinstance(locked, list) or not all(isinstance(j, str) for j in locked):
        raise SceneError(f"{where}.locked_joints: expected a list of joint names, got {locked!r}")
    srdf = sec.text("srdf")
    spec = RobotSpec(
        name=name,
        urdf=urdf,
        package_dirs=tuple(_resolve(base, d) for d in dirs),
        srdf=None if srdf is None else _resolve(base, srdf),
        floating_base=sec.flag("floating_base", True),
        base_pose=sec.vector("base_pose", 7, None),
        initial_joints={str(j): float(x) for j, x in init.items()},
        reference_configuration=sec.text("reference_configuration"),
        locked_joints=tuple(locked),
    )
    return RobotSceneSpec(spec, _controller(sec.raw("controller"), where + ".controller", base))


def _body(data, where):
    from contact_lcp.dynamics import BodySpec

    sec = _Section(data, where, {"name", "shape", "size", "mass", "pose", "velocity", "friction"})
    shape = sec.text("shape", required=True, choices=SHAPES)
    size = sec.vector("size", _SIZE_LEN[shape], required=True)
    if any(s <= 0 for s in size):
        raise SceneError(f"{where}.size: expected positive dimensions, got {list(size)}")
    return BodySpec(
        name=sec.text("name", required=True),
        shape=shape,
        size=size,
        mass=sec.number("mass", required=True, positive=True),
        pose=sec.vector("pose", 7, required=True),
        velocity=sec.vector("velocity", 6, (0.0,) * 6),
        friction=sec.number("friction", None, nonneg=True),
    )


def scene_from_dict(data, base_dir=".", path=None):
    """Build a :class:`Scene` from an already parsed mapping (paths relative to ``base_dir``)."""
    base = Path(base_dir)
    top = _Section(data, "scene", {"time_step", "duration", "gravity", "ground", "robots",
                                   "bodies", "contact", "solver", "output", "loops"})
    ground = None
    if top.raw("ground", {}) is not False:
        g = _Section(top.raw("ground"), "ground", {"height", "friction"})
        ground = GroundSpec(g.number("height", 0.0), g.number("friction", 0.8, nonneg=True))
    robots = top.raw("robots", []) or []
    bodies = top.raw("bodies", []) or []
    for key, items in (("robots", robots), ("bodies", bodies)):
        if not isinstance(items, list):
            raise SceneError(f"scene.{key}: expected a list, got {items!r}")
    c = _Section(top.raw("contact"), "contact", {f.name for f in ContactSettings.__dataclass_fields__.values()})
    D = ContactSettings()
    model_options = c.raw("options", {}) or {}
    if not isinstance(model_options, dict):
        raise SceneError(f"contact.options: expected a mapping, got {model_options!r}")
    contact = ContactSettings(
        model=c.text("model", D.model, choices=model_names()),
        options=dict(model_options),
        friction_directions=int(c.number("friction_directions", D.friction_directions,
                                         positive=True)),
        friction_frame=c.text("friction_frame", D.friction_frame, choices=("slip", "fixed")),
        friction=c.number("friction", D.friction, nonneg=True),
        reduction_distance=c.number("reduction_distance", D.reduction_distance, nonneg=True),
        remove_interior=c.flag("remove_interior", D.remove_interior),
        flat_tolerance=c.number("flat_tolerance", D.flat_tolerance, nonneg=True),
        max_points_per_pair=(None if c.is_null("max_points_per_pair")
                             else int(c.number("max_points_per_pair", D.max_points_per_pair,
                                               positive=True))),
        meshes=c.text("meshes", D.meshes, choices=("convex", "exact")),
        self_collision=c.flag("self_collision", D.self_collision),
        activation_distance=c.number("activation_distance", D.activation_distance, nonneg=True),
        max_approach_speed=c.number("max_approach_speed", D.max_approach_speed, positive=True),
        stabilization=c.number("stabilization", D.stabilization, nonneg=True),
        max_correction_speed=c.number("max_correction_speed", None, positive=True),
        projection_depth=(None if c.is_null("projection_depth")
                          else c.number("projection_depth", D.projection_depth, nonneg=True)),
        joint_limits=c.flag("joint_limits", D.joint_limits),
        max_initial_penetration=c.number("max_initial_penetration", D.max_initial_penetration,
                                         nonneg=True),
        max_contacts=int(c.number("max_contacts", D.max_contacts, positive=True)),
    )
    known = model_class(contact.model).OPTIONS
    unknown = sorted(set(contact.options) - set(known))
    if unknown:
        raise SceneError(f"contact.options: unknown option(s) {unknown} for model "
                         f"{contact.model!r}; valid options: {sorted(known)}")
    if contact.friction_directions < 3:
        raise SceneError(f"contact.friction_directions: expected >= 3, got {contact.friction_directions}")
    if contact.stabilization > 1:
        raise SceneError(f"contact.stabilization: expected a gain in [0, 1], got {contact.stabilization}")
    s = _Section(top.raw("solver"), "solver", {"method", "options", "two_step", "warm_start", "drop_unloaded",
                                              "fallback"})
    from contact_lcp.lcp import METHODS

    options = s.raw("options", {}) or {}
    if not isinstance(options, dict):
        raise SceneError(f"solver.options: expected a mapping, got {options!r}")
    solver = SolverSettings(
        method=s.text("method", "robust", choices=sorted(METHODS)),
        options=dict(options),
        two_step=s.flag("two_step", True),
        warm_start=s.flag("warm_start", True),
        drop_unloaded=s.flag("drop_unloaded", False),
        fallback=s.flag("fallback", True),
    )
    o = _Section(top.raw("output"), "output", {"wrench_links", "imu_links"})
    link_lists = {}
    for key in ("wrench_links", "imu_links"):
        links = o.raw(key, []) or []
        if not isinstance(links, list) or not all(isinstance(x, str) for x in links):
            raise SceneError(f"output.{key}: expected a list of link names, got {links!r}")
        link_lists[key] = tuple(links)
    return Scene(
        path=path,
        time_step=top.number("time_step", 1e-3, positive=True),
        duration=top.number("duration", 5.0, positive=True),
        gravity=top.vector("gravity", 3, (0.0, 0.0, -9.81)),
        ground=ground,
        robots=tuple(_robot(r, f"robots[{i}]", base) for i, r in enumerate(robots)),
        bodies=tuple(_body(b, f"bodies[{i}]") for i, b in enumerate(bodies)),
        contact=contact,
        solver=solver,
        output=OutputSettings(**link_lists),
        loops=_loops(top.raw("loops", []) or []),
    )


def _loops(items):
    """``loops:`` entries -> LoopSpec; link names are checked when the world is built."""
    from contact_lcp.dynamics.loops import LOOP_TYPES, WORLD, LoopSpec

    if not isinstance(items, list):
        raise SceneError(f"scene.loops: expected a list, got {items!r}")
    specs = []
    for i, data in enumerate(items):
        where = f"loops[{i}]"
        sec = _Section(data, where, {"name", "type", "link_a", "link_b", "point_a", "point_b"})
        specs.append(LoopSpec(
            name=sec.text("name", f"loop_{i}"),
            type=sec.text("type", "point", choices=LOOP_TYPES),
            link_a=sec.text("link_a", required=True),
            link_b=sec.text("link_b", WORLD),
            point_a=sec.vector("point_a", 3, (0.0, 0.0, 0.0)),
            point_b=sec.vector("point_b", 3, None),
        ))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise SceneError(f"scene.loops: loop names must be unique; received {names}")
    return tuple(specs)


def load_scene(path):
    """Read and check a scene file.

    Parameters
    ----------
    path : str or Path
        A YAML scene file.

    Returns
    -------
    Scene

    Raises
    ------
    SceneError
        Missing file, invalid YAML, or any key/value that does not fit (the message names it).
    """
    p = Path(path)
    if not p.is_file():
        raise SceneError(f"scene file not found: expected an existing YAML file, got {str(p)!r}")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise SceneError(f"{p}: not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise SceneError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    try:
        return scene_from_dict(data, base_dir=p.resolve().parent, path=str(p.resolve()))
    except SceneError as e:
        raise SceneError(f"{p}: {e}") from None
