"""Talos standing (config/talos_stand.yaml): the same set-up as humanoid.launch.py.

    ros2 launch contact_lcp talos.launch.py [use_rviz:=false] [use_sim_time:=true]

Talos' URDF and meshes come from example-robot-data (``pip install
contact_lcp[talos]`` or the ROS package); rviz2 shows its meshes through the
/robot_description the node publishes.
"""

import importlib.util
import os


def _humanoid_launch():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "humanoid.launch.py")
    spec = importlib.util.spec_from_file_location("contact_lcp_humanoid_launch", here)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate_launch_description():
    return _humanoid_launch().describe("talos_stand.yaml")
