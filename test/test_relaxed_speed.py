"""The relaxed model's speed on piles: the QP answer finished on its active set
(:func:`contact_lcp.contact.relaxed_qp.refine_active_set`) instead of by dense pivoting,
and the QP path's sparse LCP with its sparse certification
(:mod:`contact_lcp.lcp.sparse_residual`), which must be the dense one's exactly."""

import os

import numpy as np
import pytest

from contact_lcp.contact.lcp_builder import build_relaxed_lcp
from contact_lcp.contact.relaxed_qp import solve_relaxed_qp
from contact_lcp.lcp import solve
from contact_lcp.lcp.residual import certify
from contact_lcp.lcp.sparse_residual import certify_sparse
from contact_lcp.sim import Simulator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def pile_problems():
    """Relaxed problems of the 50-grain Brazil nut once the grains have landed (~130
    contacts, 4 edges each, several times more edges than dof)."""
    sim = Simulator.from_file(os.path.join(ROOT, "config", "brazil_nut_50.yaml"))
    sim.record_problems = True
    for _ in range(15):
        sim.step()
    return sim.recorded_problems[-2:]


def test_refine_finishes_the_pile_without_pivoting(pile_problems):
    # The interior point's answer fails the per-row certification on this pile (rows of
    # separating contacts with c ~ 1e-10); the solve on its active set certifies it
    # without the dense pivoting polish, to the same velocities as the robust search.
    refined = 0
    for problem in pile_problems:
        lcp = build_relaxed_lcp(problem, num_directions=4)
        res = solve_relaxed_qp(problem, lcp)
        assert res.success and res.method != "qp:clarabel+polish", res.method
        refined += res.method == "qp:clarabel+refine"
        ref = solve(lcp.M, lcp.q, "robust")
        dv = problem.K @ (problem.J.T @ (lcp.impulses(res.z) - lcp.impulses(ref.z)))
        assert np.max(np.abs(dv)) < 1e-9
    assert refined >= 1


def test_sparse_relaxed_lcp_is_the_dense_one(pile_problems):
    # The QP path's CSR M holds the dense assembly's entries exactly, and its
    # certification returns the dense certification's numbers bit for bit.
    problem = pile_problems[-1]
    angle = np.linspace(0.0, 1.0, problem.num_contacts)
    dense = build_relaxed_lcp(problem, num_directions=4, edge_angle=angle)
    sp = build_relaxed_lcp(problem, num_directions=4, edge_angle=angle, sparse_M=True)
    assert sp.M.nnz < 0.2 * dense.M.size
    np.testing.assert_array_equal(sp.M.toarray(), dense.M)
    np.testing.assert_array_equal(sp.q, dense.q)
    rng = np.random.default_rng(7)
    z_solved = solve_relaxed_qp(problem, sp).z
    for z in (z_solved, z_solved * (1.0 + 1e-8), np.abs(rng.standard_normal(dense.q.size))):
        e_d, w_d, t_d = certify(dense.M, dense.q, z)
        e_s, w_s, t_s = certify_sparse(sp.M, sp.q, z)
        assert (e_s, t_s) == (e_d, t_d)
        np.testing.assert_array_equal(w_s, w_d)


def test_no_dense_polish_above_the_size_cap(pile_problems, monkeypatch):
    # An uncertified QP answer of an LCP larger than MAX_DENSE_SIZE is a failure, not a
    # dense pivoting search of gigabytes (a 1000-sphere pour's island: n = 17 560).
    from contact_lcp.contact import relaxed_qp
    from contact_lcp.lcp import LCPStatus

    problem = pile_problems[-1]
    lcp = build_relaxed_lcp(problem, num_directions=4, sparse_M=True)
    monkeypatch.setattr(relaxed_qp, "refine_active_set", lambda *a: None)
    monkeypatch.setattr(relaxed_qp, "MAX_DENSE_SIZE", lcp.q.size - 1)
    monkeypatch.setattr(relaxed_qp, "lcp_rung", lambda *a: pytest.fail("dense polish"))
    res = solve_relaxed_qp(problem, lcp, tol=1e-5)  # loose: not certified as it comes
    assert not res.success and res.status is LCPStatus.NUMERICAL_FAILURE
    assert "MAX_DENSE_SIZE" in res.info["reason"]
