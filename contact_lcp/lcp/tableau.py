"""The shared pivot engine of the complementary pivot methods (revised form, numba).

Tableau and variables
---------------------
Every pivot method works on ``w = q + M z + c z0`` written as the linear system
``A x = q`` with ``A = [I, -M, -c]`` and ``x = [w; z; z0]``. Variables are numbered

* ``0 .. n-1``: ``w_i``;
* ``n .. 2n-1``: ``z_j`` (variable ``n + j``);
* ``2n``: the artificial ``z0``;

so the complement of ``v < 2n`` is ``(v + n) % (2n)``. The state is the basis inverse
``Binv = B^-1`` (n, n), the basic values ``qbar = B^-1 q`` (n,), ``basis[i]`` the
variable basic in row ``i`` and ``where[v]`` the row of ``v`` (-1 when nonbasic). The
transformed column of an entering variable is ``d = B^-1 a_v``; the basic values then move
as ``x_B = qbar - d x_v`` (``m' = -d`` in the ``w = q' + m' x`` form), so rows with
``d_i > 0`` block.

Costs: an entering column is one mat-vec (O(n^2)), a pivot one rank-1 update of ``Binv``
(O(n^2)), a residual check O(n k) with ``k`` basic ``z``. A basis is hashed as the XOR of
one random 64-bit key per basic variable (Zobrist), updated in O(1) per pivot; visited
bases live in an open-addressing table (collisions have probability ~ N^2 / 2^64).

The kernels are plain loops over arrays so that ``NUMBA_DISABLE_JIT=1`` runs the same code
as readable Python/numpy (the dense reference in ``test/test_lcp_tableau.py`` cross-checks
them pivot by pivot). The warm-start basis of a principal pivot is in
:mod:`contact_lcp.lcp.warm_start`, the robust search's priority queue in
:mod:`contact_lcp.lcp.heap`.
"""

import functools

import numpy as np
from numba import njit


# Status codes returned by the kernels; methods map them onto LCPStatus. STOPPED: the
# kernel's ``stop`` flag was set (a deadline or Ctrl-C; :mod:`contact_lcp.lcp.budget`).
SOLVED, NO_SOLUTION, CYCLE, ERROR, MAX_PIVOTS, NUMERICAL_FAILURE, RUNNING, STOPPED = range(8)

# Ratio-test rules of complementary_path.
RULE_MIN_INDEX, RULE_LEXICOGRAPHIC = 0, 1

#: Default relative pivot tolerance: ``d_i <= PIVOT_TOL * ||d||_inf`` is round-off.
PIVOT_TOL = 1e-9


@functools.lru_cache(maxsize=64)
def zobrist_keys(n):
    """One random 63-bit key per variable (seeded: runs are reproducible), ``(2n+1,)``.

    Cached per ``n`` and read-only.
    """
    rng = np.random.default_rng(0x2008)
    keys = rng.integers(1, np.iinfo(np.int64).max, size=2 * n + 1, dtype=np.int64)
    keys.flags.writeable = False
    return keys


def initial_state(n):
    """The slack basis ``B = I``: returns ``Binv, basis, where`` for ``n`` rows."""
    basis = np.arange(n, dtype=np.int64)
    where = -np.ones(2 * n + 1, dtype=np.int64)
    where[:n] = basis
    return np.eye(n), basis, where


@njit(cache=True)
def norm_inf(x):
    """``||x||_inf`` without a temporary (0 for an empty vector)."""
    m = 0.0
    for v in x:
        m = max(m, abs(v))
    return m


@njit(cache=True)
def complement(v, n):
    """Complement of variable ``v < 2n`` (w_i <-> z_i)."""
    return v + n if v < n else v - n


@njit(cache=True)
def basis_hash(basis, keys):
    """XOR of the Zobrist keys of the basic variables."""
    h = 0
    for v in basis:
        h ^= keys[v]
    return h


