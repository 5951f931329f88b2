"""The single definition of the LCP error and tolerance used to certify every solution.

Per-row verdicts in consistent units
------------------------------------
``z`` and ``w`` have different units (impulses and velocities for contact LCPs), and the
rows of one LCP can have scales 1e24 apart, so no single number can judge every row:
measured with one tolerance, the largest row's scale licensed an error of 100 % in the
smallest (``diag(1e12, 1, 1e-12)``, ``q = -1``: ``w = (-1, 0, 0)`` passed with a tolerance
of 15.8). Each row ``i`` is therefore judged on its own. In the units of the equilibrated
problem (:mod:`contact_lcp.lcp.scaling`), ``zs = z / (s d2)`` and ``ws = d1 w / s`` with
``w = M z + q`` computed from the caller's data, and

    a_i     = CERT_FACTOR n eps (max_j |Ms_ij| sum_{j: M_ij != 0} |zs_j| + |qs_i|),
    tol_i   = min(a_i + sum_j |Ms_ij| a_j, TOL_CAP),
    row i certified  <=>  |min(zs_i, ws_i)| <= tol_i.

``a_i / (CERT_FACTOR n)`` bounds how much ``ws_i`` moves when each entry of row ``i``
that is not zero moves by ``eps`` times the row's largest entry and ``qs_i`` by ``eps``
times itself: a backward error of row ``i`` alone, blind to the ``z_j`` the row does not
read (with ``||zs||_inf`` in place of the sum, ``z = (0, 1, 1e12)`` passed for the
diagonal LCP above). ``a_j`` is also how far the verdict lets ``zs_j`` be off
(``z_j >= -tol_z_j``), which moves ``ws_i`` by ``|Ms_ij| a_j``: so ``tol_i`` is what row
``i``'s own data, and the uncertainty of the ``z_j`` it reads, allow. Both terms are
needed on contact LCPs: a degenerate basic ``z_j`` of -1e-31 (where 1 is the scale) left
a friction-cone row ``mu z_n - sum z_t``, whose other terms were exactly 0, at 7e-32; and
on the pyramid_3 LCP (n = 360, rank 108) Lemke's answer, whose ``B^-1`` had drifted by
5e-8, left rows whose terms are ~3e-8 wrong in sign while the answer solves the LCP to
1e-8 of ``||z||``. Entry-wise bounds (``sum_j |Ms_ij zs_j|`` for the row's
magnitude) rejected both. ``|min(zs_i, ws_i)| <= tol_i`` says ``z_i >= -tol_z_i``, ``w_i >= -tol_w_i``
and ``z_i <= tol_z_i`` or ``w_i <= tol_w_i``, with ``tol_z_i = tol_i s d2_i`` (units of
``z_i``) and ``tol_w_i = tol_i s / d1_i`` (units of ``w_i``). ``tol_w_i`` is invariant
under ``(alpha D1 M D2, alpha D1 q)``; the equilibration is so up to powers of two.

Round-off floor. The ``z_j`` come out of eliminations on the whole coupled system, so
their errors are of ``n eps`` times its norms, not of row ``j``'s: a disk pile's contact
variable meant to cancel ``q_i = -3.4e-7`` exactly left ``w_i = -1.5e-15`` beside
``||z|| = 240``. So a row whose own magnitude ``m_i = |qs_i| + sum_j |Ms_ij zs_j|``
exceeds the floor ``f = ROUNDOFF_FACTOR n eps (||Ms|| ||zs|| + ||qs||)`` (the error a
backward-stable solve of the coupled system leaves, without the factor 1e4 of the row's
own term) certifies with ``tol_i = max(tol_i, f)``. A row whose data lie below the floor
gets no such allowance: its sign is invisible at this precision (``diag(1e16, 1,
1e-16)``, ``q = -1``, or a contact approaching at 2.8e-13 m/s left at ``z_i = 0``), so
only its own tolerance counts, and :func:`contact_lcp.lcp.solve` repairs such a row
(:mod:`contact_lcp.lcp.polish`) or reports the failure.

A backward-stable pivoting method leaves an error of about ``n eps`` times the
magnitudes in each row; the factor 1e4 leaves room for the ill-conditioned,
rank-deficient Delassus matrices of redundant contact. The cap (``TOL_CAP``) keeps an
answer with huge components from licensing a large error. A row whose magnitudes are not
finite (overflow) never certifies.

For reporting, ``tol`` is ``T = max_i tol_w_i`` (units of ``q``, velocities [m/s] for
contact LCPs: a bound on how negative a certified ``w_i`` can be) and ``error`` is
``T max_i |min(zs_i, ws_i)| / tol_i``, so that ``error <= tol`` is the per-row test.
"""

