"""Scale invariance of solve(): equilibration and certification in consistent units.

For ``alpha, beta > 0`` the LCP ``(alpha M, beta q)`` has the solutions ``(beta/alpha) z``
of ``(M, q)``, and ``(D1 M D2, D1 q)`` has ``D2^-1 z``. A solver that is unit-free gives
the same verdict on all of them, answers that map back onto each other, and its
certificate never accepts a wrong ``z`` in any units.
"""

import numpy as np
import pytest
from hypothesis import assume, example, given, settings, strategies as st

from contact_lcp.contact.lcp_builder import build_contact_lcp
from contact_lcp.lcp import METHODS, solve
from contact_lcp.lcp.residual import certify, certify_rows, reported_error, row_tolerances
from contact_lcp.lcp.scaling import MAX_SWEEPS, all_finite, equilibrate, equilibrated

# Derandomized: on these random rank-deficient 3-contact LCPs (G of rank 6 of 9) the
# verdict is exactly the same under powers of two, but a factor like 10^2.25 changes the
# round-off of the equilibrated problem, and where the problem is on the edge of what
# pivoting can decide the verdict flips: 5 of 4500 random (alpha, beta) draws over 1500
# seeds with this equilibration (robust fails 87 of those 1500 problems at every scale;
# the 21 of seeds 0-499 fail for lemke, lexicographic and ppm too). A fresh draw each run
# would fail CI about once in 40 runs; the flip rate is measured, not hidden
# (docs/lcp.md, "Certification").
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
seeds = st.integers(0, 2**32 - 1)
exponents = st.floats(-6.0, 6.0)


def contact_problem(seed, k=3, dofs=6, d=4):
    """Frictional contact LCP from ``G = J M^-1 J'`` with random ``J`` and SPD mass."""
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((3 * k, dofs))
    B = rng.standard_normal((dofs, dofs))
    G = J @ np.linalg.inv(B @ B.T + dofs * np.eye(dofs)) @ J.T
    u = J @ rng.standard_normal(dofs)
    u[0::3] -= 0.5  # approaching normals: some contact must push
    lcp = build_contact_lcp(G, u, rng.uniform(0.2, 2.0, k), num_directions=d)
    return lcp.M, lcp.q


def pd_problem(seed, n=8):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return A @ A.T + 0.1 * np.eye(n), rng.standard_normal(n)


def diagonal(rng, n, decades=3.0):
    return 10.0 ** rng.uniform(-decades, decades, n)


def test_equilibration_is_exact_and_bounded():
    M, q = contact_problem(1)
    sc = equilibrate(M, q)
    Ms, qs = sc.apply(M, q)
    assert np.all(np.log2(sc.d1) == np.round(np.log2(sc.d1)))  # powers of two: exact
    assert np.all(np.log2(sc.d2) == np.round(np.log2(sc.d2)))
    np.testing.assert_array_equal(Ms, sc.d1[:, None] * M * sc.d2[None, :])
    nz = np.abs(Ms).max(axis=1) > 0
    assert np.all(np.abs(Ms).max(axis=1)[nz] <= 2.0) and np.all(np.abs(Ms).max(axis=1)[nz] >= 0.5)
    assert 0.5 < np.abs(qs).max() <= 1.0


