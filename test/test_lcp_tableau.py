"""The shared pivot engine, cross-checked against a dense numpy tableau."""

import numpy as np
import pytest

from contact_lcp.lcp import tableau as tb
from contact_lcp.contact.reference import planted_p_matrix


def dense_lemke(M, q, pivot_tol=tb.PIVOT_TOL, max_pivots=500):
    """Readable dense-tableau Lemke (rows ``[I, -M, -1 | q]``): the reference path.

    Ratio test: basic values within ``DEGENERATE_TOL`` of zero are zero, ratios within a
    relative ``RATIO_TIE`` tie, ``z0`` leaves on a tie, else the first tied row.

    Returns ``(status, [(entering, row), ...], tableau, basis)``.
    """
    n = q.shape[0]
    T = np.hstack([np.eye(n), -M, -np.ones((n, 1)), q[:, None]])
    basis = list(range(n))
    entering, r = 2 * n, int(np.argmin(q))
    steps = []
    while len(steps) < max_pivots:
        steps.append((entering, r))
        T[r] /= T[r, entering]
        for i in range(n):
            if i != r:
                T[i] -= T[i, entering] * T[r]
        leaving, basis[r] = basis[r], entering
        if leaving == 2 * n:
            return tb.SOLVED, steps, T, basis
        entering = leaving + n if leaving < n else leaving - n
        col = T[:, entering]
        blocking = col > pivot_tol * np.max(np.abs(col))
        if not blocking.any():
            return tb.NO_SOLUTION, steps, T, basis
        qbar = T[:, -1]
        num = np.where(qbar > tb.DEGENERATE_TOL * (1 + np.abs(qbar).max()), qbar, 0.0)
        ratios = np.where(blocking, num / np.where(blocking, col, 1.0), np.inf)
        tied = np.flatnonzero(ratios <= ratios.min() * (1 + tb.RATIO_TIE))
        at_z0 = [i for i in tied if basis[i] == 2 * n]  # z0 leaves on a tie
        r = int(at_z0[0] if at_z0 else tied[0])
    return tb.MAX_PIVOTS, steps, T, basis


def engine_lemke(M, q, max_pivots=500):
    """The same path with the numba primitives, one pivot per Python step."""
    n = q.shape[0]
    MT, c = np.ascontiguousarray(M.T), np.ones(n)
    Binv, basis, where = tb.initial_state(n)
    qbar, d, work = q.copy(), np.empty(n), np.empty(n)
    keys = tb.zobrist_keys(n)
    h = tb.basis_hash(basis, keys)
    entering, r = 2 * n, int(np.argmin(q))
    steps = []
    tb.entering_column(Binv, MT, c, entering, d, where)
    while len(steps) < max_pivots:
        steps.append((entering, r))
        leaving = tb.pivot(Binv, qbar, basis, where, d, r, entering, work)
        h ^= keys[entering] ^ keys[leaving]
        assert h == tb.basis_hash(basis, keys)
        assert all(where[v] == i for i, v in enumerate(basis))
        if leaving == 2 * n:
            return tb.SOLVED, steps, (Binv, qbar, basis, MT, c)
        entering = tb.complement(leaving, n)
        tb.entering_column(Binv, MT, c, entering, d, where)
        r, _, _ = tb.min_ratio_row(qbar, d, tb.PIVOT_TOL * np.max(np.abs(d)), basis, 2 * n)
        if r < 0:
            return tb.NO_SOLUTION, steps, (Binv, qbar, basis, MT, c)
    return tb.MAX_PIVOTS, steps, (Binv, qbar, basis, MT, c)


def random_problems():
    rng = np.random.default_rng(7)
    for n in (3, 6, 12, 25):
        for _ in range(4):
            A = rng.standard_normal((n, n))
            yield A @ A.T + 0.1 * np.eye(n), rng.standard_normal(n)
            yield A, rng.standard_normal(n)  # no structure: rays happen


