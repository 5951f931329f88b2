"""Bad LCPs: ranges that defeat one tolerance, and solves that must stay bounded and
interruptible (issue 35, items 4 and 5)."""

import _thread
import math
import signal
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contact_lcp.lcp import METHODS, LCPStatus, solve
from contact_lcp.lcp.residual import row_tolerances

def assert_rows_certified(M, q, res):
    """A SOLVED answer is feasible and complementary row by row against the per-row
    bounds the solve reports (:func:`row_tolerances`), and ``error <= tol`` says so."""
    z = res.z
    w = M @ z + q
    tol_w, tol_z = row_tolerances(M, q, z)
    msg = f"{res.method}: z={z}, w={w}, tol_w={tol_w}, tol_z={tol_z}"
    assert np.all(w >= -tol_w), msg
    assert np.all(z >= -tol_z), msg
    assert np.all((z <= tol_z) | (w <= tol_w)), msg
    assert res.error <= res.info["tol"], msg


def assert_solves_base(M, q, d1, d2, res):
    """The answer to ``(D1 M D2, D1 q)`` mapped back, ``z_u = D2 z``, solves the
    well-scaled base LCP ``(M, q)`` (entries O(1)) to 1e-6 of ``max(1, ||z_u||)`` in every
    row: a check from the data alone, whatever tolerances the solve reported."""
    z_u = d2 * res.z
    w_u = M @ z_u + q
    scale = 1e-6 * max(1.0, float(np.abs(z_u).max()), float(np.abs(q).max()))
    msg = f"{res.method}: z_u={z_u}, w_u={w_u}, d1={d1}, d2={d2}"
    assert np.all(z_u >= -scale) and np.all(w_u >= -scale), msg
    assert np.all(np.abs(np.minimum(z_u, w_u)) <= scale), msg


@pytest.mark.parametrize("method", sorted(METHODS))
def test_diagonal_range_gives_no_false_certificate(method):
    """diag(1e12, 1, 1e-12), q = -1: the solution is z = (1e-12, 1, 1e12), w = 0. An
    answer with z_0 = 0 leaves w_0 = -1, a 100 % error in row 0's own units; one tolerance
    for all rows (15.8 in the units of q) once passed it as SOLVED for every method."""
    M = np.diag([1e12, 1.0, 1e-12])
    q = -np.ones(3)
    res = solve(M, q, method)
    if res.status is LCPStatus.SOLVED:
        assert_rows_certified(M, q, res)
        # M = I D2 with D2 = M: the base LCP is (I, -1), z_u = D2 z = 1
        assert_solves_base(np.eye(3), q, np.ones(3), np.diag(M), res)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_range_beyond_double_precision_is_a_numerical_failure(method):
    """Entries 1e300 and 1e-300 together: the equilibrated problem would leave the normal
    range, so no method runs and no wrong sign is certified."""
    M = np.diag([1e300, 1.0, 1e-300])
    q = np.array([-1.0, -1.0, -1e-300])
    res = solve(M, q, method)
    assert res.status is LCPStatus.NUMERICAL_FAILURE, (res.status, res.info)
    assert "double precision" in res.info["reason"]


def planted(n, seed):
    """A PD LCP with a planted solution: ``M = B B' + I / 10``, ``z*`` and ``w*`` >= 0
    complementary, ``q = w* - M z*`` (scipy test_nnls.py style)."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    M = B @ B.T + 0.1 * np.eye(n)
    active = rng.random(n) < 0.5
    z = np.where(active, rng.random(n) + 0.1, 0.0)
    w = np.where(active, 0.0, rng.random(n) + 0.1)
    return M, w - M @ z


def contact_like(contacts, seed):
    """A frictionless contact LCP ``M = J W J'`` (PSD, rank-deficient for more than 3
    contacts on a 3-dof body), ``q = J v`` with the body moving into the ground."""
    rng = np.random.default_rng(seed)
    J = np.column_stack([np.ones(contacts), rng.uniform(-1, 1, (contacts, 2))])
    W = np.diag([1.0, 3.0, 3.0])
    v = np.array([-1.0, *rng.uniform(-0.5, 0.5, 2)])
    return J @ W @ J.T, J @ v


def decoupled(n, seed):
    """A diagonal LCP (decoupled contacts): its equilibration cannot tell the row scale
    from the column scale, so D1 M D2 leaves q's scale row by row to the certificate."""
    rng = np.random.default_rng(seed)
    return np.diag(rng.uniform(0.5, 2.0, n)), rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 2.0, n)


exponents = st.integers(min_value=-30, max_value=30)


@pytest.mark.parametrize("method", sorted(METHODS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**16),
       kind=st.sampled_from(["planted", "contact", "decoupled"]))