@pytest.mark.parametrize("seed", range(4))
def test_one_call_preparation_and_certification_are_the_separate_steps(seed):
    """solve() makes one compiled call for finiteness + Ruiz + the equilibrated problem
    and one for mapping z back + certify: the same numbers, bit for bit, in any units."""
    M, q = contact_problem(seed, k=5)
    rng = np.random.default_rng(seed)
    for A, b in ((M, q), (1e4 * M, 1e-3 * q), (diagonal(rng, q.size)[:, None] * M, q)):
        A, b = np.ascontiguousarray(A), np.ascontiguousarray(b)
        finite, d1, d2, s, sweeps, Ms, qs, exact = equilibrated(A, b, MAX_SWEEPS, True)
        sc = equilibrate(A, b)
        assert finite and exact and s == sc.s and sweeps == sc.sweeps
        np.testing.assert_array_equal(d1, sc.d1)
        np.testing.assert_array_equal(d2, sc.d2)
        for got, want in zip((Ms, qs), sc.apply(A, b)):
            np.testing.assert_array_equal(got, want)
        zs = np.abs(rng.standard_normal(q.size)) * (rng.random(q.size) < 0.5)
        finite, z, w, ratio, T, Tz = certify_rows(A, b, zs, d1, d2, s)
        z_ref = sc.z_from_scaled(zs)
        err_ref, w_ref, tol_ref = certify(A, b, z_ref, sc)
        assert finite and reported_error(ratio, T) == err_ref and T == tol_ref
        tol_w, tol_z = row_tolerances(A, b, z_ref, sc)
        np.testing.assert_allclose([T, Tz], [tol_w.max(), tol_z.max()], rtol=1e-12)
        np.testing.assert_array_equal(z, z_ref)
        np.testing.assert_array_equal(w, w_ref)
        zs[-1] = np.nan
        assert not certify_rows(A, b, zs, d1, d2, s)[0]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_every_non_finite_entry_is_found(bad):
    """all_finite checks without a branch per entry: every position of M and q counts
    (n = 7 leaves a tail after any vector width)."""
    n = 7
    M, q = np.ones((n, n)), np.ones(n)
    assert all_finite(M, q) and equilibrated(M, q, MAX_SWEEPS, True)[0]
    for i in range(n):
        for j in range(n):
            M[i, j] = bad
            assert not all_finite(M, q), (i, j)
            M[i, j] = 1.0
        q[i] = bad
        assert not all_finite(M, q) and not equilibrated(M, q, MAX_SWEEPS, False)[0], i
        q[i] = 1.0


def test_symmetric_matrix_gets_symmetric_scaling():
    M, q = pd_problem(3)
    D = np.array([1, 1e3, 1, 1, 1e-2, 1, 1, 1])
    A = 1e5 * M * np.outer(D, D)
    sc = equilibrate(A, q)
    # D2 = 2^-E D1 (the sweeps start from A / 2^E): the equilibrated matrix is symmetric
    ratio = sc.d2 / sc.d1
    assert np.all(ratio == ratio[0]) and np.log2(ratio[0]) == np.round(np.log2(ratio[0]))
    Ms, _ = sc.apply(A, q)
    np.testing.assert_array_equal(Ms, Ms.T)


def test_odd_powers_of_two_give_the_same_equilibrated_problem():
    # The sweeps alone took square roots of odd exponents differently: 2 M (and 8 M,
    # 128 M...) came out 2x another matrix than M, and the search failed on it where it
    # solved M (hypothesis found seed 682).
    M, q = contact_problem(682)
    base = equilibrate(M, q).apply(M, q)
    for alpha in (0.5, 2.0, 8.0, 128.0, 2.0 ** -11):
        sc = equilibrate(alpha * M, q)
        Ms, qs = sc.apply(alpha * M, q)
        np.testing.assert_array_equal(Ms, base[0])
        np.testing.assert_array_equal(qs, base[1])
        assert solve(alpha * M, q).success


def test_powers_of_two_give_bit_identical_answers():
    M, q = contact_problem(7)
    base = solve(M, q)
    other = solve(2.0**20 * M, 2.0**-15 * q)
    assert base.success and other.success
    np.testing.assert_array_equal(other.z, 2.0**-35 * base.z)
    assert other.pivots == base.pivots


