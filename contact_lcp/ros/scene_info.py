"""Building the simulator from the node's parameters, and what the node keeps of it."""

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from contact_lcp.exceptions import SceneError
from contact_lcp.ros.config import resolve_scene


def build_simulator(cfg):
    """Build a ``Simulator`` for NodeConfig ``cfg`` (0 / empty = the scene's values).

    Raises
    ------
    SceneError
        The scene file is missing or unusable (the simulator's own message).
    """
    from contact_lcp.sim import Simulator

    try:
        path = resolve_scene(cfg.scene)
    except FileNotFoundError as e:
        raise SceneError(str(e)) from e
    return Simulator.from_file(
        path,
        robot_description=cfg.robot_description or None,
        time_step=cfg.time_step or None,
        solver_method=cfg.solver_method or None,
    )


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
class SceneInfo:
    """What the ROS side reads once from a freshly built simulator (never changes)."""

    path: str
    h: float
    joint_names: tuple
    wrench_links: tuple
    robot_description: str
    base_link: str

    @classmethod
    def of(cls, sim, cfg):
        """Read from ``sim`` before it is handed to the physics thread."""
        urdf = sim.robot_description()
        return cls(
            path=resolve_scene(cfg.scene),
            h=float(sim.h),
            joint_names=tuple(sim.joint_names),
            wrench_links=tuple(sim.scene.output.wrench_links),
            robot_description=urdf,
            base_link=root_link(urdf),
        )


def scene_robot_urdf(scene, robot=0):
    """URDF XML of robot ``robot`` of scene file ``scene`` (for robot_state_publisher).

    Read through the simulator's own scene loader, so paths resolve exactly as the node
    resolves them. No simulator is built.
    """
    from contact_lcp.sim import load_scene

    spec = load_scene(resolve_scene(scene)).robots[robot].robot
    if spec.urdf_string:
        return spec.urdf_string
    with open(spec.urdf) as f:
        return f.read()
