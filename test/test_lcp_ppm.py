"""The modified principal pivoting method (Drumwright, S4 Alg. 1) and its Cholesky factor."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from contact_lcp.lcp import LCPStatus, lcp_error, solve, solve_with_retries
from contact_lcp.lcp.cholesky import IncrementalCholesky

seeds = st.integers(0, 2**32 - 1)


def planted_psd(rng, n, rank, shift=0.0):
    """PSD ``M = A A' + shift I`` (rank ``rank`` when ``shift = 0``) and ``q`` with a
    planted solution (Murty 1988 §2.2).

    ``z*`` positive on about 40 % of the indices, ``w*`` positive on the others, and
    ``q = w* - M z*``: the LCP is solvable whatever the rank, and degenerate (many
    dependent rows) when ``rank < n`` as the Delassus matrix of redundant contact is.
    """
    A = rng.standard_normal((n, rank))
    M = A @ A.T + shift * np.eye(n)
    z = np.where(rng.random(n) < 0.4, rng.random(n), 0.0)
    w = np.where(z > 0, 0.0, rng.random(n))
    return M, w - M @ z


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 12), st.lists(st.integers(0, 11), max_size=8))
def test_cholesky_append_remove_matches_factor_of_block(seed, n, removals):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n + 2))
    A = A @ A.T
    chol = IncrementalCholesky(2)  # grows on demand
    S = []
    for i in rng.permutation(n):
        assert chol.try_append(A[S, i], A[i, i])
        S.append(int(i))
    for p in removals:
        if S:
            chol.remove(p % len(S))
            S.pop(p % len(S))
    L = chol.factor()
    np.testing.assert_allclose(L @ L.T, A[np.ix_(S, S)], atol=1e-9 * np.abs(A).max())
    assert np.all(np.diag(L) > 0)


def test_cholesky_refuses_a_dependent_index():
    x = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    A = x @ x.T
    chol = IncrementalCholesky(3)
    assert chol.try_append(A[[], 0], A[0, 0]) and chol.try_append(A[[0], 1], A[1, 1])
    assert not chol.try_append(A[[0, 1], 2], A[2, 2])
    assert chol.size == 2


def test_random_psd_problems_never_fail_and_exercise_the_sorted_set_pitfall():
    """Moby's and Drake's fast solvers keep the non-basic set sorted and read the leaving
    position after inserting the entering index: wrong whenever the entering index is the
    smaller (``shifted_swaps``). A reproduction of that bug failed on ~19 % of random PSD
    problems; ours must fail on none, and the sample must contain that situation often
    enough that a 19 % failure rate could not hide (expected > 20 failures here)."""
    rng = np.random.default_rng(20150403)
    failures, shifted = [], 0
    for trial in range(600):
        n = int(rng.integers(2, 40))
        M, q = planted_psd(rng, n, int(rng.integers(1, n + 1)))
        res = solve(M, q, "ppm")
        if not res.success:
            failures.append((trial, res.status.name, res.info.get("reason")))
        shifted += res.info.get("shifted_swaps", 0) > 0
    assert failures == []
    assert shifted > 100, shifted


def sorted_set_alg1(M, q, max_pivots=500):
    """S4's Alg. 1 as two peers wrote it: beta kept sorted, and the leaving position ``j``
    (an argmin over the solved ``z_beta``) read in beta *after* inserting the entering
    index. A plain-numpy reproduction of the pitfall, for comparison only."""
    n = q.shape[0]
    if q.min() >= 0:
        return np.zeros(n)
    beta = [int(np.argmin(q))]
    for _ in range(max_pivots):
        zb = np.linalg.solve(M[np.ix_(beta, beta)], -q[beta])
        z = np.zeros(n)
        z[beta] = zb
        w = np.where(np.isin(np.arange(n), beta), np.inf, M @ z + q)
        i, j = int(np.argmin(w)), int(np.argmin(zb))
        if w[i] >= -1e-9:
            if zb[j] >= -1e-9:
                return z
            beta.pop(j)
            continue
        beta = sorted(beta + [i])
        if zb[j] < -1e-9:
            beta.pop(j)  # the bug: j indexed the list before the insertion
    return None


def test_the_sorted_set_pitfall_fails_where_ours_does_not():
    """On the same positive definite problems (no singular block, so only the indexing
    differs) the peers' variant fails on ~18 % (the issue's reproduction: ~19 %), ours on
    none: the property test above would see that bug."""
    rng = np.random.default_rng(20150403)
    buggy = ours = 0
    for _ in range(300):
        n = int(rng.integers(2, 40))
        M, q = planted_psd(rng, n, int(rng.integers(n // 2 + 1, n + 1)), shift=1e-3)
        z = sorted_set_alg1(M, q)
        buggy += z is None or lcp_error(M, q, z)[0] > 1e-6
        ours += not solve(M, q, "ppm").success
    assert ours == 0
    assert buggy > 0.1 * 300, buggy


@settings(max_examples=60, deadline=None)
@given(seeds, st.integers(1, 30), st.floats(0.05, 1.0))
def test_planted_psd_property(seed, n, rank_fraction):
    rng = np.random.default_rng(seed)
    M, q = planted_psd(rng, n, max(1, int(rank_fraction * n)))
    res = solve(M, q, "ppm")
    assert res.success, (res.status, dict(res.info))
    assert "fallback" not in res.info


def test_theorem_1_at_most_rank_positive_impulses():
    """Delassus ``G = N K N'`` of 60 contacts on 6 dofs with ``q = N v`` (consistent): the
    answer has at most 6 positive impulses and no factor larger than 6 (S4, Theorem 1)."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        N = rng.standard_normal((60, 6))
        B = rng.standard_normal((6, 6))
        K = np.linalg.inv(B @ B.T + np.eye(6))
        res = solve(N @ K @ N.T, N @ rng.standard_normal(6), "ppm")
        assert res.success
        assert np.count_nonzero(res.z > 0) <= 6 and len(res.info["beta"]) <= 6