def test_extreme_diagonal_scalings_never_certify_a_wrong_answer(method, data, seed, kind):
    """For D1 M D2 and D1 q with diagonal entries 10^k, k in [-30, 30], whatever the
    method reports as SOLVED solves the well-scaled base LCP in every row and passes the
    per-row bounds it reports (module helpers)."""
    M, q = {"planted": planted, "contact": contact_like, "decoupled": decoupled}[kind](4, seed)
    n = q.size
    d1 = 10.0 ** np.array(data.draw(st.lists(exponents, min_size=n, max_size=n)), dtype=float)
    d2 = 10.0 ** np.array(data.draw(st.lists(exponents, min_size=n, max_size=n)), dtype=float)
    Ms = d1[:, None] * M * d2[None, :]
    qs = d1 * q
    res = solve(Ms, qs, method)
    if res.status is LCPStatus.SOLVED:
        assert_solves_base(M, q, d1, d2, res)
        assert_rows_certified(Ms, qs, res)


def dense_random(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)), rng.standard_normal(n)


def test_pivot_budget_is_respected_and_reported():
    M, q = dense_random(300)
    res = solve(M, q, "robust", pivot_budget=200, time_limit=math.inf)
    assert res.status is not LCPStatus.SOLVED
    assert res.info["path_pivots"] <= 200
    assert res.info["time_limit"] == math.inf and res.info["time"] > 0.0
    res = solve(M, q, "lemke", max_pivots=150)
    assert res.status is LCPStatus.MAX_PIVOTS
    assert res.info["max_pivots"] == 150 and res.pivots == 150


@pytest.mark.parametrize("method", ["lemke", "robust"])
def test_time_limit_ends_a_dense_solve_with_its_status(method):
    """A dense random n = 600 LCP has no answer within Lemke's 50 n pivots; a limit of
    0.3 s ends the solve (retries included) with TIME_LIMIT, reported with its budget."""
    M, q = dense_random(600, seed=1)
    solve(M[:250, :250], q[:250], method, time_limit=0.05)  # compile outside the clock
    res = solve(M, q, method, time_limit=0.3)
    assert res.status is LCPStatus.TIME_LIMIT, (res.status, res.info.get("reason"))
    assert res.info["time_limit"] == 0.3
    assert res.info["time"] >= 0.3
    assert "time limit" in res.info["reason"]


def test_dense_n1000_returns_a_result():
    """Dense random n = 1000 under the default budgets: a result (any status), not a
    minute-long pivot loop."""
    M, q = dense_random(1000)
    res = solve(M, q, "lemke")
    assert isinstance(res.status, LCPStatus)
    assert res.info["time_limit"] == pytest.approx(5.0 + 2e-6 * 1000**2)


@pytest.mark.parametrize("method", ["robust", "lemke"])
def test_keyboard_interrupt_reaches_a_large_dense_solve(method):
    """Ctrl-C (here ``_thread.interrupt_main`` from a timer) during a compiled pivot loop
    propagates out of solve(); the bound on the wall time is a hang detector only."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        # a process started in the background by a non-interactive shell ignores SIGINT,
        # and interrupt_main() then does nothing
        pytest.skip("SIGINT is not Python's default handler in this process")
    M, q = dense_random(1200, seed=2)
    solve(M[:250, :250], q[:250], method, time_limit=0.05)  # compile outside the timer
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    returned = False
    try:
        with pytest.raises(KeyboardInterrupt):
            solve(M, q, method, time_limit=math.inf)
            returned = True
            time.sleep(30)  # the solve ended first: take the interrupt here
    finally:
        timer.cancel()
    assert not returned, "the solve ended before the interrupt: make the problem larger"
    assert time.monotonic() - start < 10.0


def test_time_limit_must_be_positive():
    from contact_lcp.exceptions import InvalidProblem

    with pytest.raises(InvalidProblem, match="time_limit"):
        solve(np.eye(2), -np.ones(2), time_limit=-1)


def test_the_kernels_one_pass_verdict_is_row_pass_s():
    """residual.row_verdict (the compiled contact kernels' check) gives row_pass's verdict
    on planted answers, on answers perturbed by round-off-sized to gross errors, and on
    rows scaled far apart."""
    from contact_lcp.lcp.residual import row_pass, row_verdict

    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(300):
        n = int(rng.integers(2, 12))
        A = rng.standard_normal((n, n))
        M = A @ A.T + 0.1 * np.eye(n)
        z = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
        w = np.where(z > 0, 0.0, rng.random(n))
        q = w - M @ z
        z = z + rng.standard_normal(n) * 10.0 ** rng.uniform(-18, -1) * (rng.random(n) < 0.3)
        d1 = 2.0 ** rng.integers(-30, 30, n)
        d2 = 2.0 ** rng.integers(-30, 30, n)
        s = float(2.0 ** rng.integers(-10, 10))
        _, ratio, _, _ = row_pass(M, q, z, d1, d2, s)
        _, ok, _, _ = row_verdict(M, q, z, d1, d2, s)
        assert ok == (ratio <= 1.0), (trial, ratio)
        seen.add(ok)
    assert seen == {True, False}  # both verdicts were exercised
