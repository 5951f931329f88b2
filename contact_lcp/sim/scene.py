"""Scene files (YAML): what is simulated, and with which contact and solver settings.

A scene is read with ``yaml.safe_load`` and checked key by key: an unknown key, a
missing required key or a value of the wrong type is a :class:`SceneError` that names
the key, what was expected and what came. Paths (URDF, SRDF, package dirs, trajectory
CSV files) are relative to the scene file unless absolute.
"""

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional


from contact_lcp.exceptions import SceneError

SHAPES = ("box", "sphere", "cylinder", "capsule", "ellipsoid")
CONTROLLERS = ("pd", "prescribed", "effort")
CONTACT_MODELS = ("stewart_trinkle",)


@dataclass(frozen=True)
class GroundSpec:
    """The ground halfspace ``z <= height`` [m] with its friction coefficient."""

    height: float = 0.0
    friction: float = 0.8


@dataclass(frozen=True)
class TrajectorySpec:
    """A joint reference: per-joint sinusoids around the initial posture, or a CSV file.

    ``sinusoids`` maps joint -> (amplitude [rad], period [s], phase [rad]); ``csv`` is a
    file with a time column then one column per joint (header = joint names).
    """

    kind: str
    sinusoids: Mapping = field(default_factory=dict)
    csv: Optional[str] = None


@dataclass(frozen=True)
class ControllerSpec:
    """How a robot's joints are driven.

    ``pd``: tau = kp (q_ref - q) + kd (v_ref - v) (+ gravity compensation);
    ``prescribed``: the joints follow the reference exactly, only the base is dynamic;
    ``effort``: torques set from outside (zero when none are given).
    ``kp`` [N.m/rad] and ``kd`` [N.m.s/rad] are a number or a joint -> number mapping.
    """

    kind: str = "pd"
    kp: object = 400.0
    kd: object = 20.0
    gravity_compensation: bool = True
    trajectory: Optional[TrajectorySpec] = None


@dataclass(frozen=True)
class RobotSceneSpec:
    """A robot of the scene: the dynamics spec plus its controller."""

    robot: object  # contact_lcp.dynamics.RobotSpec
    controller: ControllerSpec


@dataclass(frozen=True)
class ContactSettings:
    """Contact model settings.

    ``activation_distance`` [m]: a contact enters the LCP when its signed distance is at
    most this (Anitescu & Hart's epsilon-hat); ``None`` means ``max_approach_speed * h``.
    ``max_approach_speed`` [m/s]: the fastest approach the activation covers in one step.
    ``reduction_distance`` [m]: points of a pair closer than this merge (deepest kept);
    ``remove_interior``: keep only points that can carry load (lower hull);
    ``flat_tolerance`` [m]: a pair's points within this of its deepest are one flat patch.
    ``max_points_per_pair``: keep the deepest and the most spread points, at most this many.
    ``meshes``: 'convex' (collision meshes become convex hulls) or 'exact' (triangle BVHs).
    ``self_collision``: robot links also collide with each other (adjacent links and SRDF
    disabled pairs excluded).
    ``stabilization``: gain gamma in [0, 1] of the ``gamma * phi / h`` term on penetrating
    normal rows (1 = Anitescu & Hart, 0 = off: penetration then persists).
    ``max_correction_speed`` [m/s]: cap on the push-out speed of a penetration (None: no
    cap, Anitescu & Hart's scheme; a body started 5 mm deep then leaves at 5 m/s).
    """

    model: str = "stewart_trinkle"
    friction_directions: int = 8
    friction: float = 0.8
    reduction_distance: float = 1e-3
    remove_interior: bool = False
    flat_tolerance: float = 0.0
    max_points_per_pair: Optional[int] = None
    meshes: str = "convex"
    self_collision: bool = False
    activation_distance: Optional[float] = None
    max_approach_speed: float = 5.0
    stabilization: float = 1.0
    max_correction_speed: Optional[float] = None
    joint_limits: bool = True

    def activation(self, h):
        """The activation distance [m] for time step ``h`` [s]."""
        if self.activation_distance is not None:
            return self.activation_distance
        return self.max_approach_speed * h


@dataclass(frozen=True)
class SolverSettings:
    """Which LCP method solves the contact LCPs, and how.

    ``two_step``: frictionless LCP first, then the frictional one warm-started on the
    loaded contacts (Yamane & Nakamura). ``drop_unloaded``: leave contacts that carry no
    load in the frictionless solution out of the frictional LCP (checked afterwards).
    ``fallback``: on failure apply the frictionless solution, then a safe stop.
    """

    method: str = "robust"
    options: Mapping = field(default_factory=dict)
    two_step: bool = True
    drop_unloaded: bool = False
    fallback: bool = True


@dataclass(frozen=True)
class OutputSettings:
    """What is recorded: the links whose net contact wrench is reported."""

    wrench_links: tuple = ()


@dataclass(frozen=True)
class Scene:
    """A whole scene, as loaded from YAML."""

    path: Optional[str]
    time_step: float = 1e-3
    duration: float = 5.0
    gravity: tuple = (0.0, 0.0, -9.81)
    ground: Optional[GroundSpec] = GroundSpec()
    robots: tuple = ()
    bodies: tuple = ()
    contact: ContactSettings = ContactSettings()
    solver: SolverSettings = SolverSettings()
    output: OutputSettings = OutputSettings()

    def replace(self, **changes):
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


def package_share_dir():
    """Where the package's config/, urdf/ and launch/ folders are.

    The source tree (editable installs), then ``<prefix>/share/contact_lcp`` (pip and
    colcon installs).
    """
    import sys

    here = Path(__file__).resolve().parents[2]
    candidates = [here, Path(sys.prefix) / "share" / "contact_lcp"]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "share" / "contact_lcp")
    for c in candidates:
        if (c / "config" / "humanoid_stand.yaml").is_file():
            return c
    raise SceneError(
        "cannot find the contact_lcp share folder (config/humanoid_stand.yaml); looked in "
        + ", ".join(str(c) for c in candidates)
    )


def default_scene_path():
    """The bundled default scene, ``config/humanoid_stand.yaml``."""
    return str(package_share_dir() / "config" / "humanoid_stand.yaml")
