"""Projected Gauss-Seidel, the iterative baseline."""

import numpy as np
import pytest

from contact_lcp.lcp import LCPStatus, solve
from contact_lcp.contact.reference import planted_p_matrix


def test_pgs_converges_on_spd_problem():
    p = planted_p_matrix(10, 1)
    res = solve(p.M, p.q, method="pgs", tolerance=1e-12, max_iterations=10000)
    assert res.success
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-9)


def test_pgs_reports_zero_diagonal():
    res = solve(np.array([[0.0, 1.0], [-1.0, 1.0]]), np.array([-1.0, -1.0]), method="pgs")
    assert res.status is LCPStatus.NUMERICAL_FAILURE and "M[0, 0]" in res.info["reason"]


def test_pgs_iteration_limit():
    p = planted_p_matrix(30, 2)
    res = solve(p.M, p.q, method="pgs", max_iterations=2)
    assert res.status is LCPStatus.MAX_PIVOTS and res.pivots == 2


def test_pgs_rejects_bad_relaxation():
    with pytest.raises(ValueError, match="omega"):
        solve(np.eye(2), -np.ones(2), method="pgs", omega=2.5)
