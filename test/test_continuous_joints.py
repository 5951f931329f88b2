"""Continuous joints (Pinocchio's RUB joints: q = (cos θ, sin θ), v = θ') are read,
servoed, reported and recorded as angles θ (contact_lcp/sim/joint_angles.py).

The pendulum (test/data/continuous_pendulum.urdf): a 1 kg bob at l = 0.5 m below a
hinge about y, with URDF <limit> bounds ±0.1 rad that a continuous joint ignores. Under
a PD servo without gravity compensation its equilibrium for a target θ* is the root of
kp (θ* - θ) = m g l sin θ (the static deflection), computed here by Newton's method.
The cart (test/data/continuous_cart.urdf): a box chassis on four continuous wheels.
"""

import math
import time
from pathlib import Path

import numpy as np
import pytest

from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.recording import RunRecorder

DATA = Path(__file__).parent / "data"
PENDULUM = str(DATA / "continuous_pendulum.urdf")
CART = str(DATA / "continuous_cart.urdf")
M, G, L = 1.0, 9.81, 0.5  # the pendulum's bob [kg], gravity [m/s^2], arm [m]
KP, KD = 100.0, 10.0  # [N.m/rad], [N.m.s/rad]: critically damped (I = 0.251 kg.m^2)


def pendulum_scene(**robot):
    spec = {"name": "pendulum", "urdf": PENDULUM, "floating_base": False,
            "controller": {"type": "pd", "kp": KP, "kd": KD,
                           "gravity_compensation": False}}
    spec.update(robot)
    return {"time_step": 1e-3, "gravity": [0.0, 0.0, -9.81], "ground": False,
            "robots": [spec]}


def pendulum(**robot):
    return Simulator(scene_from_dict(pendulum_scene(**robot), base_dir="."))


def equilibrium(target):
    """θ with KP (target - θ) = m g l sin θ (Newton from the target; the map is a
    contraction, m g l / KP = 0.049)."""
    theta = target
    for _ in range(50):
        f = KP * (target - theta) - M * G * L * math.sin(theta)
        theta -= f / (-KP - M * G * L * math.cos(theta))
    return theta


def run(sim, seconds):
    for _ in range(int(round(seconds / sim.h))):
        sim.step()


def angle_in_q(sim, joint="hinge"):
    """atan2(sin, cos) of ``joint`` read straight from the configuration."""
    model = sim.world.model
    iq = model.idx_qs[model.getJointId(joint)]
    return math.atan2(sim.q[iq + 1], sim.q[iq])


# Settling: with KP, KD and I = m l^2 + 0.001 the servo is critically damped at
# ω = sqrt(KP / I) = 20 rad/s, so after 1.5 s the transient is below 1e-10 rad; the
# implicit servo has no steady-state bias. 1e-4 rad leaves room for the integrator only.
TOL = 1e-4


def test_a_pendulum_holds_its_initial_angle_with_the_static_deflection():
    sim = pendulum(initial_joints={"hinge": 0.5})
    assert sim.joint_state().position[0] == pytest.approx(0.5, abs=1e-12)  # not cos 0.5
    run(sim, 1.5)
    expected = equilibrium(0.5)  # 0.4775 rad: 0.0225 rad below the target
    assert angle_in_q(sim) == pytest.approx(expected, abs=TOL)
    assert sim.joint_state().position[0] == pytest.approx(expected, abs=TOL)


def test_a_position_command_is_an_absolute_angle_reached_the_shortest_way():
    sim = pendulum()
    sim.set_command("position", [2.5], kp=KP, kd=KD)
    run(sim, 1.5)
    assert sim.joint_state().position[0] == pytest.approx(equilibrium(2.5), abs=TOL)
    # 2.5 - 4π is the same target: the servo stays where it is instead of unwinding
    sim.set_command("position", [2.5 - 4 * math.pi], kp=KP, kd=KD)
    run(sim, 0.5)
    assert sim.joint_state().position[0] == pytest.approx(equilibrium(2.5), abs=TOL)


def test_an_srdf_reference_configuration_angle_is_read_back_as_that_angle(tmp_path):
    srdf = tmp_path / "pendulum.srdf"
    srdf.write_text('<robot name="continuous_pendulum"><group_state name="up" group="all">'
                    '<joint name="hinge" value="2.0"/></group_state></robot>')
    sim = pendulum(srdf=str(srdf), reference_configuration="up")
    assert sim.joint_state().position[0] == pytest.approx(2.0, abs=1e-12)
    assert angle_in_q(sim) == pytest.approx(2.0, abs=1e-12)
    run(sim, 1.5)  # the scene's servo holds the SRDF posture, as an angle
    assert sim.joint_state().position[0] == pytest.approx(equilibrium(2.0), abs=TOL)