@pytest.mark.parametrize("method", sorted(METHODS))
@SETTINGS
@given(seed=seeds, a=exponents, b=exponents)
def test_same_verdict_and_mapped_solution_under_alpha_beta(method, seed, a, b):
    M, q = pd_problem(seed) if method in ("pgs", "murty") else contact_problem(seed)
    alpha, beta = 10.0**a, 10.0**b
    base = solve(M, q, method=method)
    scaled = solve(alpha * M, beta * q, method=method)
    if method in ("lemke", "lexicographic"):
        # A single path has no recourse when round-off moves an entry across the pivot
        # tolerance: hypothesis found flips (lemke: seed 2362, alpha = 10). The benchmark's
        # sweep counts them; only the mapping of common successes is a property here.
        if not (base.success and scaled.success):
            return
    assert scaled.success == base.success, (base.status, scaled.status)
    if base.success:
        back = scaled.z * alpha / beta  # a solution of (M, q)
        err, _, tol = certify(M, q, back)
        assert err <= 4.0 * tol, (err, tol)


@pytest.mark.parametrize("method", ["robust", "lemke", "lexicographic"])
@pytest.mark.parametrize("seed", range(40))
def test_same_verdict_under_row_and_column_scaling(method, seed):
    """Seeded (300 seeds measured: no flip for robust). Ruiz scaling is not unique, so
    the equilibrated problems of M and D1 M D2 differ by powers of two and the relative
    pivot tolerance can still decide differently on a near-singular pivot: hypothesis
    found one such contact LCP (seed 50672, robust: NUMERICAL_FAILURE unscaled, SOLVED
    scaled, the scaled answer a true solution), see the test below."""
    M, q = contact_problem(seed)
    rng = np.random.default_rng(seed)
    D1, D2 = diagonal(rng, q.size), diagonal(rng, q.size)
    base = solve(M, q, method=method)
    scaled = solve(D1[:, None] * M * D2[None, :], D1 * q, method=method)
    assert scaled.success == base.success, (base.status, scaled.status)


@pytest.mark.parametrize("method", ["robust", "lemke", "lexicographic"])
@SETTINGS
@given(seed=seeds)
@example(seed=50672)
def test_success_in_any_units_is_a_solution_in_the_original(method, seed):
    M, q = contact_problem(seed)
    rng = np.random.default_rng(seed)
    D1, D2 = diagonal(rng, q.size), diagonal(rng, q.size)
    scaled = solve(D1[:, None] * M * D2[None, :], D1 * q, method=method)
    if scaled.success:
        err, _, tol = certify(M, q, D2 * scaled.z)
        assert err <= 4.0 * tol, (err, tol)


def wrong_answers(M, q, z):
    """Points that are not solutions, in units where the violation is plain to see."""
    n = q.size
    zmax = max(np.abs(z).max(), 1.0)
    out = []
    bad = z.copy()
    bad[np.argmax(z)] *= -0.18  # a component at -18 % of ||z||
    out.append(bad)
    bad = z.copy()
    bad[np.argmin(np.where(z > 0, np.inf, M @ z + q))] += 0.05 * zmax  # gap: z_i > 0, w_i > 0
    out.append(bad)
    out.append(np.zeros(n) if np.any(q < 0) else -np.ones(n))  # w = q < 0 somewhere
    return out


@SETTINGS
@given(seed=seeds, a=exponents, b=exponents)
def test_certify_rejects_wrong_answers_at_every_scale(seed, a, b):
    M, q = contact_problem(seed)
    res = solve(M, q)
    # About 2 % of these random contact LCPs end in a secondary ray for every pivoting
    # method (lexicographic Lemke in exact rational arithmetic too): no solution to perturb.
    assume(res.success)
    alpha, beta = 10.0**a, 10.0**b
    rng = np.random.default_rng(seed)
    D1, D2 = diagonal(rng, q.size, 2.0), diagonal(rng, q.size, 2.0)
    for bad in wrong_answers(M, q, res.z):
        err0, _, tol0 = certify(M, q, bad)
        assert err0 > tol0
        err, _, tol = certify(alpha * M, beta * q, bad * beta / alpha)
        assert err > 1e3 * tol, (err, tol)
        err, _, tol = certify(D1[:, None] * M * D2[None, :], D1 * q, bad / D2)
        assert err > 1e3 * tol, (err, tol)


