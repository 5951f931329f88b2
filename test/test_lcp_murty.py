"""Murty's least-index principal pivoting method."""

import numpy as np
import pytest

from contact_lcp.lcp import LCPStatus, solve
from contact_lcp.contact.reference import murty_exponential, planted_p_matrix


@pytest.mark.parametrize("n, seed", [(5, 0), (10, 1), (30, 2)])
def test_solves_p_matrix_problems(n, seed):
    p = planted_p_matrix(n, seed)
    res = solve(p.M, p.q, method="murty")
    assert res.success
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-10)
    assert sorted(res.info["alpha"]) == np.flatnonzero(p.z_expected).tolist()


def test_singular_block_of_redundant_contacts_is_named():
    """Three identical legs: M = ones (rank 1); the block on {0, 1} is singular."""
    res = solve(np.ones((3, 3)), np.array([-1.0, -2.0, -3.0]), method="murty")
    assert res.status is LCPStatus.NUMERICAL_FAILURE
    assert res.info["alpha"] == [0, 1] and "alpha = [0, 1]" in res.info["reason"]


def test_repeated_set_is_a_cycle():
    res = solve(-np.eye(2), -np.ones(2), method="murty")
    assert res.status is LCPStatus.CYCLE and "repeated" in res.info["reason"]


def test_flip_limit():
    p = murty_exponential(8)
    res = solve(p.M, p.q, method="murty", max_pivots=20)
    assert res.status is LCPStatus.MAX_PIVOTS and res.pivots == 20