import numpy as np
from numba import njit

from contact_lcp.lcp.scaling import Scaling, _balanced, equilibrate, inf_norms

_EPS = float(np.finfo(float).eps)

#: ``tol_rel = CERT_FACTOR * n * eps * (||Ms|| ||zs|| + ||qs||)``.
CERT_FACTOR = 1e4
#: The round-off floor: ``ROUNDOFF_FACTOR n eps (||Ms|| ||zs|| + ||qs||)`` (module notes).
ROUNDOFF_FACTOR = 10.0
#: ... but never more than this (equilibrated units, where ``||qs||_inf <= 1``). The
#: formula grows with ``||zs||``, so an answer with a huge component would carry its own
#: license (a Lemke path ending on a ray at ``||z|| ~ 1e12`` would accept a violated
#: row). A backward-stable answer leaves an error of about
#: ``n eps ||Ms|| ||zs||``, below this cap up to ``||zs|| ~ 1e8`` at n = 5 000.
TOL_CAP = 1e-3


@njit(cache=True)
def certification_tolerance(n, norm_M, norm_q, norm_z):
    """``min(CERT_FACTOR n eps (norm_M norm_z + norm_q), TOL_CAP)``: the certification
    tolerance in equilibrated units (the one definition; compiled callers included)."""
    return min(CERT_FACTOR * n * _EPS * (norm_M * norm_z + norm_q), TOL_CAP)


@njit(cache=True)
def _pass(M, q, z, d1, d2, s):
    """``w = M z + q`` and, in equilibrated units, ``||min(zs, ws)||_inf``, ``||Ms||_inf``,
    ``||qs||_inf``, ``||zs||_inf``."""
    n = q.shape[0]
    w = np.empty(n)
    err = norm_M = norm_q = norm_z = 0.0
    for i in range(n):
        acc = q[i]
        row = 0.0
        for j in range(n):
            acc += M[i, j] * z[j]
            row += abs(M[i, j]) * d2[j]
        w[i] = acc
        zs = z[i] / (s * d2[i])
        ws = d1[i] * acc / s
        err = max(err, abs(min(zs, ws)))
        norm_M = max(norm_M, d1[i] * row)
        norm_q = max(norm_q, d1[i] * abs(q[i]) / s)
        norm_z = max(norm_z, abs(zs))
    return w, err, norm_M, norm_q, norm_z


@njit(cache=True)
def row_scales(M, d2):
    """The terms of the verdict that do not read ``z``: ``(big, rows)`` (n,) each, row
    ``i``'s largest ``|M_ij| d2_j`` and its sum ``sum_j |M_ij| d2_j``, in column order
    four rows at a time (four chains of additions in flight instead of one). The largest
    entry is kept as ``max`` keeps it (a NaN entry is passed over). A caller that
    certifies several ``z`` of one ``(M, d2)`` computes them once
    (:func:`row_tolerance_vector_with`, :func:`row_verdict_with`)."""
    return _row_scales(M, d2, d2, np.zeros(0))


@njit(cache=True)
def balanced_row_scales(M, d1, d2):
    """:func:`row_scales` ``(big, rows)`` and, from the same pass, whether ``(d1, d2)``
    still balance ``M`` (every nonzero row and column maximum of ``|D1 M D2|`` in
    [1/2, 2], the test that ends :mod:`~contact_lcp.lcp.scaling`'s sweeps): the
    factors of the last step's LCP checked on this step's, at the cost of the verdict's
    own pass instead of a new equilibration. The maxima of ``|D1 M D2|`` are
    ``d1_i |M_ij| d2_j``, exact products of powers of two, so they compare as the
    sweeps' would. Returns ``(big, rows, balanced)``."""
    n = M.shape[0]
    col = np.zeros(n)  # column maxima of |D1 M D2| (a NaN entry passed over, as max does)
    big, rows = _row_scales(M, d1, d2, col)
    return big, rows, still_balanced(big, d1, col)


