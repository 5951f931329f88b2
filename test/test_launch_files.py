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


# -- without a ROS installation: the launch files against stand-in launch modules -------
_STUBS = '''
import sys, types, warnings
import numpy  # as under `ros2 launch`: numpy is loaded before the launch file
warnings.simplefilter("error", RuntimeWarning)  # the "imported after numpy" warning


class Action:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration:
    values = {}

    def __init__(self, name):
        self.name = name

    def perform(self, context):
        return self.values[self.name]


def module(name, **names):
    m = types.ModuleType(name)
    m.__dict__.update(names)
    sys.modules[name] = m


module("launch", LaunchDescription=Action)
module("launch.actions", DeclareLaunchArgument=Action, OpaqueFunction=Action)
module("launch.conditions", IfCondition=Action)
module("launch.substitutions", LaunchConfiguration=LaunchConfiguration)
module("launch_ros")
module("launch_ros.actions", Node=Action)
'''


def _describe_with_stubs(name, scene, tmp_path):
    """Run launch file ``name`` under stand-in modules in a fresh interpreter (numpy
    imported first); return its robot_state_publisher Nodes as (namespace, params)."""
    import json
    import os
    import subprocess
    import sys

    script = _STUBS + f'''
import importlib.util, json
spec = importlib.util.spec_from_file_location("lf", {str(LAUNCH_DIR / name)!r})
lf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lf)
description = lf.generate_launch_description()
opaque = [a for a in description.args[0] if a.kwargs.get("function")][0]
LaunchConfiguration.values.update(scene={scene!r}, use_sim_time="true")
nodes = opaque.kwargs["function"](None)
print(json.dumps([[n.kwargs["namespace"], n.kwargs["parameters"][0]["frame_prefix"],
                   len(n.kwargs["parameters"][0]["robot_description"])] for n in nodes]))
'''
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = os.pathsep.join([str(LAUNCH_DIR.parent), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_launch_gives_each_robot_a_state_publisher_in_its_namespace(tmp_path):
    """Under `ros2 launch` numpy is loaded first: no warning (an error here), and one
    robot_state_publisher per robot, with the node's namespaces and frame prefixes."""
    two = str(LAUNCH_DIR.parent / "test" / "data" / "two_humanoids.yaml")
    nodes = _describe_with_stubs("humanoid.launch.py", two, tmp_path)
    assert [n[:2] for n in nodes] == [["alice", "alice/"], ["bob", "bob/"]]
    assert all(n[2] > 1000 for n in nodes)  # each got the URDF text
    one = _describe_with_stubs("humanoid.launch.py", "humanoid_stand.yaml", tmp_path)
    assert [n[:2] for n in one] == [[None, ""]] and one[0][2] > 1000


@pytest.mark.slow
@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_ros2_launch_starts_publishes_and_stops_cleanly(name, tmp_path):
    """Under a real ROS 2 installation (``ros2`` on PATH, launch_ros importable, this
    package installed in the ament index): the launch file starts the node, joint states
    arrive, and SIGINT ends every process with code 0."""
    import os
    import shutil
    import signal
    import subprocess
    import time

    if shutil.which("ros2") is None:
        pytest.skip("no `ros2` command: launch needs a ROS 2 installation")
    pytest.importorskip("launch_ros.actions")
    from contact_lcp.ros.package_uris import in_ament_index

    if not in_ament_index("contact_lcp"):
        pytest.skip("contact_lcp is not installed in the ament index (colcon build)")
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    log_path = tmp_path / "launch.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["ros2", "launch", "contact_lcp", name, "use_rviz:=false"],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "ready:" not in log_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        out = subprocess.run(["ros2", "topic", "echo", "--once", "/joint_states"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert "position:" in out.stdout, out.stdout + out.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert "imported after numpy" not in log_path.read_text()
