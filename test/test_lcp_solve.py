"""solve(): validation of the caller's input, dispatch, and the method table."""

import os
import warnings

import numpy as np
import pytest

from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp import METHODS, LCPStatus, solve, solve_with_retries
from contact_lcp.contact.reference import planted_p_matrix

M2 = np.array([[2.0, 1.0], [1.0, 2.0]])
Q2 = np.array([-1.0, 1.0])


def test_methods_table_has_every_method():
    assert {"robust", "lemke", "lexicographic", "murty", "pgs"} <= set(METHODS)


def test_default_method_is_robust():
    assert solve(M2, Q2).method == "robust"


@pytest.mark.parametrize("method", sorted(METHODS))
def test_empty_problem(method):
    res = solve(np.zeros((0, 0)), np.zeros(0), method=method)
    assert res.status is LCPStatus.SOLVED and res.z.shape == (0,) and res.pivots == 0


@pytest.mark.parametrize("method", sorted(METHODS))
def test_nonnegative_q_gives_zero_in_zero_pivots(method):
    res = solve(M2, np.array([1.0, 0.0]), method=method)
    assert res.status is LCPStatus.SOLVED and res.pivots == 0
    np.testing.assert_array_equal(res.z, 0.0)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_nonnegative_q_is_answered_without_equilibration_and_keeps_its_verdict(method):
    # q >= 0: z = 0 is exact whatever M is; the answer is returned before any O(n^2)
    # sweep, under every positive scaling of rows, columns and q alike
    rng = np.random.default_rng(3)
    A = rng.standard_normal((12, 12))
    M, q = A @ A.T - 3.0 * np.eye(12), rng.random(12)  # indefinite M: z = 0 still exact
    q[4] = 0.0
    for D1, D2, beta in ((np.ones(12), np.ones(12), 1.0),
                         (10.0 ** rng.uniform(-6, 6, 12), 10.0 ** rng.uniform(-6, 6, 12), 1e-6)):
        qs = beta * D1 * q
        res = solve(D1[:, None] * M * D2[None, :], qs, method=method)
        assert res.success and res.info["trivial"] and res.pivots == 0 and res.error == 0.0
        np.testing.assert_array_equal(res.z, 0.0)
        np.testing.assert_array_equal(res.w, qs)
        # the tolerance is the certification formula at z = 0, in the units of q
        assert res.info["tol"] == pytest.approx(1e4 * 12 * np.finfo(float).eps * qs.max())
    assert solve(M, q, method=method, tol=1e-3).info["tol"] == 1e-3


def test_nonnegative_q_with_method_options_runs_the_method_and_checks_them():
    q = np.array([1.0, 0.0])
    res = solve(M2, q, method="robust", max_nodes=50)
    assert res.success and "trivial" not in res.info
    np.testing.assert_array_equal(res.z, 0.0)
    with pytest.raises(ValueError, match="tie_threshold"):
        solve(M2, q, method="lexicographic", tie_threshold=-1.0)
    with pytest.raises(ValueError, match="initial_basis"):
        solve(M2, q, method="robust", initial_basis=[5])


def test_nonnegative_q_whose_matrix_sum_overflows_takes_the_full_path():
    M = np.array([[1e308, 1e308], [1e308, 1e308]])  # finite, but its sum is not
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no overflow warning reaches the caller
        res = solve(M, np.array([1.0, 2.0]))
    assert res.success and "trivial" not in res.info
    np.testing.assert_array_equal(res.z, 0.0)


@pytest.mark.parametrize("where", [0, 1, 36, 37 * 37 - 2, 37 * 37 - 1])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonnegative_q_with_one_non_finite_entry_of_m_anywhere_is_rejected(where, bad):
    # the q >= 0 shortcut sums M in vectorised blocks: an entry in the remainder lanes or
    # the first one must still reach the verdict
    M = np.eye(37)
    M.flat[where] = bad
    with pytest.raises(InvalidProblem, match="M must be finite"):
        solve(M, np.ones(37))


@pytest.mark.parametrize("method", sorted(METHODS))
def test_result_is_certified(method):
    res = solve(M2, Q2, method=method)
    assert res.success and res.error <= res.info["tol"]
    np.testing.assert_allclose(res.w, M2 @ res.z + Q2)
    np.testing.assert_allclose(res.z, [0.5, 0.0], atol=1e-9)


