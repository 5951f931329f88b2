"""Scene files (YAML): what is simulated, and with which contact and solver settings.

A scene is read with a safe YAML loader that also takes YAML 1.2 floats such as
``1e-3`` (:mod:`contact_lcp.sim.scene_file`) and checked key by key at load: an unknown
key, a missing required key or a value of the wrong type or range (NaN, a fraction for a
count, an unknown solver option) is a :class:`SceneError` that names the key, what was
expected and what came. Paths (URDF, SRDF, package dirs, trajectory
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
    """Contact settings. The defaults suit robots and stacked bodies without tuning.

    ``model``: the contact model (:data:`contact_lcp.contact.models.CONTACT_MODELS`):
    ``pyramid`` (default; alias ``stewart_trinkle``), ``frictionless``, ``relaxed``
    (Anitescu & Hart's convex relaxation, S3), ``viscous``, ``no_slip`` (Drumwright, S4),
    ``facet_set`` (Nguyen & Trinkle's vertex against a facet set: non-convex static
    geometry made of boxes or convex hulls, S5), ``auto`` (``pyramid`` on contact islands
    of at most 40 contacts, ``relaxed`` on larger ones: :mod:`contact_lcp.contact.auto`);
    ``options`` its model-specific options.
    ``friction_directions``: sides of the friction pyramid (8, as Yamane & Nakamura).
    ``friction_frame``: ``slip`` (default) turns each pyramid so that its first edge
    opposes the slip, making sliding friction independent of the direction; ``fixed``
    keeps the pyramid on the contact frame (the seeds' form, direction-dependent).
    ``force_distribution``: on redundant contact (four coplanar corners, a sole's eight
    points) the LCP has many impulses with the same velocities, and the one a pivoting
    method finds depends on the contacts' order. ``min_norm`` (the default where the
    model implements it: pyramid, frictionless, auto's pyramid islands, viscous, no_slip)
    reports the least-norm one of them (equal shares on a symmetric support, independent
    of the order; :mod:`contact_lcp.contact.min_norm`,
    :mod:`contact_lcp.contact.min_norm_normal`); the pyramid and frictionless models
    compute it when the forces are read, and the motion is the same as with ``any``,
    which reports the impulse the method found (the default of relaxed and facet_set).
    Unset (None): that default.
    ``friction``: friction coefficient of robot links and bodies without their own.
    ``activation_distance`` [m]: a contact enters the problem when its gap, or its gap
    after the step's free motion or after the first answer's impulses (the step then
    solves again), is at most this (Anitescu & Hart's epsilon-hat). Default 1 mm:
    collision looks ahead by each body's speed (at the start of the step or after its
    free motion) times h in any case (up to ``max_approach_speed``), so the distance only
    has to cover the change within a step of a slowly moving contact, and a larger one
    adds inactive contacts to every LCP.
    ``max_approach_speed`` [m/s]: the fastest approach the look-ahead covers (100 m/s:
    nothing a user can set up tunnels through a 1 cm plate at h = 1 ms).
    ``reduction_distance`` [m]: points of a pair closer than this merge, the deepest kept
    (Yamane & Nakamura's delta; 5 mm keeps the corners of a 1 cm cube apart).
    ``remove_interior``: keep only points on the lower hull of a pair's patch, the ones
    that can carry load (the seed's interior-point removal; on by default).
    ``max_points_per_pair``: at most this many points per pair, the deepest and the most
    spread, those in contact before those with a gap (8: a polygonal sole keeps its
    support polygon, and a turning foot the edge it stands on; None: no limit).
    ``flat_tolerance`` [m]: a pair's points within this of its deepest form one flat patch
    (0.5 mm: a mesh sole flat to that tolerance stands on its polygon instead of rocking
    between vertices; the body rests at most this much high).
    ``meshes``: 'convex' (collision meshes become convex hulls) or 'exact' (triangle BVHs).
    ``self_collision``: robot links also collide with each other (adjacent links and SRDF
    disabled pairs excluded).
    ``stabilization``: gain gamma in [0, 1] of the ``gamma * phi / h`` term on penetrating
    normal rows (1 = Anitescu & Hart, 0 = off: penetration then persists).
    ``max_correction_speed`` [m/s]: cap on the push-out speed of a penetration. Default
    (None): ``0.5 * max(|g|, 9.81 m/s^2) * h``, the speed half a gravity gives in one step:
    pushing a resting body out then takes at most 1.5 m g, so the term cannot launch a body
    or add visible energy (Anitescu & Hart's unbounded term launched a 7 kg frame started
    1 mm deep at 1 m/s); 1 mm of penetration is removed in about 0.2 s at h = 1 ms.
    ``projection_depth`` [m]: a penetration deeper than this (and than what the push-out
    removes in one step) at a step's start is removed first by moving the bodies: the
    smallest mass-weighted displacement that leaves every contact at most the push-out
    of one step deep, velocities untouched (:mod:`contact_lcp.sim.projection`). Default
    1 mm: a robot that its SRDF posture puts 14 mm into the ground stands on it after
    one step instead of three seconds, and a box an impact swings into its neighbour
    comes out at once. None: only the push-out.
    ``joint_limits``: joint limits as unilateral rows of the same problem.
    ``max_initial_penetration`` [m]: a scene whose bodies start deeper than this in each
    other is refused with the pairs and depths (2 cm: a robot placed at z = 0 instead of on
    its feet, not a small overlap that stabilization removes).
    ``max_contacts``: a step whose LCP would hold more contact points than this stops with
    an error naming the pairs (the LCP would be ~10x this size; dense, it would not fit in
    memory). Points found only because of the look-ahead and left out of the LCP do not
    count.
    ``islands``: solve the contacts of bodies that touch no common moving body as
    separate problems (:mod:`contact_lcp.contact.islands`; the ``relaxed`` and ``auto``
    models, whose choice is per island; on by default: the relaxed model's velocities are
    unique, so the same, and a pile's cost falls with its islands). False: one problem
    per step. The ``pyramid`` model always solves one problem per step (its LCP can have
    solutions with different velocities, and the islands' could be another one).
    ``sleep``: islands of free bodies whose every body has moved slower than
    ``sleep_speed`` [m/s] (``|v| + r |omega|``, r its largest size entry) for
    ``sleep_time`` [s] sleep: they hold still and leave collision and the contact
    problem until a moving body (an awake free body or a robot link) comes within reach
    (:mod:`contact_lcp.sim.sleep`). Robots never sleep, nor do bodies touching a robot
    that can move. Off by default (5 mm/s and 0.5 s when on): a pose or velocity set from
    outside the step does not wake a sleeping body.
    """

    model: str = "pyramid"
    options: Mapping = field(default_factory=dict)
    friction_directions: int = 8
    friction_frame: str = "slip"
    force_distribution: Optional[str] = None
    friction: float = 0.8
    reduction_distance: float = 5e-3
    remove_interior: bool = True
    flat_tolerance: float = 5e-4
    max_points_per_pair: Optional[int] = 8
    meshes: str = "convex"
    self_collision: bool = False
    activation_distance: float = 1e-3
    max_approach_speed: float = 100.0
    stabilization: float = 1.0
    max_correction_speed: Optional[float] = None
    projection_depth: Optional[float] = 1e-3
    joint_limits: bool = True
    max_initial_penetration: float = 0.02
    max_contacts: int = 1000
    islands: bool = True
    sleep: bool = False
    sleep_speed: float = 5e-3
    sleep_time: float = 0.5

    def activation(self, h):
        """The activation distance [m] (the same for every time step ``h`` [s])."""
        return self.activation_distance

    def correction_speed(self, h, gravity):
        """The push-out speed cap [m/s] for time step ``h`` [s] and gravity (3,) [m/s^2]."""
        if self.max_correction_speed is not None:
            return self.max_correction_speed
        g = max(float(sum(x * x for x in gravity)) ** 0.5, 9.81)
        return 0.5 * g * h


@dataclass(frozen=True)
class SolverSettings:
    """Which LCP method solves the contact LCPs, and how.

    ``two_step``: frictionless LCP first, then the frictional one warm-started on the
    loaded contacts (Yamane & Nakamura). ``warm_start``: start from the previous step's
    basis when the step has the same contacts (a standing robot or a tower: a few pivots). ``drop_unloaded``: leave contacts that carry no
    load in the frictionless solution out of the frictional LCP (checked afterwards).
    ``fallback``: on failure apply the frictionless solution, then a safe stop.
    """

    method: str = "robust"
    options: Mapping = field(default_factory=dict)
    two_step: bool = True
    warm_start: bool = True
    drop_unloaded: bool = False
    fallback: bool = True


@dataclass(frozen=True)
class OutputSettings:
    """What is reported: the links whose net contact wrench is published, and the links
    that carry an ideal IMU (the node publishes ``~/imu/<link>``; floating bases always
    have one)."""

    wrench_links: tuple = ()
    imu_links: tuple = ()


@dataclass(frozen=True)
class Scene:
    """A whole scene, as loaded from YAML.

    ``loops``: loop closures (:class:`contact_lcp.dynamics.loops.LoopSpec`), from entries
    ``{name, type: point|weld, link_a, link_b (default world), point_a, point_b}`` of the
    top-level ``loops:`` list; ``point_b`` defaults to where ``point_a`` starts.
    """

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
    loops: tuple = ()  # contact_lcp.dynamics.loops.LoopSpec

    def replace(self, **changes):
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


def model_settings(scene):
    """The :class:`~contact_lcp.contact.base.ModelSettings` of a scene's contact and solver."""
    from contact_lcp.contact.base import ModelSettings

    c, s = scene.contact, scene.solver
    return ModelSettings(method=s.method, solver_options=dict(s.options), two_step=s.two_step,
                         warm_start=s.warm_start,
                         drop_unloaded=s.drop_unloaded, fallback=s.fallback,
                         friction_directions=c.friction_directions,
                         friction_frame=c.friction_frame,
                         force_distribution=c.force_distribution, options=dict(c.options))


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
