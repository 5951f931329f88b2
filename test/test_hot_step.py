"""The compiled common step (sim/hot_step.py) is a shortcut of the staged step, not
another model: the same scenes with and without it give the same states and impulses."""

import numpy as np
import pytest
import yaml

from contact_lcp.dynamics.robot_data import robot_data_installed
from contact_lcp.sim import Simulator

# (scene, steps, whether most steps must take the compiled path): a standing humanoid
# (8 contacts, two limit-free feet), a box resting on the ground, a box sliding down an
# incline (its pyramids turned to the slip each step), the humanoid squatting on
# prescribed joints, a tower of 5 boxes (box-box pairs), 21 spheres settling in a walled
# box (sphere-sphere and sphere-box pairs) and a falling box stack
SCENES = [("config/humanoid_stand.yaml", 300, True), ("config/box_on_plane.yaml", 200, True),
          ("config/incline.yaml", 200, False), ("config/humanoid_squat.yaml", 200, True),
          ("config/tower_5.yaml", 300, True), ("config/spheres_21.yaml", 150, False),
          ("config/box_stack.yaml", 300, False)]


def _run(path, steps, compiled):
    sim = Simulator.from_file(path)
    sim.stepper.hot.enabled = compiled and sim.stepper.hot.enabled
    states, impulses, reports = [], [], []
    for _ in range(steps):
        info = sim.step()
        states.append(np.concatenate([sim.q, sim.v]))
        impulses.append(sim._last.impulse_C.copy())
        reports.append((info.report.outcome, info.report.certified, info.report.fallbacks))
    return sim, states, impulses, reports


@pytest.mark.parametrize("path,steps,mostly", SCENES)
def test_compiled_step_gives_the_staged_steps_states_and_impulses(path, steps, mostly):
    hot, s1, f1, r1 = _run(path, steps, True)
    cold, s2, f2, r2 = _run(path, steps, False)
    assert cold.stepper.hot.hits == 0
    if mostly:
        assert hot.stepper.hot.hits > steps // 2, hot.stepper.hot.misses
    for k in range(steps):
        # identical inputs and kernels: equal to round-off (none so far)
        np.testing.assert_allclose(s1[k], s2[k], rtol=0, atol=1e-9, err_msg=f"step {k}")
        assert f1[k].shape == f2[k].shape, f"step {k}: other contacts"
        # per contact, although a box's four corners share its load in many ways (the
        # LCP's impulses are not unique): the same kernels on the same inputs pick the
        # same split (v+ is summed by the same BLAS products as the staged step)
        np.testing.assert_allclose(f1[k], f2[k], rtol=0, atol=1e-9 * max(1.0, np.abs(f2[k]).max()),
                                   err_msg=f"step {k}")
        assert r1[k] == r2[k]


