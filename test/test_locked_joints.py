"""Joints locked at their initial positions (contact_lcp/dynamics/locking.py): the locked
robot is the unlocked one held still there, and links without mass load once locked."""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.dynamics import RobotSpec, World
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict

ROOT = Path(__file__).resolve().parents[1]
ARM = str(ROOT / "test" / "data" / "two_link_arm.urdf")  # revolute, continuous, prismatic
START = {"shoulder": 0.4, "elbow": -0.7, "wrist": 0.03}


def _arm(locked=()):
    w = World([RobotSpec("arm", urdf=ARM, floating_base=False, initial_joints=START,
                         locked_joints=tuple(locked))])
    w.forward(w.q0)
    return w


@pytest.mark.parametrize("locked", [["shoulder"], ["elbow"], ["wrist"], ["elbow", "wrist"],
                                    ["shoulder", "elbow", "wrist"]])
def test_a_locked_arm_is_the_arm_held_at_its_initial_positions(locked):
    free, held = _arm(), _arm(locked)
    assert held.robots[0].joint_names == [j for j in ("shoulder", "elbow", "wrist")
                                          if j not in locked]
    for link in ("arm_base", "upper", "fore", "tool"):  # every link where it was
        np.testing.assert_allclose(held.frame_placement(link), free.frame_placement(link),
                                   rtol=0, atol=1e-12, err_msg=link)
    assert held.robots[0].mass == pytest.approx(free.robots[0].mass, abs=1e-12)
    # the URDF the node publishes is the locked one
    assert all(f'name="{j}" type="fixed"' in held.robots[0].urdf_xml for j in locked)
    # the joints left carry the same gravity torques: the locked links' inertia is
    # merged into their parents', not lost
    g_free = pin.computeGeneralizedGravity(free.model, free.model.createData(), free.q0)
    g_held = pin.computeGeneralizedGravity(held.model, held.model.createData(), held.q0)
    kept = [free.model.idx_vs[free.model.getJointId(j)] for j in held.robots[0].joint_names]
    np.testing.assert_allclose(g_held, g_free[kept], rtol=0, atol=1e-12)


MASSLESS = """<robot name="hand">
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.04"/></geometry></collision></link>
  <link name="finger"/>
  <joint name="curl" type="revolute"><parent link="palm"/><child link="finger"/>
    <origin xyz="0.05 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def test_a_massless_link_is_refused_naming_its_joint_and_loads_once_locked(tmp_path):
    (tmp_path / "hand.urdf").write_text(MASSLESS)
    robot = {"name": "hand", "urdf": "hand.urdf", "base_pose": [0, 0, 0.02, 0, 0, 0, 1]}
    with pytest.raises(SceneError, match=r"locked_joints: \['curl'\]"):
        Simulator(scene_from_dict({"robots": [robot]}, base_dir=tmp_path))
    sim = Simulator(scene_from_dict({"robots": [dict(robot, locked_joints=["curl"],
                                                     controller={"type": "effort"})]},
                                    base_dir=tmp_path))
    for _ in range(300):
        sim.step()
    # resting on the ground: its weight carried, no joint left
    assert sim.contact_force_total()[2] == pytest.approx(9.81, rel=1e-3)
    assert sim.world.robots[0].joint_names == []


@pytest.mark.parametrize("locked, words", [
    (["knee"], ["'knee'", "shoulder", "elbow", "wrist"]),   # not a joint: the list
    (["arm_base"], ["'arm_base'"]),                          # a link
])
def test_locking_what_is_not_a_moving_joint_is_named(locked, words):
    with pytest.raises(SceneError) as e:
        _arm(locked)
    for w in words:
        assert w in str(e.value)


def test_a_mimicked_joint_locks_only_with_its_mimics():
    urdf = MASSLESS.replace('<link name="finger"/>', '<link name="finger"><inertial><mass '
                            'value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" '
                            'ixz="0" iyz="0"/></inertial></link><link name="tip"><inertial>'
                            '<mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" '
                            'ixy="0" ixz="0" iyz="0"/></inertial></link>')
    urdf = urdf.replace("</robot>", '<joint name="tip_curl" type="revolute"><parent link='
                        '"finger"/><child link="tip"/><origin xyz="0.03 0 0"/><axis xyz='
                        '"0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                        '<mimic joint="curl"/></joint></robot>')
    with pytest.raises(SceneError, match=r"'curl' is mimicked by \['tip_curl'\]"):
        World([RobotSpec("hand", urdf_string=urdf, locked_joints=("curl",))])
    w = World([RobotSpec("hand", urdf_string=urdf, locked_joints=("curl", "tip_curl"))])
    assert w.robots[0].joint_names == []


def test_the_scene_key_is_checked():
    with pytest.raises(SceneError, match="locked_joints"):
        scene_from_dict({"robots": [{"name": "a", "urdf": ARM, "locked_joints": "elbow"}]})