@pytest.mark.parametrize("method", sorted(METHODS))
@SETTINGS
@given(seed=seeds, a=exponents, b=exponents)
def test_no_false_success_at_any_scale(method, seed, a, b):
    """A certified answer of a scaled problem is a solution of the original one, judged
    with an independent dense check in the original units."""
    M, q = pd_problem(seed) if method in ("pgs", "murty") else contact_problem(seed)
    alpha, beta = 10.0**a, 10.0**b
    res = solve(alpha * M, beta * q, method=method)
    if not res.success:
        return
    z = res.z * alpha / beta
    w = M @ z + q
    zs, ws = np.abs(z).max() + 1e-300, np.abs(w).max() + np.abs(q).max()
    assert z.min() >= -1e-6 * zs and w.min() >= -1e-6 * ws, (z.min(), w.min())
    assert np.max(np.minimum(np.abs(z) / zs, np.abs(w) / ws)) <= 1e-6


def test_a_huge_component_does_not_license_an_error_elsewhere():
    """The tolerance grows with ||zs|| but stops at TOL_CAP. An internal force of 1e14
    along M's null space (two redundant contacts pushing on each other) leaves w_1 = w_2
    = 0, and with z_3 = 0.5 for w_3 = z_3 - 1 a violated row (w_3 = -0.5) that the
    uncapped formula (~1e3 here) would pass; in any units."""
    from contact_lcp.lcp.residual import TOL_CAP

    M = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    q = np.array([0.0, 0.0, -1.0])
    z = np.array([1e14, 1e14, 0.5])
    err, w, tol = certify(M, q, z)
    assert np.array_equal(w, [0.0, 0.0, -0.5])
    units = equilibrate(M, q)
    assert tol == pytest.approx(TOL_CAP * np.max(units.w_unit))  # the cap, in q's units
    assert err > 100.0 * tol
    for alpha, beta in ((1e-6, 1.0), (1.0, 1e6), (1e3, 1e-3)):
        err_s, _, tol_s = certify(alpha * M, beta * q, beta / alpha * z)
        assert err_s > tol_s
    # the same internal force beside the exact z_3 = 1 is certified: its error is 0
    err, _, tol = certify(M, q, np.array([1e14, 1e14, 1.0]))
    assert err == 0.0 <= tol


def test_the_methods_stopping_tests_share_the_cap():
    """A method's own test (on the equilibrated data it pivots on) rejects what certify
    rejects: the point of the test above, with its violated row, does not stop a Lemke
    path (lemke.certifies, which the robust search's paths use; PGS, Murty and the
    symmetric path stop on raw_tolerance too). Uncapped, raw_tolerance there is ~1e3."""
    from contact_lcp.lcp.lemke import certifies
    from contact_lcp.lcp.residual import TOL_CAP, raw_tolerance

    M = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    q = np.array([0.0, 0.0, -1.0])
    units = equilibrate(M, q)
    Ms, qs = units.apply(M, q)
    bad = units.z_to_scaled(np.array([1e14, 1e14, 0.5]))
    good = units.z_to_scaled(np.array([1e14, 1e14, 1.0]))
    assert raw_tolerance(Ms, qs, bad) == TOL_CAP
    assert not certifies(Ms, qs, bad)
    assert certifies(Ms, qs, good)


def _random_matrix(rng, n, seed, span, nonfinite_every, zero_row_every=0):
    """A random (n, n) matrix for the compiled passes' bit-for-bit tests: entries over
    10^[-span, span), 30 % zeros, one NaN or inf entry when ``seed % nonfinite_every``
    is 0, and a zero row when ``seed % zero_row_every`` is 0 (``zero_row_every`` 0:
    never)."""
    M = rng.standard_normal((n, n)) * 10.0 ** rng.integers(-span, span, size=(n, n))
    M[rng.random((n, n)) < 0.3] = 0.0
    if n and seed % nonfinite_every == 0:
        M[rng.integers(n), rng.integers(n)] = (np.nan, np.inf, -np.inf)[seed % 3]
    if n and zero_row_every and seed % zero_row_every == 0:
        M[rng.integers(n)] = 0.0
    return M


