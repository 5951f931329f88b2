"""Scene files as text: the YAML dialect, the key schema, and the guarded read for paths
that come from untrusted peers.

YAML dialect. PyYAML follows YAML 1.1, where ``1e-3`` (no dot, no exponent sign) is a
string; every scene and parameter file is read with :class:`SceneYamlLoader`, a
``SafeLoader`` that also reads YAML 1.2's floats (``1e-3``, ``2E5``, ``1.5e3``) as
numbers, so ``time_step: 1e-3`` means what it says.

Where the line is between helpful and discreet messages:

- :func:`contact_lcp.sim.load_scene` (the CLI, the library) reads any file it is given
  and names what does not fit, unknown keys and values included: it is the user's own
  file, and a typo should be named.
- :func:`read_untrusted` (the node's ``scene`` parameter, which any ROS peer can set)
  reads a file only if it is recognisably a scene: a regular file named ``.yaml`` or
  ``.yml`` of at most :data:`MAX_BYTES`, valid YAML, a mapping whose every key, at every
  level of the scene's structure, is a scene key at that place (:func:`scene_shaped`;
  the mappings and lists are checked, the scalar values are not). Anything else -- a
  missing file, a directory, a device, a huge file, a secret -- gets one answer,
  :class:`NotASceneFile`, which quotes nothing from the file, so it neither discloses
  content nor tells an existing file from a missing one. A file that passes is handed to
  the loader, whose messages may name scene keys and the values under them.
"""

import os
import re
import stat

import yaml

from contact_lcp.exceptions import SceneError

#: Largest scene file read for an untrusted peer [bytes] (the bundled ones are < 32 KiB).
MAX_BYTES = 1 << 20
SUFFIXES = (".yaml", ".yml")

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SceneYamlLoader(_BASE):
    """``yaml.SafeLoader`` that also resolves YAML 1.2 floats such as ``1e-3``."""

    # a copy per first character: adding to it must not change yaml.SafeLoader
    yaml_implicit_resolvers = {k: list(v) for k, v in _BASE.yaml_implicit_resolvers.items()}


SceneYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def parse_yaml(text):
    """The data of YAML ``text`` read with :class:`SceneYamlLoader` (raises yaml.YAMLError)."""
    return yaml.load(text, Loader=SceneYamlLoader)  # noqa: S506 (a SafeLoader subclass)


TOP_KEYS = frozenset({"time_step", "duration", "gravity", "ground", "robots", "bodies",
                      "contact", "solver", "output", "loops"})
GROUND_KEYS = frozenset({"height", "friction"})
ROBOT_KEYS = frozenset({"name", "urdf", "package_dirs", "srdf", "floating_base", "base_pose",
                        "initial_joints", "reference_configuration", "locked_joints",
                        "xacro_args", "controller"})
CONTROLLER_KEYS = frozenset({"type", "kp", "kd", "gravity_compensation", "trajectory"})
TRAJECTORY_KEYS = frozenset({"type", "joints", "file"})
SINUSOID_KEYS = frozenset({"amplitude", "period", "phase"})
BODY_KEYS = frozenset({"name", "shape", "size", "mass", "pose", "velocity", "friction"})
SOLVER_KEYS = frozenset({"method", "options", "two_step", "warm_start", "drop_unloaded",
                         "fallback"})
OUTPUT_KEYS = frozenset({"wrench_links", "imu_links"})
LOOP_KEYS = frozenset({"name", "type", "link_a", "link_b", "point_a", "point_b"})


def contact_keys():
    from contact_lcp.sim.scene import ContactSettings

    return frozenset(ContactSettings.__dataclass_fields__)


def _all_option_names():
    """Every contact model option and every LCP method option (any model, any method)."""
    from contact_lcp.contact.models import model_class, model_names
    from contact_lcp.sim.scene_fields import solver_option_defaults
    from contact_lcp.lcp import METHODS

    names = {k for m in model_names() for k in model_class(m).OPTIONS}
    return names | {k for m in METHODS for k in solver_option_defaults(m)}


def scene_shaped(data):
    """True when ``data`` is a mapping whose every key is a scene key at its place
    (section keys, robot/body/loop/controller/trajectory keys, option names); joint
    names and scalar values are not judged here (the loader does that)."""
    def mapping(value, keys):
        return value is None or (isinstance(value, dict) and all(
            isinstance(k, str) and k in keys for k in value))

    def entries(value, keys):
        return value is None or (isinstance(value, list) and all(
            isinstance(x, dict) and mapping(x, keys) for x in value))

    if not isinstance(data, dict) or not data or not mapping(data, TOP_KEYS):
        return False
    contact, solver = data.get("contact"), data.get("solver")
    options = _all_option_names()
    ok = (mapping(contact, contact_keys()) and mapping(solver, SOLVER_KEYS)
          and mapping(data.get("output"), OUTPUT_KEYS)
          and (data.get("ground") is False or mapping(data.get("ground"), GROUND_KEYS))
          and entries(data.get("bodies"), BODY_KEYS) and entries(data.get("loops"), LOOP_KEYS)
          and entries(data.get("robots"), ROBOT_KEYS)
          and mapping((contact or {}).get("options"), options)
          and mapping((solver or {}).get("options"), options))
    for robot in (data.get("robots") or []) if ok else ():
        controller = robot.get("controller")
        ok = ok and mapping(controller, CONTROLLER_KEYS)
        trajectory = (controller or {}).get("trajectory") if ok else None
        ok = ok and mapping(trajectory, TRAJECTORY_KEYS)
        joints = (trajectory or {}).get("joints") if ok else None
        ok = ok and (joints is None or (isinstance(joints, dict) and all(
            mapping(s, SINUSOID_KEYS) for s in joints.values())))
    return ok


class NotASceneFile(SceneError):
    """A path given by an untrusted peer that is not recognisably a scene file."""

    def __init__(self, value):
        super().__init__(
            f"scene {value!r} is not a contact_lcp scene file (expected a readable "
            f"{' or '.join(SUFFIXES)} file of at most {MAX_BYTES >> 20} MiB whose keys are "
            f"scene keys: {', '.join(sorted(TOP_KEYS))}; a relative path is looked up in "
            "the working directory, then the package's config/ folder)")


def read_untrusted(path, value):
    """The parsed content of ``path`` if it is recognisably a scene file (see the module
    docstring), else :class:`NotASceneFile` naming only ``value`` (what the peer sent)."""
    if not str(path).lower().endswith(SUFFIXES):
        raise NotASceneFile(value)
    try:  # O_NONBLOCK: a FIFO must not block the open; only regular files are read
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        raise NotASceneFile(value) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            raise NotASceneFile(value)
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError:
        raise NotASceneFile(value) from None
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise NotASceneFile(value)
    try:
        data = parse_yaml(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError, TypeError):
        raise NotASceneFile(value) from None
    if not scene_shaped(data):
        raise NotASceneFile(value)
    return data