@njit(cache=True)
def still_balanced(big, d1, col):
    """Whether factors balance ``M`` from a row scales' pass with them: its row maxima
    ``big`` of ``|M| D2`` (times ``d1``: those of ``|D1 M D2|``) and the column maxima
    ``col`` of ``|D1 M D2|`` it tracked (:func:`balanced_row_scales`)."""
    row = np.empty(big.shape[0])
    for r in range(big.shape[0]):
        row[r] = big[r] * d1[r]
    return _balanced(row, col)


@njit(cache=True)
def _row_scales(M, d1, d2, col):
    """:func:`row_scales`' pass; with ``col`` of n entries (zeros) it also writes into it
    the column maxima of ``|D1 M D2|`` (else ``d1`` is not read)."""
    n = M.shape[0]
    big = np.empty(n)
    rows = np.empty(n)
    row_scales_over(M, d1, d2, 0, n, range(n), big, rows, col, col.shape[0] == n)
    return big, rows


@njit(cache=True, inline="always")  # (each call's loops compiled for its columns' kind)
def row_scales_over(M, d1, d2, lo, hi, cols, big, rows, col, track):
    """:func:`row_scales`' pass on the rows ``lo:hi`` of ``M`` over the columns ``cols``
    (increasing: a ``range`` or an array), into ``big`` and ``rows``, and with ``track``
    the column maxima of ``|D1 M D2|`` into ``col``. Over some columns only, for a caller
    that knows every other entry of those rows is 0 (which adds nothing to a row's sum or
    maximum): the same bits as the pass over every column."""
    i = lo
    while i + 4 <= hi:
        b0 = b1 = b2 = b3 = s0 = s1 = s2 = s3 = 0.0
        f0, f1, f2, f3 = d1[i], d1[i + 1], d1[i + 2], d1[i + 3]
        for j in cols:
            b0, b1, b2, b3, s0, s1, s2, s3 = _four_rows_at(
                M, i, j, d2[j], f0, f1, f2, f3, b0, b1, b2, b3, s0, s1, s2, s3, col, track)
        big[i], big[i + 1], big[i + 2], big[i + 3] = b0, b1, b2, b3
        rows[i], rows[i + 1], rows[i + 2], rows[i + 3] = s0, s1, s2, s3
        i += 4
    while i < hi:
        b0 = s0 = 0.0
        for j in cols:
            b0, s0 = _one_row_at(M, i, j, d2[j], d1[i], b0, s0, col, track)
        big[i], rows[i] = b0, s0
        i += 1


@njit(cache=True, inline="always")
def _four_rows_at(M, i, j, dj, f0, f1, f2, f3, b0, b1, b2, b3, s0, s1, s2, s3, col, track):
    """Column ``j`` of rows ``i..i+3`` in the row scales' pass: the rows' largest
    ``|M_rj| d2_j`` and sums so far, updated (four chains of additions in flight instead
    of one), and with ``track`` the column's maximum of ``|D1 M D2|`` in ``col``."""
    e0 = abs(M[i, j]) * dj
    e1 = abs(M[i + 1, j]) * dj
    e2 = abs(M[i + 2, j]) * dj
    e3 = abs(M[i + 3, j]) * dj
    if track:
        c = col[j]
        x0, x1, x2, x3 = e0 * f0, e1 * f1, e2 * f2, e3 * f3
        c = x0 if x0 > c else c
        c = x1 if x1 > c else c
        c = x2 if x2 > c else c
        col[j] = x3 if x3 > c else c
    return (e0 if e0 > b0 else b0, e1 if e1 > b1 else b1, e2 if e2 > b2 else b2,
            e3 if e3 > b3 else b3, s0 + e0, s1 + e1, s2 + e2, s3 + e3)


