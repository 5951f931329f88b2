"""The no-slip contact model (S4 section VI): tangential rows as equalities."""

import math

import numpy as np
import pytest

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict

G_ACC = 9.81


def box_scene(theta=0.0, mu=0.5, velocity=(0, 0, 0, 0, 0, 0), method="ppm"):
    """A 1 kg box (0.2 x 0.2 x 0.1 m) on an incline of slope ``theta`` (gravity tilted about
    y, downhill +x) with friction coefficient ``mu`` (which no-slip ignores)."""
    g = [G_ACC * math.sin(theta), 0.0, -G_ACC * math.cos(theta)]
    return Simulator(scene_from_dict({
        "time_step": 1e-3, "gravity": g, "ground": {"height": 0.0, "friction": mu},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 1.0,
                    "pose": [0, 0, 0.05, 0, 0, 0, 1], "velocity": list(velocity),
                    "friction": mu}],
        "contact": {"model": "no_slip"}, "solver": {"method": method},
    }))


def loaded_tangential_speed(sim):
    """Largest tangential speed [m/s] after the last step at its contacts with load."""
    rec = sim._last
    if rec.problem is None:
        return 0.0
    k = len(rec.contacts)
    v_C = (rec.problem.J[: 3 * k] @ rec.v_step).reshape(k, 3)
    loaded = rec.impulse_C[:, 0] > 0.0
    return float(np.abs(v_C[loaded, 1:]).max()) if loaded.any() else 0.0


@pytest.mark.parametrize("mu", [0.1, 1.0, 10.0])
def test_box_on_30_degree_incline_stays_put_whatever_mu(mu):
    """tan 30 deg = 0.58 > 0.1: a Coulomb box would slide for mu = 0.1; without slip it
    stays within 1 um over 1 s, and every loaded contact ends each step at rest
    tangentially (1e-9 m/s: the equality rows are solved to round-off)."""
    sim = box_scene(math.radians(30.0), mu)
    body = sim.world.bodies[0]
    p0 = sim.q[body.q_slice][:3].copy()
    for _ in range(1000):
        info = sim.step()
        assert info.report.outcome.name == "SOLVED" and info.report.applied == "no_slip"
        assert loaded_tangential_speed(sim) <= 1e-9
    assert np.linalg.norm(sim.q[body.q_slice][:3] - p0) < 1e-6


def test_sliding_box_pivots_on_its_front_edge_and_settles_without_gaining_energy():
    """A box (half sizes a = 0.1, c = 0.05 m) sliding at 0.5 m/s: its loaded front edge is
    stopped at once, so it pivots about that edge with the angular momentum about it,
    omega = m (c v_x - a g h) / (I_cm + m (a^2 + c^2)) (gravity acts within the step),
    rises, falls back and comes to rest; its energy (kinetic + m g z) never grows after
    the impact (1e-9 J: round-off). Rear corners lifting off must not be held
    tangentially (they would stop the rotation and throw the box up: see
    contact_lcp.contact.normal_rows)."""
    m, a, c, h, v_x = 1.0, 0.1, 0.05, 1e-3, 0.5
    sim = box_scene(velocity=(v_x, 0.2, 0, 0, 0, 0))
    body = sim.world.bodies[0]
    I_cm = m / 12 * np.array([(2 * a) ** 2 + (2 * c) ** 2] * 2 + [2 * (2 * a) ** 2])
    omega = m * (c * v_x - a * G_ACC * h) / (I_cm[1] + m * (a * a + c * c))

    def energy():  # body-frame twist: 1/2 m v.v + 1/2 w.I w + m g z
        v = sim.v
        return 0.5 * m * v[:3] @ v[:3] + 0.5 * v[3:] @ (I_cm * v[3:]) + m * G_ACC * sim.q[
            body.q_slice][2]

    rise, last = 0.0, np.inf
    for step in range(600):
        info = sim.step()
        assert info.report.info["loaded_released"] == 0
        assert loaded_tangential_speed(sim) <= 1e-9
        if step == 0:
            assert sim.v[4] == pytest.approx(omega, rel=1e-9)
            assert abs(sim.v[1]) < 1e-9  # the sideways slip is stopped too
        e = energy()
        assert e <= last + 1e-9, step
        last = e
        rise = max(rise, sim.q[body.q_slice][2] - c)
    assert rise > 1e-3  # it did pivot (about 1.8 mm up)
    np.testing.assert_allclose(sim.v, 0.0, atol=1e-6)


def test_redundant_tangent_rows_hold_their_rank():
    """Four coplanar corners give 8 tangent rows of rank 3 (vx, vy, wz in the plane)."""
    sim = box_scene()
    info = sim.step()
    assert info.report.info["no_slip_contacts"] == 4
    assert info.report.info["tangent_rows"] == 3
    assert info.report.info["dependent_rows"] == 5


@pytest.mark.parametrize("method", ["ppm", "robust", "lemke"])
def test_every_method_gives_the_same_support(method):
    sim = box_scene(math.radians(20.0), method=method)
    for _ in range(20):
        info = sim.step()
        assert info.report.outcome.name == "SOLVED"
    assert sim._last.impulse_C[:, 0].sum() == pytest.approx(
        G_ACC * math.cos(math.radians(20.0)) * 1e-3, rel=1e-6)


def test_bad_option_is_a_scene_error():
    with pytest.raises(SceneError, match="expected a number > 0"):
        make_model("no_slip", ModelSettings(options={"singular_tol": 0.0}))
