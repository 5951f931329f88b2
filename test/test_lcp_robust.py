"""The robust best-first pivot search (Yamane & Nakamura 2008)."""

import numpy as np
import pytest

from contact_lcp.contact.reference import (
    box_on_plane,
    legged_frame,
    lexicographic_ray_example,
    murty_exponential,
    planted_p_matrix,
    rigid_box_contact,
)
from contact_lcp.lcp import LCPStatus, solve, solve_with_retries
from contact_lcp.lcp.residual import TOL_CAP, certification_coefficients, raw_tolerance

STATS = ("nodes", "queued", "max_queue", "depth", "total_pivots", "replayed")


def certified(res):
    return res.success and res.error <= res.info["tol"]


def test_certification_coefficients_match_raw_tolerance():
    rng = np.random.default_rng(0)
    for n in (1, 5, 40):
        M, q, z = rng.standard_normal((n, n)), rng.standard_normal(n), rng.standard_normal(n)
        a, b = certification_coefficients(M, q)
        for scale in (1.0, 1e20):  # below the cap, and far above it
            zz = scale * z
            assert min(a * np.max(np.abs(zz)) + b, TOL_CAP) == pytest.approx(
                raw_tolerance(M, q, zz), rel=1e-12)


def test_info_reports_the_search():
    p = planted_p_matrix(30, 2)
    res = solve(p.M, p.q, method="robust", lemke_fallback=False)
    assert certified(res)
    assert set(STATS) <= set(res.info)
    assert res.pivots == res.info["depth"] <= res.info["total_pivots"]
    assert res.info["nodes"] >= 1 and res.info["basis_residual"] < 1e-10


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("points", [8, 16])
def test_certifies_rank_deficient_contact_lcps(points, seed):
    """The point of the method: rigid boxes on 8-16 points have rank(G) <= 6."""
    p = rigid_box_contact(points, seed)
    res = solve(p.M, p.q, method="robust")
    assert certified(res), (res.status, dict(res.info))


def test_backtracks_from_a_dead_end():
    p = lexicographic_ray_example()
    assert solve(p.M, p.q, method="lexicographic").status is LCPStatus.NO_SOLUTION
    for offset in (1.0, 0.0):  # 0: the paper's total cost, which meets the ray first
        res = solve(p.M, p.q, method="robust", cost_offset=offset, lemke_fallback=False)
        assert certified(res) and res.info["replayed"] >= 1
        assert res.info["dead_ray"] + res.info["dead_revisit"] >= 1
        np.testing.assert_allclose(res.z, p.z_expected, atol=1e-12)


@pytest.mark.parametrize("offset", [1.0, 0.0])
def test_a_root_rebuilt_at_the_first_backtrack_is_the_copied_root(offset):
    """A cold search rebuilds its root (the slack basis after Step 0) only when it first
    backtracks; a warm start on the empty block is the same basis, copied on entry. Both
    must walk the same tree to the same answer, bit for bit."""
    p = lexicographic_ray_example()
    opts = dict(method="robust", cost_offset=offset, lemke_fallback=False)
    cold = solve(p.M, p.q, **opts)
    warm = solve(p.M, p.q, initial_basis=[], **opts)
    assert certified(cold) and cold.info["replayed"] >= 1
    for key in STATS:
        assert cold.info[key] == warm.info[key], key
    np.testing.assert_array_equal(cold.z, warm.z)


@pytest.mark.parametrize("problem", [box_on_plane("spinning"), box_on_plane("sliding"),
                                     legged_frame(8)], ids=lambda p: p.name)
def test_pure_best_first_and_cache_size_do_not_change_the_answer(problem):
    """dive=False is the plain best-first order; the cache only saves replays."""
    cached = solve(problem.M, problem.q, method="robust", dive=False, lemke_fallback=False)
    replay = solve(problem.M, problem.q, method="robust", dive=False, cache_size=0,
                   lemke_fallback=False)
    assert certified(cached) and certified(replay)
    for key in ("nodes", "queued", "depth"):
        assert cached.info[key] == replay.info[key]
    assert replay.info["replayed"] >= cached.info["replayed"]
    np.testing.assert_allclose(cached.z, replay.z, atol=1e-12)