@njit(cache=True, inline="always")
def _one_row_at(M, i, j, dj, f, b, s, col, track):
    """:func:`_four_rows_at` for the one row ``i`` (row factor ``f``)."""
    e = abs(M[i, j]) * dj
    if track:
        x = e * f
        c = col[j]
        col[j] = x if x > c else c
    return (e if e > b else b), s + e


@njit(cache=True)
def _row_terms(M, q, z, d1, d2, s, big, rows):
    """The one pass of the per-row verdict: ``(w, a, mag, floor)`` with ``w = M z + q``,
    each row's own term ``a_i``, its magnitude ``m_i`` and the round-off floor ``f`` of
    the module notes (equilibrated units), from :func:`row_scales`'s ``(big, rows)``.

    Every sum runs over its row in column order, so the bits are those of one plain loop
    over each row; four rows are summed at a time, and the terms that read ``z`` visit
    only the ``z_j`` that are not 0 (the others add exactly 0), unless the row holds a
    non-finite entry, whose products with ``z_j = 0`` make ``w_i`` NaN as they would in
    the plain loop.
    """
    n = q.shape[0]
    w = np.empty(n)
    a = np.empty(n)
    zs = np.empty(n)
    mag = np.empty(n)  # |qs_i| + sum_j |Ms_ij zs_j|
    nz = np.empty(n, dtype=np.int64)  # the columns whose z_j is not 0, increasing
    p = 0
    norm_z = norm_M = norm_q = 0.0
    for j in range(n):
        zs[j] = abs(z[j]) / (s * d2[j])
        norm_z = max(norm_z, zs[j])
        if z[j] != 0.0:
            nz[p] = j
            p += 1
    k = CERT_FACTOR * n * _EPS
    nz = nz[:p]
    every = np.arange(n)
    acc = np.empty(4)
    read = np.empty(4)  # sum of |zs_j| over the row's nonzero entries
    size = np.empty(4)  # sum_j |M_ij| d2_j |zs_j|
    i = np.int64(0)  # not a literal 0: _finite4 compiled once (docs/architecture.md)
    while i < n:
        if i + 4 <= n and _finite4(rows, i):  # four finite rows: the nonzero z_j's columns
            r = 4
            a0, a1, a2, a3 = q[i], q[i + 1], q[i + 2], q[i + 3]
            r0 = r1 = r2 = r3 = 0.0
            s0 = s1 = s2 = s3 = 0.0
            for j in nz:
                zj, zsj, dj = z[j], zs[j], d2[j]
                m0, m1, m2, m3 = M[i, j], M[i + 1, j], M[i + 2, j], M[i + 3, j]
                a0 += m0 * zj
                a1 += m1 * zj
                a2 += m2 * zj
                a3 += m3 * zj
                s0 += abs(m0) * dj * zsj
                s1 += abs(m1) * dj * zsj
                s2 += abs(m2) * dj * zsj
                s3 += abs(m3) * dj * zsj
                r0 += zsj if m0 != 0.0 else 0.0  # (+ 0.0: the same bits as no addition)
                r1 += zsj if m1 != 0.0 else 0.0
                r2 += zsj if m2 != 0.0 else 0.0
                r3 += zsj if m3 != 0.0 else 0.0
            acc[0], acc[1], acc[2], acc[3] = a0, a1, a2, a3
            read[0], read[1], read[2], read[3] = r0, r1, r2, r3
            size[0], size[1], size[2], size[3] = s0, s1, s2, s3
        else:  # one row; with a non-finite entry, over every column
            r = 1
            a0, r0, s0 = q[i], 0.0, 0.0
            for j in nz if rows[i] - rows[i] == 0.0 else every:
                m0 = M[i, j]
                a0 += m0 * z[j]
                s0 += abs(m0) * d2[j] * zs[j]
                r0 += zs[j] if m0 != 0.0 else 0.0
            acc[0], read[0], size[0] = a0, r0, s0
        for t in range(r):
            ii = i + t
            w[ii] = acc[t]
            qi = abs(q[ii]) / s
            a[ii] = k * d1[ii] * (big[ii] * read[t] + qi)
            mag[ii] = d1[ii] * (qi + size[t])
            norm_M = max(norm_M, d1[ii] * rows[ii])
            norm_q = max(norm_q, d1[ii] * qi)
        i += r
    floor = ROUNDOFF_FACTOR * n * _EPS * (norm_M * norm_z + norm_q)
    return w, a, mag, floor


