"""contact.force_distribution: min_norm (contact_lcp/contact/min_norm.py).

Redundant contact has many impulse solutions with one velocity (Enzenhöfer, Teichmann &
Kövecses, S2). Under ``min_norm`` the pyramid model applies the least-norm one: a box on
its four coplanar corners and a frame on evenly spaced legs carry equal shares, the
forces do not depend on the order the contacts come in, and the velocities are those of
the pivoting answer (``any``).
"""

import dataclasses

import numpy as np
import pytest

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.models import make_model
from contact_lcp.contact.problem import build_problem
from contact_lcp.dynamics import RobotSpec
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.legged_frame import legged_frame_urdf

H, G = 1e-3, 9.81
BOX_MASS, FRAME_MASS = 2.0, 10.0
YAW_90 = (0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5))


def box_sim(distribution, quat=(0.0, 0.0, 0.0, 1.0), velocity=(0.0,) * 6):
    """A 0.2 x 0.2 x 0.1 m box of 2 kg resting on the ground (4 corner contacts)."""
    return Simulator(scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.6},
        "contact": {"force_distribution": distribution},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": BOX_MASS,
                    "pose": [0, 0, 0.05, *quat], "velocity": list(velocity),
                    "friction": 0.6}]}))


def frame_sim(n, distribution):
    """Seed S2's frame on ``n`` legs evenly spaced on a circle (one contact per foot)."""
    scene = scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.8},
        "contact": {"force_distribution": distribution},
        "robots": [{"name": "frame", "urdf": "unused.urdf", "floating_base": True,
                    "base_pose": [0, 0, 0.32, 0, 0, 0, 1], "controller": {"type": "effort"}}],
    })
    r = scene.robots[0]
    spec = RobotSpec("frame", urdf_string=legged_frame_urdf(n, mass=FRAME_MASS),
                     floating_base=True, base_pose=(0, 0, 0.32, 0, 0, 0, 1))
    return Simulator(scene.replace(robots=(dataclasses.replace(r, robot=spec),)))


def settle(sim, steps=40):
    """Run ``steps`` steps; the last step's (problem, solution, guess it started from)."""
    for _ in range(steps - 1):
        sim.step()
    guess = sim.stepper.data.guess
    sim.step()
    data = sim.stepper.data
    return data.problem, data.solution, guess


def world_forces(problem, f):
    """(k, 3) contact impulses in W [N.s] keyed by contact point (rounded to 1 um)."""
    k = problem.num_contacts
    F = np.einsum("kij,kj->ki", problem.R_WC, f[:3 * k].reshape(k, 3))
    return {tuple(np.round(p, 6)): F[i] for i, p in enumerate(problem.p_W)}


def velocity_after(problem, f):
    return problem.v_free + problem.K @ (problem.J.T @ f)


def solve_with(problem, guess, distribution, method="robust"):
    model = make_model("pyramid", ModelSettings(method=method, fallback=False,
                                                force_distribution=distribution))
    return model.solve(problem, guess)


def test_a_box_on_four_corners_gets_four_equal_shares():
    problem, sol, _ = settle(box_sim("min_norm"))
    share = BOX_MASS * G * H / 4
    assert problem.num_contacts == 4
    assert sol.report.info["force_distribution"] == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], share, rtol=1e-2)
    assert np.max(np.abs(np.delete(sol.f, np.s_[0::3]))) < 1e-6 * share  # no friction needed


def test_a_yawed_box_gets_the_same_forces_at_the_same_corners():
    # yawed by 90 degrees the corners are the same points, found in another order
    p0, s0, _ = settle(box_sim("min_norm"))
    p1, s1, _ = settle(box_sim("min_norm", YAW_90))
    assert not np.array_equal(p0.p_W, p1.p_W)  # the order did change
    F0, F1 = world_forces(p0, s0.f), world_forces(p1, s1.f)
    assert sorted(F0) == sorted(F1)
    share = BOX_MASS * G * H / 4
    for corner, F in F0.items():
        np.testing.assert_allclose(F1[corner], F, rtol=0, atol=1e-6 * share, err_msg=str(corner))