@pytest.mark.skipif(not robot_data_installed(), reason="example-robot-data not installed")
def test_talos_stands_on_the_compiled_step_as_on_the_staged_one():
    hot, s1, f1, _ = _run("config/talos_stand.yaml", 150, True)
    _, s2, f2, _ = _run("config/talos_stand.yaml", 150, False)
    assert hot.stepper.hot.hits > 100, hot.stepper.hot.misses
    np.testing.assert_allclose(s1[-1], s2[-1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(f1[-1], f2[-1], rtol=0, atol=1e-9)


def test_the_compiled_step_records_the_same_problem():
    hot = Simulator.from_file("config/humanoid_stand.yaml")
    cold = Simulator.from_file("config/humanoid_stand.yaml")
    cold.stepper.hot.enabled = False
    for sim in (hot, cold):
        sim.record_problems = True
        for _ in range(60):
            sim.step()
    assert hot.stepper.hot.hits > 30
    a, b = hot.recorded_problems[-1], cold.recorded_problems[-1]
    for name, x in a.arrays().items():
        np.testing.assert_allclose(x, b.arrays()[name], rtol=0, atol=1e-9, err_msg=name)
    assert hot.stats == cold.stats


def test_a_dropped_simulator_is_freed_at_once():
    # The node replaces its simulator on a parameter change; a reference cycle (the
    # compiled step held its stepper, which holds it) kept the old world alive until a
    # full garbage collection: the 10-minute soak's memory grew ~13 MB a minute.
    import gc
    import weakref

    sim = Simulator.from_file("config/humanoid_stand.yaml")
    for _ in range(5):
        sim.step()
    assert sim.stepper.hot.hits > 0
    refs = [weakref.ref(x) for x in (sim, sim.stepper, sim.world, sim.detector)]
    gc.disable()
    try:
        del sim
        assert [r() is None for r in refs] == [True] * 4
    finally:
        gc.enable()


CART = """<robot name="cart">
  <link name="base">
    <inertial><mass value="2"/><inertia ixx="0.02" iyy="0.02" izz="0.02" ixy="0" ixz="0"
      iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.05"/></geometry></collision>
    <!-- a bumper: a cylinder lying along y, its bottom 4 mm above the box's -->
    <collision><origin xyz="0.13 0 -0.001" rpy="1.5708 0 0"/>
      <geometry><cylinder radius="0.02" length="0.1"/></geometry></collision>
  </link>
</robot>"""


def test_a_cylinder_near_the_ground_but_out_of_reach_keeps_the_compiled_step(tmp_path):
    # The compiled step had no closed form for a cylinder against the ground, so a robot
    # with a cylinder a few mm above it (ANYmal B's foot adapters, 5.9 mm) ran every
    # step on the staged path. Out of reach, the pair now gives no point on either path.
    (tmp_path / "cart.urdf").write_text(CART)
    (tmp_path / "cart.yaml").write_text(
        "time_step: 0.001\nground: {height: 0.0, friction: 0.8}\n"
        "robots:\n  - {name: cart, urdf: cart.urdf, floating_base: true,"
        " base_pose: [0, 0, 0.025, 0, 0, 0, 1], controller: {type: effort}}\n")
    path = str(tmp_path / "cart.yaml")
    hot, s1, f1, r1 = _run(path, 200, True)
    _, s2, f2, r2 = _run(path, 200, False)
    assert hot.stepper.hot.hits > 150, hot.stepper.hot.misses
    assert len(hot.world.collision_model.geometryObjects) == 3  # the ground, box, cylinder
    for k in range(200):
        np.testing.assert_allclose(s1[k], s2[k], rtol=0, atol=1e-9, err_msg=f"step {k}")
        np.testing.assert_allclose(f1[k], f2[k], rtol=0, atol=1e-9, err_msg=f"step {k}")
        assert r1[k] == r2[k]


def test_curved_bodies_on_the_ground_take_the_compiled_step_as_the_staged_one(tmp_path):
    # A cylinder lying and rolling, a cylinder standing on its flat end (a level rim:
    # eight samples, reduced as a patch), a capsule lying, an ellipsoid and a tilted
    # cylinder resting on a rim point: ground.curved_on_ground against the staged
    # detector's support.ground_points and reduction.
    def body(name, shape, size, x, z, quat=(0, 0, 0, 1), velocity=(0, 0, 0, 0, 0, 0)):
        return {"name": name, "shape": shape, "size": size, "mass": 1.0,
                "pose": [x, 0, z, *quat], "velocity": list(velocity)}
    s = 0.5 ** 0.5
    bodies = [body("roller", "cylinder", [0.05, 0.2], 0.0, 0.05, (s, 0, 0, s), (0.5, 0, 0, 0, 10, 0)),
              body("stand", "cylinder", [0.05, 0.2], 1.0, 0.1),
              body("pill", "capsule", [0.03, 0.2], 2.0, 0.03, (0, s, 0, s)),
              body("egg", "ellipsoid", [0.05, 0.04, 0.03], 3.0, 0.03),
              body("lean", "cylinder", [0.05, 0.2], 4.0, 0.2, (0.2, 0, 0, 0.98))]
    (tmp_path / "curved.yaml").write_text(yaml.safe_dump(
        {"time_step": 0.001, "ground": {"height": 0.0, "friction": 0.5}, "bodies": bodies}))
    path = str(tmp_path / "curved.yaml")
    hot, s1, f1, r1 = _run(path, 300, True)
    _, s2, f2, r2 = _run(path, 300, False)
    assert hot.stepper.hot.hits > 150, hot.stepper.hot.misses
    for k in range(300):
        np.testing.assert_allclose(s1[k], s2[k], rtol=0, atol=1e-9, err_msg=f"step {k}")
        assert f1[k].shape == f2[k].shape, f"step {k}: other contacts"
        np.testing.assert_allclose(f1[k], f2[k], rtol=0, atol=1e-9, err_msg=f"step {k}")
        assert r1[k] == r2[k]
