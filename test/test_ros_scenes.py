"""Every bundled scene runs in the node (issue 14: ball_drop, box_stack, box_on_plane and
incline, scenes of free bodies only, ended in IndexError).

Each scene of config/ is started in an in-process node and watched by a client node over
DDS for 0.05 s of sim time: the clock runs, every robot publishes its joint states
under its URDF joint names, every output link its wrench, and no step fails.
"""

from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from ros_harness import Harness, clock_of  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from contact_lcp.dynamics.robot_data import robot_data_installed

pytestmark = [pytest.mark.ros]

CONFIG = Path(__file__).resolve().parents[1] / "config"
SCENES = sorted(p.name for p in CONFIG.glob("*.yaml") if p.name != "contact_lcp.params.yaml")


#: optional packages a scene may need: (text in the scene file, check, pip name)
OPTIONAL = [("example-robot-data://", robot_data_installed, "example-robot-data")]


def test_the_walk_sees_the_scenes_of_the_issue():
    assert {"ball_drop.yaml", "box_stack.yaml", "box_on_plane.yaml", "incline.yaml",
            "humanoid_stand.yaml"} <= set(SCENES)


@pytest.mark.parametrize("name", SCENES)
def test_every_bundled_scene_runs_in_the_node(name):
    text = (CONFIG / name).read_text()
    for marker, installed, pip_name in OPTIONAL:
        if marker in text and not installed():
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


def test_talos_meshes_from_the_pip_wheel_resolve_for_rviz():
    """Issue 14: with example-robot-data from pip the ament index lacks it, and rviz2
    could not open ``package://example-robot-data/...``; the published description
    points at the wheel's files instead (each of them exists)."""
    import re

    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import String

    from contact_lcp.ros.package_uris import in_ament_index

    if not robot_data_installed():
        pytest.skip("talos_stand.yaml needs example-robot-data (pip install example-robot-data)")
    if in_ament_index("example-robot-data"):
        pytest.skip("the ament index has example-robot-data: its URIs are left as they are")
    h = Harness({"scene": "talos_stand.yaml", "paused": True, "marker_rate": 0.0})
    try:
        h.record(String, "/robot_description",
                 QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        urdf = h.wait_for(lambda: h.latest("/robot_description"), 30, "the description").data
        assert "package://example-robot-data/" not in urdf
        files = re.findall(r'filename="file://([^"]+)"', urdf)
        assert files and all(Path(f).is_file() for f in files)
    finally:
        h.close()