def test_a_spinning_joint_reports_its_unwrapped_angle_through_its_urdf_limits():
    """Velocity-driven at ~10 rad/s for 1 s: the reported angle grows by the
    integrator's own increments (a step without contact is the stepper's second-order
    one: path velocity (v + v+) / 2) well past 2π and the URDF's ±0.1 rad; (cos, sin)
    in q stays consistent with it."""
    sim = pendulum()
    sim.set_command("velocity", [10.0], kd=KD)
    start = sim.joint_state().position[0]
    turned = 0.0
    for _ in range(1000):
        v0 = sim.v[0]
        sim.step()
        turned += sim.h * 0.5 * (v0 + sim.v[0])
    position = sim.joint_state().position[0]
    assert turned > 2 * math.pi
    assert position - start == pytest.approx(turned, abs=1e-9)
    assert math.remainder(position - angle_in_q(sim), 2 * math.pi) == pytest.approx(0, abs=1e-9)


def test_a_state_file_carries_the_unwrapped_angle(tmp_path):
    """A joint spun past two turns and saved reads the same unwrapped angle after
    load_state (q holds only (cos, sin)); angles that are not q's plus whole turns are
    refused, naming the field, and leave the simulator as it was."""
    import json

    from contact_lcp.sim.checkpoint import CheckpointError

    sim = pendulum()
    sim.set_command("velocity", [30.0], kd=KD)
    run(sim, 0.6)
    spun = sim.joint_state().position[0]
    assert spun > 4 * math.pi
    path = tmp_path / "spun.state"
    sim.save_state(path)
    fresh = pendulum()
    fresh.load_state(path)
    assert fresh.joint_state().position[0] == pytest.approx(spun, abs=1e-12)

    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["angles"] = arrays["angles"] + 0.5
    bad = tmp_path / "bad.state"
    with open(bad, "wb") as f:
        np.savez(f, **arrays)
    other = pendulum()
    before = other.joint_state().position[0]
    with pytest.raises(CheckpointError, match="angles"):
        other.load_state(bad)
    assert other.joint_state().position[0] == before
    assert json.loads(str(arrays["header"]))["state"]["angles"] == {"array": "angles"}


def test_a_trajectory_starts_on_the_turn_nearest_its_first_point():
    """As the node starts a trajectory (ros2_control's angle_wraparound): from the
    current angle taken within π of the first point, so it does not unwind turns."""
    sim = pendulum()
    sim.set_command("velocity", [10.0], kd=KD)
    run(sim, 1.0)
    before = sim.joint_state().position[0]  # ~ 9 rad, past one turn
    start = sim.trajectory_start(["hinge"], [0.5])[0]
    assert abs(start - 0.5) <= math.pi
    assert math.remainder(start - before, 2 * math.pi) == pytest.approx(0, abs=1e-12)
    sim.set_trajectory(["hinge"], [sim.t, sim.t + 0.5], [[start], [0.5]])
    run(sim, 1.5)
    after = sim.joint_state().position[0]
    assert abs(after - before) < math.pi  # the short way to 0.5 (mod 2π)
    assert math.remainder(after - equilibrium(0.5), 2 * math.pi) == pytest.approx(0, abs=TOL)


def test_a_prescribed_continuous_joint_follows_its_reference_through_pi():
    """A prescribed sinusoid from 3 rad with amplitude 1 rad crosses π, where
    atan2(sin, cos) jumps by 2π: the joint follows the reference, an angle, throughout."""
    sim = pendulum(initial_joints={"hinge": 3.0}, controller={
        "type": "prescribed", "trajectory": {"type": "sinusoid", "joints": {
            "hinge": {"amplitude": 1.0, "period": 1.0}}}})
    worst, highest = 0.0, 0.0
    for _ in range(1000):
        sim.step()
        ref = 3.0 + math.sin(2 * math.pi * sim.t)
        p = sim.joint_state().position[0]
        worst, highest = max(worst, abs(p - ref)), max(highest, p)
    assert highest > 3.9  # reached 3 + 1 rad, past π
    # the prescribed velocity lands on the reference at the step's end, the second-order
    # step moves by h (v + v+) / 2: a lag of at most h |v|max / 2 = h A ω / 2 = 3.1e-3 rad
    assert worst < sim.h * 1.0 * 2 * math.pi


def cart():
    return Simulator(scene_from_dict({
        "time_step": 2e-3, "gravity": [0.0, 0.0, -9.81],
        "ground": {"height": 0.0, "friction": 1.0},
        "robots": [{"name": "cart", "urdf": CART, "floating_base": True,
                    "base_pose": [0, 0, 0.1, 0, 0, 0, 1], "controller": {"type": "effort"}}]},
        base_dir="."))


