"""Read a scene YAML file into a :class:`contact_lcp.sim.scene.Scene`, key by key.

Every value is checked here, at load (see :mod:`contact_lcp.sim.scene_fields`); the YAML
dialect and the key sets are :mod:`contact_lcp.sim.scene_file`'s.
"""

from pathlib import Path

import yaml

from contact_lcp.contact.min_norm import FORCE_DISTRIBUTIONS
from contact_lcp.contact.models import model_class, model_names
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import scene_file as keys
from contact_lcp.sim.scene_fields import (Section, check_options, gains, is_finite_number,
                                          solver_option_defaults)
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


def _trajectory(data, where, base):
    sec = Section(data, where, keys.TRAJECTORY_KEYS)
    kind = sec.text("type", required=True, choices=("sinusoid", "csv"))
    if kind == "csv":
        return TrajectorySpec("csv", csv=_resolve(base, sec.text("file", required=True)))
    joints = Section(sec.raw("joints"), where + ".joints", set(sec.raw("joints") or {}))
    sinus = {}
    for name in joints.data:
        s = Section(joints.data[name], f"{where}.joints.{name}", keys.SINUSOID_KEYS)
        sinus[str(name)] = (
            s.number("amplitude", required=True),
            s.number("period", required=True, positive=True),
            s.number("phase", 0.0),
        )
    if not sinus:
        raise SceneError(f"{where}.joints: expected at least one joint with amplitude and period")
    return TrajectorySpec("sinusoid", sinusoids=sinus)


def _controller(data, where, base):
    sec = Section(data, where, keys.CONTROLLER_KEYS)
    traj = sec.raw("trajectory")
    return ControllerSpec(
        kind=sec.text("type", "pd", choices=CONTROLLERS),
        kp=gains(sec, "kp", 400.0),
        kd=gains(sec, "kd", 20.0),
        gravity_compensation=sec.flag("gravity_compensation", True),
        trajectory=None if traj is None else _trajectory(traj, where + ".trajectory", base),
    )


def _robot(data, where, base):
    from contact_lcp.dynamics import RobotSpec

    sec = Section(data, where, keys.ROBOT_KEYS)
    name = sec.text("name", required=True)
    urdf = _resolve(base, sec.text("urdf", required=True))
    dirs = sec.raw("package_dirs", []) or []
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise SceneError(f"{where}.package_dirs: expected a list of paths, got {dirs!r}")
    init = sec.raw("initial_joints", {}) or {}
    if not isinstance(init, dict):
        raise SceneError(f"{where}.initial_joints: expected a joint -> position mapping, got {init!r}")
    for j, x in init.items():
        if not is_finite_number(x):
            raise SceneError(f"{where}.initial_joints.{j}: expected a finite number, got {x!r}")
    xacro_args = sec.raw("xacro_args", {}) or {}
    if not isinstance(xacro_args, dict) or not all(
            isinstance(v, (str, int, float, bool)) for v in xacro_args.values()):
        raise SceneError(f"{where}.xacro_args: expected a mapping of xacro argument names to "
                         f"values, got {xacro_args!r}")
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
        base_pose=sec.pose("base_pose"),
        initial_joints={str(j): float(x) for j, x in init.items()},
        reference_configuration=sec.text("reference_configuration"),
        locked_joints=tuple(locked),
        xacro_args={str(k): str(v) for k, v in xacro_args.items()},
    )
    return RobotSceneSpec(spec, _controller(sec.raw("controller"), where + ".controller", base))


def _body(data, where):
    from contact_lcp.dynamics import BodySpec

    sec = Section(data, where, keys.BODY_KEYS)
    shape = sec.text("shape", required=True, choices=SHAPES)
    size = sec.vector("size", _SIZE_LEN[shape], required=True)
    if any(s <= 0 for s in size):
        raise SceneError(f"{where}.size: expected positive dimensions, got {list(size)}")
    return BodySpec(
        name=sec.text("name", required=True),
        shape=shape,
        size=size,
        mass=sec.number("mass", required=True, positive=True),
        pose=sec.pose("pose", required=True),
        velocity=sec.vector("velocity", 6, (0.0,) * 6),
        friction=sec.number("friction", None, nonneg=True),
    )


