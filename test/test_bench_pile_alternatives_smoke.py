"""Smoke test of benchmarks/bench_pile_alternatives.py on the 21-sphere pile: it captures
the next step's contact problem without solving it, solves the compliant LCPs, walks the
relaxed and Tresca fixed points and the block Gauss-Seidel sweeps, writing one CSV row
each; and the Gauss-Seidel block solve is checked where it must be exact. Nothing here is
timed."""

import os
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

bench = pytest.importorskip("bench_pile_alternatives")
common = pytest.importorskip("common")

SCENE = os.path.join(os.path.dirname(BENCH), "config", "spheres_21.yaml")


def test_the_captured_problem_is_the_next_steps_and_the_model_is_left_intact():
    t, problem, model, guess = bench.next_problem(SCENE, steps=40)
    assert t == pytest.approx(0.4)  # h = 10 ms: the step from t = 0.4 s
    assert problem.num_contacts > 20  # the pile has landed
    assert "solve" not in vars(model)  # the capturing stand-in is gone
    angle, d = model.edge_angles(problem, guess), model.settings.friction_directions
    hard = bench.pyramid_lcp(problem, angle, d)
    assert hard.q.shape == ((d + 2) * problem.num_contacts,)
    soft = bench.pyramid_lcp(problem, angle, d, 1e-3)
    normals = np.arange(problem.num_contacts)  # the compliance is on the diagonal only
    assert np.all(np.diag(soft.M)[normals] > np.diag(hard.M)[normals])
    assert np.array_equal(soft.q, hard.q)


