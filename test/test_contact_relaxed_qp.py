"""The relaxed model's velocity QP (contact_lcp.contact.relaxed_qp).

The QP and the pivoting search solve the same relaxed LCP, so their velocities must agree
where the impulses cannot (a pile has many more pyramid edges than degrees of freedom);
both answers are certified by the same residual check.
"""

import dataclasses
import os

import numpy as np
import pytest
from scipy import sparse

from contact_lcp.contact import relaxed, relaxed_qp
from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.lcp_builder import build_relaxed_lcp
from contact_lcp.contact.problem import build_problem
from contact_lcp.contact.relaxed import RelaxedModel
from contact_lcp.contact.relaxed_qp import solve_relaxed_qp, velocity_basis
from contact_lcp.lcp import LCPStatus, solve
from contact_lcp.sim import Simulator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "test", "data")


def test_velocity_basis_spans_K_block_by_block():
    rng = np.random.default_rng(3)
    nv = 11
    K = np.zeros((nv, nv))
    for idx, rank in (([0, 1, 2], 3), ([4, 7, 9, 10], 2), ([5, 6], 2)):  # 3, 8: prescribed
        A = rng.standard_normal((len(idx), rank))
        K[np.ix_(idx, idx)] = A @ A.T
    U, kappa = velocity_basis(K)
    assert kappa.size == 7 and np.all(kappa > 0)
    Ud = U.toarray()
    np.testing.assert_allclose(Ud.T @ Ud, np.eye(7), atol=1e-12)
    np.testing.assert_allclose((Ud * kappa) @ Ud.T, K, atol=1e-12)
    assert not Ud[[3, 8]].any()  # no velocity change on the prescribed coordinates


@pytest.fixture(scope="module")
def pile_problems():
    """Relaxed problems of the 50-grain Brazil nut once the grains have landed: ~130
    contacts of 3 dof disks with 4 edges each, ~4 times more edges than dof."""
    sim = Simulator.from_file(os.path.join(ROOT, "config", "brazil_nut_50.yaml"))
    sim.record_problems = True
    for _ in range(15):
        sim.step()
    return sim.recorded_problems[-2:]


def test_qp_and_pivoting_agree_on_a_settled_pile(pile_problems):
    for problem in pile_problems:
        lcp = build_relaxed_lcp(problem, num_directions=4)
        dof = np.count_nonzero(np.any(problem.K != 0.0, axis=1))
        assert problem.num_contacts * 4 > 3 * dof  # degenerate: edges far outnumber dof
        res_qp = solve_relaxed_qp(problem, lcp)
        res_lcp = solve(lcp.M, lcp.q, "robust")
        assert res_qp.success and res_lcp.success, (res_qp.status, res_qp.error)
        # The interior-point answer leaves z_i ~ 3e-10 N.s on a few separating contacts
        # (w_i ~ 1e-4 m/s) whose rows read only tiny impulses (their own tolerance ~2e-13):
        # certified under one global tolerance, not row by row, so the solve on the active
        # set (refine_active_set) or the polish's pivots (relaxed_qp) finish it.
        assert res_qp.method in ("qp:clarabel", "qp:clarabel+refine", "qp:clarabel+polish")
        # Both answers are certified to res.info["tol"] (~1e-4 m/s at these sizes, in
        # velocity units); the velocities after the step are unique and agree far closer.
        dv = problem.K @ (problem.J.T @ (lcp.impulses(res_qp.z) - lcp.impulses(res_lcp.z)))
        assert np.max(np.abs(dv)) < 1e-5


def test_auto_path_switches_at_the_size_threshold(pile_problems, monkeypatch):
    problem = pile_problems[-1]
    n = build_relaxed_lcp(problem, num_directions=4).q.size
    settings = ModelSettings(friction_directions=4)
    for threshold, method in ((n - 1, "qp:clarabel"), (n, "robust")):
        monkeypatch.setattr(relaxed, "AUTO_QP_SIZE", threshold)
        sol = RelaxedModel(settings).solve(problem)
        assert sol.report.method == method and sol.report.certified
        assert sol.report.info["path"] == ("qp" if method.startswith("qp") else "lcp")