@njit(cache=True)
def _finite4(rows, i):
    """Whether rows ``i`` to ``i + 3`` have finite sums (no non-finite entry)."""
    x = rows[i] + rows[i + 1] + rows[i + 2] + rows[i + 3]
    return x - x == 0.0


@njit(cache=True)
def _with_floor(tol_i, mag_i, floor):
    """``tol_i`` raised to the floor for a row resolvable at this precision."""
    if mag_i > floor:
        return max(tol_i, min(floor, TOL_CAP))
    return tol_i


@njit(cache=True)
def _row_tolerance(M, d1, d2, a, mag, floor, i):
    """Row ``i``'s whole ``tol_i`` (its spread term is the second O(n) pass); ``inf``
    where a magnitude is not finite."""
    spread = 0.0
    for j in range(M.shape[1]):
        spread += abs(M[i, j]) * d2[j] * a[j]
    return _tolerance(a[i], d1[i], spread, mag[i], floor)


@njit(cache=True)
def _tolerance(a_i, d1_i, spread, mag_i, floor):
    """A row's ``tol_i`` from its own term, its spread ``sum_j |Ms_ij| a_j``, its
    magnitude and the floor; ``inf`` where one is not finite."""
    if not (a_i - a_i == 0.0 and spread - spread == 0.0 and floor - floor == 0.0):
        return np.inf
    return _with_floor(min(a_i + d1_i * spread, TOL_CAP), mag_i, floor)


@njit(cache=True)
def row_tolerance_vector(M, q, z, d1, d2, s):
    """``(w, tol)``: ``w = M z + q`` and each row's ``tol_i`` of the module notes (the
    round-off floor included), in equilibrated units (``(n,)`` each; two O(n^2) passes).
    A row whose magnitudes are not finite gets ``tol_i = inf``; :func:`row_pass` rejects
    it."""
    big, rows = row_scales(M, d2)
    return row_tolerance_vector_with(M, q, z, d1, d2, s, big, rows)


@njit(cache=True)
def row_tolerance_vector_with(M, q, z, d1, d2, s, big, rows):
    """:func:`row_tolerance_vector` with ``(big, rows)`` of :func:`row_scales` at hand."""
    n = q.shape[0]
    w, a, mag, floor = _row_terms(M, q, z, d1, d2, s, big, rows)
    tol = np.empty(n)
    i = 0
    while i + 4 <= n:  # four rows at a time, each summed in column order (_row_terms)
        s0 = s1 = s2 = s3 = 0.0
        for j in range(n):  # (the product in _row_tolerance's order: the same bits)
            dj, aj = d2[j], a[j]
            s0 += abs(M[i, j]) * dj * aj
            s1 += abs(M[i + 1, j]) * dj * aj
            s2 += abs(M[i + 2, j]) * dj * aj
            s3 += abs(M[i + 3, j]) * dj * aj
        tol[i] = _tolerance(a[i], d1[i], s0, mag[i], floor)
        tol[i + 1] = _tolerance(a[i + 1], d1[i + 1], s1, mag[i + 1], floor)
        tol[i + 2] = _tolerance(a[i + 2], d1[i + 2], s2, mag[i + 2], floor)
        tol[i + 3] = _tolerance(a[i + 3], d1[i + 3], s3, mag[i + 3], floor)
        i += 4
    while i < n:
        tol[i] = _row_tolerance(M, d1, d2, a, mag, floor, i)
        i += 1
    return w, tol


@njit(cache=True)
def row_verdict(M, q, z, d1, d2, s):
    """The verdict of :func:`row_pass`, in one O(n^2) pass where every row passes on the
    part of ``tol_i`` it can see alone (the compiled contact kernels' common case): a row
    whose residual is within ``min(a_i, TOL_CAP)`` (with the floor where ``m_i`` exceeds
    it) passes, as ``tol_i`` is never smaller; only the others pay for their
    ``sum_j |Ms_ij| a_j``.

    Returns ``(w, ok, err, tol)``: ``w = M z + q``, ``ok`` the verdict (the same as
    ``row_pass``'s ``ratio <= 1``), and for reporting ``err = max_i res_i s / d1_i`` and
    ``tol = max_i`` of those visible bounds in the units of ``q``.
    """
    big, rows = row_scales(M, d2)
    return row_verdict_with(M, q, z, d1, d2, s, big, rows)