def test_rows_for_every_compliance_and_fixed_point_iteration(tmp_path):
    assert bench.main(["--scene", "spheres_21.yaml", "--steps", "40", "--compliance",
                       "0,1e-3", "--budget", "5000", "--continuation", "1e-3:1e-10",
                       "--iterations", "2", "--nsgs", "600", "--nsgs-every", "300",
                       "--tresca", "2", "--results-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("pile_alternatives_*.csv")
    rows = common.read_csv(path)
    cont = [r for r in rows if r["variant"] == "compliance-continuation"]
    # (block Gauss-Seidel does not certify this pile: two contacts' impulses drift along
    # an internal force, the residual held at ~500 x tol, measured; the warm-started
    # Lemke path from its support follows)
    assert [(r["variant"], r["parameter"]) for r in rows if r not in cont][:6] == [
        ("compliance", "0.0"), ("compliance", "0.001"),
        ("relaxed-fixed-point", ""), ("relaxed-fixed-point", ""),
        ("nsgs", "300"), ("nsgs", "600")]
    assert [r["variant"] for r in rows if r not in cont][6:] == [
        "nsgs-warm-revised", "tresca-fixed-point", "tresca-fixed-point"]
    # down from 1e-3 the compliant answers come closer to the hard LCP's until one
    # certifies on it (the 21-sphere pile: at eps ~ 1e-9, measured)
    solved = [r for r in cont if r["certified"] == "True"]
    assert float(solved[0]["parameter"]) == 1e-3
    assert float(solved[-1]["hard_error_over_tol"]) <= 1.0
    residuals = [float(r["hard_error_over_tol"]) for r in solved]
    assert residuals[-1] < 1e-3 * residuals[0]
    hard, soft = rows[0], rows[1]
    # the hard LCP's own answer certifies on it; the compliant answer is certified on the
    # compliant LCP, and its residual on the hard one is far above the hard tolerance
    assert hard["certified"] == "True" and float(hard["hard_error_over_tol"]) <= 1.0
    assert soft["certified"] == "True" and float(soft["hard_error_over_tol"]) > 1.0
    gaps = [float(r["fixed_point_gap"]) for r in rows if r["variant"] == "relaxed-fixed-point"]
    assert all(g > 0.0 for g in gaps)


def _one_contact_lcps(count, seed):
    """Random single-contact pyramid LCPs: an SPD 3 x 3 Delassus block, any velocity."""
    from contact_lcp.contact.lcp_builder import build_contact_lcp

    rng = np.random.default_rng(seed)
    for _ in range(count):
        A = rng.standard_normal((3, 3))
        G = A @ A.T + 0.1 * np.eye(3)
        yield build_contact_lcp(G, rng.standard_normal(3), rng.uniform(0.1, 2.0),
                                num_directions=8, edge_angle=rng.uniform(0, 1, 1))


def test_the_block_solve_is_exact_on_one_contact():
    from contact_lcp.lcp.residual import certify

    for lcp in _one_contact_lcps(200, 5):
        z = np.zeros(lcp.q.size)
        assert bench._block_lemke(lcp.M, lcp.q, bench.tb.zobrist_keys(10), z)
        err, _, tol = certify(lcp.M, lcp.q, z)
        assert err <= tol


def test_one_sweep_solves_contacts_that_do_not_touch_each_other():
    # a block-diagonal Delassus matrix (three bodies each on the ground): Gauss-Seidel
    # is exact after one sweep, and the running w is M z + q
    from scipy.linalg import block_diag

    from contact_lcp.contact.lcp_builder import build_contact_lcp
    from contact_lcp.lcp.residual import certify

    rng = np.random.default_rng(7)
    blocks = []
    for _ in range(3):
        A = rng.standard_normal((3, 3))
        blocks.append(A @ A.T + 0.1 * np.eye(3))
    lcp = build_contact_lcp(block_diag(*blocks), rng.standard_normal(9), 0.5)
    idx, ptr, nbr = bench.contact_blocks(lcp)
    assert [nbr[ptr[i]:ptr[i + 1]].tolist() for i in range(3)] == [[0], [1], [2]]
    z, w = np.zeros(lcp.q.size), lcp.q.copy()
    assert bench._nsgs_sweeps(lcp.M, z, w, idx, ptr, nbr, 1,
                              bench.tb.zobrist_keys(10)) == 0
    err, w_true, tol = certify(lcp.M, lcp.q, z)
    assert err <= tol
    np.testing.assert_allclose(w, w_true, atol=1e-12)


def test_proximal_iterates_approach_the_hard_lcp(tmp_path):
    assert bench.main(["--scene", "spheres_21.yaml", "--steps", "40", "--compliance", "",
                       "--continuation", "", "--iterations", "0", "--nsgs", "0", "--tresca",
                       "0", "--proximal", "3", "--results-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("pile_alternatives_*.csv")
    rows = common.read_csv(path)
    assert [r["variant"] for r in rows] == ["proximal", "proximal-crossover"] * 3
    iterates = [r for r in rows if r["variant"] == "proximal"]
    assert all(r["status"] == "SOLVED" for r in iterates)
    # each iterate solves its compliant LCP; on the hard one its residual falls (the
    # 21-sphere pile at t = 0.4 s: 2.3e5, 7.6e3, 1.7e3 x tol, measured)
    residuals = [float(r["hard_error_over_tol"]) for r in iterates]
    assert residuals[2] < 0.1 * residuals[0]
    assert float(iterates[0]["parameter"]) == 1e-3


def test_fischer_burmeister_newton_certifies_a_nondegenerate_lcp():
    """On an LCP with a positive definite M and a strictly complementary solution the
    semismooth Newton iteration converges quadratically: certified from z = 0 within 30
    iterations (7 measured; |phi|^2 / 2 4e-8, 4e-14, 7e-23 over the last three)."""
    from types import SimpleNamespace

    from contact_lcp.lcp.residual import certify
    from contact_lcp.lcp.scaling import equilibrate

    rng = np.random.default_rng(4)
    n = 40
    A = rng.standard_normal((n, n))
    M = A @ A.T / n + 0.1 * np.eye(n)
    z_star = np.where(rng.random(n) < 0.5, rng.uniform(0.5, 2.0, n), 0.0)
    w_star = np.where(z_star > 0.0, 0.0, rng.uniform(0.5, 2.0, n))
    hard = SimpleNamespace(M=M, q=w_star - M @ z_star, num_contacts=0)
    units = equilibrate(hard.M, hard.q)

    def over_tol(z):
        err, _, tol = certify(hard.M, hard.q, z, units)
        return err / tol

    rows = bench.newton_rows(hard, over_tol, units, 30, np.zeros(n))
    assert rows[-1]["certified"] and len(rows) < 30
    gaps = [r["fixed_point_gap"] for r in rows]
    assert all(b <= a for a, b in zip(gaps, gaps[1:]))  # the line search only descends
