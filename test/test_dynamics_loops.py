"""Loop closures (bilateral constraints) eliminated by the Schur complement before contact."""

import math

import numpy as np
import pinocchio as pin
import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.chains import (chain_urdf, discrete_catenary_sag, fourbar_angles,
                                    fourbar_scene, v_shape)

N, ELL, SPAN = 16, 0.1, 1.2  # 16 rods of 10 cm hung between points 1.2 m apart


@pytest.fixture(scope="module")
def chain_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("loops") / "chain.urdf"
    path.write_text(chain_urdf([ELL] * N))
    return str(path)


def chain_scene(urdf, h=5e-3, kd=0.2, loops=None):
    """The chain hangs from the world at its base (origin) and, by a point closure, at
    (SPAN, 0, 0); it starts as a V (closure satisfied) and is damped by joint dampers
    (a PD servo with kp = 0, implicit) so that it settles."""
    angles = v_shape(N, ELL, SPAN)
    if loops is None:
        loops = [{"name": "end", "type": "point", "link_a": f"link_{N}",
                  "point_a": [ELL, 0, 0]}]
    return scene_from_dict({
        "time_step": h, "ground": False,
        "robots": [{"name": "chain", "urdf": urdf, "floating_base": False,
                    "initial_joints": {f"joint_{i + 1}": float(a) for i, a in enumerate(angles)},
                    "controller": {"type": "pd", "kp": 0.0, "kd": kd,
                                   "gravity_compensation": False}}],
        "loops": loops})


def lowest_joint_height(sim):
    d = sim.world.data
    return min(d.oMf[sim.world.frame_id(f"link_{i}")].translation[2] for i in range(1, N + 1))


def test_discrete_catenary_reference():
    # many short rods: the discrete sag tends to the continuous catenary's
    # (L = 2 a sinh(S / 2a), sag = a (cosh(S / 2a) - 1)) for L = 1.6, S = 1.2
    a = 0.5
    for _ in range(100):
        a = a - (2 * a * math.sinh(SPAN / (2 * a)) - 1.6) / (
            2 * math.sinh(SPAN / (2 * a)) - SPAN / a * math.cosh(SPAN / (2 * a)))
    continuous = a * (math.cosh(SPAN / (2 * a)) - 1)
    assert discrete_catenary_sag(400, 1.6 / 400, SPAN) == pytest.approx(continuous, rel=1e-4)


@pytest.mark.slow
def test_hanging_chain_settles_to_the_catenary_without_drift(chain_file):
    sim = Simulator(chain_scene(chain_file))
    drift = 0.0
    for _ in range(int(10.0 / sim.h)):  # 10 s
        info = sim.step()
        assert info.lcp_status == "NO_CONTACT"
        drift = max(drift, float(np.max(np.abs(sim.loops.errors(sim.q)))))
    sag = -lowest_joint_height(sim)
    expected = discrete_catenary_sag(N, ELL, SPAN)
    print(f"sag {sag:.6f} m, discrete catenary {expected:.6f} m, drift {drift:.2e} m")
    assert sag == pytest.approx(expected, rel=1e-2)  # the 1 %
    assert drift < 1e-3  # the 1 mm
    assert np.max(np.abs(sim.v)) < 1e-2  # settled


def test_redundant_closures_do_not_break_the_step(chain_file):
    # the 3-D point closure of a planar chain already has a zero row; add the same
    # closure twice more and a weld at the end: D is rank deficient (rank 3 of 12 rows:
    # x, z and the rotation about y)
    end = {"type": "point", "link_a": f"link_{N}", "point_a": [ELL, 0, 0]}
    loops = [dict(end, name="a"), dict(end, name="b"), dict(end, name="c"),
             {"name": "w", "type": "weld", "link_a": f"link_{N}", "point_a": [ELL, 0, 0]}]
    sim = Simulator(chain_scene(chain_file, loops=loops))
    ref = Simulator(chain_scene(chain_file))
    for _ in range(100):
        sim.step()
        ref.step()
    stats = sim.loops.project(sim.world.jacobian_data, sim.v, np.eye(sim.v.size), sim.h)[2]
    assert stats.rows == 15 and stats.rank == 3
    assert np.all(np.isfinite(sim.v))
    assert np.max(np.abs(sim.loops.errors(sim.q))) < 1e-4
    # the weld also fixes the last rod's angle: the chain differs from the point-closed one
    assert not np.allclose(sim.q, ref.q, atol=1e-3)


def test_projection_is_the_schur_complement(chain_file):
    sim = Simulator(chain_scene(chain_file))
    for _ in range(20):
        sim.step()
    q, v, h = sim.q, sim.v, sim.h
    model = sim.world.model
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    K = np.linalg.inv(pin.crba(model, data, q) + np.eye(model.nv) * 0.0)
    K = 0.5 * (K + K.T)
    J, Phi = sim.loops.rows(data)
    v2, K2, stats = sim.loops.project(data, v, K, h)
    # the constrained velocity meets the stabilized rows in the range of J (the rank-2 part)
    U, s, _ = np.linalg.svd(J)
    r = int(np.sum(s > 1e-9 * s[0]))
    assert r == stats.rank == 2
    Ur = U[:, :r]
    np.testing.assert_allclose(Ur.T @ (J @ v2 + Phi / h), 0.0, atol=1e-9)
    np.testing.assert_allclose(J @ K2, 0.0, atol=1e-9)  # no impulse can break the loop
    np.testing.assert_allclose(K2, K2.T, atol=1e-12)
    assert np.linalg.eigvalsh(K2).min() > -1e-10
    # K' equals the Schur complement of the MLCP [[D, J K], [K J', K]] on the loop rows
    D = J @ K @ J.T
    schur = K - K @ J.T @ np.linalg.pinv(D, rcond=1e-9) @ J @ K
    np.testing.assert_allclose(K2, schur, atol=1e-9)


