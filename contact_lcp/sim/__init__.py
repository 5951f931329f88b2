"""Scenes, the time stepper and the simulator (uses Pinocchio and coal via dynamics/ and collision/)."""

from contact_lcp.sim.control import CommandError
from contact_lcp.sim.scene import Scene, default_scene_path
from contact_lcp.sim.scene_loader import load_scene, scene_from_dict
from contact_lcp.sim.simulator import SimulationError, Simulator
from contact_lcp.sim.stats import SimStats, StepInfo
from contact_lcp.sim.views import BaseState, ContactView, JointState

__all__ = [
    "BaseState", "CommandError", "ContactView", "JointState", "Scene", "SimStats",
    "SimulationError", "Simulator", "StepInfo", "default_scene_path", "load_scene",
    "scene_from_dict",
]
