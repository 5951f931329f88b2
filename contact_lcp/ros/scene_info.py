"""Building (and warming) the simulator from the node's parameters, and what the node
keeps of it: the robots with their namespaces, the free bodies, the links.

Namespaces: a scene with one robot publishes it at the root (``/joint_states``,
``/odom``, ...; TF frames as in its URDF). With several robots, robot ``name`` gets the
namespace ``/<name>`` (``/<name>/joint_states``, ...) and its TF frames the prefix
``<name>/`` (``<name>/base_link``), as robot_state_publisher's ``frame_prefix`` makes
them; joint names inside a namespace are the URDF's (the simulator prefixes clashing
names with ``<robot>/``; that prefix is removed).
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from contact_lcp.dynamics.formats import is_mjcf
from contact_lcp.exceptions import SceneError
from contact_lcp.ros.config import resolve_scene
from contact_lcp.ros.package_uris import resolve_package_uris
from contact_lcp.sim.warm import warm_up  # noqa: F401  (the node's, bench_start's)


def build_simulator(cfg, *, warm=True):
    """Build a ``Simulator`` for NodeConfig ``cfg`` (0 / empty = the scene's values).

    With ``warm``, :func:`warm_up` runs on it, so no step of the node compiles code.

    Raises
    ------
    SceneError
        The scene file is not a scene (one discreet message) or is an unusable scene
        (the loader's message, naming scene keys and their values).
    """
    from contact_lcp.sim import Simulator

    path = resolve_scene(cfg.scene)  # NotASceneFile (a SceneError) names nothing read
    sim = Simulator.from_file(
        path,
        robot_description=cfg.robot_description or None,
        time_step=cfg.time_step or None,
        solver_method=cfg.solver_method or None,
    )
    if warm:
        warm_up(sim)
    return sim


def root_link(urdf):
    """Name of the root link of a URDF (the link that is no joint's child)."""
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as e:
        raise SceneError(f"robot description is not valid XML: {e}") from e
    children = {c.get("link") for c in root.iter("child")}
    roots = [link.get("name") for link in root.findall("link")
             if link.get("name") not in children]
    if not roots:
        raise SceneError("robot description has no root link")
    return roots[0]


@dataclass(frozen=True)
class RobotEntry:
    """One robot of the scene as the ROS side sees it.

    ``joint_names`` are the simulator's names (maybe ``<robot>/``-prefixed),
    ``local_names`` the URDF's, in the same order; ``first`` is the index of its first
    joint in ``Simulator.joint_names``; ``frame_prefix`` is ``""`` or ``"<name>/"``.
    """

    index: int
    name: str
    namespace: str
    frame_prefix: str
    joint_names: tuple
    local_names: tuple
    first: int
    floating: bool
    base_link: str
    urdf: str
    published_urdf: str = ""

    def topic(self, name):
        """Topic ``name`` in the robot's namespace, relative to the node's (so that
        ``-r __ns:=/simA`` moves a whole instance: ``/simA/joint_states``)."""
        return f"{self.namespace}/{name}" if self.namespace else name

    @property
    def base_frame(self):
        """TF frame of the base link (``<ns>/base_link`` in a namespace)."""
        return self.frame_prefix + self.base_link

    def sim_joint(self, name):
        """Simulator name of joint ``name`` (a URDF name or already the simulator's)."""
        if name in self.joint_names:
            return name
        try:
            return self.joint_names[self.local_names.index(name)]
        except ValueError:
            raise KeyError(f"unknown joint {name!r} for robot {self.name!r}; joints: "
                           f"{', '.join(self.local_names)}") from None


@dataclass(frozen=True)
class SceneInfo:
    """What the ROS side reads once from a freshly built simulator (never changes)."""

    path: str
    h: float
    gravity: tuple
    joint_names: tuple
    wrench_links: tuple
    robots: tuple
    bodies: tuple
    links: tuple
    warm_error: str = ""
    imu_links: tuple = ()

    @property
    def robot_description(self):
        """URDF of the first robot ('' for a scene of free bodies only)."""
        return self.robots[0].urdf if self.robots else ""

    @property
    def base_link(self):
        """TF frame of the first robot's base ('' without robots)."""
        return self.robots[0].base_frame if self.robots else ""

    @classmethod
    def of(cls, sim, cfg, warm_error=""):
        """Read from ``sim`` before it is handed to the physics thread."""
        robots, first = [], 0
        several = len(sim.world.robots) > 1
        for i, r in enumerate(sim.world.robots):
            names = tuple(r.joint_names)
            prefix = f"{r.name}/"
            local = tuple(n[len(prefix):] if n.startswith(prefix) else n for n in names)
            urdf = sim.robot_description(i)
            mjcf = is_mjcf(urdf)  # described in MJCF: no URDF to publish
            urdf = "" if mjcf else urdf
            dirs = getattr(sim.scene.robots[i].robot, "package_dirs", ()) or ()
            robots.append(RobotEntry(
                index=i, name=r.name, namespace=r.name if several else "",
                frame_prefix=prefix if several else "", joint_names=names,
                local_names=local, first=first, floating=bool(r.floating_base),
                base_link=r.base_link if mjcf else root_link(urdf), urdf=urdf,
                published_urdf="" if mjcf else resolve_package_uris(urdf, dirs)))
            first += len(names)
        bodies = tuple(b.name for b in sim.world.bodies)
        links = tuple(n for r in sim.world.robots for n in r.link_names) + bodies
        return cls(
            path=resolve_scene(cfg.scene),
            h=float(sim.h),
            gravity=tuple(float(g) for g in sim.scene.gravity),
            joint_names=tuple(sim.joint_names),
            wrench_links=tuple(sim.scene.output.wrench_links),
            robots=tuple(robots),
            bodies=bodies,
            links=links,
            warm_error=warm_error,
            imu_links=tuple(sim.scene.output.imu_links),
        )

    def sim_joint(self, name):
        """Simulator name of joint ``name``: a simulator name, or a robot's own (URDF)
        name when one robot alone has it (``l_knee`` for ``bob/l_knee``).

        Raises
        ------
        KeyError
            No robot has it, or several do (then the message names the choices).
        """
        if name in self.joint_names:
            return name
        owners = [r for r in self.robots if name in r.local_names]
        if len(owners) == 1:
            return owners[0].sim_joint(name)
        if owners:
            choices = ", ".join(r.sim_joint(name) for r in owners)
            raise KeyError(f"joint {name!r} is a joint of several robots: name one of {choices}")
        raise KeyError(f"unknown joint {name!r}; joints: {', '.join(self.joint_names)}")

    def robot_in(self, namespace):
        """The robot of ``namespace`` ('' = the single robot), or None."""
        return next((r for r in self.robots if r.namespace == namespace), None)


def scene_robot_urdfs(scene):
    """``[(name, namespace, urdf)]`` of every robot of scene file ``scene``.

    For robot_state_publisher in the launch files; read through the simulator's own
    scene loader (no simulator is built), with the node's namespace rule.
    """
    from contact_lcp.dynamics.loading import read_urdf
    from contact_lcp.sim import load_scene

    robots = load_scene(resolve_scene(scene)).robots
    return [(r.robot.name, r.robot.name if len(robots) > 1 else "", read_urdf(r.robot))
            for r in robots]


def scene_robot_urdf(scene, robot=0):
    """URDF XML of robot ``robot`` of scene file ``scene`` (for robot_state_publisher)."""
    return scene_robot_urdfs(scene)[robot][2]