def test_a_loose_qp_answer_is_polished_into_a_certified_one(pile_problems, monkeypatch):
    problem = pile_problems[-1]
    lcp = build_relaxed_lcp(problem, num_directions=4)
    res = solve_relaxed_qp(problem, lcp, tol=1e-5)  # far looser than the certification
    # the solve on the QP answer's active set finishes it ...
    assert res.success and res.method == "qp:clarabel+refine"
    assert res.info["qp_error"] > res.info["tol"] >= res.error
    assert res.info["attempts"] == ("interior_point:uncertified", "refine:solved")
    # the model's step report says which finish ran
    model = RelaxedModel(ModelSettings(friction_directions=4,
                                       options={"path": "qp", "qp_tolerance": 1e-5}))
    report = model.solve(problem).report
    assert report.certified
    assert report.rungs == ("qp:solved(interior_point:uncertified+refine:solved)",)
    # ... and without it, the pivoting polish does
    monkeypatch.setattr(relaxed_qp, "refine_active_set", lambda *a: None)
    res = solve_relaxed_qp(problem, lcp, tol=1e-5)
    assert res.success and res.method == "qp:clarabel+polish" and res.info["polished"]
    assert res.info["qp_error"] > res.info["tol"] >= res.error
    assert res.info["attempts"] == ("interior_point:uncertified", "refine:failed",
                                    "polish:solved")


def test_an_infeasible_step_is_a_failure_not_an_answer():
    # One contact between two prescribed bodies (J = 0, K = 0) closing at 1 m/s: no
    # impulse can stop it, and the QP must say so rather than return something.
    k, nv = 1, 2
    problem = build_problem(1e-3, np.eye(3)[None], np.zeros((1, 3)), np.array([0.0]),
                            np.array([0.5]), np.zeros((3 * k, nv)), np.zeros((nv, nv)),
                            np.zeros(nv), np.zeros(nv))
    problem = dataclasses.replace(problem, u=np.array([-1.0, 0.0, 0.0]))
    lcp = build_relaxed_lcp(problem, num_directions=4)
    res = solve_relaxed_qp(problem, lcp)
    assert not res.success and res.status is LCPStatus.NUMERICAL_FAILURE


def test_unknown_backend_is_an_error(pile_problems):
    problem = pile_problems[-1]
    with pytest.raises(ValueError, match="solver must be one of"):
        solve_relaxed_qp(problem, build_relaxed_lcp(problem, num_directions=4), solver="osqp")



def test_refine_finishes_a_settled_pour_by_blocking_steps():
    # The 200-sphere pour's QP at t = 1.45 s (500 contacts, 8 edges each, 1 200 dof):
    # the interior point's set of ~2 970 closed rows is a few rows from the answer's.
    # Opening every row whose multiplier the set's solution makes negative swings the
    # set by hundreds of rows a round and never settles (the dense polish then takes
    # 80 s); the blocking steps of a primal active-set method finish it, to a
    # nonnegative, complementary answer of the QP's dual (the LCP's edge rows).
    data = np.load(os.path.join(DATA, "pour_refine_blocking.npz"))
    A = sparse.csc_matrix((data["A_data"], data["A_indices"], data["A_indptr"]),
                          shape=tuple(data["A_shape"]))
    b, kappa, c = data["b"], data["kappa"], data["c"]
    rows = (A, b, kappa)
    k, d = int(data["k"]), int(data["d"])
    x = relaxed_qp.refine_active_set(rows, c, k, d)
    assert x is not None
    s = A @ (kappa * (A.T @ x)) + b
    s_unit, c_unit = np.abs(b).max(), x.max()
    assert x.min() >= 0.0
    assert s.min() >= -1e-9 * s_unit  # no open row closes
    closed = x > 1e-12 * c_unit
    assert np.abs(s[closed]).max() <= 1e-9 * s_unit  # the closed rows' slacks vanish
    # complementary to 1e-9 in units of the largest multiplier and slack, where the
    # interior point's answer is so only to ~1e-6 (what the certification rejects)
    s_ip = A @ (kappa * (A.T @ c)) + b
    assert np.max(np.minimum(x / c_unit, np.abs(s) / s_unit)) <= 1e-9
    assert np.max(np.minimum(c / c.max(), np.abs(s_ip) / s_unit)) > 1e-7


def test_the_polish_starts_from_one_pyramid_face_per_contact():
    # Two contacts and one limit row (3 normal rows), 4 edges each, then lam: an
    # interior point spreads a contact's friction over all its edges; the polish's
    # basis keeps the positive ones of the adjacent pair that carries the most (contact
    # 1's face wraps from edge 3 to edge 0), the positive normals and the positive lam.
    from types import SimpleNamespace

    lcp = SimpleNamespace(num_contacts=2, num_normals=3, num_directions=4)
    z = np.array([1.0, 0.0, 0.5,              # normals of contacts 0, 1 and the limit row
                  0.1, 0.4, 0.3, 0.05,        # contact 0's edges: face (1, 2)
                  0.2, 0.0, 0.0, 0.3,         # contact 1's edges: face (3, 0)
                  0.2, 0.0])                  # lam
    np.testing.assert_array_equal(relaxed_qp.polish_basis(lcp, z), [0, 2, 4, 5, 7, 10, 11])