@njit(cache=True)
def row_verdict_with(M, q, z, d1, d2, s, big, rows):
    """:func:`row_verdict` with ``(big, rows)`` of :func:`row_scales` at hand."""
    w, ok, err, tol, _, _, _ = row_verdict_terms(M, q, z, d1, d2, s, big, rows)
    return w, ok, err, tol


@njit(cache=True)
def row_verdict_terms(M, q, z, d1, d2, s, big, rows):
    """:func:`row_verdict_with` and the terms of its pass, ``(w, ok, err, tol, a, mag,
    floor)`` (:func:`_row_terms`), for a caller that also asks how rows compare with
    their tolerances (:func:`exceeds_tolerance`) without paying every row's spread."""
    n = q.shape[0]
    w, a, mag, floor = _row_terms(M, q, z, d1, d2, s, big, rows)
    if not (floor - floor == 0.0):
        return w, False, np.inf, 0.0, a, mag, floor
    ok = True
    err = tol = 0.0
    for i in range(n):
        res = abs(min(z[i] / (s * d2[i]), d1[i] * w[i] / s))
        seen = _with_floor(min(a[i], TOL_CAP), mag[i], floor)
        if not (res - res == 0.0 and seen - seen == 0.0):
            return w, False, np.inf, 0.0, a, mag, floor
        err = max(err, res * s / d1[i])
        tol = max(tol, seen * s / d1[i])
        if res > seen:
            full = _row_tolerance(M, d1, d2, a, mag, floor, i)
            if not (full - full == 0.0 and res <= full):  # (row_pass rejects inf rows)
                ok = False
    return w, ok, err, tol, a, mag, floor


@njit(cache=True)
def exceeds_tolerance(x, s, z_units, M, d1, d2, a, mag, floor, rows, a_max, i):
    """Whether ``x > tol_i s / d1_i`` (``z_units``: ``x > tol_i s d2_i``), ``tol_i`` row
    ``i``'s whole tolerance (:func:`row_tolerance_vector_with`), from the terms of
    :func:`row_verdict_terms`, ``rows`` of :func:`row_scales` and ``a_max = max_j a_j``.
    The O(n) spread of ``tol_i`` is summed only when its bounds do not decide: ``tol_i``
    is at least the row's visible part (the spread is not negative) and, when finite, at
    most ``TOL_CAP``, which it is when the row's entries, the ``a_j`` and their products
    are (``a_max rows_i`` far from overflow); the factors are powers of two, so each
    bound compares as ``tol_i`` would."""
    if a[i] - a[i] == 0.0 and floor - floor == 0.0:
        seen = _with_floor(min(a[i], TOL_CAP), mag[i], floor)
        if not x > _in_units(seen, s, z_units, d1, d2, i):
            return False
        if a_max * rows[i] < 1e300 and x > _in_units(TOL_CAP, s, z_units, d1, d2, i):
            return True
    return x > _in_units(_row_tolerance(M, d1, d2, a, mag, floor, i), s, z_units, d1, d2, i)


@njit(cache=True)
def _in_units(t, s, z_units, d1, d2, i):
    """A tolerance ``t`` of row ``i`` in the units of ``z_i`` (``t s d2_i``) or of ``w_i``
    (``t s / d1_i``)."""
    return t * s * d2[i] if z_units else t * s / d1[i]


@njit(cache=True)
def row_pass(M, q, z, d1, d2, s):
    """``w = M z + q`` and the per-row verdict of the module notes.

    Returns ``(w, ratio, T, Tz)``: ``ratio = max_i |min(zs_i, ws_i)| / tol_i`` (the test
    is ``ratio <= 1``; ``inf`` when a row's magnitudes are not finite or when a row with
    ``tol_i = 0``, all its terms zero, has an error), ``T = max_i tol_w_i`` (units of
    ``q``) and ``Tz = max_i tol_z_i`` (units of ``z``).
    """
    w, tol = row_tolerance_vector(M, q, z, d1, d2, s)
    ratio, T, Tz = verdict(w, tol, z, d1, d2, s)
    return w, ratio, T, Tz


