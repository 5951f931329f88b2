"""Install contact_lcp with colcon (ament_python) or with pip."""
from glob import glob

from setuptools import find_packages, setup

package_name = "contact_lcp"

ros_wheels = [
    "ros-kilted-rclpy",
    "ros-kilted-rmw-fastrtps-cpp",
    "ros-kilted-std-msgs",
    "ros-kilted-std-srvs",
    "ros-kilted-sensor-msgs",
    "ros-kilted-geometry-msgs",
    "ros-kilted-nav-msgs",
    "ros-kilted-visualization-msgs",
    "ros-kilted-diagnostic-msgs",
    "ros-kilted-trajectory-msgs",
    "ros-kilted-rosgraph-msgs",
    # the ament index, to look packages up (scene files, package:// URIs) as under ROS
    "ros-kilted-ament-index-python",
    # to build tf2_msgs, control_msgs (FollowJointTrajectory) and simulation_interfaces,
    # which have no wheel, at install (python -m contact_lcp.ros.interfaces build)
    "ros-kilted-rosidl-default-generators",
    "ros-kilted-ament-cmake",
    "ros-kilted-ament-package",
    "ros-kilted-ament-cmake-include-directories",
    "ros-kilted-ament-cmake-ros-core",
    "ros-kilted-rosidl-core-generators",
    "ros-kilted-action-msgs",
    "catkin-pkg",
]

docs = ["mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings==1.0.8",
        "mkdocstrings-python==2.0.11"]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "benchmarks"]),
    # the interface definitions that contact_lcp.ros.interfaces builds
    package_data={"contact_lcp.ros": ["idl/*.cmake", "idl/*/*.xml", "idl/*/*.txt",
                                      "idl/*/msg/*", "idl/*/srv/*", "idl/*/action/*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        # where launch_ros looks for the node in a pip install (colcon: setup.cfg)
        ("lib/" + package_name, ["resource/lib/contact_lcp_node"]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.csv")),
        ("share/" + package_name + "/urdf", glob("urdf/*")),
        ("share/" + package_name + "/rviz", glob("rviz/*.rviz")),
    ],
    python_requires=">=3.10",
    install_requires=[
        "numpy>=1.24",
        "scipy>=1.10",
        "numba>=0.58",
        "pin>=3.0",
        "pyyaml>=6",
        "matplotlib>=3.7",
        "clarabel>=0.7",
        "setuptools",
        "xacro>=2.0",  # .xacro robots (the pure-Python xacro of PyPI)
        # progress bars of the command line, the sweeps and the benchmarks
        "tqdm>=4.60",
        # the 3-D page of `contact-lcp view` / `replay` (contact_lcp.viewer); its client
        # is bundled in the wheel, so the page works offline. trimesh tessellates the
        # primitives (a viser dependency, imported directly)
        "viser>=1.0",
        "trimesh>=4",
    ],
    extras_require={
        "ros": ros_wheels,
        # the documentation site: mkdocs build (mkdocs.yml, docs/), also run by the tests
        "docs": docs,
        "test": ["pytest>=7", "hypothesis>=6", "ray>=2.60"] + ros_wheels + docs,
        # contact-lcp sweep (Parquet results too when pyarrow is installed)
        "sweep": ["ray>=2.60", "tqdm>=4.60"],
        # peers of benchmarks/bench_sim.py; drake 1.51 is the last release with a cp311 wheel
        "bench": ["quantecon>=0.7", "drake==1.51.*", "dartpy==6.20.0", "mujoco", "pybullet", "example-robot-data"],
        "talos": ["example-robot-data"],
    },
    zip_safe=True,
    maintainer="contact_lcp developers",
    maintainer_email="dev@contact-lcp.invalid",
    description="Certified contact LCPs for articulated robots, with a ROS 2 node.",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "contact-lcp = contact_lcp.cli:main",
            "contact_lcp_node = contact_lcp.ros.cli:run",
        ],
    },
)