def test_infeasible_psd_problem_is_no_solution():
    # w0 + w1 = -2 whatever z (M's rows cancel): z >= 0 with w >= 0 is impossible.
    M = np.array([[1.0, -1.0], [-1.0, 1.0]])
    q = np.array([-1.0, -1.0])
    res = solve(M, q, "ppm")
    assert res.status is LCPStatus.NO_SOLUTION and "infeasible" in res.info["reason"]


def test_the_standard_attempts_fall_back_to_robust_and_say_so():
    # Zero diagonal: the PPM cannot factor its first block (not PSD); robust solves it.
    # solve() runs the PPM alone; the fallback is an attempt its caller lists.
    M = np.array([[0.0, 1.0], [-1.0, 2.0]])
    q = np.array([-1.0, 1.0])
    alone = solve(M, q, "ppm")
    assert alone.status is LCPStatus.NUMERICAL_FAILURE and "fallback" not in alone.info
    res = solve_with_retries(M, q, "ppm")
    assert res.success and res.method == "ppm"
    assert res.info["fallback"] == "robust"
    assert res.info["attempts"] == ["ppm:numerical_failure", "robust:solved"]
    assert res.info["ppm_status"] == "NUMERICAL_FAILURE" and res.info["ppm_reason"]


def test_warm_start_from_the_answer_needs_no_further_pivot():
    rng = np.random.default_rng(7)
    M, q = planted_psd(rng, 25, 10)
    cold = solve(M, q, "ppm")
    warm = solve(M, q, "ppm", initial_basis=cold.info["beta"])
    assert warm.success and warm.pivots == len(cold.info["beta"])
    np.testing.assert_allclose(warm.w, cold.w, atol=1e-9)


def test_bad_initial_basis_is_an_error():
    with pytest.raises(ValueError, match="initial_basis"):
        solve(np.eye(2), -np.ones(2), "ppm", initial_basis=[5])


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="valid options"):
        solve(np.eye(2), -np.ones(2), "ppm", pivots=3)