@njit(cache=True)
def verdict(w, tol, z, d1, d2, s):
    """``(ratio, T, Tz)`` of :func:`row_pass` from ``w = M z + q`` and the rows' ``tol``
    (whatever way ``M`` is stored)."""
    ratio = T = Tz = 0.0
    for i in range(w.shape[0]):
        ti = tol[i]
        res = abs(min(z[i] / (s * d2[i]), d1[i] * w[i] / s))
        if not (ti - ti == 0.0 and res - res == 0.0):  # overflow or NaN in the row
            ratio = np.inf
            continue
        if res > 0.0:
            ratio = max(ratio, res / ti if ti > 0.0 else np.inf)
        T = max(T, ti * s / d1[i])
        Tz = max(Tz, ti * s * d2[i])
    return ratio, T, Tz


@njit(cache=True)
def certify_rows(M, q, zs, d1, d2, s):
    """Map an equilibrated answer back and certify it row by row, in one call (for
    ``solve``): ``z = s d2 zs``, then :func:`row_pass`. Returns
    ``(finite, z, w, ratio, T, Tz)``; when ``z`` is not finite only ``finite`` (False)
    and ``z`` are meaningful."""
    n = q.shape[0]
    z = np.empty(n)
    finite = True
    for i in range(n):
        z[i] = zs[i] * (s * d2[i])
        finite &= z[i] - z[i] == 0.0
    if not finite:
        return False, z, np.empty(0), np.inf, np.nan, np.nan
    w, ratio, T, Tz = row_pass(M, q, z, d1, d2, s)
    return True, z, w, ratio, T, Tz


def reported_error(ratio, T):
    """``error`` of the module notes from a verdict's ``ratio`` and ``T``: ``ratio T``,
    kept finite (``ratio`` is infinite for a row that can never certify)."""
    if ratio == 0.0:
        return 0.0
    if not np.isfinite(ratio) or T == 0.0:
        return float(np.finfo(float).max) if not np.isfinite(ratio) else float(ratio)
    return float(min(ratio * T, np.finfo(float).max))


@njit(cache=True, fastmath={"reassoc", "nsz"})
def _sum(a):
    """Sum of a 1-D array in any order (vectorised). Non-finite entries make it non-finite
    (only the association is relaxed, not IEEE's inf and NaN rules)."""
    total = 0.0
    for i in range(a.size):
        total += a[i]
    return total


@njit(cache=True)
def zero_is_exact(M, q):
    """``(exact, max(q))``: ``exact`` when ``q >= 0`` and every entry of ``M`` and ``q`` is
    finite (their sum is, without floating-point warnings): ``z = 0`` then solves
    LCP(M, q) exactly. Not exact also when the sum of finite entries overflows (the full
    path sorts that out). ``M`` C-contiguous."""
    if not q.min() >= 0.0:
        return False, 0.0
    return bool(np.isfinite(_sum(M.ravel()) + _sum(q))), q.max()


def relative_tolerance(n, norm_M, norm_q, norm_z):
    """``CERT_FACTOR * n * eps * (norm_M * norm_z + norm_q)`` (dimensionless when the
    norms are those of an equilibrated problem)."""
    return CERT_FACTOR * n * _EPS * (norm_M * norm_z + norm_q)


def raw_tolerance(M, q, z):
    """The tolerance formula applied to ``(M, q, z)`` in whatever units they come, capped
    at ``TOL_CAP`` as :func:`certification_tolerance` is.

    For methods that run on the equilibrated problem (their stopping tests); it is the
    certification tolerance only when ``(M, q)`` is already equilibrated. The cap keeps a
    method from stopping on an answer that :func:`certify` will reject (a path's point
    with a huge internal force and a violated row elsewhere): the robust search would
    return it as SOLVED, ``solve()`` report it as ERROR, and the search's next path would
    never run.
    """
    n = q.shape[0]
    if n == 0:
        return 0.0
    norm_M = float(np.abs(M).sum(axis=1).max())
    return float(certification_tolerance(n, norm_M, float(np.abs(q).max()),
                                         float(np.abs(z).max())))