@pytest.mark.parametrize("n", [4, 6])
def test_a_legged_frame_gets_equal_leg_shares_whatever_the_contact_order(n):
    sim = frame_sim(n, "min_norm")
    problem, sol, guess = settle(sim)
    share = FRAME_MASS * G * H / n
    assert problem.num_contacts == n
    assert sol.report.info["force_distribution"] == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], share, rtol=1e-2)
    # the same contacts in other orders (legs mirrored and shuffled): the same forces
    reference = world_forces(problem, sol.f)
    rng = np.random.default_rng(n)
    for perm in (np.arange(n)[::-1], rng.permutation(n)):
        rows = (3 * perm[:, None] + np.arange(3)).ravel()
        permuted = build_problem(H, problem.R_WC[perm], problem.p_W[perm], problem.phi[perm],
                                 problem.mu[perm], problem.J[rows], problem.K, problem.v,
                                 problem.v_free, pair=problem.pair[perm])
        other = solve_with(permuted, None, "min_norm")
        assert other.report.info["force_distribution"] == "min_norm"
        for leg, F in world_forces(permuted, other.f).items():
            np.testing.assert_allclose(F, reference[leg], rtol=0, atol=1e-6 * share)


@pytest.mark.parametrize("make", [lambda: box_sim("any"), lambda: frame_sim(4, "any"),
                                  lambda: box_sim("any", velocity=(1.0, 0.3, 0, 0, 0, 0))],
                         ids=["box", "frame4", "sliding_box"])
def test_min_norm_keeps_the_velocities_and_certifies(make):
    problem, _, guess = settle(make(), steps=5)
    a = solve_with(problem, guess, "any")
    m = solve_with(problem, guess, "min_norm")
    assert m.report.info["force_distribution"] in ("min_norm", "unique")
    np.testing.assert_allclose(velocity_after(problem, m.f), velocity_after(problem, a.f),
                               rtol=0, atol=1e-9)
    assert np.linalg.norm(m.f) <= np.linalg.norm(a.f) * (1 + 1e-9)
    # normal complementarity of the applied impulse: no contact pulls or approaches, a
    # loaded one does not separate (1e-9 m/s)
    assert np.all(m.f[0::3] >= 0.0)
    w_n = (problem.u + problem.G @ m.f)[0::3] + problem.bias
    assert np.all(w_n >= -1e-9) and np.all(w_n[m.f[0::3] > 0.0] <= 1e-9)


def test_a_sliding_box_keeps_its_full_friction_at_every_loaded_corner():
    problem, sol, _ = settle(box_sim("min_norm", velocity=(1.0, 0.0, 0, 0, 0, 0)), steps=5)
    k = problem.num_contacts
    f = sol.f[:3 * k].reshape(k, 3)
    loaded = f[:, 0] > 1e-9 * f[:, 0].max()
    assert loaded.sum() >= 3
    np.testing.assert_allclose(np.hypot(f[loaded, 1], f[loaded, 2]), 0.6 * f[loaded, 0],
                               rtol=1e-6)


def test_any_is_the_ladders_answer_and_min_norm_keeps_its_warm_start():
    problem, _, guess = settle(box_sim("any"))
    a = solve_with(problem, guess, "any")
    m = solve_with(problem, guess, "min_norm")
    assert "force_distribution" not in a.report.info
    assert not np.allclose(a.f, m.f)  # the vertex is not the even distribution
    for field in dataclasses.fields(a.guess):
        x, y = getattr(a.guess, field.name), getattr(m.guess, field.name)
        assert (x is None and y is None) or np.array_equal(x, y), field.name


def test_a_bad_force_distribution_is_named_with_its_choices():
    with pytest.raises(SceneError, match=r"contact\.force_distribution.*min_norm.*even"):
        box_sim("even")
    with pytest.raises(SceneError, match=r"force_distribution.*relaxed"):
        make_model("relaxed", ModelSettings(force_distribution="min_norm"))


def test_the_frictionless_model_gives_equal_shares_too():
    sim = box_sim("min_norm")
    sim = Simulator(sim.scene.replace(contact=dataclasses.replace(sim.scene.contact,
                                                                  model="frictionless")))
    problem, sol, _ = settle(sim)
    assert sol.report.applied == "frictionless"
    assert sol.report.info["force_distribution"] == "min_norm"
    np.testing.assert_allclose(sol.f[0::3], BOX_MASS * G * H / 4, rtol=1e-2)
    a = make_model("frictionless", ModelSettings(fallback=False)).solve(problem)
    np.testing.assert_allclose(velocity_after(problem, sol.f), velocity_after(problem, a.f),
                               rtol=0, atol=1e-9)
