"""Every bundled scene runs in the node (issue 14: ball_drop, box_stack, box_on_plane and
incline, scenes of free bodies only, ended in IndexError).

Each scene of config/ is started in an in-process node and watched by a client node over
DDS for 0.05 s of sim time: the clock runs, every robot publishes its joint states
under its URDF joint names, every output link its wrench, and no step fails.
"""

import importlib.util
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from ros_harness import Harness, clock_of  # noqa: E402

pytestmark = [pytest.mark.ros]

CONFIG = Path(__file__).resolve().parents[1] / "config"
SCENES = sorted(p.name for p in CONFIG.glob("*.yaml") if p.name != "contact_lcp.params.yaml")
#: optional packages a scene may need: (text in the scene file, module, pip name)
OPTIONAL = [("example-robot-data://", "example_robot_data", "example-robot-data")]


def test_the_walk_sees_the_scenes_of_the_issue():
    assert {"ball_drop.yaml", "box_stack.yaml", "box_on_plane.yaml", "incline.yaml",
            "humanoid_stand.yaml"} <= set(SCENES)


@pytest.mark.parametrize("name", SCENES)
def test_every_bundled_scene_runs_in_the_node(name):
    text = (CONFIG / name).read_text()
    for marker, module, pip_name in OPTIONAL:
        if marker in text and importlib.util.find_spec(module) is None:
            pytest.skip(f"{name} needs the optional package {pip_name} "
                        f"(pip install {pip_name})")
    h = Harness({"scene": name, "real_time_factor": 0.0, "marker_rate": 0.0,
                 "publish_rate": 100.0})
    try:
        scene = h.node.scene
        h.record(Clock, "/clock")
        for robot in scene.robots:
            h.record(JointState, robot.topic("joint_states"))
        for link in scene.wrench_links:
            h.record(WrenchStamped, f"/contact_lcp/contact_wrenches/{link}")
        h.wait_for(lambda: h.latest("/clock") and clock_of(h.latest("/clock")) >= 0.05
                   and all(h.log[t] for t in h.log), 60, f"0.05 s of {name} on every topic")
        for robot in scene.robots:
            js = h.latest(robot.topic("joint_states"))
            assert list(js.name) == list(robot.local_names)
        for link in scene.wrench_links:
            assert h.latest(f"/contact_lcp/contact_wrenches/{link}").header.frame_id == link
        assert h.node.loop.error == "" and not h.errors
    finally:
        h.close()
