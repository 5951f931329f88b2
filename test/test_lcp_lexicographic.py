"""Lemke's method with the lexicographic ratio test and a tie threshold."""

import numpy as np
import pytest

from contact_lcp.lcp import LCPStatus, solve
from contact_lcp.contact.reference import cycling_example, legged_frame, planted_p_matrix

DELTAS = (0.0, 1e-8, 1e-6, 1e-4)


@pytest.mark.parametrize("delta", DELTAS)
def test_does_not_cycle_where_min_index_lemke_does(delta):
    p = cycling_example()
    assert solve(p.M, p.q, method="lemke").status is LCPStatus.CYCLE
    res = solve(p.M, p.q, method="lexicographic", tie_threshold=delta)
    assert res.success
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-12)


@pytest.mark.parametrize("delta", DELTAS)
def test_solves_planted_problems(delta):
    p = planted_p_matrix(30, 2)
    res = solve(p.M, p.q, method="lexicographic", tie_threshold=delta)
    assert res.success
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-9)


def test_degenerate_ties_in_step_0():
    """Every q_i ties: the lexicographic Step 0 still ends in a certified solution."""
    p = legged_frame(6)
    q = np.full(6, p.q.min())
    res = solve(p.M, q, method="lexicographic")
    assert res.success


def test_same_path_as_lemke_without_ties():
    p = planted_p_matrix(10, 1)
    a = solve(p.M, p.q, method="lemke")
    b = solve(p.M, p.q, method="lexicographic")
    assert a.pivots == b.pivots
    np.testing.assert_allclose(a.z, b.z)


def test_negative_threshold_is_rejected():
    with pytest.raises(ValueError, match="tie_threshold must be >= 0; received -1"):
        solve(np.eye(2), -np.ones(2), method="lexicographic", tie_threshold=-1e-0)
