"""contact.force_distribution: min_norm for the no-slip and viscous models (S4).

contact_lcp/contact/min_norm_normal.py: the PPM's answer on redundant contact is a
vertex (a box on four corners carried by two of them); under ``min_norm`` these models
apply the least-norm impulse with the same velocities, so a symmetric support carries
equal shares and the forces do not depend on the order the contacts come in.
"""

import dataclasses

import numpy as np
import pytest

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.contact.problem import build_problem
from contact_lcp.dynamics import RobotSpec
from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.legged_frame import legged_frame_urdf

H, G = 1e-3, 9.81
BOX_MASS, FRAME_MASS = 2.0, 10.0
YAW_90 = (0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5))
MODELS = ["no_slip", "viscous"]


def box_sim(model, distribution, quat=(0.0, 0.0, 0.0, 1.0), velocity=(0.0,) * 6):
    """A 0.2 x 0.2 x 0.1 m box of 2 kg resting on the ground (4 corner contacts)."""
    return Simulator(scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.6},
        "contact": {"model": model, "force_distribution": distribution},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": BOX_MASS,
                    "pose": [0, 0, 0.05, *quat], "velocity": list(velocity),
                    "friction": 0.6}]}))


def frame_sim(n, model, distribution):
    """Seed S2's frame on ``n`` legs evenly spaced on a circle (one contact per foot)."""
    scene = scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.8},
        "contact": {"model": model, "force_distribution": distribution},
        "robots": [{"name": "frame", "urdf": "unused.urdf", "floating_base": True,
                    "base_pose": [0, 0, 0.32, 0, 0, 0, 1], "controller": {"type": "effort"}}],
    })
    r = scene.robots[0]
    spec = RobotSpec("frame", urdf_string=legged_frame_urdf(n, mass=FRAME_MASS),
                     floating_base=True, base_pose=(0, 0, 0.32, 0, 0, 0, 1))
    return Simulator(scene.replace(robots=(dataclasses.replace(r, robot=spec),)))


def settle(sim, steps=40):
    """Run ``steps`` steps; the last step's (problem, solution)."""
    for _ in range(steps):
        sim.step()
    data = sim.stepper.data
    return data.problem, data.solution


def world_forces(problem, f):
    """(k, 3) contact impulses in W [N.s] keyed by contact point (rounded to 1 um)."""
    k = problem.num_contacts
    F = np.einsum("kij,kj->ki", problem.R_WC, f[:3 * k].reshape(k, 3))
    return {tuple(np.round(p, 6)): F[i] for i, p in enumerate(problem.p_W)}


def velocity_after(problem, f):
    return problem.v_free + problem.K @ (problem.J.T @ f)


def solve_with(model, problem, distribution):
    return make_model(model, ModelSettings(fallback=False, force_distribution=distribution)
                      ).solve(problem)


@pytest.mark.parametrize("model", MODELS)
def test_a_box_on_four_corners_gets_four_equal_shares(model):
    problem, sol = settle(box_sim(model, "min_norm"))
    share = BOX_MASS * G * H / 4
    assert problem.num_contacts == 4
    assert sol.report.applied == model
    assert sol.distribution == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], share, rtol=1e-2)
    assert np.max(np.abs(np.delete(sol.f, np.s_[0::3]))) < 1e-6 * share  # at rest


@pytest.mark.parametrize("model", MODELS)
def test_a_yawed_box_gets_the_same_forces_at_the_same_corners(model):
    p0, s0 = settle(box_sim(model, "min_norm"))
    p1, s1 = settle(box_sim(model, "min_norm", YAW_90))
    assert not np.array_equal(p0.p_W, p1.p_W)  # the order did change
    F0, F1 = world_forces(p0, s0.f), world_forces(p1, s1.f)
    assert sorted(F0) == sorted(F1)
    share = BOX_MASS * G * H / 4
    for corner, F in F0.items():
        np.testing.assert_allclose(F1[corner], F, rtol=0, atol=1e-6 * share, err_msg=str(corner))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("n", [4, 6])
def test_a_legged_frame_gets_equal_leg_shares_whatever_the_contact_order(model, n):
    problem, sol = settle(frame_sim(n, model, "min_norm"))
    share = FRAME_MASS * G * H / n
    assert problem.num_contacts == n
    assert sol.distribution == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], share, rtol=1e-2)
    reference = world_forces(problem, sol.f)
    rng = np.random.default_rng(n)
    for perm in (np.arange(n)[::-1], rng.permutation(n)):  # legs mirrored, shuffled
        rows = (3 * perm[:, None] + np.arange(3)).ravel()
        permuted = build_problem(H, problem.R_WC[perm], problem.p_W[perm], problem.phi[perm],
                                 problem.mu[perm], problem.J[rows], problem.K, problem.v,
                                 problem.v_free, pair=problem.pair[perm])
        other = solve_with(model, permuted, "min_norm")
        assert other.distribution == "min_norm"
        for leg, F in world_forces(permuted, other.f).items():
            np.testing.assert_allclose(F, reference[leg], rtol=0, atol=1e-6 * share)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("velocity", [(0.0, 0.0), (1.0, 0.3)], ids=["resting", "sliding"])
def test_min_norm_keeps_the_velocities_and_complementarity(model, velocity):
    problem, _ = settle(box_sim(model, "any", velocity=(*velocity, 0, 0, 0, 0)), steps=3)
    a = solve_with(model, problem, "any")
    m = solve_with(model, problem, "min_norm")
    assert m.distribution in ("min_norm", "unique")
    np.testing.assert_allclose(velocity_after(problem, m.f), velocity_after(problem, a.f),
                               rtol=0, atol=1e-9)
    assert np.linalg.norm(m.f) <= np.linalg.norm(a.f) * (1 + 1e-9)
    assert np.all(m.f[0::3] >= 0.0)
    w_n = (problem.u + problem.G @ m.f)[0::3] + problem.bias
    assert np.all(w_n >= -1e-9) and np.all(w_n[m.f[0::3] > 0.0] <= 1e-9)
