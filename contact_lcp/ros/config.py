"""The node's parameters: one table, one validator, one frozen :class:`NodeConfig`.

Plain Python (no rclpy), so the rules are tested without DDS. ``node.py`` declares every
entry of :data:`PARAMETERS` and calls :func:`check` from its on-set-parameters callback,
so start-up values (``--ros-args -p``, a params file) and runtime changes
(``ros2 param set``, the SetParameters service) go through the same rules.
"""

import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

PACKAGE = "contact_lcp"
DEFAULT_SCENE = "humanoid_stand.yaml"
COMMAND_MODES = ("effort", "position", "velocity")


@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter.

    ``kind`` is the Python type the value must have (``float`` also takes an ``int``,
    since ``-p publish_rate:=100`` arrives as an integer); ``default=None`` means "not
    set" (string arrays, whose empty default ROS cannot type). ``rebuild`` is true when a
    change needs a new simulator (the node builds it inside the callback and rejects the
    change with the builder's message if that fails).
    """

    name: str
    default: object
    kind: type
    description: str
    rebuild: bool = False


PARAMETERS = (
    ParameterSpec(
        "scene", "", str,
        "Scene YAML file. Empty: the package's config/humanoid_stand.yaml. A relative path "
        "is tried against the working directory, then the package's config/ folder. Only "
        "a file that is recognisably a scene is read (.yaml/.yml, at most 1 MiB, scene "
        "keys only); any other path gets one answer that quotes nothing from it.", True),
    ParameterSpec(
        "robot_description", "", str,
        "URDF XML replacing the scene robot's URDF. Empty: the scene's own.", True),
    ParameterSpec(
        "robot_description_topic", "", str,
        "Topic (std_msgs/String, transient local) whose URDF replaces the first robot's, "
        "as robot_description does, each time a different one arrives. Empty: off. "
        "Start-up only."),
    ParameterSpec("time_step", 0.0, float, "Time step h [s] in (0, 0.1]. 0: the scene's.", True),
    ParameterSpec("solver_method", "", str,
                  "LCP method (robust, lemke, lexicographic, revised, murty, pgs, ppm). "
                  "Empty: the scene's.", True),
    ParameterSpec(
        "real_time_factor", 1.0, float,
        "Target sim seconds per wall second. <= 0: as fast as possible."),
    ParameterSpec(
        "publish_rate", 100.0, float,
        "Rate [Hz] of the joint states, in (0, 1000], in sim time (every 1/rate s of /clock, as "
        "Gazebo's update_rate); on the wall clock while paused."),
    ParameterSpec(
        "clock_rate", 100.0, float,
        "Rate [Hz] of /clock, in (0, 1000], in sim time as publish_rate (gazebo_ros publishes it at "
        "10 Hz by default; each message costs as much as a joint state)."),
    ParameterSpec(
        "sensor_rate", 100.0, float,
        "Rate [Hz] of the odometry, IMUs, /tf and contact wrenches, in (0, 1000], in sim time as "
        "publish_rate (lower than publish_rate: they cost more per message)."),
    ParameterSpec(
        "publisher_process", False, bool,
        "Send /clock, joint states, odometry, IMUs and wrenches from a helper process "
        "(contact_lcp_relay), so "
        "that DDS's cost per message (~50 us) is not spent between two steps: for "
        "publish_rate near 1 kHz. The helper reads a ring of 1024 messages every ms; if it "
        "falls that far behind it skips the oldest and counts them (relay_dropped on "
        "/diagnostics); if it dies, the node publishes them itself again within a second. "
        "Start-up only."),
    ParameterSpec(
        "marker_rate", 10.0, float,
        "Wall-clock rate [Hz] of ~/contact_markers (heavier than the rest), in [0, 100]. "
        "0: off."),
    ParameterSpec(
        "wrench_links", None, list,
        "Links with a ~/contact_wrenches/<link> topic. Not set: the scene's output.wrench_links."),
    ParameterSpec(
        "joints", None, list,
        "Joints addressed by ~/commands, in order. Not set: all actuated joints."),
    ParameterSpec(
        "command_mode", "position", str,
        "How ~/commands values are read: effort [N.m], position [rad] or velocity [rad/s]."),
    ParameterSpec(
        "kp", 0.0, float,
        "Position gain [N.m/rad] for position commands and trajectories. 0: the scene's."),
    ParameterSpec(
        "kd", 0.0, float,
        "Velocity gain [N.m.s/rad] for position/velocity commands. 0: the scene's."),
    ParameterSpec("paused", False, bool,
                  "Physics paused (also ~/set_paused); reads true after a failed step."),
    ParameterSpec(
        "joint_states_topic", "joint_states", str,
        "Topic of each robot's joint states, in its namespace (relative). With ros2_control "
        "(topic_based_ros2_control) set another, e.g. sim_joint_states, so that "
        "joint_state_broadcaster alone publishes joint_states. Start-up only."),
    ParameterSpec(
        "joint_commands_topic", "joint_commands", str,
        "Topic of each robot's joint commands (sensor_msgs/JointState), in its namespace "
        "(relative). Start-up only."),
    ParameterSpec(
        "viewer_port", 0, int,
        "Port of a 3-D page of the node's world in the browser (contact_lcp.viewer: "
        "meshes, contacts, forces, solver report) at http://127.0.0.1:<port>, drawn at "
        "30 Hz at most. 0: off. Start-up only."),
)

#: parameters read once, when the node starts
STARTUP_ONLY = ("robot_description_topic", "publisher_process", "joint_states_topic",
                "joint_commands_topic", "viewer_port")
TOPIC_NAME = r"^[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*$"

SPECS = {p.name: p for p in PARAMETERS}


@dataclass(frozen=True)
class NodeConfig:
    """Validated parameter values; empty strings/tuples and 0 mean "the scene's"."""

    scene: str = ""
    robot_description: str = ""
    robot_description_topic: str = ""
    time_step: float = 0.0
    solver_method: str = ""
    real_time_factor: float = 1.0
    publish_rate: float = 100.0
    sensor_rate: float = 100.0
    clock_rate: float = 100.0
    publisher_process: bool = False
    marker_rate: float = 10.0
    wrench_links: tuple = ()
    joints: tuple = ()
    command_mode: str = "position"
    kp: float = 0.0
    kd: float = 0.0
    paused: bool = False
    joint_states_topic: str = "joint_states"
    joint_commands_topic: str = "joint_commands"
    viewer_port: int = 0

    def with_values(self, values):
        """Return a copy with ``values`` (name -> raw value, already checked) applied."""
        return replace(self, **{name: normalize(name, v) for name, v in values.items()})

    def gains(self):
        """``(kp, kd)`` for ``Simulator.set_command``: ``None`` where the scene's are meant."""
        return (self.kp or None), (self.kd or None)


def normalize(name, value):
    """Convert a raw parameter value to its NodeConfig field (None -> empty tuple)."""
    kind = SPECS[name].kind
    if kind is list:
        return tuple(value or ())
    if kind is float:
        return float(value)
    return value


def check(name, value):
    """Why ``value`` cannot be parameter ``name``, or ``None`` when it can.

    Only rules that need no simulator; names of joints and links are checked by
    :func:`check_names` against the loaded scene.
    """
    spec = SPECS.get(name)
    if spec is None:
        return None  # not ours (e.g. use_sim_time): let the other callbacks decide
    if spec.kind is list:
        if value is None:
            return None
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            return f"{name} must be a list of strings, got {value!r}"
        dup = sorted({v for v in value if list(value).count(v) > 1})
        if dup:
            return f"{name} lists {', '.join(dup)} more than once"
        return None
    if spec.kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} must be a number, got {type(value).__name__} {value!r}"
        if not math.isfinite(value):
            return f"{name} must be finite, got {value}"
        return _check_number(name, float(value))
    if name == "viewer_port":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            return (f"viewer_port must be an integer port in [0, 65535] (0 = off), got "
                    f"{type(value).__name__} {value!r}")
        return None
    if not isinstance(value, spec.kind):
        return f"{name} must be a {spec.kind.__name__}, got {type(value).__name__} {value!r}"
    if name == "robot_description_topic" and value and not value.startswith("/"):
        return f"robot_description_topic must be an absolute topic name, got {value!r}"
    if name in ("joint_states_topic", "joint_commands_topic") and not re.match(TOPIC_NAME, value):
        return (f"{name} must be a relative topic name (letters, digits, _ and /, in the "
                f"robot's namespace), got {value!r}")
    if name == "command_mode" and value not in COMMAND_MODES:
        return f"command_mode must be one of {', '.join(COMMAND_MODES)}, got {value!r}"
    if name == "scene" and value:
        from contact_lcp.exceptions import SceneError

        try:
            resolve_scene(value)
        except SceneError as e:  # NotASceneFile: quotes nothing from the file
            return str(e)
    return None