@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_verdict_pass_is_the_definition_bit_for_bit(seed):
    # The compiled pass sums four rows at a time (row_scales) and skips z_j = 0; every
    # sum still runs in column order, so its w, own terms, magnitudes and floor, and the
    # rows' tolerances, are the definition's bits, on rows with NaN and inf entries too.
    # The definition: the CSR passes with every entry stored (zeros too), one plain loop
    # over each row.
    from contact_lcp.lcp.residual import _row_terms, row_scales, row_tolerance_vector
    from contact_lcp.lcp.sparse_residual import _row_terms_csr, _tolerances_csr

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 14))
    M = _random_matrix(rng, n, seed, 20, 4)
    q = rng.standard_normal(n)
    z = np.where(rng.random(n) < (0.0, 0.6, 1.0)[seed % 3], 0.0, np.abs(rng.standard_normal(n)))
    d1, d2 = 2.0 ** rng.integers(-5, 5, n), 2.0 ** rng.integers(-5, 5, n)
    s = 2.0 ** int(rng.integers(-3, 3))
    every = (np.arange(n + 1) * n, np.tile(np.arange(n), n), M.ravel())
    got = _row_terms(M, q, z, d1, d2, s, *row_scales(M, d2))
    want = _row_terms_csr(*every, q, z, d1, d2, s)
    for g, x in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(g, x)
    assert got[3] == want[3] or (np.isnan(got[3]) and np.isnan(want[3]))
    # and the tolerances' second pass (also four rows at a time) from those terms
    _, tol = row_tolerance_vector(M, q, z, d1, d2, s)
    np.testing.assert_array_equal(tol, _tolerances_csr(*every, d1, d2, *want[1:]))


@pytest.mark.parametrize("seed", range(40))
def test_the_check_of_given_factors_is_the_verdicts_pass_and_the_sweeps_stopping_test(seed):
    # balanced_row_scales checks a last step's factors on this step's M in the pass that
    # sums the verdict's row scales: its (big, rows) are row_scales' bits, and it says
    # "balanced" exactly when the sweeps' own maxima (_maxima, on the entries' bit
    # patterns) pass their stopping test, with zero rows and columns, NaN and inf entries.
    from contact_lcp.lcp.residual import balanced_row_scales, row_scales
    from contact_lcp.lcp.scaling import _balanced, _maxima, _ruiz

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 14))
    M = _random_matrix(rng, n, seed, 3, 5, zero_row_every=7)
    # the sweeps' own factors (balanced unless a NaN or inf entry stopped them), and
    # random powers of two (mostly not balanced)
    ruiz = _ruiz(M, np.ones(n), MAX_SWEEPS)[:2] if np.all(np.isfinite(M)) else (np.ones(n),) * 2
    for d1, d2 in (ruiz, (2.0 ** rng.integers(-3, 3, n), 2.0 ** rng.integers(-3, 3, n))):
        big, rows, balanced = balanced_row_scales(M, d1, d2)
        want_big, want_rows = row_scales(M, d2)
        np.testing.assert_array_equal(big, want_big)
        np.testing.assert_array_equal(rows, want_rows)
        row, col = np.empty(n), np.empty(n)
        _maxima(M, d1, d2, row, col)
        assert balanced == _balanced(row, col)