def test_wheels_of_a_cart_report_their_integrated_angles_and_the_recording_holds_them():
    """The front wheels driven at 20 rad/s for 1 s turn more than three times (6π); each
    wheel's reported angle is its initial one plus h Σ v, the rear wheels roll along,
    and the run's recording has the same angles per joint."""
    sim = cart()
    names = sim.joint_names
    assert names == ["fl", "fr", "rl", "rr"]
    sim.set_command("velocity", [20.0, 20.0], joints=["fl", "fr"], kd=2.0)
    rec = RunRecorder([], names)
    start = sim.joint_state().position
    iv = [sim.world.model.idx_vs[sim.world.model.getJointId(n)] for n in names]
    turned = np.zeros(4)
    for _ in range(500):
        info = sim.step()
        turned += sim.h * sim.v[iv]
        rec.add(sim, info)
    js = sim.joint_state()
    np.testing.assert_allclose(js.position - start, turned, atol=1e-9)
    assert np.all(turned[:2] > 6 * math.pi)
    assert np.all(turned[2:] > 2 * math.pi)  # the free rear wheels roll with the cart
    assert sim.base_state().pose[0] > 0.5  # it drove forward [m]
    data = rec.arrays()
    assert list(data["joint_names"]) == names
    assert data["joint_position"].shape == (500, 4)
    np.testing.assert_array_equal(data["joint_position"][-1], js.position)
    np.testing.assert_array_equal(data["joint_velocity"][-1], js.velocity)


def test_simulate_output_records_joint_angles(tmp_path):
    """``contact-lcp simulate --output``: the run's joint_position column is the angle."""
    import yaml

    from contact_lcp.cli import main

    scene = tmp_path / "pendulum.yaml"
    data = pendulum_scene(initial_joints={"hinge": 2.0})
    data["duration"] = 0.05
    scene.write_text(yaml.safe_dump(data))
    out = tmp_path / "run.npz"
    assert main(["simulate", str(scene), "--output", str(out)]) == 0
    with np.load(out, allow_pickle=False) as f:
        assert list(f["joint_names"]) == ["hinge"]
        position = f["joint_position"][:, 0]
        q = f["q"]
    assert position.shape == (50,)
    np.testing.assert_allclose(position, np.arctan2(q[:, 1], q[:, 0]), atol=1e-12)
    assert abs(position[-1] - 2.0) < 0.1  # falling from 2 rad, not near cos 2 = -0.42


@pytest.mark.ros
def test_joint_states_carry_the_angle_of_a_continuous_joint(tmp_path):
    """The node's /joint_states: the pendulum's position is its angle (an
    initial 2 rad, not cos 2), a position command over /joint_commands is reached as an
    angle, a velocity command makes the position grow past two turns (unwrapped, as
    Gazebo reports a continuous joint), and a ~/joint_trajectory to 0.5 rad then ends
    on the current turn instead of unwinding them."""
    pytest.importorskip("rclpy")
    import yaml
    from builtin_interfaces.msg import Duration
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from ros_harness import Harness

    scene = tmp_path / "pendulum.yaml"
    scene.write_text(yaml.safe_dump(pendulum_scene(initial_joints={"hinge": 2.0})))
    h = Harness({"scene": str(scene), "real_time_factor": 0.0, "marker_rate": 0.0,
                 "publish_rate": 100.0})
    try:
        h.record(JointState, "/joint_states")
        first = h.wait_for(lambda: h.latest("/joint_states"), 30, "/joint_states")
        assert list(first.name) == ["hinge"]
        # falling (no gravity compensation) from 2 rad towards equilibrium(2.0) = 1.955
        assert 1.9 < first.position[0] <= 2.0 + 1e-9
        commands = h.client.create_publisher(JointState, "/joint_commands", 10)

        def reaches(message, ok, publisher=commands):
            publisher.publish(message)  # again until the subscription has matched
            time.sleep(0.05)
            js = h.latest("/joint_states")
            return ok(js.position[0])

        target = equilibrium(2.5)
        h.wait_for(lambda: reaches(JointState(name=["hinge"], position=[2.5]),
                                   lambda p: abs(p - target) < 1e-3),
                   30, f"the hinge at {target:.4f} rad")
        h.wait_for(lambda: reaches(JointState(name=["hinge"], velocity=[10.0]),
                                   lambda p: p > 4 * math.pi),
                   30, "the hinge past two turns")
        # a trajectory to 0.5 rad starts on the current turn: it ends at 0.5 + 2πk, it
        # does not unwind the turns made
        time.sleep(0.5)  # (no velocity command still in flight)
        trajectory = h.client.create_publisher(
            JointTrajectory, "/contact_lcp/joint_trajectory", 10)
        point = JointTrajectoryPoint(positions=[0.5],
                                     time_from_start=Duration(nanosec=200_000_000))
        message = JointTrajectory(joint_names=["hinge"], points=[point])
        settled = equilibrium(0.5)
        h.wait_for(lambda: trajectory.get_subscription_count(), 10, "the node's subscription")
        trajectory.publish(message)  # once: each message starts the trajectory anew
        h.wait_for(lambda: abs(math.remainder(h.latest("/joint_states").position[0] - settled,
                                              2 * math.pi)) < 1e-3,
                   30, "the hinge at 0.5 rad (mod 2π)")
        assert h.latest("/joint_states").position[0] > 4 * math.pi
        for m in h.messages("/joint_states"):
            assert all(math.isfinite(x) for x in m.position)
        assert not h.errors
    finally:
        h.close()
