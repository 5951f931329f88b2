"""Entities of a running simulation: added, removed and moved without losing the rest of
the state (contact_lcp.sim.entities, what the simulation_interfaces services call)."""

import numpy as np
import pytest

from contact_lcp.dynamics import BodySpec
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator
from contact_lcp.sim import entities as E
from contact_lcp.sim.scene_loader import load_scene

G = 9.81


@pytest.fixture(scope="module")
def stepped():
    """The humanoid after 50 steps (1 kHz) with a trajectory on one elbow."""
    sim = Simulator.from_file("config/humanoid_stand.yaml")
    sim.set_trajectory(["l_elbow"], [0.0, 0.5], [[0.0], [-0.8]])
    for _ in range(50):
        sim.step()
    return sim


def _box(name="box", z=0.5, x=1.0):
    return BodySpec(name=name, shape="box", size=(0.2, 0.2, 0.2), mass=1.0,
                    pose=(x, 0.0, z, 0.0, 0.0, 0.0, 1.0))


def test_adding_a_body_keeps_time_state_and_commands(stepped):
    new = E.with_body(stepped, _box())
    assert E.entities(new) == [("humanoid", "robot"), ("box", "body")]
    assert new.t == stepped.t
    n = stepped.q.size
    np.testing.assert_array_equal(new.q[:n], stepped.q)
    np.testing.assert_array_equal(new.v[:stepped.v.size], stepped.v)
    assert new.controls[0].tracks is stepped.controls[0].tracks  # the elbow's trajectory


def test_a_spawned_box_falls_freely_then_rests_on_the_ground(stepped):
    sim = E.with_body(stepped, _box(z=0.5))
    t0 = sim.t
    for _ in range(200):  # 0.2 s of free fall: z = 0.5 - g t^2 / 2 exactly (explicit in v)
        sim.step()
    pose, twist = E.pose_and_twist(sim, "box")
    h, k = sim.h, 200
    # semi-implicit Euler: v_k = -g h k, z_k = z0 - g h^2 k (k + 1) / 2
    assert pose[2] == pytest.approx(0.5 - G * h * h * k * (k + 1) / 2, abs=1e-9)
    assert twist[2] == pytest.approx(-G * h * k, abs=1e-9)
    for _ in range(300):
        sim.step()
    pose, twist = E.pose_and_twist(sim, "box")
    # resting on its face: centre at half its size, within the contact's 1e-4 m drift
    assert pose[2] == pytest.approx(0.1, abs=1e-4)
    assert np.abs(twist).max() < 1e-3
    assert sim.t == pytest.approx(t0 + 500 * h)


def test_removing_an_entity_keeps_the_others_exactly(stepped):
    two = E.with_body(E.with_body(stepped, _box("a", x=1.0)), _box("b", x=-1.0, z=0.3))
    one = E.without(two, "a")
    assert [n for n, _ in E.entities(one)] == ["humanoid", "b"]
    np.testing.assert_array_equal(E.pose_and_twist(one, "b")[0], E.pose_and_twist(two, "b")[0])
    np.testing.assert_array_equal(one.q[:stepped.q.size], two.q[:stepped.q.size])
    with pytest.raises(KeyError, match="no entity 'a'; entities: humanoid, b"):
        E.without(one, "a")


def test_names_are_unique_and_a_scene_keeps_something():
    sim = Simulator(load_scene("config/box_on_plane.yaml"))
    name = E.entities(sim)[0][0]
    with pytest.raises(SceneError, match=f"an entity named '{name}' exists already"):
        E.with_body(sim, _box(name))
    with pytest.raises(SceneError, match="neither robots nor bodies"):
        E.without(sim, name)
    with pytest.raises(SceneError, match="deep penetration"):  # spawned into the box
        E.with_body(sim, _box("inside", x=sim.body_state(name).pose[0],
                              z=sim.body_state(name).pose[2]))


def test_setting_a_pose_and_twist_moves_a_body_and_refuses_bad_values():
    sim = Simulator(load_scene("config/box_on_plane.yaml"))
    name = E.entities(sim)[0][0]
    c, s = np.cos(0.25), np.sin(0.25)  # half of 0.5 rad about z
    E.set_pose_and_twist(sim, name, [0.3, 0.2, 1.0, 0, 0, s, c], [1.0, 0, 0, 0, 0, 2.0])
    pose, twist = E.pose_and_twist(sim, name)
    np.testing.assert_allclose(pose, [0.3, 0.2, 1.0, 0, 0, s, c], atol=1e-15)
    np.testing.assert_allclose(twist, [1.0, 0, 0, 0, 0, 2.0], atol=1e-15)  # back in W
    sim.step()  # in the air: x moves by v h, yaw by w h
    pose, _ = E.pose_and_twist(sim, name)
    assert pose[0] == pytest.approx(0.3 + sim.h, abs=1e-12)
    with pytest.raises(SceneError, match="pose has a zero quaternion"):
        E.set_pose_and_twist(sim, name, [0, 0, 1, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="6 finite numbers"):
        E.set_pose_and_twist(sim, name, twist=[0, 0, float("nan"), 0, 0, 0])
    with pytest.raises(KeyError, match="no entity 'ghost'"):
        E.set_pose_and_twist(sim, "ghost", [0, 0, 1, 0, 0, 0, 1])


def test_a_fixed_base_has_its_scene_pose_and_cannot_be_moved():
    sim = Simulator(load_scene("config/grasp.yaml"))
    fixed = [r.name for r in sim.world.robots if not r.floating_base]
    assert fixed, "grasp.yaml's hand is fixed"
    pose, twist = E.pose_and_twist(sim, fixed[0])
    assert np.all(twist == 0) and np.linalg.norm(pose[3:]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="fixed base"):
        E.set_pose_and_twist(sim, fixed[0], pose)


def test_a_robot_added_from_mjcf_falls_onto_the_ground_beside_the_rest(stepped):
    from contact_lcp.dynamics import RobotSpec
    from contact_lcp.sim.scene import RobotSceneSpec

    crate = RobotSceneSpec(RobotSpec(name="crate", urdf="mjcf/free_box.xml",
                                     base_pose=(1.0, 0.0, 0.3, 0.0, 0.0, 0.0, 1.0)),
                           stepped.scene.robots[0].controller)
    sim = E.with_robot(stepped, crate)
    assert [n for n, _ in E.entities(sim)] == ["humanoid", "crate"]
    np.testing.assert_array_equal(sim.q[:stepped.q.size], stepped.q)  # robots first: same
    assert E.pose_and_twist(sim, "crate")[0][:3] == pytest.approx([1.0, 0.0, 0.3])
    for _ in range(600):
        sim.step()
    assert E.pose_and_twist(sim, "crate")[0][2] == pytest.approx(0.05, abs=1e-4)
