"""Physical validation of the whole stepper on simple scenes (must be able to fail).

Tolerances: the LCP is solved to ~1e-9 (certified), so identities of the discrete
scheme (impulse = m g h, analytic slide speeds) hold to ~1e-6 relative; distances are
checked against the 1 mm / 1 ms targets of the issue.
"""

import math

import numpy as np
import pytest

from contact_lcp.sim import Simulator, scene_from_dict

G = 9.81


def box_scene(theta=0.0, psi=0.0, mu=0.5, h=1e-3, z=0.05, stabilization=1.0, velocity=None,
              directions=8, max_correction_speed=None, friction_frame="slip",
              projection_depth=1e-3):
    """A 1 kg box on the ground; gravity tilted by ``theta`` towards azimuth ``psi``.

    Tilting gravity by theta is exactly an incline of slope theta whose downhill direction
    is (cos psi, sin psi, 0).
    """
    g = [G * math.sin(theta) * math.cos(psi), G * math.sin(theta) * math.sin(psi),
         -G * math.cos(theta)]
    body = {"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 1.0,
            "pose": [0, 0, z, 0, 0, 0, 1], "friction": mu}
    if velocity is not None:
        body["velocity"] = list(velocity)
    return scene_from_dict({
        "time_step": h, "gravity": g, "ground": {"height": 0.0, "friction": mu},
        "bodies": [body],
        "contact": {"stabilization": stabilization, "friction_directions": directions,
                    "max_correction_speed": max_correction_speed,
                    "friction_frame": friction_frame, "projection_depth": projection_depth},
        "output": {"wrench_links": ["box"]},
    })


def body_position(sim):
    b = sim.world.bodies[0]
    return sim.q[b.q_slice][:3]


def test_box_rest_normal_impulse_equals_m_g_h_each_step():
    sim = Simulator(box_scene(mu=0.6))
    for _ in range(200):
        info = sim.step()
        assert info.lcp_status == "SOLVED" and info.fallbacks == 0
        f = sim.link_wrench("box")
        assert f[2] == pytest.approx(G * 1.0, rel=1e-3)  # force = impulse / h = m g
        assert np.hypot(f[0], f[1]) < 1e-6
    assert info.num_contacts >= 4
    np.testing.assert_allclose(body_position(sim)[:2], 0.0, atol=1e-9)  # no tangential drift
    assert abs(body_position(sim)[2] - 0.05) < 1e-4


def _tangent_angle(sim):
    """Angle of the contact frames' t1 axis in the ground plane (pyramid edge 0)."""
    sim.step()
    c = sim.detector.detect(sim.q)[0]
    t1 = c.frame()[:, 1]
    return math.atan2(t1[1], t1[0])


def threshold(mu, M, phi):
    """tan(theta*) of the M-sided inscribed pyramid, downhill at phi from the nearest edge."""
    return mu * math.cos(math.pi / M) / math.cos(math.pi / M - phi)


@pytest.mark.parametrize("offset", [0.0, math.pi / 8])  # along an edge / mid-face
@pytest.mark.parametrize("factor, slides", [(0.97, False), (1.03, True)])
def test_incline_stick_slip_threshold_of_the_pyramid(offset, factor, slides):
    mu, M = 0.5, 8
    # The seed's fixed pyramid: its threshold depends on the slope's azimuth.
    edge = _tangent_angle(Simulator(box_scene()))
    psi = edge + offset
    phi = abs((offset + math.pi / M) % (2 * math.pi / M) - math.pi / M)
    theta = math.atan(factor * threshold(mu, M, phi))
    sim = Simulator(box_scene(theta=theta, psi=psi, mu=mu, friction_frame="fixed"))
    for _ in range(300):
        sim.step()
    d = np.linalg.norm(body_position(sim)[:2])
    if slides:
        assert d > 1e-4
    else:
        assert d < 1e-7


