"""The viscous contact model (S4 section IV): implicit viscous friction, normal-only LCP."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict
from contact_problems import random_problem

G_ACC = 9.81


def sliding_box(options, speed=0.5, azimuth=0.0, mass=2.0, h=1e-3, method="ppm"):
    """A flat box (0.2 x 0.2 x 0.1 m) resting on the ground, sliding at ``speed`` [m/s]
    towards ``azimuth`` [rad] (free-flyer velocities are in the body frame; the box is
    unrotated so they are also world velocities)."""
    v = [speed * math.cos(azimuth), speed * math.sin(azimuth), 0, 0, 0, 0]
    return Simulator(scene_from_dict({
        "time_step": h, "gravity": [0, 0, -G_ACC], "ground": {"height": 0.0},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": mass,
                    "pose": [0, 0, 0.05, 0, 0, 0, 1], "velocity": v}],
        "contact": {"model": "viscous", "options": options},
        "solver": {"method": method},
    }))


@pytest.mark.parametrize("per, azimuth", [("contact", 0.0), ("pair", 0.0), ("pair", 0.7)])
def test_sliding_box_loses_speed_as_v_over_1_plus_h_b_over_m(per, azimuth):
    """Implicit viscous friction, total coefficient b over the box's contacts: exactly
    v <- v / (1 + h b / m) each step. The four corners are symmetric about the centre of
    mass, so the damping exerts no torque: no yaw and no sideways drift (1e-9: round-off
    of ~1e3 steps of O(1) quantities)."""
    m, h, c = 2.0, 1e-3, 8.0
    sim = sliding_box({"coefficient": c, "per": per}, azimuth=azimuth, mass=m, h=h)
    direction = np.array([math.cos(azimuth), math.sin(azimuth)])
    for _ in range(300):
        speed = sim.v[:2] @ direction
        info = sim.step()
        assert info.report.outcome.name == "SOLVED" and info.report.applied == "viscous"
        k = info.report.info["viscous_contacts"]
        assert k == 4
        b = c * k if per == "contact" else c
        assert sim.v[:2] @ direction == pytest.approx(speed / (1 + h * b / m), abs=1e-9)
        sideways = sim.v[:2] @ np.array([-direction[1], direction[0]])
        assert abs(sideways) < 1e-9 and abs(sim.v[5]) < 1e-9  # no drift, no yaw rate
        assert abs(sim.v[2]) < 1e-9  # stays on the ground
    q = sim.q[sim.world.bodies[0].q_slice]
    assert abs(q[5]) < 1e-9  # quaternion z: no accumulated yaw


def test_resting_box_normal_force_is_m_g_and_no_tangential_force():
    sim = sliding_box({"coefficient": 50.0}, speed=0.0)
    for _ in range(50):
        sim.step()
    rec = sim._last
    assert rec.impulse_C[:, 0].sum() == pytest.approx(2.0 * G_ACC * 1e-3, rel=1e-9)
    np.testing.assert_allclose(rec.impulse_C[:, 1:], 0.0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 20),
       st.floats(0.0, 0.5), st.floats(1e-3, 1e4), st.sampled_from(["viscous", "no_slip"]))
def test_normal_lcp_is_symmetric_psd_as_built(seed, k, nv, gaps, coefficient, model):
    """S4 eqs. 41 and 56: the reduced LCP matrix is a Schur complement of a PSD matrix.
    The elimination cancels (no-slip on a 1-dof system leaves A ~ 0), so eigenvalues are
    accurate to ~n eps ||G|| of the data: hence the -1e-12 n ||G|| allowance."""
    problem = random_problem(seed, k, nv, gaps)
    options = {"coefficient": coefficient} if model == "viscous" else {}
    m = make_model(model, ModelSettings(method="ppm", options=options))
    lcp, _ = m.reduce(problem, problem.phi[:k] <= m.touch_distance)
    A = lcp.M
    np.testing.assert_array_equal(A, A.T)
    scale = np.abs(problem.G).max()
    assert np.linalg.eigvalsh(A).min() >= -1e-12 * scale * A.shape[0]


@pytest.mark.parametrize("options, message", [
    ({"coefficient": -1.0}, "expected a number >= 0"),
    ({"per": "body"}, "'contact' or 'pair'"),
    ({"damping": 1.0}, "unknown option"),
    ({"method": "simplex"}, "option 'method': expected one of"),
])
def test_bad_options_are_scene_errors(options, message):
    with pytest.raises(SceneError, match=message):
        make_model("viscous", ModelSettings(options=options))