@pytest.mark.parametrize("index", range(32))
def test_engine_follows_the_dense_reference_pivot_by_pivot(index):
    M, q = list(random_problems())[index]
    n = q.shape[0]
    status, steps, T, basis = dense_lemke(M, q)
    status_e, steps_e, (Binv, qbar, basis_e, MT, c) = engine_lemke(M, q)
    assert (status_e, steps_e) == (status, steps)
    assert list(basis_e) == basis
    np.testing.assert_allclose(qbar, T[:, -1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(Binv, T[:, :n], rtol=1e-9, atol=1e-9)
    code, pivots, _, z, _ = tb.lemke_run(M, q, tb.zobrist_keys(n), tb.RULE_MIN_INDEX, 0.0,
                                         tb.PIVOT_TOL, 500)
    if code != tb.CYCLE:
        assert (code, pivots) == (status, len(steps))


def test_basis_inverse_stays_the_inverse():
    p = planted_p_matrix(12, 3)
    status, _, (Binv, qbar, basis, MT, c) = engine_lemke(p.M, p.q)
    assert status == tb.SOLVED
    n = p.q.shape[0]
    A = np.hstack([np.eye(n), -p.M, -np.ones((n, 1))])
    np.testing.assert_allclose(Binv @ A[:, basis], np.eye(n), atol=1e-12)
    assert tb.residual(MT, p.q, c, basis, qbar) < 1e-12
    np.testing.assert_allclose(tb.extract_z(qbar, basis, n), p.z_expected, atol=1e-12)


def test_refine_does_not_worsen_the_residual():
    p = planted_p_matrix(30, 2)
    _, _, (Binv, qbar, basis, MT, c) = engine_lemke(p.M, p.q)
    before = tb.residual(MT, p.q, c, basis, qbar)
    after = tb.refine(MT, p.q, c, Binv, qbar, basis)
    assert after <= max(before, 1e-15)


def test_hash_table_inserts_once_and_grows():
    table, fill = np.zeros(4, dtype=np.int64), np.zeros(1, dtype=np.int64)
    values = np.random.default_rng(0).integers(1, 2**62, size=300)
    for v in values:
        table, fresh = tb.hash_insert(table, fill, v)
        assert fresh
    for v in values:
        table, fresh = tb.hash_insert(table, fill, v)
        assert not fresh
    assert fill[0] == 300 and table.shape[0] >= 600


def test_zobrist_keys_are_reproducible_and_distinct():
    keys = tb.zobrist_keys(50)
    assert keys.shape == (101,) and len(set(keys.tolist())) == 101 and np.all(keys > 0)
    assert keys is tb.zobrist_keys(50) and not keys.flags.writeable


def test_lexicographic_row_prefers_z0_then_lexicographic_order():
    n = 3
    Binv = np.eye(n)
    qbar = np.zeros(n)
    d = np.array([1.0, 1.0, 1.0])
    rows = np.empty(n, dtype=np.int64)
    basis = np.array([0, 1, 2])
    # all ratios 0; rows of B^-1 / d: e_0, e_1, e_2 -> lexicographic minimum is e_2
    assert tb.lexicographic_row(qbar, d, Binv, basis, 0.0, 0.0, 2 * n, rows)[0] == 2
    basis = np.array([0, 2 * n, 2])
    assert tb.lexicographic_row(qbar, d, Binv, basis, 0.0, 0.0, 2 * n, rows)[0] == 1


@pytest.mark.parametrize("seed", range(6))
def test_ratio_test_gives_the_numbers_of_min_ratio_row(seed):
    """The robust search reads its ratio tests off one ratio_test pass."""
    rng = np.random.default_rng(seed)
    n = 9
    qbar = np.abs(rng.standard_normal(n)) * (rng.random(n) < 0.6)  # degenerate rows
    qbar[0] = 1e-16  # round-off of a zero: clamped
    d = rng.standard_normal(n)
    d[1] = 1e-14  # blocks by sign, below the pivot tolerance
    tol = 1e-9 * np.abs(d).max()
    ratio = np.empty(n)
    t_min, tiny = tb.ratio_test(qbar, d, tol, ratio)
    row, t_ref, tiny_ref = tb.min_ratio_row(qbar, d, tol, np.arange(n), -1)
    assert t_min == t_ref and tiny == tiny_ref and tiny
    blocks = d > tol
    assert np.all(np.isinf(ratio[~blocks]))
    assert row >= 0 and ratio[row] == t_min and t_min == ratio.min()
    zero = tb.DEGENERATE_TOL * (1.0 + np.abs(qbar).max())
    np.testing.assert_array_equal(ratio[blocks], np.where(qbar > zero, qbar, 0.0)[blocks]
                                  / d[blocks])