@njit(cache=True)
def binv_times(Binv, where, a, d):
    """``d = B^-1 a`` using the structure of ``B^-1``; O(n k) for ``k`` nonbasic ``w``.

    Column ``i`` of ``B^-1`` is the unit vector ``e_where[i]`` whenever ``w_i`` is basic
    (``B e_where[i] = e_i``), so only the columns of nonbasic ``w`` (as many as basic
    ``z`` and ``z0``) need a product.
    """
    n = Binv.shape[0]
    cols = np.empty(n, dtype=np.int64)
    m = 0
    for k in range(n):
        d[k] = 0.0
    for k in range(n):
        if where[k] < 0:
            if a[k] != 0.0:
                cols[m] = k
                m += 1
        else:
            d[where[k]] += a[k]
    for i in range(n):
        acc = 0.0
        for t in range(m):
            k = cols[t]
            acc += Binv[i, k] * a[k]
        d[i] += acc


@njit(cache=True)
def entering_column(Binv, MT, c, v, d, where):
    """Write ``d = B^-1 a_v`` for variable ``v`` (``a = e_i, -M[:, j], -c``); O(n k).

    ``MT`` is ``M.T`` made contiguous, so ``-M[:, j]`` is the contiguous row ``-MT[j]``.
    """
    n = Binv.shape[0]
    if v < n:
        for i in range(n):
            d[i] = Binv[i, v]
    elif v < 2 * n:
        binv_times(Binv, where, MT[v - n], d)
        for i in range(n):
            d[i] = -d[i]
    else:
        binv_times(Binv, where, c, d)
        for i in range(n):
            d[i] = -d[i]


@njit(cache=True)
def pivot(Binv, qbar, basis, where, d, r, v, work):
    """Variable ``v`` (column ``d``) enters in row ``r``; rank-1 update, O(n k).

    Only the columns with ``Binv[r, k] != 0`` change (the unit columns of basic ``w``
    in other rows do not); when a ``w_v`` enters, its column is set to ``e_r`` exactly.
    Returns the leaving variable. ``work`` is an (n,) scratch buffer.
    """
    n = Binv.shape[0]
    inv = 1.0 / d[r]
    cols = np.empty(n, dtype=np.int64)
    m = 0
    for k in range(n):
        x = Binv[r, k]
        if x != 0.0:
            work[m] = x * inv
            cols[m] = k
            m += 1
    qr = qbar[r] * inv
    for i in range(n):
        f = d[i]
        if i == r or f == 0.0:
            continue
        for t in range(m):
            Binv[i, cols[t]] -= f * work[t]
        qbar[i] -= f * qr
    for t in range(m):
        Binv[r, cols[t]] = work[t]
    qbar[r] = qr
    leaving = basis[r]
    basis[r] = v
    where[leaving] = -1
    where[v] = r
    if v < n:
        for i in range(n):
            Binv[i, v] = 0.0
        Binv[r, v] = 1.0
    return leaving


@njit(cache=True)
def add_basic_columns(MT, c, basis, x, out):
    """``out += A_B x``: the basic columns weighted by ``x``; O(n k) for ``k`` basic ``z``."""
    n = x.shape[0]
    for i in range(n):
        v = basis[i]
        val = x[i]
        if val == 0.0:
            continue
        if v < n:
            out[v] += val
        elif v < 2 * n:
            row = MT[v - n]
            for k in range(n):
                out[k] -= val * row[k]
        else:
            for k in range(n):
                out[k] -= val * c[k]


@njit(cache=True)
def basic_residual(MT, q, c, basis, x, out):
    """``out = A_B x - q = w - M z - c z0 - q`` from the original data; O(n k)."""
    for i in range(q.shape[0]):
        out[i] = -q[i]
    add_basic_columns(MT, c, basis, x, out)


@njit(cache=True)
def residual(MT, q, c, basis, x):
    """``||A_B x - q||_inf``, i.e. ``||w - M z - c z0 - q||_inf``; O(n k)."""
    out = np.empty(q.shape[0])
    basic_residual(MT, q, c, basis, x, out)
    return norm_inf(out)