def test_cost_offset_keeps_the_search_near_a_late_failure():
    """A deep dive that fails near its end is repaired locally with the default offset.

    With the paper's total cost (offset 0) every degenerate pivot costs 1, the search is
    breadth-first and the same problem needs many more nodes.
    """
    p = lexicographic_ray_example()
    near = solve(p.M, p.q, method="robust", lemke_fallback=False)
    literal = solve(p.M, p.q, method="robust", cost_offset=0.0, lemke_fallback=False)
    assert certified(near) and certified(literal)
    assert near.info["nodes"] <= literal.info["nodes"]


def test_node_limit_is_max_pivots():
    p = murty_exponential(10)
    res = solve(p.M, p.q, method="robust", max_nodes=50)
    assert res.status is LCPStatus.MAX_PIVOTS and res.info["nodes"] == 50
    assert "max_nodes=50" in res.info["reason"]


def test_infeasible_reports_a_ray():
    res = solve(-np.eye(4), -np.ones(4), method="robust")
    assert res.status is LCPStatus.NO_SOLUTION and "ray" in res.info["reason"]


def test_warm_start_on_the_support_needs_no_search():
    p = planted_p_matrix(10, 1)
    support = np.flatnonzero(p.z_expected)
    res = solve(p.M, p.q, method="robust", initial_basis=support)
    assert certified(res) and res.info["nodes"] == 0 and res.pivots == support.size
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_warm_start_from_a_wrong_basis_reaches_the_same_solution(seed):
    p = planted_p_matrix(12, seed)
    wrong = np.flatnonzero(p.z_expected == 0)[:3]
    res = solve(p.M, p.q, method="robust", initial_basis=wrong)
    assert certified(res) and res.info["warm_start_kept"] == wrong.tolist()
    np.testing.assert_allclose(res.z, p.z_expected, atol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_two_step_warm_start_from_the_frictionless_solution(seed):
    """Frictional LCP started on the loaded contacts of the frictionless one."""
    frictionless = rigid_box_contact(8, seed, friction=False)
    first = solve(frictionless.M, frictionless.q, method="robust")
    assert certified(first)
    loaded = np.flatnonzero(first.z > 0)
    p = rigid_box_contact(8, seed)
    cold = solve(p.M, p.q, method="robust")
    warm = solve(p.M, p.q, method="robust", initial_basis=loaded)
    assert certified(cold) and certified(warm), dict(warm.info)


def test_singular_warm_start_block_is_reduced_and_said():
    p = legged_frame(6)  # rank 3: any 4 legs form a singular block
    res = solve(p.M, p.q, method="robust", initial_basis=range(6))
    assert certified(res)
    assert len(res.info["warm_start_kept"]) <= 3 and res.info["warm_start_dropped"]


def test_an_ill_conditioned_warm_start_block_is_reduced_by_bisection(monkeypatch):
    # A PSD block of 300 columns with eigenvalues from 1 down to 1e-14: the QR's numerical
    # rank (R's diagonal above 1e-10 of its largest) still leaves a block whose 1-norm
    # condition number exceeds 1e10, and the leading run of the QR's order that passes
    # is found in about log2(300) inversions, not one per dropped column (a pile's
    # polish dropped ~900 columns of a block of 1 300 that way: 80 s).
    from contact_lcp.lcp import warm_start

    rng = np.random.default_rng(0)
    n, singular_tol = 300, 1e-10
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    eig = np.logspace(0.0, -14.0, n)
    M = (Q * eig) @ Q.T
    inversions = []
    block_condition = warm_start._block_condition
    monkeypatch.setattr(warm_start, "_block_condition",
                        lambda A: inversions.append(A.shape[0]) or block_condition(A))
    kept, dropped, X = warm_start.well_conditioned_block(M, np.arange(n), singular_tol)
    assert len(inversions) <= 2 + int(np.ceil(np.log2(n)))
    A = M[np.ix_(kept, kept)]
    np.testing.assert_allclose(X, np.linalg.inv(A))
    assert np.abs(A).sum(axis=0).max() * np.abs(X).sum(axis=0).max() <= 1.0 / singular_tol
    # no direction resolved to 1e-8 of the largest is lost by the reduction
    assert kept.size >= np.count_nonzero(eig >= 1e-8)
    np.testing.assert_array_equal(np.sort(np.concatenate([kept, dropped])), np.arange(n))


def test_options_are_scaled_by_q():
    """epsilon and max_error are relative to max(1, ||q||): scaling q changes nothing."""
    p = rigid_box_contact(8, 3)
    a = solve(p.M, p.q, method="robust")
    b = solve(p.M, 1e3 * p.q, method="robust")
    assert certified(a) and certified(b)
    np.testing.assert_allclose(1e3 * a.z, b.z, rtol=1e-6, atol=1e-9)


def test_max_nodes_scales_with_n_and_is_reported():
    p = planted_p_matrix(300, 0)
    res = solve(p.M, p.q, method="robust", lemke_fallback=False)
    assert certified(res) and res.info["max_nodes"] == 12000


def test_lemke_paths_run_when_the_first_stage_fails():
    p = murty_exponential(8)  # the search needs far more than max(100, n) nodes
    res = solve(p.M, p.q, method="robust")
    assert certified(res)
    assert res.info["first_stage"].startswith("max_pivots")
    assert res.info["paths"][0] == "lexicographic:solved"


def test_a_warm_start_gets_three_times_the_first_stage():
    # A warm search is given max(100, 3 n) nodes before the Lemke paths (a cold one
    # max(100, n)): from the last step's basis the 21-sphere pile at h = 50 ms needed up
    # to 2.1 n nodes, and the Lemke paths took 3-8 times as long. Murty's problem needs
    # 2^40 pivots: every stage runs out, and the budgets are what it reports.
    p = murty_exponential(40)
    cold = solve(p.M, p.q, method="robust", max_nodes=150)
    warm = solve(p.M, p.q, method="robust", max_nodes=150, initial_basis=[0])
    assert cold.info["first_stage"] == "max_pivots after 100 nodes"
    assert warm.info["first_stage"] == "max_pivots after 120 nodes"
    short = solve(p.M, p.q, method="robust", max_nodes=150, initial_basis=[0], first_nodes=50)
    assert short.info["first_stage"] == "max_pivots after 50 nodes"
    assert cold.info["nodes_all_stages"] <= 150 and warm.info["nodes_all_stages"] <= 150


def test_degenerate_frictionless_lcp_of_a_box_pyramid_is_certified():
    # Recorded from config/pyramid_4.yaml at h = 50 ms (t = 1.1 s): the frictionless LCP
    # of the 4-3-2-1 box pyramid, n = 68 normal rows of rank 30 (four corners per face
    # contact). Both Lemke variants revisit a basis (round-off on the ties) and the search
    # alone spent 3300 nodes without an answer; the matrix is symmetric, so the standard
    # attempts (lcp.attempts) run the modified PPM (whose blocks stay nonsingular) first,
    # and it certifies it.
    with np.load("test/data/pyramid4_frictionless_degenerate.npz") as f:
        M, q = f["M"], f["q"]
    assert np.array_equal(M, M.T) and np.linalg.matrix_rank(M) < q.size // 2
    lex = solve(M, q, method="lexicographic")
    assert lex.status.name == "CYCLE"
    res = solve_with_retries(M, q, method="robust")
    assert res.success and res.info["attempts"] == ["symmetric_ppm:solved"]
    w = M @ res.z + q
    assert res.z.min() >= -res.info["tol_z"] and w.min() >= -res.info["tol"]
    assert abs(res.z @ w) <= res.info["tol"] * np.abs(res.z).sum()
    # the search alone (no PPM) on the same data does not certify within its budget
    alone = solve(M, q, method="robust", lemke_fallback=False, max_nodes=2000)
    assert not alone.success