def scene_from_dict(data, base_dir=".", path=None):
    """Build a :class:`Scene` from an already parsed mapping (paths relative to ``base_dir``)."""
    base = Path(base_dir)
    top = Section(data, "scene", keys.TOP_KEYS)
    ground = None
    if top.raw("ground", {}) is not False:
        g = Section(top.raw("ground"), "ground", keys.GROUND_KEYS)
        ground = GroundSpec(g.number("height", 0.0), g.number("friction", 0.8, nonneg=True))
    robots = top.raw("robots", []) or []
    bodies = top.raw("bodies", []) or []
    for key, items in (("robots", robots), ("bodies", bodies)):
        if not isinstance(items, list):
            raise SceneError(f"scene.{key}: expected a list, got {items!r}")
    c = Section(top.raw("contact"), "contact", keys.contact_keys())
    D = ContactSettings()
    model = c.text("model", D.model, choices=model_names())
    contact = ContactSettings(
        model=model,
        options=check_options("contact.options", c.raw("options", {}) or {},
                              model_class(model).OPTIONS, f"model {model!r}"),
        friction_directions=c.integer("friction_directions", D.friction_directions, minimum=3),
        friction_frame=c.text("friction_frame", D.friction_frame, choices=("slip", "fixed")),
        force_distribution=c.text("force_distribution", D.force_distribution,
                                  choices=FORCE_DISTRIBUTIONS),
        friction=c.number("friction", D.friction, nonneg=True),
        reduction_distance=c.number("reduction_distance", D.reduction_distance, nonneg=True),
        remove_interior=c.flag("remove_interior", D.remove_interior),
        flat_tolerance=c.number("flat_tolerance", D.flat_tolerance, nonneg=True),
        max_points_per_pair=(None if c.is_null("max_points_per_pair")
                             else c.integer("max_points_per_pair", D.max_points_per_pair,
                                            minimum=1)),
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
        max_contacts=c.integer("max_contacts", D.max_contacts, minimum=1),
        islands=c.flag("islands", D.islands),
        sleep=c.flag("sleep", D.sleep),
        sleep_speed=c.number("sleep_speed", D.sleep_speed, positive=True),
        sleep_time=c.number("sleep_time", D.sleep_time, positive=True),
    )
    if contact.stabilization > 1:
        raise SceneError(f"contact.stabilization: expected a gain in [0, 1], got {contact.stabilization}")
    s = Section(top.raw("solver"), "solver", keys.SOLVER_KEYS)
    from contact_lcp.lcp import METHODS

    method = s.text("method", "robust", choices=sorted(METHODS))
    solver = SolverSettings(
        method=method,
        options=solver_options(method, s.raw("options", {}) or {}),
        two_step=s.flag("two_step", True),
        warm_start=s.flag("warm_start", True),
        drop_unloaded=s.flag("drop_unloaded", False),
        fallback=s.flag("fallback", True),
    )
    o = Section(top.raw("output"), "output", keys.OUTPUT_KEYS)
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


def solver_options(method, options):
    """``options`` checked for LCP method ``method``: known names (the valid ones are
    listed otherwise) and values of the right kind."""
    out = check_options("solver.options", options, solver_option_defaults(method),
                        f"method {method!r}")
    limit = out.get("time_limit")
    if limit is not None and not limit > 0:
        raise SceneError(f"solver.options.time_limit: expected a number of seconds > 0 "
                         f"(a step's LCP solves together; unset: none), got {limit!r}")
    return out


def _loops(items):
    """``loops:`` entries -> LoopSpec; link names are checked when the world is built."""
    from contact_lcp.dynamics.loops import LOOP_TYPES, WORLD, LoopSpec

    if not isinstance(items, list):
        raise SceneError(f"scene.loops: expected a list, got {items!r}")
    specs = []
    for i, data in enumerate(items):
        where = f"loops[{i}]"
        sec = Section(data, where, keys.LOOP_KEYS)
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
        data = keys.parse_yaml(p.read_text(encoding="utf-8"))
    except (yaml.YAMLError, ValueError, RecursionError) as e:  # incl. UnicodeDecodeError
        raise SceneError(f"{p}: not valid YAML: {e}") from None
    except OSError as e:
        raise SceneError(f"{p}: cannot be read: {e.strerror}") from None
    if not isinstance(data, dict):
        raise SceneError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    try:
        return scene_from_dict(data, base_dir=p.resolve().parent, path=str(p.resolve()))
    except SceneError as e:
        raise SceneError(f"{p}: {e}") from None


def robot_entry(data, where="robot", base_dir="."):
    """One ``robots:`` entry (a mapping with the scene file's robot keys) as a
    :class:`~contact_lcp.sim.scene.RobotSceneSpec`, checked as the loader checks it;
    paths are relative to ``base_dir``."""
    return _robot(data, where, Path(base_dir))


def body_entry(data, where="body"):
    """One ``bodies:`` entry (a mapping with the scene file's body keys) as a
    :class:`~contact_lcp.dynamics.BodySpec`, checked as the loader checks it."""
    return _body(data, where)