#: Basic values ``|qbar_i| <= DEGENERATE_TOL * (1 + ||qbar||_inf)`` count as 0 in the ratio
#: test, so that a degenerate tie is broken by the rule and not by the sign of round-off
#: (which differs between two scalings of the same problem). The data are equilibrated.
DEGENERATE_TOL = 1e-13


#: Ratios within a relative ``RATIO_TIE`` of the minimum tie (round-off of a tie).
RATIO_TIE = 1e-11


@njit(cache=True)
def min_ratio_row(qbar, d, tol, basis, z0):
    """Minimum-ratio row among ``d_i > tol``, or -1.

    Numerators below ``DEGENERATE_TOL * (1 + ||qbar||_inf)`` (round-off either side of
    zero) are clamped to 0, so they read as degenerate. Ratios within a relative
    ``RATIO_TIE`` of the minimum tie; among tied rows the one where ``z0`` is basic
    leaves (pass ``z0 = -1`` for none), else the first index. Returns
    ``(row, t_min, tiny)`` with ``tiny`` true when some ``0 < d_i <= tol``.
    """
    t_min, tiny = np.inf, False
    zero = DEGENERATE_TOL * (1.0 + norm_inf(qbar))
    for i in range(qbar.shape[0]):
        if d[i] > tol:
            t = (qbar[i] if qbar[i] > zero else 0.0) / d[i]
            if t < t_min:
                t_min = t
        elif d[i] > 0.0:
            tiny = True
    if t_min == np.inf:
        return -1, t_min, tiny
    limit = t_min * (1.0 + RATIO_TIE)
    best = -1
    for i in range(qbar.shape[0]):
        if d[i] > tol and (qbar[i] if qbar[i] > zero else 0.0) / d[i] <= limit:
            if basis[i] == z0:
                return i, t_min, tiny
            if best < 0:
                best = i
    return best, t_min, tiny


@njit(cache=True)
def lexicographic_row(qbar, d, Binv, basis, tol, delta, z0, rows):
    """Lexicographic minimum-ratio row with tie threshold ``delta`` (absolute).

    Rows within ``delta`` (plus the relative round-off allowance ``RATIO_TIE``) of the
    minimum ratio of :func:`min_ratio_row` tie; if ``z0`` is among them it leaves.
    Otherwise the ties are narrowed by ``Binv[i, k] / d_i`` for ``k = 0, 1, ...``
    keeping rows within ``delta + RATIO_TIE * max |Binv[i, k] / d_i|`` of the minimum,
    until one row is left; if several remain after all columns, the one with the smallest
    last value (then the smallest index) wins. ``rows`` is an (n,) int scratch buffer.
    Returns ``(row, tiny)`` like min_ratio_row.
    """
    best, t_min, tiny = min_ratio_row(qbar, d, tol, basis, z0)
    if best < 0:
        return best, tiny
    m, z0_row = tied_rows(qbar, d, tol, delta, t_min, basis, z0, rows)
    if z0_row >= 0:
        return z0_row, tiny
    return lexicographic_narrow(d, Binv, rows, m, delta), tiny


@njit(cache=True)
def tied_rows(qbar, d, tol, delta, t_min, basis, z0, rows):
    """The rows of :func:`lexicographic_row` that tie at the minimum ratio ``t_min``
    (within ``delta`` and ``RATIO_TIE``), into ``rows``; returns ``(count, z0_row)`` with
    ``z0_row`` >= 0 (and the count so far) when ``z0`` is among them."""
    zero = DEGENERATE_TOL * (1.0 + norm_inf(qbar))
    limit = t_min * (1.0 + RATIO_TIE) + delta
    m = 0
    for i in range(qbar.shape[0]):
        if d[i] > tol and (qbar[i] if qbar[i] > zero else 0.0) / d[i] <= limit:
            if basis[i] == z0:
                return m, i
            rows[m] = i
            m += 1
    return m, -1