def fourbar_file(tmp_path, crank=0.15, coupler=0.4, rocker=0.3, ground=0.4):
    """A four-bar linkage in the x-z plane: the crank at 60 deg up, the coupler-rocker
    joint found by intersecting circles; the rocker's tip closes on (ground, 0, 0)."""
    path = tmp_path / "fourbar.urdf"
    path.write_text(chain_urdf([crank, coupler, rocker], mass_per_length=2.0))
    return str(path), fourbar_angles(crank, coupler, rocker, ground), rocker


def energy_run(tmp_path, h, T):
    urdf, angles, rocker = fourbar_file(tmp_path)
    sim = Simulator(scene_from_dict(fourbar_scene(urdf, h, angles, rocker)))
    E0, loss, ke, drift = sum(sim.mechanical_energy()), 0.0, 0.0, 0.0
    for _ in range(int(round(T / h))):
        sim.step()
        kinetic, potential = sim.mechanical_energy()
        loss = max(loss, abs(kinetic + potential - E0))
        ke = max(ke, kinetic)
        drift = max(drift, float(np.max(np.abs(sim.loops.errors(sim.q)))))
    return loss / ke, drift


def test_fourbar_keeps_its_energy_for_10_s_at_1_ms(tmp_path):
    # The target: within 1 % of the largest kinetic energy over 10 s. Steps without
    # impulses are second order (midpoint velocity, trapezoid position) and the closure
    # is imposed as RATTLE does: positions along the path at the midpoint, velocities at
    # the end. Measured: 0.26 % over 1 s at 1 ms, 0.13 % at 0.5 ms (the error oscillates
    # with an O(h) amplitude and does not grow: 0.36 % over 10 s); loop drift 8e-8 m. The
    # first-order step lost 8.6 % in 10 s, growing linearly.
    e10, d10 = energy_run(tmp_path, 1e-3, 10.0)
    e1, _ = energy_run(tmp_path, 5e-4, 1.0)
    print(f"energy error: {e10:.4f} over 10 s (h = 1 ms), {e1:.4f} over 1 s (h = 0.5 ms)")
    assert e10 < 0.01
    assert e1 < 0.005
    assert d10 < 1e-6


def test_open_triple_pendulum_keeps_its_energy(tmp_path):
    # The same rods without the closure: a chaotic triple pendulum. The first-order step
    # (semi-implicit Euler on a configuration-dependent mass matrix) lost 64 % of the
    # largest kinetic energy in 10 s at 1 ms; the second-order one 0.26 % (measured with
    # benchmarks/bench_energy.py). Over 2 s: below 1 %.
    urdf, angles, rocker = fourbar_file(tmp_path)
    sim = Simulator(scene_from_dict(fourbar_scene(urdf, 1e-3, angles, rocker, closed=False)))
    E0, worst, ke = sum(sim.mechanical_energy()), 0.0, 0.0
    for _ in range(2000):
        sim.step()
        kinetic, potential = sim.mechanical_energy()
        worst, ke = max(worst, abs(kinetic + potential - E0)), max(ke, kinetic)
    assert ke > 1.0  # it swings (J; the rods fall from 60 deg)
    assert worst / ke < 0.01


def test_loops_key_is_checked():
    base = {"bodies": [{"name": "b", "shape": "sphere", "size": [0.1], "mass": 1.0,
                        "pose": [0, 0, 1, 0, 0, 0, 1]}]}
    with pytest.raises(SceneError, match="unknown key 'frame'"):
        scene_from_dict(dict(base, loops=[{"link_a": "b", "frame": "x"}]))
    with pytest.raises(SceneError, match="missing required key 'link_a'"):
        scene_from_dict(dict(base, loops=[{"type": "point"}]))
    with pytest.raises(SceneError, match="expected one of"):
        scene_from_dict(dict(base, loops=[{"link_a": "b", "type": "hinge"}]))
    scene = scene_from_dict(dict(base, loops=[{"link_a": "b", "type": "weld"}]))
    assert scene.loops[0].link_b == "world"
    sim = Simulator(scene)  # a welded free body does not fall
    for _ in range(50):
        sim.step()
    np.testing.assert_allclose(sim.q[:3], [0, 0, 1], atol=1e-6)


def test_rows_of_several_closures_are_repeatable_and_local():
    # four strings, one closure each: a closure's row touches only its own string's joints
    # (guards against Pinocchio 4.1's cm.jacobian buffer, which kept other columns)
    from contact_lcp.sim.scene import package_share_dir

    sim = Simulator.from_file(str(package_share_dir() / "config" / "net.yaml"))
    q = sim.q
    q[:128] += 0.05 * np.random.default_rng(0).standard_normal(128)  # string joints only
    model = sim.world.model
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    J1, Phi1 = sim.loops.rows(data)
    J2, Phi2 = sim.loops.rows(data)
    np.testing.assert_array_equal(J1, J2)
    for i, robot in enumerate(sim.world.robots):
        cols = np.zeros(model.nv, dtype=bool)
        cols[robot.v_slice] = True
        assert np.all(J1[3 * i: 3 * i + 3, ~cols] == 0.0)
        assert np.any(J1[3 * i: 3 * i + 3, cols] != 0.0)
