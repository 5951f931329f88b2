"""Lexicographic Lemke on sparse LU factors (contact_lcp.lcp.revised) and the robust
method's use of it on large sparse problems."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contact_lcp.contact.lcp_builder import build_contact_lcp
from contact_lcp.contact.reference import (
    cycling_example,
    legged_frame,
    planted_p_matrix,
)
from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp import LCPStatus, solve, solve_with_retries
from contact_lcp.lcp.revised import solve_revised
from contact_lcp.lcp.robust import REVISED_MIN_N, revised_first

DATA = Path(__file__).parent / "data"


def pile_lcp(seed, bodies, contacts, d=8, resting=False):
    """Frictional LCP of ``contacts`` point contacts among free bodies (6 dofs each,
    diagonal mass): each between two random bodies or a body and the ground, so that
    ``G = J H^-1 J'`` couples only contacts that share a body, as in a pile.
    ``resting``: no tangential velocity before the impulse (every edge row's q is 0,
    ties everywhere, as in a settled pile)."""
    rng = np.random.default_rng(seed)
    nv = 6 * bodies
    J = np.zeros((3 * contacts, nv))
    for i in range(contacts):
        a, b = rng.choice(bodies, 2, replace=False)
        J[3 * i:3 * i + 3, 6 * a:6 * a + 6] = rng.standard_normal((3, 6))
        if rng.random() < 0.7:  # else against the ground
            J[3 * i:3 * i + 3, 6 * b:6 * b + 6] = rng.standard_normal((3, 6))
    Hinv = 1.0 / rng.uniform(0.5, 2.0, nv)
    G = (J * Hinv) @ J.T
    u = J @ rng.standard_normal(nv)
    u[0::3] -= rng.uniform(0.0, 1.0, contacts)  # approaching
    if resting:
        u[1::3] = u[2::3] = 0.0
    lcp = build_contact_lcp(G, u, rng.uniform(0.1, 1.0, contacts), num_directions=d)
    return lcp.M, lcp.q


@pytest.mark.parametrize("refactor", [1, 3, 100])
def test_same_path_as_the_dense_lexicographic_lemke(refactor):
    """No ties on a planted P-matrix problem: the same pivots and the same answer,
    whether the factors are fresh at every pivot or carry up to 100 etas."""
    p = planted_p_matrix(40, 3)
    dense = solve(p.M, p.q, method="lexicographic")
    res = solve(p.M, p.q, method="revised", refactor=refactor)
    assert res.success and dense.success
    assert res.pivots == dense.pivots
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-9)
    assert res.info["basis_residual"] <= 1e-10


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 12), st.integers(1, 20))
@example(2053, 2, 16)  # both paths end on tiny pivots; both certify on solve()'s retry
def test_certifies_where_the_dense_lexicographic_path_does(seed, bodies, contacts):
    """Degenerate frictional pile LCPs (round-off may split the two paths): whenever the
    dense lexicographic path certifies, so does the revised one, within 3 times its
    pivots."""
    M, q = pile_lcp(seed, bodies, contacts)
    dense = solve(M, q, method="lexicographic")
    res = solve(M, q, method="revised", refactor=7)
    if dense.success:
        assert res.success, (res.status, dict(res.info))
        assert res.pivots <= 3 * dense.pivots + 10
    if res.success:
        assert res.error <= res.info["tol"]


def test_warm_start_from_the_answer_pivots_only_its_block():
    p = planted_p_matrix(40, 4)
    basis = np.flatnonzero(p.z_expected > 0.0)
    warm = solve(p.M, p.q, method="revised", initial_basis=basis)
    assert warm.success and warm.pivots == basis.size
    np.testing.assert_allclose(warm.z, p.z_expected, atol=1e-9)


def test_the_final_basis_keeps_degenerate_basic_variables_and_restarts_in_place():
    """A resting pile's LCP (ties everywhere): the final basis holds every z_i with a
    positive value and some at 0 (degenerate); given back as the warm start it is the
    answer at once (no pivot beyond its block), where the support of z alone need not
    be."""
    M, q = pile_lcp(7, 6, 14, resting=True)
    cold = solve(M, q, method="revised")
    assert cold.success
    basis = cold.info["final_basis"]
    support = np.flatnonzero(cold.z > 0.0)
    assert np.all(np.diff(basis) > 0) and np.all(np.isin(support, basis))
    assert basis.size > support.size  # degenerate basic variables at 0
    for check in (1e-10, 0.0):  # 0: the block taken as it is, no condition estimate
        again = solve(M, q, method="revised", initial_basis=basis, singular_tol=check)
        assert again.success and again.pivots == basis.size
        assert np.array_equal(again.info["final_basis"], basis)
        np.testing.assert_allclose(again.z, cold.z, atol=1e-9 * np.abs(cold.z).max())


def test_warm_start_from_a_wrong_block_goes_on_pivoting():
    p = planted_p_matrix(40, 4)
    wrong = np.flatnonzero(p.z_expected == 0.0)[:10]
    res = solve(p.M, p.q, method="revised", initial_basis=wrong)
    assert res.success and res.pivots > wrong.size
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-9)


def test_singular_warm_block_is_reduced():
    """Six legs on a frame whose normal block has rank 3: the block is reduced to a
    nonsingular one (reported) and the solve still certifies."""
    p = legged_frame(6)
    res = solve(p.M, p.q, method="revised", initial_basis=np.arange(6))
    assert res.success
    assert len(res.info["warm_start_dropped"]) >= 3


def test_no_cycle_where_min_index_lemke_cycles():
    p = cycling_example()
    assert solve(p.M, p.q, method="lemke").status is LCPStatus.CYCLE
    assert solve(p.M, p.q, method="revised").success


def test_secondary_ray_is_reported():
    res = solve(np.array([[-1.0]]), np.array([-1.0]), method="revised")
    assert res.status is LCPStatus.NO_SOLUTION and res.info["reason"]


@pytest.mark.parametrize("options, message", [
    ({"rule": "largest"}, "rule must be one of"),
    ({"tie_threshold": -1.0}, "tie_threshold must be >= 0"),
    ({"refactor": 0}, "refactor must be >= 1"),
])
def test_bad_options_are_named(options, message):
    p = planted_p_matrix(5, 1)
    with pytest.raises(ValueError, match=message):
        solve_revised(p.M, p.q, **options)


def test_warm_start_indices_out_of_range():
    p = planted_p_matrix(5, 1)
    with pytest.raises(InvalidProblem, match=r"initial_basis must hold indices in \[0, 5\)"):
        solve(p.M, p.q, method="revised", initial_basis=[0, 7])


def test_robust_walks_the_revised_path_on_large_sparse_problems():
    """A 100-contact pile (n = 1000): the robust method certifies on the sparse path
    without building the dense tableau; a dense or small M keeps the search."""
    M, q = pile_lcp(7, 60, 100)
    assert q.size == REVISED_MIN_N and revised_first(M)
    res = solve(M, q, method="robust")
    assert res.success, dict(res.info)
    assert res.info["paths"] == ["revised:solved"]
    w = M @ res.z + q
    assert w.min() >= -res.info["tol"] and res.z.min() >= -res.info["tol_z"]
    assert not revised_first(np.ones((REVISED_MIN_N, REVISED_MIN_N)))
    assert not revised_first(M[:500, :500])


def test_ties_narrowed_by_rows_choose_as_by_columns(monkeypatch):
    """Ties the kept columns of B^-1 do not break are narrowed by the tied rows (one
    transposed solve each); with one kept column the path is the one of sixteen. The
    frictional LCP of 25 contacts of config/spheres_21.yaml landing (recorded by
    ``contact-lcp simulate --record-lcps``; n = 250, 129 rows needed with 16 columns)."""
    from contact_lcp.lcp import revised

    with np.load(DATA / "spheres21_ties.npz") as f:
        M, q = f["M"], f["q"]
    many = solve_revised(M, q)
    monkeypatch.setattr(revised, "LEX_COLUMNS", 1)
    few = solve_revised(M, q)
    assert many.status is LCPStatus.SOLVED and few.status is LCPStatus.SOLVED
    assert few.info["lexicographic_rows"] > many.info["lexicographic_rows"] > 0
    assert few.pivots == many.pivots
    np.testing.assert_allclose(few.z, many.z, atol=1e-10 * np.abs(many.z).max())


def test_columns_solved_for_choose_as_the_columns_kept_up_to_date(monkeypatch):
    """The ties of the same LCP compare up to 16 columns of B^-1; those past
    ``KEPT_COLUMNS`` are solved for when a tie needs them instead of updated at every
    pivot. Keeping all 16 up to date walks the same path to the same answer."""
    from contact_lcp.lcp import revised

    with np.load(DATA / "spheres21_ties.npz") as f:
        M, q = f["M"], f["q"]
    solved_for = solve_revised(M, q)
    monkeypatch.setattr(revised, "KEPT_COLUMNS", revised.LEX_COLUMNS)
    kept = solve_revised(M, q)
    assert kept.status is LCPStatus.SOLVED and solved_for.status is LCPStatus.SOLVED
    assert kept.pivots == solved_for.pivots
    assert kept.info["lexicographic_columns"] == solved_for.info["lexicographic_columns"] > 0
    np.testing.assert_allclose(kept.z, solved_for.z, atol=1e-10 * np.abs(kept.z).max())


def test_ill_conditioned_pour_lcp_is_certified_by_the_exact_tie_path():
    """The frictional LCP of the 200-sphere pour at t = 0.68 s (n = 4110, as equilibrated
    inside ``solve``; captured from ``benchmarks/bench_large.py``), warm-started on the
    frictionless answer's loaded contacts. Its bases have entering columns with entries
    of 1e8, so the absolute tie threshold 1e-9 lets a basic variable fall to -0.05: that
    path is refused by the certification (the tolerant retry, pivot tolerance 1e-7, then
    certifies), and robust certifies on its cold path, which walks exact ties (its warm
    one ends on a ray)."""
    from scipy import sparse

    with np.load(DATA / "pour_ill_conditioned.npz") as f:
        M = sparse.csr_matrix((f["data"], f["indices"], f["indptr"])).toarray()
        q, basis = f["q"], f["basis"]
    loose = solve_with_retries(M, q, method="revised")
    assert loose.info["first_status"] == "ERROR"
    assert loose.success and loose.info["tolerant_retry"]["pivot_tol"] == 1e-7
    res = solve(M, q, method="robust", initial_basis=basis)
    assert res.success, dict(res.info)
    assert res.info["paths"] == ["revised-warm:no_solution", "revised:solved"]
    assert res.error <= 1e-4 * res.info["tol"]


@pytest.mark.parametrize("z_share", [0.0, 0.3, 1.0])
def test_the_basis_factors_solve_and_transpose_like_the_whole_basis(z_share):
    """``_Basis`` factorizes only the block the slack columns leave; its solves, its
    rows of ``B^-1`` (transposed solves) and the eta updates must equal those of the
    whole basis matrix, for a slack-only, a mixed and an all-z basis."""
    from scipy import sparse

    from contact_lcp.lcp.revised import _Basis

    n = 40
    p = pile_lcp(3, 8, 4)  # n = 40: 4 contacts, d = 8
    M = p[0] + 5.0 * np.eye(n)  # (nonsingular principal blocks)
    rng = np.random.default_rng(1)
    c = rng.uniform(0.5, 1.5, n)
    A = sparse.hstack([sparse.identity(n, format="csc"), -sparse.csc_matrix(M),
                       sparse.csc_matrix(-c[:, None])], format="csc")
    basis = np.arange(n)
    zs = rng.choice(n, int(z_share * n), replace=False)
    basis[zs] = n + zs
    if z_share == 0.3:
        basis[rng.choice(np.setdiff1d(np.arange(n), zs))] = 2 * n  # z0 basic too
    lu = _Basis(A, n, 10)
    assert lu.factorize(basis)
    B = A[:, basis].toarray()
    a = rng.standard_normal(n)
    np.testing.assert_allclose(lu.solve(a), np.linalg.solve(B, a), rtol=1e-10, atol=1e-12)
    Binv = np.linalg.inv(B)
    for i in (0, n // 2, n - 1):
        np.testing.assert_allclose(lu.row(i), Binv[i], rtol=1e-10, atol=1e-12)
    # one pivot: row r takes column e of A; B^-1 then follows from the eta
    r, entering = 5, int(np.setdiff1d(np.arange(2 * n), basis)[0])
    d = lu.solve(A[:, entering].toarray().ravel())
    lu.pivot(r, d)
    basis[r] = entering
    Binv = np.linalg.inv(A[:, basis].toarray())
    np.testing.assert_allclose(lu.solve(a), Binv @ a, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(lu.row(7), Binv[7], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(lu.column(3), Binv[:, 3], rtol=1e-9, atol=1e-11)


def test_above_the_dense_limit_a_failed_sparse_search_is_reported_at_once(monkeypatch):
    """When every sparse Lemke path fails on a large sparse LCP, robust does not fall into
    the dense search (O(n^2) per node: hours at the pour's n = 5 000); it returns the
    failure with the paths it walked."""
    from contact_lcp.lcp import robust

    n = REVISED_MIN_N
    M, q = -np.eye(n), -np.ones(n)  # w = -1 - z < 0: infeasible, every path ends on a ray
    monkeypatch.setattr(robust, "DENSE_MAX_N", n - 1)
    res = solve(M, q, method="robust")
    assert res.status is LCPStatus.NO_SOLUTION
    assert "dense search is not run" in res.info["reason"]
    assert "first_stage" not in res.info and len(res.info["paths"]) == 3


def test_a_pivot_budget_bounds_all_the_paths_and_retries_together():
    """``pivot_budget`` caps the pivots of robust's Lemke paths and of solve()'s retries
    together (a failing large step must end in bounded time): a path gets what the ones
    before it left, and none starts once it is spent."""
    n = REVISED_MIN_N
    M = 2.0 * np.eye(n) + np.diag(np.full(n - 1, 0.5), 1) + np.diag(np.full(n - 1, 0.5), -1)
    q = -(1.0 + np.arange(n) / n)  # a P-matrix: Lemke's path loads every z_i, n + 1 pivots
    full = solve(M, q, method="robust")
    assert full.success and full.pivots == n + 1
    res = solve(M, q, method="robust", pivot_budget=n // 2)
    assert res.status is LCPStatus.MAX_PIVOTS and res.pivots == n // 2
    assert res.info["paths"] == ["revised:max_pivots", "budget:spent"]
    assert "pivot budget" in res.info["reason"]
    assert solve(M, q, method="robust", pivot_budget=n + 1).success


def test_within_a_budget_the_cold_exact_path_may_take_all_that_is_left(monkeypatch):
    """Under a ``pivot_budget`` the warm path keeps its limit of 50 n pivots (here made
    n / 4), but the cold exact-tie path may spend the rest of the budget (the pour's LCP
    at t = 0.96 s needed 104 n on it)."""
    from contact_lcp.lcp import lemke

    n = REVISED_MIN_N
    M = 2.0 * np.eye(n) + np.diag(np.full(n - 1, 0.5), 1) + np.diag(np.full(n - 1, 0.5), -1)
    q = -(1.0 + np.arange(n) / n)  # Lemke's path from the slack basis: n + 1 pivots
    monkeypatch.setattr(lemke, "default_max_pivots", lambda size: size // 4)
    res = solve(M, q, method="robust", pivot_budget=3 * n, initial_basis=[n - 1])
    assert res.success and res.pivots == n + 1
    assert res.info["paths"] == ["revised-warm:max_pivots", "revised:solved"]
    assert res.info["path_lengths"] == [n // 4, n + 1]
    assert res.info["path_pivots"] == n // 4 + n + 1
    res = solve(M, q, method="robust", pivot_budget=n // 4 + n // 2, initial_basis=[n - 1])
    assert res.status is LCPStatus.MAX_PIVOTS  # and no more than the budget in all
    assert res.info["path_pivots"] + res.info.get("attempt_pivots", 0) == n // 4 + n // 2
