"""The relaxed contact model (Anitescu & Hart's convex relaxation, eq. 2.10).

Settings used by the physical tests and why:

* ``friction_frame: slip`` (the default): each pyramid's first edge opposes the slip, so the
  friction of a sliding contact is exactly opposite to its slip and the sliding multiplier
  ``lam`` equals the slip speed, whatever the slip direction. The closed-form numbers below
  (``v_t+ = 0.796076``) assume that; a fixed pyramid gives them only when the slip lies
  along an edge (it does for the slide along x, so ``fixed`` gives the same numbers there;
  the slide at 30 degrees below needs ``slip``).
* ``max_correction_speed``: the default cap (half a gravity step, 4.9 mm/s at h = 1 ms). It
  acts only on penetrating contacts, and the body never penetrates here (the first step
  starts at zero gap; the collision look-ahead catches each landing): measured, the hop,
  stop time and distance are the same with the cap at 1000 m/s.
* ``activation_distance``: the default 1 mm. The relaxation keeps pushing the body up only
  while the contact is in the problem and ``phi / h < mu lam``; the hop height reported
  below is therefore a ballistic ``v_n^2 / 2g`` plus what happens inside that band.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.lcp_builder import build_relaxed_lcp
from contact_lcp.contact.problem import ContactProblem, build_problem
from contact_lcp.contact.relaxed import RelaxedModel
from contact_lcp.contact.relaxed_qp import solve_relaxed_qp
from contact_lcp.exceptions import SceneError
from contact_lcp.lcp import solve
from contact_lcp.sim import Simulator, scene_from_dict

G = 9.81
MU, V0, H = 0.5, 1.0, 1e-3


def slide_scene(model, path="lcp", qp_solver="clarabel", duration=1.0, azimuth=0.0):
    """A flat, thin box (0.2 x 0.2 x 0.01 m, 1 kg) resting on the ground, sliding at V0 along x.

    Its four corner contacts behave as one particle: the box has no reason to tip (the
    contacts are symmetric about the slip line) and the relaxed impulse is purely normal and
    tangential at its centre.
    """
    contact = {"model": model, "friction_frame": "slip"}
    if model == "relaxed":
        contact["options"] = {"path": path, "qp_solver": qp_solver}
    return scene_from_dict({
        "time_step": H, "duration": duration, "gravity": [0, 0, -G],
        "ground": {"height": 0.0, "friction": MU},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.01], "mass": 1.0,
                    "pose": [0, 0, 0.005, 0, 0, 0, 1], "friction": MU,
                    "velocity": [V0 * np.cos(azimuth), V0 * np.sin(azimuth), 0, 0, 0, 0]}],
        "contact": contact,
    })


def relaxed_one_step():
    """Closed form of the relaxed step from resting contact (phi = 0, lam = v_t+):
    v_n+ = p - g h = mu v_t+ and v_t+ = v0 - mu p, with p the normal impulse per unit mass."""
    p = (G * H + MU * V0) / (1.0 + MU ** 2)
    return V0 - MU * p, p - G * H


def test_closed_form_numbers_of_the_issue():
    v_t, v_n = relaxed_one_step()
    assert v_t == pytest.approx(0.796076, abs=1e-6)
    assert v_n == pytest.approx(0.398038, abs=1e-6)


@pytest.mark.parametrize("azimuth", [0.0, np.pi / 6])
@pytest.mark.parametrize("model, path, v_t, v_n", [
    ("pyramid", "lcp", V0 - MU * G * H, 0.0),
    ("relaxed", "lcp", 0.796076, 0.398038),
    ("relaxed", "qp", 0.796076, 0.398038),
])
def test_one_step_of_the_sliding_particle(model, path, v_t, v_n, azimuth):
    sim = Simulator(slide_scene(model, path, azimuth=azimuth))
    info = sim.step()
    assert info.lcp_status == "SOLVED"
    # the step is solved to ~1e-10 m/s (certified residual): 1e-6 is the issue's target;
    # free-flyer linear velocity is in the body frame, which has not turned (no spin)
    assert np.hypot(sim.v[0], sim.v[1]) == pytest.approx(v_t, abs=1e-6)
    assert np.arctan2(sim.v[1], sim.v[0]) == pytest.approx(azimuth, abs=1e-9)
    assert sim.v[2] == pytest.approx(v_n, abs=1e-6)
    np.testing.assert_allclose(sim.v[3:6], 0.0, atol=1e-6)  # no tipping


def _slide(model, path="lcp", steps=400):
    """Run the slide; (stop time [s], distance [m], hop height [m], failures)."""
    sim = Simulator(slide_scene(model, path))
    z0, hop, stop, failures = 0.005, 0.0, None, 0
    for i in range(steps):
        info = sim.step()
        failures += info.report.failures + info.fallbacks
        hop = max(hop, sim.q[2] - z0)
        if stop is None and np.hypot(sim.v[0], sim.v[1]) < 1e-6:
            stop, distance = sim.t, sim.q[0]
    return stop, distance, hop, failures


@pytest.mark.parametrize("model", ["pyramid", "relaxed"])
def test_both_models_stop_after_v0_over_mu_g(model):
    stop, distance, hop, failures = _slide(model)
    # Coulomb: t = v0 / (mu g) = 0.2039 s, x = v0^2 / (2 mu g) = 0.1019 m. The relaxed model
    # keeps the same total friction impulse (mu times the total normal impulse, which is m g t
    # over the whole motion), so it stops at the same time; its hops (no friction in the air)
    # move it in steps. Tolerance: 2 steps of time, 1 mm of distance.
    assert failures == 0
    assert stop == pytest.approx(V0 / (MU * G), abs=2.5 * H)
    assert distance == pytest.approx(V0 ** 2 / (2 * MU * G), abs=1e-3)
    if model == "pyramid":
        assert hop < 1e-6
    else:
        # ballistic v_n^2 / (2 g) = 8.08 mm from v_n = 0.398 m/s; measured 8.28 mm (the
        # extra 0.2 mm is the push inside the 1 mm activation band before phi/h > mu lam)
        print(f"relaxed hop height {hop * 1e3:.3f} mm")
        assert 0.0080 < hop < 0.0090


def recorded_problems():
    """Problems recorded from the relaxed model on a box stack and the sliding box."""
    problems = []
    stack = scene_from_dict({
        "time_step": H, "ground": {"height": 0.0, "friction": 0.8},
        "bodies": [
            {"name": "bottom", "shape": "box", "size": [0.3, 0.3, 0.1], "mass": 3.0,
             "pose": [0, 0, 0.05, 0, 0, 0, 1], "velocity": [0.3, 0.1, 0, 0, 0, 0.5]},
            {"name": "top", "shape": "box", "size": [0.1, 0.1, 0.1], "mass": 1.0,
             "pose": [0.02, 0, 0.15, 0, 0, 0, 1]}],
        "contact": {"model": "relaxed"}})
    for scene, steps in ((stack, 60), (slide_scene("relaxed"), 30)):
        sim = Simulator(scene)
        sim.record_problems = True
        for _ in range(steps):
            sim.step()
        problems += sim.recorded_problems[::3]
    return problems


@pytest.fixture(scope="module")
def problems():
    return recorded_problems()


def test_qp_and_lcp_paths_agree_on_recorded_problems(problems):
    assert len(problems) >= 20
    for problem in problems:
        lcp = build_relaxed_lcp(problem, num_directions=8)
        res_lcp = solve(lcp.M, lcp.q, "robust")
        res_qp = solve_relaxed_qp(problem, lcp)
        assert res_lcp.success and res_qp.success, (res_lcp.status, res_qp.status, res_qp.error)
        # v+ is unique (the QP objective is strictly convex in K^(1/2) J' P x) even where the
        # impulses are not (four corners of a box): compare velocities [m/s].
        dv = problem.K @ (problem.J.T @ (lcp.impulses(res_lcp.z) - lcp.impulses(res_qp.z)))
        assert np.max(np.abs(dv)) < 1e-8


def test_cross_check_option_reports_the_path_difference(problems):
    model = RelaxedModel(ModelSettings(options={"path": "qp", "cross_check": True}))
    for problem in problems[:5]:
        sol = model.solve(problem)
        assert sol.report.method == "qp:clarabel" and sol.report.solves == 2
        assert sol.report.info["path_difference"] < 1e-8


def test_sticking_contacts_get_the_same_total_force_under_both_models():
    # A 1 kg box on a 25 deg incline with mu = 0.5 sticks (tan 25 = 0.466 < 0.5 cos(pi/8),
    # the inscribed pyramid's worst case). Sticking means lam = 0, where the relaxed LCP is
    # the standard one: the total contact force must be m g (opposing gravity) for both.
    theta = np.radians(25.0)
    g = [G * np.sin(theta), 0.0, -G * np.cos(theta)]
    wrench = {}
    for model in ("pyramid", "relaxed"):
        sim = Simulator(scene_from_dict({
            "time_step": H, "gravity": g, "ground": {"height": 0.0, "friction": 0.5},
            "bodies": [{"name": "block", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 1.0,
                        "pose": [0, 0, 0.05, 0, 0, 0, 1], "friction": 0.5}],
            "contact": {"model": model}, "output": {"wrench_links": ["block"]}}))
        for _ in range(300):
            info = sim.step()
            assert info.lcp_status == "SOLVED"
        wrench[model] = sim.link_wrench("block")[:3]
        assert np.linalg.norm(sim.v) < 1e-6
    np.testing.assert_allclose(wrench["relaxed"], wrench["pyramid"], atol=1e-6)
    np.testing.assert_allclose(wrench["relaxed"], -np.array(g), atol=1e-3)  # = -m g


def _random_problem(seed, k, l=0):
    rng = np.random.default_rng(seed)
    nv = 3 * k + l + 2
    A = rng.standard_normal((nv, nv))
    K = A @ A.T / nv
    J = rng.standard_normal((3 * k + l, nv))
    R = np.repeat(np.eye(3)[None], k, axis=0)
    v = rng.standard_normal(nv)
    return build_problem(1e-3, R, np.zeros((k, 3)), rng.uniform(-1e-3, 1e-3, k),
                         rng.uniform(0.0, 1.5, k), J, K, v, v, limit_gap=np.zeros(l))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), k=st.integers(1, 4), l=st.integers(0, 2),
       d=st.integers(3, 8), rank_drop=st.integers(0, 3))
def test_relaxed_matrix_is_psd_not_symmetric(seed, k, l, d, rank_drop):
    problem = _random_problem(seed, k, l)
    if rank_drop:  # a rank-deficient Delassus matrix (redundant contacts) stays PSD
        G = problem.G.copy()
        w, V = np.linalg.eigh(G)
        w[: min(rank_drop, w.size - 1)] = 0.0
        problem = ContactProblem(**{**problem.arrays(), "G": (V * w) @ V.T,
                                    "h": problem.h, "num_limits": l})
    angle = np.random.default_rng(seed).uniform(-np.pi, np.pi, k)
    lcp = build_relaxed_lcp(problem, num_directions=d, edge_angle=angle)
    S = lcp.M + lcp.M.T
    scale = max(1.0, np.abs(S).max())
    assert np.linalg.eigvalsh(S).min() >= -1e-10 * scale
    if np.any(problem.mu > 0):
        assert not np.allclose(lcp.M, lcp.M.T)
    nx = lcp.num_normals + k * d  # the impulse block P'GP is symmetric: M's asymmetry
    np.testing.assert_allclose(lcp.M[:nx, :nx], lcp.M[:nx, :nx].T, atol=1e-12 * scale)


def test_bad_options_are_scene_errors():
    with pytest.raises(SceneError, match="path must be one of"):
        RelaxedModel(ModelSettings(options={"path": "newton"}))
    with pytest.raises(SceneError, match="qp_solver must be one of"):
        RelaxedModel(ModelSettings(options={"qp_solver": "cvxopt"}))
    with pytest.raises(SceneError, match="unknown option"):
        RelaxedModel(ModelSettings(options={"paht": "qp"}))


def test_the_relaxed_pour_lands_without_penetration():
    """The 200-sphere pour with the relaxed model, through its landing (t = 0.2-0.4 s,
    spheres hitting the floor and each other at up to ~2.4 m/s, 100-300 contacts): the
    relaxation pushes sliding contacts apart, which drives neighbours shut, and the step's
    active-set rounds must keep every contact any of their answers closes. When a round
    dropped the contacts that only the previous answer closed, the rounds alternated
    between two sets (152 and 155 contacts at t = 0.27 s) and the step applied the answer
    of the set without them: 1.6 mm of penetration at t = 0.28 s, 4.6 mm at 0.34 s, 7.2 mm
    at 0.35 s. Contacts found at gap 0 and prediction error of the linearised gaps aside,
    nothing penetrates now (measured: 0.0 mm to t = 0.8 s); 0.1 mm allows the activation
    band's round-off."""
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "config", "spheres_200.yaml")
    sim = Simulator.from_file(path, contact_model="relaxed")
    deepest = 0.0
    while sim.t < 0.4 - 1e-9:
        info = sim.step()
        assert info.report.fallbacks == 0 and info.report.failures == 0
        deepest = max(deepest, info.max_penetration)
    assert deepest <= 1e-4
