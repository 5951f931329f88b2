"""Pinocchio wrappers: loading robots and free bodies, M^-1, Jacobians, Delassus.

This package and :mod:`contact_lcp.collision` are the only places where Pinocchio and
coal are imported.
"""

from contact_lcp.dynamics.robot_data import talos_paths
from contact_lcp.dynamics.specs import BodyInfo, BodySpec, RobotInfo, RobotSpec
from contact_lcp.dynamics.world import GROUND, World

__all__ = ["GROUND", "BodyInfo", "BodySpec", "RobotInfo", "RobotSpec", "World", "talos_paths"]