@njit(cache=True)
def lexicographic_narrow(d, Binv, rows, m, delta):
    """The row among the ``m`` tied ``rows[:m]`` (m >= 1) that is lexicographically least
    in ``Binv[i, :] / d_i`` with tie threshold ``delta`` (see :func:`lexicographic_row`);
    ``rows`` is overwritten."""
    n = Binv.shape[1]
    k = 0
    while m > 1 and k < n:
        vmin = np.inf
        vabs = 0.0
        for a in range(m):
            v = Binv[rows[a], k] / d[rows[a]]
            vmin = min(vmin, v)
            vabs = max(vabs, abs(v))
        keep = 0
        for a in range(m):
            i = rows[a]
            if Binv[i, k] / d[i] <= vmin + delta + RATIO_TIE * vabs:
                rows[keep] = i
                keep += 1
        if keep == 1 or k == n - 1:
            best = rows[0]
            for a in range(1, keep):
                i = rows[a]
                if Binv[i, k] / d[i] < Binv[best, k] / d[best]:
                    best = i
            return best
        m = keep
        k += 1
    return rows[0]


@njit(cache=True)
def ratio_test(qbar, d, tol, ratio):
    """The ratios of :func:`min_ratio_row` computed once, for callers that scan them
    several times (the robust search): ``ratio[i] = qbar_i / d_i`` for ``d_i > tol``
    (numerators below ``DEGENERATE_TOL * (1 + ||qbar||_inf)`` clamped to 0), ``inf``
    elsewhere. Returns ``(t_min, tiny)`` as :func:`min_ratio_row` does (``t_min = inf``
    when no row blocks). ``ratio`` is an (n,) buffer."""
    t_min, tiny = np.inf, False
    zero = DEGENERATE_TOL * (1.0 + norm_inf(qbar))
    for i in range(qbar.shape[0]):
        if d[i] > tol:
            t = (qbar[i] if qbar[i] > zero else 0.0) / d[i]
            ratio[i] = t
            if t < t_min:
                t_min = t
        else:
            ratio[i] = np.inf
            if d[i] > 0.0:
                tiny = True
    return t_min, tiny


@njit(cache=True)
def hash_insert(table, fill, h):
    """Insert ``h`` in the open-addressing ``table`` (0 = empty, size a power of two).

    ``fill`` is a 1-element counter. Returns ``(table, inserted)``; the table is replaced
    by one twice as large when it gets half full, so always use the returned one.
    """
    if h == 0:
        h = 1
    if 2 * (fill[0] + 1) > table.shape[0]:
        old = table
        table = np.zeros(2 * old.shape[0], dtype=np.int64)
        for g in old:
            if g != 0:
                j = g & (table.shape[0] - 1)
                while table[j] != 0:
                    j = (j + 1) & (table.shape[0] - 1)
                table[j] = g
    mask = table.shape[0] - 1
    j = h & mask
    while table[j] != 0:
        if table[j] == h:
            return table, False
        j = (j + 1) & mask
    table[j] = h
    fill[0] += 1
    return table, True


@njit(cache=True)
def refine(MT, q, c, Binv, qbar, basis):
    """One step of iterative refinement of ``qbar`` with the current ``Binv``; O(n^2).

    Returns the residual ``||A_B x - q||_inf`` after the step.
    """
    res = np.empty(q.shape[0])
    basic_residual(MT, q, c, basis, qbar, res)
    qbar -= np.dot(Binv, res)
    return residual(MT, q, c, basis, qbar)


@njit(cache=True)
def extract_z(qbar, basis, n):
    """The ``z`` part of the basic solution, ``(n,)``."""
    z = np.zeros(n)
    for i in range(basis.shape[0]):
        v = basis[i]
        if n <= v < 2 * n:
            z[v - n] = qbar[i]
    return z