def _check_number(name, x):
    if name == "time_step" and not (x == 0.0 or 0.0 < x <= 0.1):
        return f"time_step must be in (0, 0.1] s, or 0 for the scene's, got {x}"
    if name in ("publish_rate", "sensor_rate", "clock_rate") and not 0.0 < x <= 1000.0:
        return f"{name} must be in (0, 1000] Hz, got {x}"
    if name == "marker_rate" and not 0.0 <= x <= 100.0:
        return f"marker_rate must be in [0, 100] Hz (0 = off), got {x}"
    if name in ("kp", "kd") and x < 0.0:
        return f"{name} must be >= 0 (0 = the scene's gain), got {x}"
    return None


def check_names(name, names, valid):
    """Why ``names`` (joints or wrench_links) are not all in ``valid``, or ``None``."""
    unknown = [n for n in names if n not in valid]
    if unknown:
        return f"{name}: unknown {', '.join(unknown)}; the scene has: {', '.join(valid)}"
    return None


def package_config_dir():
    """Find the package's ``config/``: ament index (colcon install), else the source tree."""
    try:
        from ament_index_python.packages import get_package_share_directory

        share = Path(get_package_share_directory(PACKAGE))
        if (share / "config").is_dir():
            return share / "config"
    except (ImportError, LookupError, OSError, ValueError):
        pass
    return Path(__file__).resolve().parents[2] / "config"


def resolve_scene(value):
    """Absolute path of the scene file named by parameter ``scene`` ('' = the default).

    Any ROS peer can set the parameter, so only a file that is recognisably a scene is
    read (:func:`contact_lcp.sim.scene_file.read_untrusted`: ``.yaml``/``.yml``, a
    regular file of at most 1 MiB, every key a scene key); a relative path is tried
    against the working directory, then the package's ``config/`` folder, and the first
    scene found is taken.

    Raises
    ------
    contact_lcp.sim.scene_file.NotASceneFile
        No candidate is a scene file. One message for every cause (missing, a directory,
        a device, too big, not YAML, not a scene), quoting ``value`` and nothing read.
    """
    from contact_lcp.sim.scene_file import NotASceneFile, read_untrusted

    config = package_config_dir()
    if not value:
        candidates = [config / DEFAULT_SCENE]
    else:
        p = Path(os.path.expanduser(value))
        candidates = [p] if p.is_absolute() else [Path.cwd() / p, config / p, config / p.name]
    for c in dict.fromkeys(candidates):
        try:
            read_untrusted(c, value)
        except NotASceneFile:
            continue
        return str(c.resolve())
    raise NotASceneFile(value or DEFAULT_SCENE)
