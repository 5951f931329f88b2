"""Lemke's method with the minimum-index rule."""

import numpy as np
import pytest

from contact_lcp.lcp import LCPStatus, solve
from contact_lcp.lcp.lemke import default_max_pivots
from contact_lcp.contact.reference import murty_exponential, planted_p_matrix


@pytest.mark.parametrize("n, seed", [(5, 0), (10, 1), (30, 2)])
def test_solves_planted_p_matrix_problems(n, seed):
    p = planted_p_matrix(n, seed)
    res = solve(p.M, p.q, method="lemke")
    assert res.success and res.info["basis_residual"] < 1e-10
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-10)


def test_step_0_only_for_a_single_negative_row_of_the_identity():
    res = solve(np.eye(3), np.array([1.0, -2.0, 3.0]), method="lemke")
    assert res.success and res.pivots == 2
    np.testing.assert_allclose(res.z, [0.0, 2.0, 0.0])


def test_secondary_ray_is_no_solution():
    res = solve(-np.eye(3), -np.ones(3), method="lemke")
    assert res.status is LCPStatus.NO_SOLUTION and res.pivots == 1
    assert "ray" in res.info["reason"]


def test_pivot_limit():
    p = murty_exponential(6)
    res = solve(p.M, p.q, method="lemke", max_pivots=10)
    assert res.status is LCPStatus.MAX_PIVOTS and res.pivots == 10
    assert default_max_pivots(4) == 1000 and default_max_pivots(100) == 5000


def test_pivot_element_below_tolerance_is_numerical_failure():
    """After Step 0 the entering column is (-1, 1e-13): only round-off would block."""
    M = np.array([[-1.0, 0.0], [-1.0 - 1e-13, 1.0]])
    q = np.array([-1.0, -0.5])
    res = solve(M, q, method="lemke")
    assert res.status is LCPStatus.NUMERICAL_FAILURE and "pivot_tol" in res.info["reason"]
    assert solve(M, q, method="lemke", pivot_tol=1e-15).status is not LCPStatus.NUMERICAL_FAILURE
