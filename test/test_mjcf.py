"""Robots described in MuJoCo's MJCF: read by Pinocchio's MJCF parser with MuJoCo's
collision geometry, then simulated as any URDF robot."""

import dataclasses

import numpy as np
import pytest

from contact_lcp.dynamics import RobotSpec
from contact_lcp.dynamics.loading import load_robot
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator
from contact_lcp.sim.scene import RobotSceneSpec
from contact_lcp.sim.scene_loader import load_scene

G = 9.81


def test_the_mjcf_arm_has_its_joints_and_capsules():
    part = load_robot(RobotSpec(name="arm", urdf="mjcf/two_link_arm.xml", floating_base=False))
    assert [part.model.names[j] for j in range(1, part.model.njoints)] == ["shoulder", "elbow"]
    shapes = {o.name: type(o.geometry).__name__ for o in part.geom.geometryObjects}
    assert shapes == {"pedestal_box": "Box", "upper_capsule": "Capsule", "fore_capsule": "Capsule"}
    assert part.model.upperPositionLimit.tolist() == pytest.approx([2.0, 2.5])


def test_the_mjcf_scene_runs_the_arm_holds_and_the_box_rests():
    sim = Simulator(load_scene("config/mjcf_arm.yaml"))
    for _ in range(500):
        sim.step()
    assert list(sim.joint_state().position) == pytest.approx([0.6, 0.9], abs=1e-3)
    box = sim.body_state("box")
    assert box.pose[2] == pytest.approx(0.05, abs=1e-4)


def test_a_freejoint_root_falls_and_rests_with_its_weight_on_the_ground():
    base = load_scene("config/mjcf_arm.yaml")
    spec = RobotSpec(name="crate", urdf="mjcf/free_box.xml", floating_base=True)
    scene = base.replace(robots=(RobotSceneSpec(spec, base.robots[0].controller),), bodies=())
    sim = Simulator(scene)
    assert sim.world.model.nq == 7  # the file's own free joint, no second root joint
    assert sim.base_state(0).pose[2] == pytest.approx(0.3)
    for _ in range(600):
        sim.step()
    base_state = sim.base_state(0)
    assert base_state.pose[2] == pytest.approx(0.05, abs=1e-4)  # resting on its 0.1 m face
    assert np.abs(base_state.twist).max() < 1e-3
    assert sim.contact_force_total()[2] == pytest.approx(2.0 * G, rel=1e-6)


def test_what_the_mjcf_path_does_not_take_is_a_clear_error(tmp_path):
    arm = RobotSpec(name="arm", urdf="mjcf/two_link_arm.xml", floating_base=False)
    with pytest.raises(SceneError, match="locked_joints are for URDF robots"):
        load_robot(dataclasses.replace(arm, locked_joints=("elbow",)))
    with pytest.raises(SceneError, match="gives its root a <freejoint>; set the robot's "
                                         "floating_base: true"):
        load_robot(RobotSpec(name="c", urdf="mjcf/free_box.xml", floating_base=False))
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco model="m"><worldbody><body name="b"><joint type="hinge"/>'
                   '<geom type="nonsense" size="0.1"/></body></worldbody></mujoco>')
    with pytest.raises(SceneError, match=r"MJCF file '.*bad.xml' of robot 'b': Pinocchio "
                                         r"cannot read it as MJCF"):
        load_robot(RobotSpec(name="b", urdf=str(bad), floating_base=False))


def test_mjcf_text_is_a_robot_description_too():
    """The node's robot_description takes MJCF text (read through a temporary file)."""
    from pathlib import Path

    text = Path("mjcf/two_link_arm.xml").read_text()
    part = load_robot(RobotSpec(name="arm", urdf_string=text, floating_base=False))
    assert [part.model.names[j] for j in range(1, part.model.njoints)] == ["shoulder", "elbow"]
    assert part.geom.ngeoms == 3
