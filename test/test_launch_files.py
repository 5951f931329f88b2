"""The launch files compile everywhere, and describe themselves where `launch` exists.

`launch`/`launch_ros` have no PyPI wheels: in the project venv only the compile check
runs; under a sourced ROS 2 installation generate_launch_description() is called too.
"""

import importlib.util
import py_compile
from pathlib import Path

import pytest

LAUNCH_DIR = Path(__file__).resolve().parents[1] / "launch"
LAUNCH_FILES = ["humanoid.launch.py", "talos.launch.py"]


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_launch_file_compiles(name, tmp_path):
    py_compile.compile(str(LAUNCH_DIR / name), cfile=str(tmp_path / "out.pyc"), doraise=True)


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_launch_file_describes_itself(name):
    launch = pytest.importorskip("launch")
    if not hasattr(launch, "LaunchDescription"):  # the repo's own launch/ folder
        pytest.skip("the ROS 2 `launch` package is not installed")
    pytest.importorskip("launch_ros.actions")
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), LAUNCH_DIR / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from launch import LaunchDescription

    description = module.generate_launch_description()
    assert isinstance(description, LaunchDescription)
    args = {a.name for a in description.get_launch_arguments()}
    assert {"scene", "use_rviz", "use_sim_time"} <= args


def test_rviz_config_shows_the_scene():
    text = (LAUNCH_DIR.parent / "rviz" / "contact_lcp.rviz").read_text()
    for needed in ("Fixed Frame: world", "rviz_default_plugins/RobotModel",
                   "Value: /robot_description", "rviz_default_plugins/TF",
                   "rviz_default_plugins/MarkerArray", "Value: /contact_lcp/contact_markers"):
        assert needed in text
