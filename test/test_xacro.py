"""Robots described in xacro: expanded with their arguments at load (scene key
``xacro_args``), with a clear error when they do not expand."""

import dataclasses

import pytest

from contact_lcp.dynamics import RobotSpec
from contact_lcp.dynamics.loading import load_robot
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator
from contact_lcp.sim.scene_loader import load_scene

ARM = "urdf/two_link_arm.urdf.xacro"


def _spec(**args):
    return RobotSpec(name="arm", urdf=ARM, floating_base=False, xacro_args=args)


def _elbow_height(part):
    model = part.model
    return float(model.jointPlacements[model.getJointId("elbow")].translation[2])


def test_the_arguments_change_the_robot():
    assert _elbow_height(load_robot(_spec())) == pytest.approx(0.3)  # the file's default
    assert _elbow_height(load_robot(_spec(link_length="0.45"))) == pytest.approx(0.45)
    part = load_robot(_spec(prefix="left_"))
    assert [part.model.names[j] for j in range(1, part.model.njoints)] == \
        ["left_shoulder", "left_elbow"]
    assert "<xacro:" not in part.xml and 'name="left_upper"' in part.xml  # expanded URDF


def test_a_xacro_that_does_not_expand_names_the_file_and_why(tmp_path):
    bad = tmp_path / "bad.urdf.xacro"
    bad.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                   '<xacro:no_such_macro/></robot>')
    with pytest.raises(SceneError, match=r"robot 'arm': xacro file '.*bad.urdf.xacro' does "
                                         r"not expand: .*no_such_macro"):
        load_robot(dataclasses.replace(_spec(), urdf=str(bad)))
    unset = tmp_path / "unset.urdf.xacro"
    unset.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                     '<link name="$(arg base_name)"/></robot>')
    with pytest.raises(SceneError, match="does not expand: .*base_name"):
        load_robot(dataclasses.replace(_spec(), urdf=str(unset)))


def test_xacro_args_on_a_plain_urdf_are_refused():
    with pytest.raises(SceneError, match="xacro_args given for .*not a .xacro file"):
        load_robot(RobotSpec(name="r", urdf="urdf/disk_3.urdf", xacro_args={"a": "1"}))


def test_the_xacro_scene_runs_the_arm_holds_and_the_box_rests():
    scene = load_scene("config/xacro_arm.yaml")
    assert scene.robots[0].robot.xacro_args == {"link_length": "0.35"}
    sim = Simulator(scene)
    for _ in range(500):
        sim.step()
    js = sim.joint_state()
    assert list(js.position) == pytest.approx([0.6, 0.9], abs=1e-3)
    box = sim.body_state("box")
    assert box.pose[2] == pytest.approx(0.05, abs=1e-4)
    assert max(abs(x) for x in box.twist) < 1e-3


def test_xacro_text_is_a_robot_description_too():
    """The node's robot_description takes xacro text: expanded with the defaults."""
    from pathlib import Path

    part = load_robot(RobotSpec(name="arm", urdf_string=Path(ARM).read_text(),
                                floating_base=False))
    assert _elbow_height(part) == pytest.approx(0.3)
    assert "<xacro:" not in part.xml