def certify(M, q, z, scaling=None):
    """Error and tolerance of ``z`` for LCP(M, q), row by row (module notes), in one pass.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    z : (n,) ndarray
    scaling : Scaling, optional
        The equilibration of ``(M, q)``; computed when not given.

    Returns
    -------
    error : float
        ``T max_i |min(zs_i, ws_i)| / tol_i`` (module notes), in the units of ``q``.
    w : (n,) ndarray
        ``M z + q``.
    tol : float
        ``T = max_i tol_w_i``, in the units of ``q``; ``error <= tol`` is the per-row test.
    """
    M = np.ascontiguousarray(M, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    z = np.ascontiguousarray(z, dtype=float)
    n = q.shape[0]
    if n == 0:
        return 0.0, np.zeros(0), 0.0
    if scaling is None:
        scaling = equilibrate(M, q)
    w, ratio, T, _ = row_pass(M, q, z, scaling.d1, scaling.d2, float(scaling.s))
    return reported_error(ratio, T), w, float(T)


def row_tolerances(M, q, z, scaling=None):
    """``(tol_w, tol_z)``, each ``(n,)``: the per-row bounds of the module notes in the
    caller's units (``w_i >= -tol_w_i``, ``z_i >= -tol_z_i`` for a certified ``z``)."""
    M = np.ascontiguousarray(M, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    z = np.ascontiguousarray(z, dtype=float)
    if scaling is None:
        scaling = equilibrate(M, q)
    _, tol = row_tolerance_vector(M, q, z, scaling.d1, scaling.d2, float(scaling.s))
    return tol * scaling.w_unit, tol * scaling.z_unit


def lcp_error(M, q, z):
    """Natural-map residual of ``z`` for LCP(M, q) in consistent units.

    Returns
    -------
    error : float
        As :func:`certify`; zero exactly at a solution. Units of ``q``.
    w : (n,) ndarray
        ``M z + q``.
    """
    err, w, _ = certify(M, q, z)
    return err, w


def row_certifies(M, q, z, factor=1.0):
    """Whether ``z`` passes the per-row test of the module notes on ``(M, q)`` taken as
    they are (the methods' check on the equilibrated data, where it is the test of
    :func:`contact_lcp.lcp.solve` up to powers of two), with each ``tol_i`` times
    ``factor`` (below 1: a margin for that test)."""
    M = np.ascontiguousarray(M, dtype=float)
    n = q.shape[0]
    ones = np.ones(n)
    w, tol = row_tolerance_vector(M, np.ascontiguousarray(q, dtype=float),
                                  np.ascontiguousarray(z, dtype=float), ones, ones, 1.0)
    return bool(np.all(np.abs(np.minimum(z, w)) <= factor * tol))


def default_tolerance(M, q, z):
    """Certification tolerance of :func:`certify` (units of ``q``).

    For a humanoid contact LCP (n = 320, velocities ~ 1 m/s) it is about 1e-9 m/s.
    """
    return certify(M, q, z)[2]


__all__ = ["CERT_FACTOR", "TOL_CAP", "Scaling", "certification_tolerance", "certify",
           "certify_rows", "default_tolerance", "lcp_error", "raw_tolerance",
           "relative_tolerance", "row_certifies", "row_tolerances", "zero_is_exact"]


@njit(cache=True)
def certification_coefficients(M, q):
    """``(a, b)`` with ``raw_tolerance(M, q, z) == min(a * ||z||_inf + b, TOL_CAP)``.

    The same formula as :func:`raw_tolerance`, evaluated in numba to spare two numpy
    passes per solve of the robust search; ``test_lcp_robust.py`` pins the two together.
    """
    n = q.shape[0]
    norm_M, norm_q = inf_norms(M, q)
    k = 1e4 * n * np.finfo(np.float64).eps
    return k * norm_M, k * norm_q
