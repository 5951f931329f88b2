"""Controllers: references, implicit servos, external commands and their validation."""

from pathlib import Path

import numpy as np
import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.sim import CommandError, Simulator, scene_from_dict
from contact_lcp.sim.references import SampledReference, SinusoidReference

ARM = str(Path(__file__).parent / "data" / "two_link_arm.urdf")


def arm_sim(controller, tmp_path=None, **extra):
    return Simulator(scene_from_dict({
        "time_step": 1e-3, "ground": False,
        "robots": [{"name": "arm", "urdf": ARM, "floating_base": False,
                    "base_pose": [0, 0, 0.5, 0, 0, 0, 1], "controller": controller}],
        **extra}, base_dir=tmp_path or "."))


def test_sinusoid_reference_starts_at_q0_and_matches_its_derivatives():
    ref = SinusoidReference([0.3], [0.2], [2.0], [-np.pi / 2])
    q, v, a = ref(0.0)
    assert q[0] == pytest.approx(0.3) and v[0] == pytest.approx(0.0, abs=1e-12)
    t, e = 0.7, 1e-6
    assert ref(t)[1][0] == pytest.approx((ref(t + e)[0][0] - ref(t - e)[0][0]) / (2 * e), rel=1e-6)
    assert ref(t)[2][0] == pytest.approx((ref(t + e)[1][0] - ref(t - e)[1][0]) / (2 * e), rel=1e-6)


def test_sampled_reference_interpolates_and_clamps():
    ref = SampledReference([0.0, 1.0, 2.0], [[0.0], [1.0], [0.0]])
    assert ref(0.5)[0][0] == pytest.approx(0.5) and ref(0.5)[1][0] == pytest.approx(1.0)
    assert ref(-1.0)[0][0] == 0.0 and ref(5.0)[0][0] == 0.0 and ref(5.0)[1][0] == 0.0


def test_csv_trajectory_is_tracked(tmp_path):
    (tmp_path / "traj.csv").write_text("time,shoulder\n0.0,0.0\n0.5,0.4\n1.0,0.4\n")
    sim = arm_sim({"type": "pd", "kp": 400.0, "kd": 40.0,
                   "trajectory": {"type": "csv", "file": "traj.csv"}}, tmp_path)
    i = sim.joint_names.index("shoulder")
    for _ in range(1000):
        sim.step()
    assert sim.joint_state().position[i] == pytest.approx(0.4, abs=5e-3)


def test_csv_trajectory_errors_name_the_problem(tmp_path):
    (tmp_path / "bad.csv").write_text("time,knee\n0.0,0.0\n")
    with pytest.raises(SceneError, match="unknown joint 'knee'"):
        arm_sim({"type": "pd", "trajectory": {"type": "csv", "file": "bad.csv"}}, tmp_path)


def test_implicit_servo_is_stable_at_gains_explicit_pd_cannot_take():
    # kd h / I ~ 1e4 * 1e-3 / 2e-3 = 5000 >> 2: explicit PD would blow up within steps.
    sim = arm_sim({"type": "pd", "kp": 1e6, "kd": 1e4, "gravity_compensation": False})
    sim.set_command("position", [0.3], joints=["shoulder"], kp=1e6, kd=1e4)
    for _ in range(500):
        sim.step()
        assert np.all(np.isfinite(sim.v)) and np.max(np.abs(sim.v)) < 50
    i = sim.joint_names.index("shoulder")
    assert sim.joint_state().position[i] == pytest.approx(0.3, abs=1e-3)


def test_effort_limit_clamps_the_applied_torque():
    sim = arm_sim({"type": "effort"})
    sim.set_command("effort", [1000.0, 0.0, 0.0])
    sim.step()
    i = sim.joint_names.index("shoulder")
    assert sim.joint_state().effort[i] == pytest.approx(20.0)  # URDF effort limit


@pytest.mark.parametrize("args, message", [
    (("position", [0.1, 0.2]), "expected 3 values"),
    (("position", [np.nan, 0, 0]), "finite"),
    (("speed", [0, 0, 0]), "unknown command mode"),
])
def test_bad_commands_raise_and_change_nothing(args, message):
    sim = arm_sim({"type": "effort"})
    with pytest.raises(CommandError, match=message):
        sim.set_command(*args)
    with pytest.raises(CommandError, match="unknown joint 'hip'"):
        sim.set_command("position", [0.0], joints=["hip"])
    with pytest.raises(CommandError, match="strictly increasing"):
        sim.set_trajectory(["shoulder"], [0.0, 0.0], [[0.0], [0.1]])
    sim.step()
    assert np.all(sim.joint_state().effort == 0.0)


def test_a_non_finite_step_raises_and_keeps_the_last_finite_state():
    from contact_lcp.sim import SimulationError

    sim = arm_sim({"type": "pd"})
    sim.step()
    q, v, t = sim.q, sim.v, sim.t
    real = sim.stepper.free_motion

    class Broken:  # stands in for dynamics that blow up
        gravity = staticmethod(real.gravity)

        def __call__(self, *args, **kwargs):
            v_free, K = real(*args, **kwargs)
            return np.full_like(v_free, np.nan), K

    sim.stepper.free_motion = Broken()
    with pytest.raises(SimulationError, match="not be finite"):
        sim.step()
    np.testing.assert_array_equal(sim.q, q)
    np.testing.assert_array_equal(sim.v, v)
    assert sim.t == t
    sim.stepper.free_motion = real
    sim.step()  # and it goes on from there
    assert np.all(np.isfinite(sim.q))
