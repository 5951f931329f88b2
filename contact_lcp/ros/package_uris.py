"""``package://`` mesh URIs that rviz2 can open, also when the ament index lacks the package.

rviz2 resolves ``package://<pkg>/...`` through the ament index. example-robot-data
installed from PyPI (``pip install example-robot-data``, as ``contact_lcp[talos]``
does) is not in it, so Talos' meshes would not show. Before the node publishes a robot
description, every ``package://<pkg>/<rest>`` whose package the ament index does not
know is rewritten to ``file://<dir>/<pkg>/<rest>`` when ``<dir>/<pkg>`` exists in one of
the robot's package directories or, for example-robot-data, in the wheel's share folder
(:func:`contact_lcp.dynamics.robot_data.robot_data_share`). Other URIs are left alone.
"""

import functools
import os
import re

_URI = re.compile(r"package://([^/\"'\s]+)/")
ROBOT_DATA = "example-robot-data"


@functools.lru_cache(maxsize=None)
def in_ament_index(package):
    """True when the ament index (a sourced ROS 2 / colcon install) knows ``package``."""
    try:
        from ament_index_python.packages import get_package_share_directory

        get_package_share_directory(package)
        return True
    except (ImportError, LookupError, OSError, ValueError):
        return False


def package_dir(package, package_dirs=()):
    """The directory holding ``<package>/`` (a folder of ``package_dirs``, or for
    example-robot-data its pip wheel's share folder), or None."""
    dirs = [str(d) for d in package_dirs]
    if package == ROBOT_DATA:
        try:
            from contact_lcp.dynamics.robot_data import robot_data_share

            dirs.append(robot_data_share())
        except Exception:  # SceneError: not installed; nothing to resolve against
            pass
    for d in dirs:
        if os.path.isdir(os.path.join(d, package)):
            return os.path.abspath(d)
    return None


def resolve_package_uris(urdf, package_dirs=(), known=in_ament_index):
    """``urdf`` with ``package://`` URIs of packages unknown to ``known`` made ``file://``.

    Parameters
    ----------
    urdf : str
        URDF XML.
    package_dirs : sequence of str
        Folders that contain package folders (a scene robot's ``package_dirs``).
    known : callable
        ``known(package) -> bool``; default the ament index.
    """
    packages = set(_URI.findall(urdf))
    for package in sorted(packages):
        if known(package):
            continue
        base = package_dir(package, package_dirs)
        if base is not None:
            urdf = urdf.replace(f"package://{package}/", f"file://{base}/{package}/")
    return urdf
