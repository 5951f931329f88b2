"""Locate the optional ``example-robot-data`` files (Talos) without importing it.

The example-robot-data 6.0.0 wheel ships no Python module, only a cmeel prefix:
``<site-packages>/cmeel.prefix/share/example-robot-data/robots/<robot>_data/...``.
URDFs refer to meshes as ``package://example-robot-data/robots/...``, so the package
directory to give Pinocchio is ``<site-packages>/cmeel.prefix/share``.
"""

import importlib.metadata
import os
import sys

from contact_lcp.exceptions import SceneError

_INSTALL_HINT = "install it with `pip install example-robot-data` (about 130 MB)"


def robot_data_share():
    """The directory containing ``example-robot-data/robots`` (a package dir for URDFs).

    Raises
    ------
    SceneError
        When the example-robot-data distribution is not installed.
    """
    candidates = []
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            parts = f.parts
            if "example-robot-data" in parts and "share" in parts:
                share = parts[: parts.index("share") + 1]
                candidates.append(str(dist.locate_file(os.path.join(*share))))
                break
    candidates += [os.path.join(p, "cmeel.prefix", "share") for p in sys.path if p]
    for share in candidates:
        if os.path.isdir(os.path.join(share, "example-robot-data", "robots")):
            return os.path.abspath(share)
    raise SceneError(f"the example-robot-data files were not found; {_INSTALL_HINT}")


def robot_data_installed():
    """True when example-robot-data's files can be found (the wheel ships no module)."""
    try:
        robot_data_share()
    except SceneError:
        return False
    return True


def talos_paths(variant="talos_reduced"):
    """Paths of Talos' URDF and SRDF and the package directory for its meshes.

    Parameters
    ----------
    variant : str
        URDF file stem in ``talos_data/robots`` (``talos_reduced``, ``talos_full_v2``...).

    Returns
    -------
    urdf_path, srdf_path, package_dir : str
    """
    share = robot_data_share()
    base = os.path.join(share, "example-robot-data", "robots", "talos_data")
    urdf = os.path.join(base, "robots", variant + ".urdf")
    srdf = os.path.join(base, "srdf", "talos.srdf")
    if not os.path.isfile(urdf):
        files = os.listdir(os.path.join(base, "robots"))
        have = sorted(f[:-5] for f in files if f.endswith(".urdf"))
        raise SceneError(f"Talos variant {variant!r} not found in {base}; available: {have}")
    if not os.path.isfile(srdf):
        raise SceneError(f"Talos SRDF {srdf!r} is missing; reinstall example-robot-data")
    return urdf, srdf, share