def test_unknown_method_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match="'simplex'.*valid methods.*lemke.*robust"):
        solve(M2, Q2, method="simplex")
    assert issubclass(InvalidProblem, ValueError)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_unknown_option_is_a_type_error_listing_valid_ones(method):
    with pytest.raises(TypeError, match="unknown option.*'max_pivtos'.*valid options"):
        solve(M2, Q2, method=method, max_pivtos=3)


@pytest.mark.parametrize("M, q, match", [
    (np.eye(2), np.ones((2, 1)), r"q must be a vector of shape \(n,\); received shape \(2, 1\)"),
    (np.eye(3), np.ones(2), r"shape \(2, 2\).*received shape \(3, 3\)"),
    (np.ones((2, 3)), np.ones(2), r"received shape \(2, 3\)"),
    (np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones(2), r"M must be finite; M\[0, 1\]"),
    (np.eye(2), np.array([1.0, np.inf]), r"q must be finite; q\[1\]"),
])
@pytest.mark.parametrize("method", ["robust", "lemke"])
def test_bad_input_raises_with_expected_and_received(M, q, match, method):
    with pytest.raises(InvalidProblem, match=match):
        solve(M, q, method=method)


def test_bad_option_values_raise():
    with pytest.raises(ValueError, match="tie_threshold"):
        solve(M2, Q2, method="lexicographic", tie_threshold=-1.0)
    with pytest.raises(ValueError, match="initial_basis"):
        solve(M2, Q2, method="robust", initial_basis=[5])


def test_user_tolerance_downgrades_a_claimed_solution():
    p = planted_p_matrix(10, 1)
    res = solve(p.M, p.q, method="pgs", tolerance=1e-3, tol=1e-12)
    assert res.error > 1e-12
    assert res.status is LCPStatus.ERROR and res.info["claimed"] == "SOLVED"


def test_a_path_sent_to_a_ray_by_ruiz_scaling_is_walked_again_on_powers_of_two():
    # The hoist's 3-contact LCP at t = 1.309 s (edges orthogonal to the chain's plane):
    # on the Ruiz-equilibrated problem all three Lemke methods end on a secondary ray;
    # scaled by powers of two only, they solve it (12 pivots). The retry's answer is
    # certified in the same units, and (2^k M, 2^j q) gives the same verdict. (The ray
    # comes from a round-off pivot: lemke and lexicographic now certify on the tolerant
    # retry first, on the Ruiz-equilibrated problem.)
    data = np.load(os.path.join(os.path.dirname(__file__), "data", "hoist_ruiz_ray.npz"))
    M, q = data["M"], data["q"]
    for method in ("robust", "lemke", "lexicographic"):
        # solve() runs the method once: the retries are the caller's list
        assert not solve(M, q, method=method).success
        res = solve_with_retries(M, q, method=method)
        retried = res.info.get("rescaled_retry") or res.info.get("tolerant_retry")
        assert res.success and retried, (method, res.status)
        assert res.info["first_status"] != "SOLVED"
        # the failed first path's pivots are in the count and reported apart
        assert 0 < res.info["attempt_pivots"] < res.pivots
        for a, b in ((2.0 ** 10, 1.0), (2.0 ** -7, 2.0 ** 5)):
            scaled = solve_with_retries(a * M, b * q, method=method)
            assert scaled.success
            np.testing.assert_allclose(scaled.z * a / b, res.z, rtol=0, atol=1e-12 * np.abs(res.z).max())


def test_failed_retries_report_their_pivots_beside_the_first_path():
    """A failure keeps the first path's pivots in ``pivots`` and reports the retries' in
    ``info['attempt_pivots']`` (a step's pivot budget charges both)."""
    res = solve_with_retries(-np.eye(3), -np.ones(3), method="lemke")  # a ray on every path
    assert res.status is LCPStatus.NO_SOLUTION and res.pivots == 1
    assert res.info["attempt_pivots"] == 2  # the tolerant and the rescaled retry
    assert res.info["attempts"] == ["lemke:no_solution", "tolerant:no_solution",
                                    "rescaled:no_solution"]