@pytest.mark.parametrize("seed", range(40))
def test_a_row_exceeds_its_tolerance_as_the_whole_tolerance_says(seed):
    # exceeds_tolerance sums a row's spread only when the visible part and the cap do not
    # decide; its answer is the comparison with the row's whole tolerance, in w's units
    # and in z's, for values at and around each bound, on rows with NaN and inf too.
    from contact_lcp.lcp.residual import (TOL_CAP, _with_floor, exceeds_tolerance,
                                          row_scales, row_tolerance_vector,
                                          row_verdict_terms)

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 14))
    M = _random_matrix(rng, n, seed, 20, 4)
    q = rng.standard_normal(n)
    z = np.where(rng.random(n) < (0.0, 0.6, 1.0)[seed % 3], 0.0, np.abs(rng.standard_normal(n)))
    d1, d2 = 2.0 ** rng.integers(-5, 5, n), 2.0 ** rng.integers(-5, 5, n)
    s = 2.0 ** int(rng.integers(-3, 3))
    big, rows = row_scales(M, d2)
    _, _, _, _, a, mag, floor = row_verdict_terms(M, q, z, d1, d2, s, big, rows)
    _, tol = row_tolerance_vector(M, q, z, d1, d2, s)
    a_max = np.max(a) if not np.isnan(a).any() else np.nan
    for i in range(n):
        for z_units, unit in ((False, s / d1[i]), (True, s * d2[i])):
            seen = _with_floor(min(a[i], TOL_CAP), mag[i], floor) * unit  # the visible part
            for t in (tol[i] * unit, seen, TOL_CAP * unit, 0.0):
                for x in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), 2 * t, 0.5 * t):
                    if not np.isfinite(x):
                        continue
                    want = bool(x > tol[i] * unit)
                    got = exceeds_tolerance(x, s, z_units, M, d1, d2, a, mag, floor, rows,
                                            a_max, i)
                    assert got == want, (i, z_units, x, tol[i])


def _ruiz_definition(M, q, max_sweeps):
    """Ruiz's factors as the module notes define them, in numpy: row and column maxima
    of ``|D1 M D2|`` with NaN entries passed over (``np.fmax``), each factor divided by
    the power of two nearest the square root of its maximum until all lie in [1/2, 2]."""
    from contact_lcp.lcp.scaling import _pow2_below, _pow2_sqrt, q_scale

    n = q.shape[0]
    A = np.abs(M)
    big = np.fmax.reduce(A, axis=None, initial=0.0) if n else 0.0
    d1, d2 = np.ones(n), np.full(n, _pow2_below(big))
    sweeps = 0
    for _ in range(max_sweeps):
        S = A * d1[:, None] * d2[None, :]  # (|M_ij| d1_i) d2_j, the kernels' order
        row = np.fmax.reduce(S, axis=1, initial=0.0)
        col = np.fmax.reduce(S, axis=0, initial=0.0)
        if all((x == 0.0) or (0.5 <= x <= 2.0) for x in np.concatenate([row, col])):
            break
        sweeps += 1
        d1 = d1 / np.array([_pow2_sqrt(x) for x in row])
        d2 = d2 / np.array([_pow2_sqrt(x) for x in col])
    return d1, d2, q_scale(q, d1), sweeps


@pytest.mark.parametrize("seed", range(60))
def test_the_compiled_ruiz_sweeps_are_the_definition_bit_for_bit(seed):
    # The compiled sweeps take the maxima on the products' bit patterns as int64 (a NaN
    # product counted as 0, i.e. passed over), and the first sweep's maxima are |M|'s
    # scaled after the maximum: the factors are the definition's, NaN, inf and subnormal
    # entries included (sizes 0-39).
    from contact_lcp.lcp.scaling import _ruiz

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    e = (30, 300, 1000)[seed % 3]  # (1000: products in the subnormal range)
    M = rng.standard_normal((n, n)) * 2.0 ** rng.integers(-e, e // 3 + 1, (n, n)).astype(float)
    M[rng.random((n, n)) < 0.3] = 0.0
    if n and seed % 3 == 0:
        M.flat[rng.integers(0, n * n, 3)] = (np.nan, np.inf, -np.inf)
    q = rng.standard_normal(n)
    got = _ruiz(M, q, np.int64(MAX_SWEEPS))
    want = _ruiz_definition(M, q, MAX_SWEEPS)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2:] == want[2:]
