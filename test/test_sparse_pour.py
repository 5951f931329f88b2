"""The sparse step for worlds of many free bodies (contact_lcp.dynamics.sparse_rows,
contact_lcp.contact.sparse_problem): the same rows, free motion and answers as the dense
step, on a 36-sphere pile whose island is large enough for the relaxed model's QP."""

import os
import sys

import numpy as np
import pytest
from scipy import sparse

from contact_lcp.contact.islands import solve_islands
from contact_lcp.contact.relaxed_qp import velocity_basis
from contact_lcp.contact.sparse_problem import densified
from contact_lcp.dynamics import sparse_rows
from contact_lcp.dynamics.sparse_rows import contact_jacobian_csr
from contact_lcp.sim import Simulator, scene_from_dict

R = 0.015


def pile(sparse_on, monkeypatch, sleep=None):
    """36 spheres (r = 1.5 cm, 20 g) in a 3 x 3 x 4 block 0.5 mm apart on the ground,
    each shifted by up to 1 mm sideways (seeded), solved by ``auto``; the step keeps its
    rows sparse when ``sparse_on`` (the threshold lowered to any size) and dense else;
    ``sleep``: the ``contact`` sleep settings (None: no sleep)."""
    monkeypatch.setattr(sparse_rows, "SPARSE_MIN_NV", 0 if sparse_on else 10 ** 9)
    rng = np.random.default_rng(7)
    bodies = []
    for i in range(36):
        layer, cell = divmod(i, 9)
        dx, dy = rng.uniform(-0.001, 0.001, 2)
        bodies.append({"name": f"s{i}", "shape": "sphere", "size": [R], "mass": 0.02,
                       "pose": [(cell // 3 - 1) * 0.0305 + dx, (cell % 3 - 1) * 0.0305 + dy,
                                R + 0.0005 + 0.0305 * layer, 0, 0, 0, 1]})
    sim = Simulator(scene_from_dict({
        "time_step": 0.01, "gravity": [0, 0, -9.81], "ground": {"friction": 0.5},
        "bodies": bodies, "contact": {"model": "auto", **(sleep or {})}}))
    assert sim.stepper.sparse is sparse_on and sim.free_motion.sparse is sparse_on
    return sim


def test_sparse_contact_rows_are_the_dense_ones(monkeypatch):
    sim = pile(True, monkeypatch)
    q = sim.q
    found = sim.detector.detect(q)
    assert len(found) > 50
    J = contact_jacobian_csr(sim.world, q, found)
    assert sparse.issparse(J) and J.nnz <= 12 * J.shape[0]  # two bodies' 6 columns a row
    np.testing.assert_allclose(J.toarray(), sim.world.contact_jacobian(q, found),
                               rtol=0, atol=1e-15)


@pytest.mark.parametrize("asleep", [(), (0, 5, 17)])
def test_sparse_free_motion_is_the_dense_one(monkeypatch, asleep):
    dense, sparse_sim = pile(False, monkeypatch), pile(True, monkeypatch)
    rng = np.random.default_rng(3)
    q, nv = sparse_sim.q, sparse_sim.world.model.nv
    v, tau = rng.normal(size=nv), rng.normal(size=nv)
    P = np.concatenate([np.arange(6 * b, 6 * b + 6) for b in asleep]).astype(int) \
        if asleep else None
    v_P = None if P is None else rng.normal(size=P.size)
    v_d, K_d = dense.free_motion(q, v, tau, 0.01, None, P, v_P)
    v_s, K_s = sparse_sim.free_motion(q, v, tau, 0.01, None, P, v_P)
    assert sparse.issparse(K_s) and not sparse.issparse(K_d)
    np.testing.assert_allclose(K_s.toarray(), K_d, rtol=0, atol=1e-12 * np.abs(K_d).max())
    np.testing.assert_allclose(v_s, v_d, rtol=0, atol=1e-12)
    if P is not None:
        assert np.all(K_s.toarray()[P] == 0.0) and np.all(v_s[P] == v_P)


def test_sparse_velocity_basis_spans_K(monkeypatch):
    sim = pile(True, monkeypatch)
    sim.step()
    K = sim.stepper.data.K
    U, kappa = velocity_basis(K)
    U_d, kappa_d = velocity_basis(K.toarray())
    np.testing.assert_allclose((U @ sparse.diags(kappa) @ U.T).toarray(), K.toarray(),
                               atol=1e-12 * abs(K).max())
    np.testing.assert_allclose(np.sort(kappa), np.sort(kappa_d), rtol=1e-12)


def settle(sim, steps):
    """Step until the pile is one island of more than 40 contacts (the relaxed model's)."""
    for _ in range(steps):
        info = sim.step()
    return info


def test_a_sparse_pile_step_is_the_dense_one(monkeypatch, tmp_path):
    """Each step of the settling pile from the same state (the dense run's, copied into
    the sparse simulator) gives the same contacts, impulses and contact velocities, to
    the QP's accuracy (its answers are certified on their LCP either way; over several
    steps the pile's sensitivity would amplify the QP's differences, so the states are
    re-synced).

    Compared is what the impulses determine: the generalized momentum they give, to
    1e-8 N s (a sphere's weight is 2e-3 N s a step), the velocities at the contacts, to
    1e-6 m/s, and the spheres' centres, to 1e-8 m. Not the raw velocities: a 1.5 cm
    sphere (I = 1.8e-6 kg m^2) spins 1e-5 rad/s faster for a 1e-9 N s difference in one
    friction impulse, within what two certified answers of the QP may differ by."""
    dense, sparse_sim = pile(False, monkeypatch), pile(True, monkeypatch)
    centres = np.concatenate([b.q_slice.start + np.arange(3) for b in dense.world.bodies])
    state = tmp_path / "pile.state"
    relaxed_steps = 0
    for _ in range(8):
        dense.save_state(state)
        sparse_sim.load_state(state)
        a, b = dense.step(), sparse_sim.step()
        assert a.report.certified and b.report.certified
        assert b.report.failures == 0
        assert a.num_contacts == b.num_contacts
        K, J = dense.stepper.data.K, dense.stepper.data.problem.J  # (M^-1 of the step)
        momentum = np.linalg.solve(K, sparse_sim.v - dense.v)
        np.testing.assert_allclose(momentum, 0.0, rtol=0, atol=1e-8)
        np.testing.assert_allclose(J @ sparse_sim.v, J @ dense.v, rtol=0, atol=1e-6)
        np.testing.assert_allclose(sparse_sim.q[centres], dense.q[centres], rtol=0, atol=1e-8)
        relaxed_steps += "relaxed" in b.report.info.get("island_models", ())
        assert sparse.issparse(sparse_sim.stepper.data.problem.G)
    assert relaxed_steps >= 3  # the QP island was solved sparse on most steps


def test_solving_a_sparse_problem_gives_the_dense_problem_s_answer(monkeypatch):
    sim = pile(True, monkeypatch)
    settle(sim, 4)
    problem = sim.stepper.data.problem
    assert sparse.issparse(problem.J) and problem.num_contacts > 40
    s = solve_islands(sim.model, problem, None)
    d = solve_islands(sim.model, densified(problem), None)
    assert s.report.certified and d.report.certified
    assert "relaxed" in s.report.info["island_models"]
    dv_s = problem.K @ (problem.J.T @ s.f)
    dv_d = problem.K @ (problem.J.T @ d.f)
    np.testing.assert_allclose(dv_s, dv_d, rtol=0, atol=1e-7)


def test_sleeping_spheres_of_a_sparse_step_are_held_still(monkeypatch):
    """Sleep prescribes the sleeping spheres' velocities (zero): the sparse free motion
    gives them no K block, and they do not move while asleep. 36 spheres dropped 1 cm
    onto the ground 4 cm apart (36 islands, each solved by the pyramid model)."""
    monkeypatch.setattr(sparse_rows, "SPARSE_MIN_NV", 0)
    bodies = [{"name": f"s{i}", "shape": "sphere", "size": [R], "mass": 0.02,
               "pose": [0.04 * (i // 6), 0.04 * (i % 6), R + 0.01, 0, 0, 0, 1]}
              for i in range(36)]
    sim = Simulator(scene_from_dict({
        "time_step": 0.01, "gravity": [0, 0, -9.81], "ground": {"friction": 0.5},
        "bodies": bodies, "contact": {"model": "auto", "sleep": True, "sleep_time": 0.05}}))
    assert sim.stepper.sparse
    held = 0
    for _ in range(20):
        asleep = sim.sleep.asleep.copy()
        q = sim.q
        info = sim.step()
        assert info.report.failures == 0
        still = asleep & sim.sleep.asleep  # asleep before and after the step
        for b in np.flatnonzero(still):
            body = sim.world.bodies[b]
            np.testing.assert_array_equal(sim.q[body.q_slice], q[body.q_slice])
            assert np.all(sim.stepper.data.K[:, body.v_slice].toarray() == 0.0)
            held += 1
    assert sim.sleeping_bodies == 36 and held >= 36


# --------------------------------------------------------------- the pour's peers
BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def pour_peer_modules():
    sys.path.insert(0, BENCH)
    return (pytest.importorskip("peer_scenes"), pytest.importorskip("peer_checks"),
            pytest.importorskip("bench_large"))


def test_the_peers_pour_is_read_from_our_scene():
    peer_scenes, peer_checks, bench_large = pour_peer_modules()
    sim = bench_large.load("spheres_21.yaml")
    pour = peer_scenes.pour_from_simulator(sim, "spheres_21")
    assert len(pour.spheres) == len(sim.world.bodies) == 21
    assert len(pour.walls) == 4  # urdf/walled_box.urdf: four 2 cm walls, 0.3 m high
    sizes = sorted(tuple(np.round(s, 6)) for s, _ in pour.walls)
    assert sizes == sorted([(0.02, 0.44, 0.3)] * 2 + [(0.4, 0.02, 0.3)] * 2)
    for s, b in zip(pour.spheres, sim.world.bodies):
        assert s.radius == b.size[0] and s.mass == b.mass
        np.testing.assert_array_equal(s.pose, sim.q[b.q_slice])
    assert peer_checks.pour_penetration(pour, [s.pose[:3] for s in pour.spheres]) < 1e-9


def test_pour_penetration_from_positions():
    peer_scenes, peer_checks, _ = pour_peer_modules()
    ball = peer_scenes.Sphere("a", 0.01, 0.1, np.r_[0, 0, 0.01, 0, 0, 0, 1.0])
    wall = (np.array([0.02, 0.4, 0.3]), np.r_[0.2, 0, 0.15, 0, 0, 0, 1.0])
    pour = peer_scenes.PourScene("t", (ball, ball), (wall,), 0.5, 0.8, 0.01, 9.81, 0.2)
    depth = peer_checks.pour_penetration
    assert depth(pour, [[0, 0, 0.05], [0.5, 0, 0.05]]) == 0.0  # apart, above the ground
    assert depth(pour, [[0, 0, 0.05], [0.019, 0, 0.05]]) == pytest.approx(1e-3)  # each other
    assert depth(pour, [[0, 0, 0.008], [0.5, 0, 0.05]]) == pytest.approx(2e-3)  # the ground
    assert depth(pour, [[0.183, 0, 0.1], [0.5, 0, 0.05]]) == pytest.approx(3e-3)  # the wall
    assert depth(pour, [[0.2, 0, 0.1], [0.5, 0, 0.05]]) == pytest.approx(0.02)  # centre in it
    assert peer_checks.pile_height(pour, [[0, 0, 0.05], [0.5, 0, 0.07]]) == pytest.approx(0.08)


def test_mujoco_builds_the_same_pour():
    mujoco = pytest.importorskip("mujoco")
    peer_scenes, _, bench_large = pour_peer_modules()
    import peers_mujoco

    sim = bench_large.load("spheres_21.yaml")
    pour = peer_scenes.pour_from_simulator(sim, "spheres_21")
    m, d = peers_mujoco.build_pour(mujoco, pour)
    assert m.nbody == 22 and m.ngeom == 1 + 4 + 21 and m.opt.timestep == sim.h
    np.testing.assert_allclose(m.body_mass[1:], [s.mass for s in pour.spheres])
    res = peers_mujoco.run_pour(pour, 3)
    assert res["status"] == "ran" and res["steps"] == 3 and res["wall_s"] > 0.0
    assert res["pile_height"] < max(s.pose[2] + s.radius for s in pour.spheres)  # falling


def test_a_sparse_problem_is_recorded_dense(monkeypatch):
    from contact_lcp.contact.problem import ContactProblem

    sim = pile(True, monkeypatch)
    sim.step()
    problem = sim.stepper.data.problem
    back = ContactProblem.from_arrays(problem.arrays())
    for name in ("J", "K", "G"):
        np.testing.assert_array_equal(getattr(back, name), getattr(problem, name).toarray())