@njit(cache=True)
def complementary_path(MT, q, c, Binv, qbar, basis, where, keys, entering, rule, delta,
                       pivot_tol, max_pivots, stop):
    """Follow Lemke's complementary path from a state where ``z0`` is basic.

    ``entering`` is the complement of the variable that left in Step 0. Each step computes
    the entering column, picks the leaving row by ``rule`` (RULE_MIN_INDEX or
    RULE_LEXICOGRAPHIC with tie threshold ``delta``), pivots, and stops when ``z0`` leaves
    (SOLVED), no row blocks (NO_SOLUTION; NUMERICAL_FAILURE when only pivot elements
    below ``pivot_tol * ||d||_inf`` would block), a basis repeats (CYCLE),
    ``max_pivots`` pivots were made in this call (MAX_PIVOTS) or ``stop[0]`` is set
    (STOPPED, tested before each pivot).

    Returns ``(status, pivots, last_entering)``; the state arrays are updated in place.
    """
    n = q.shape[0]
    z0 = 2 * n
    d = np.empty(n)
    work = np.empty(n)
    rows = np.empty(n, dtype=np.int64)
    table = np.zeros(1024, dtype=np.int64)
    fill = np.zeros(1, dtype=np.int64)
    h = basis_hash(basis, keys)
    table, _ = hash_insert(table, fill, h)
    pivots = 0
    while True:
        if pivots >= max_pivots:
            return MAX_PIVOTS, pivots, entering
        if stop[0] != 0:
            return STOPPED, pivots, entering
        entering_column(Binv, MT, c, entering, d, where)
        tol = pivot_tol * norm_inf(d)
        if rule == RULE_LEXICOGRAPHIC:
            r, tiny = lexicographic_row(qbar, d, Binv, basis, tol, delta, z0, rows)
        else:
            r, _, tiny = min_ratio_row(qbar, d, tol, basis, z0)
        if r < 0:
            return (NUMERICAL_FAILURE if tiny else NO_SOLUTION), pivots, entering
        leaving = pivot(Binv, qbar, basis, where, d, r, entering, work)
        pivots += 1
        h ^= keys[entering] ^ keys[leaving]
        if leaving == z0:
            return SOLVED, pivots, entering
        table, fresh = hash_insert(table, fill, h)
        if not fresh:
            return CYCLE, pivots, entering
        entering = complement(leaving, n)


@njit(cache=True)
def lemke_run(M, q, keys, rule, delta, pivot_tol, max_pivots):
    """:func:`lemke_run_stoppable` that nothing stops."""
    return lemke_run_stoppable(M, q, keys, rule, delta, pivot_tol, max_pivots,
                               np.zeros(1, dtype=np.int64))


@njit(cache=True, nogil=True)
def lemke_run_stoppable(M, q, keys, rule, delta, pivot_tol, max_pivots, stop):
    """Lemke's method from the slack basis with covering vector 1, all in one call
    (``stop``: see :func:`complementary_path`; nogil, for :func:`contact_lcp.lcp.budget.call`).

    Step 0: ``z0`` enters, the row of the most negative ``q_i`` leaves: the first such
    row for RULE_MIN_INDEX; for RULE_LEXICOGRAPHIC the last row within ``delta`` of the
    minimum (the lexicographic minimum of the rows ``(q_i, e_i)``). Then
    :func:`complementary_path`. Returns ``(status, pivots, last_entering, z, residual)``
    with ``residual`` the basis residual after refinement (-1 unless SOLVED).
    """
    n = q.shape[0]
    MT = np.ascontiguousarray(M.T)
    c = np.ones(n)
    Binv = np.eye(n)
    basis = np.arange(n)
    where = -np.ones(2 * n + 1, dtype=np.int64)
    for i in range(n):
        where[i] = i
    qbar = q.copy()
    r = np.int64(0)  # not a literal 0: pivot() compiled once (docs/architecture.md)
    for i in range(n):
        if rule == RULE_LEXICOGRAPHIC:
            if qbar[i] <= qbar[r] + delta:
                r = i
        elif qbar[i] < qbar[r]:
            r = i
    work = np.empty(n)
    leaving = pivot(Binv, qbar, basis, where, -c, r, 2 * n, work)
    code, pivots, last = complementary_path(MT, q, c, Binv, qbar, basis, where, keys,
                                            complement(leaving, n), rule, delta, pivot_tol,
                                            max_pivots - 1, stop)
    res = refine(MT, q, c, Binv, qbar, basis) if code == SOLVED else -1.0
    return code, pivots + 1, last, extract_z(qbar, basis, n), res