def test_a_retry_is_certified_to_its_own_tolerance_too(monkeypatch):
    """The tolerance grows with ||z|| (up to TOL_CAP): a first path that ends on a ray at
    ||z|| = 1e12 has the cap, 1e-3. A retry's answer must also meet the tolerance of its
    own z (~1e-11 here), not that one alone (on the pour's LCP at t = 1.15 s a retry's
    answer violating a friction cone by 0.15 N.s was certified that way); and a retry's
    answer far out must meet the first path's (test_lcp_scaling's seed 3)."""
    from contact_lcp.lcp.result import MethodOutput

    calls = []

    def method(shortfall):
        """A method whose first path ends on a ray far out, and whose every retry claims
        the solution of ``M z = -q`` it is handed with z_3 short by ``shortfall`` (so
        that w_3 = -shortfall |q_3|, in the units it pivots in)."""
        def run(M, q, *, pivot_tol=None):  # (the tolerant retry's option)
            calls.append(pivot_tol)
            if len(calls) == 1:
                return MethodOutput(np.array([1e12, 0.0, 0.0]), LCPStatus.NO_SOLUTION, 5, {})
            z = np.linalg.solve(M, -q)
            z[2] *= 1.0 - shortfall
            return MethodOutput(z, LCPStatus.SOLVED, 3, {})
        return run

    # a wrong point (w_3 = -1e-4 relative): below the first path's capped tolerance, far
    # above its own
    monkeypatch.setitem(METHODS, "lemke", method(1e-4))
    res = solve_with_retries(np.eye(3), -np.ones(3), method="lemke")
    assert len(calls) == 3  # the first path, the tolerant and the rescaled retry
    assert not res.success and res.status is LCPStatus.NO_SOLUTION
    assert res.error > res.info["tol"]  # (the first path's, reported with its point)
    # a retry that is right is accepted, with its own (small) tolerance
    calls.clear()
    monkeypatch.setitem(METHODS, "lemke", method(0.0))
    res = solve_with_retries(np.eye(3), -np.ones(3), method="lemke")
    assert res.success and res.info["tolerant_retry"]
    assert res.info["tol"] < 1e-9
    np.testing.assert_allclose(res.z, 1.0)


def test_an_unloaded_contact_slipping_at_round_off_speed_gets_its_sliding_speed(monkeypatch):
    # Recorded from a limp Talos falling (config/talos_stand.yaml with effort control,
    # t = 1.874 s): 35 contacts on the ground, some of them carrying nothing. The robust
    # search's answer leaves three unloaded contacts' sliding speeds lambda short of
    # their slip by ~5e-9 m/s, so their edge rows D' v + lambda end below 0, beyond
    # their per-row tolerance. The repair raises each such lambda to its contact's slip
    # (nothing else changes: lambda appears only in its contact's edge rows), and the
    # answer certifies; without it the principal blocks of the redundant contacts are
    # singular and the answer stays uncertified.
    import contact_lcp.lcp.polish as polish
    from contact_lcp.contact.lcp_builder import build_contact_lcp

    with np.load(os.path.join(os.path.dirname(__file__), "data",
                              "limp_talos_unloaded_slip.npz")) as f:
        k, l = f["mu"].shape[0], int(f["num_limits"])
        lcp = build_contact_lcp(f["G"], f["u"], f["mu"], num_directions=8,
                                num_unilateral=l, normal_bias=f["bias"])
    res = solve(lcp.M, lcp.q, "robust")
    assert res.status is LCPStatus.SOLVED and res.error <= res.info["tol"]
    z, w, tol = res.z, lcp.M @ res.z + lcp.q, res.info["tol"]
    # (layout: k normals, l limit rows, 8 edges per contact, k sliding speeds)
    edges_w = w[k + l:k + l + 8 * k].reshape(k, 8)
    lam = z[k + l + 8 * k:]
    sliding_unloaded = np.flatnonzero((z[:k] == 0.0) & (lam > tol))
    assert sliding_unloaded.size
    # an unloaded sliding contact's lambda is its slip speed: its lowest edge row is 0
    np.testing.assert_allclose(edges_w[sliding_unloaded].min(axis=1), 0.0, atol=tol)

    monkeypatch.setattr(polish, "_lifted", lambda *args: None)
    assert solve(lcp.M, lcp.q, "robust").status is LCPStatus.ERROR