def test_incline_slide_speed_grows_by_h_g_sin_minus_mu_cos_along_an_edge():
    mu, h = 0.3, 1e-3
    edge = _tangent_angle(Simulator(box_scene()))
    theta = math.radians(30)
    sim = Simulator(box_scene(theta=theta, psi=edge, mu=mu, h=h))
    for _ in range(50):
        sim.step()
    b = sim.world.bodies[0]
    speeds = []
    for _ in range(20):
        sim.step()
        speeds.append(np.linalg.norm(sim.body_state(b.name).twist[:2]))
    dv = np.diff(speeds)
    np.testing.assert_allclose(dv, h * G * (math.sin(theta) - mu * math.cos(theta)), rtol=1e-6)


def test_ball_drop_no_tunnelling_small_penetration_no_rebound():
    sim = Simulator(scene_from_dict({
        "time_step": 1e-3, "ground": {"height": 0.0, "friction": 0.8},
        "bodies": [{"name": "ball", "shape": "sphere", "size": [0.1], "mass": 1.0,
                    "pose": [0, 0, 1.1, 0, 0, 0, 1]}]}))
    zs, pens = [], []
    for _ in range(1500):
        info = sim.step()
        zs.append(body_position(sim)[2])
        pens.append(info.max_penetration)
    zs = np.array(zs)
    assert zs.min() > 0.1 - 1e-3  # never through the ground
    impact = int(np.argmax(zs < 0.1 + 1e-3))
    assert max(pens[impact + 50 :]) <= 1e-3  # steady penetration <= 1 mm at h = 1 ms
    assert zs[impact:].max() < 0.1 + 1e-3  # inelastic: no rebound above the ground


@pytest.mark.parametrize("gamma, removed", [(1.0, True), (0.0, False)])
def test_stabilization_pushes_a_penetrating_box_out(gamma, removed):
    # Started 5 mm inside the ground (box centre at 0.045 for half-height 0.05), with
    # Anitescu & Hart's unbounded term (a cap far above the 5 m/s it needs).
    sim = Simulator(box_scene(z=0.045, stabilization=gamma, mu=0.8, max_correction_speed=1e3))
    for _ in range(20):
        info = sim.step()
    if removed:
        assert info.max_penetration < 1e-4
        # Anitescu-Hart remove gamma * phi per step: out within a bounded number of steps.
    else:
        assert info.max_penetration == pytest.approx(5e-3, abs=2e-4)


def test_capped_correction_removes_penetration_gently():
    # 5 mm deep, push-out capped at 0.1 m/s: out in about 50 steps, leaving at <= 0.1 m/s
    # (uncapped Anitescu-Hart leaves at 5 m/s). Without the projection, which would move
    # the box out before the first step.
    sim = Simulator(box_scene(z=0.045, mu=0.8, max_correction_speed=0.1, projection_depth=None))
    speeds, out_at = [], None
    for k in range(80):
        info = sim.step()
        speeds.append(sim.body_state("box").twist[2])
        if out_at is None and info.max_penetration < 1e-4:
            out_at = k + 1
    assert out_at is not None and 45 <= out_at <= 55
    assert max(speeds) <= 0.1 + 1e-6


@pytest.mark.parametrize("psi", [0.0, math.pi / 8, 0.3])
@pytest.mark.parametrize("factor, slides", [(0.97, False), (1.03, True)])
def test_slip_oriented_pyramid_has_the_cone_threshold_in_every_direction(psi, factor, slides):
    # With friction_frame: slip (the default) a sticking contact keeps its last friction
    # direction on an edge, so the incline threshold is atan(mu) whatever the azimuth
    # (the fixed pyramid's is atan(mu cos(pi/8)) mid-face).
    mu = 0.5
    sim = Simulator(box_scene(theta=math.atan(factor * mu), psi=psi, mu=mu))
    for _ in range(300):
        sim.step()
    d = np.linalg.norm(body_position(sim)[:2])
    assert (d > 1e-4) if slides else (d < 1e-6)
