"""Equilibration of an LCP: the units in which every method pivots and every answer is
certified.

For positive diagonal ``D1``, ``D2`` and a scalar ``s > 0`` the LCP ``(M, q)`` and the
*equilibrated* LCP ``(Ms, qs) = (D1 M D2, D1 q / s)`` have the same solutions up to the
change of units

    z = s D2 zs,        w = s D1^-1 ws,

because the sign conditions and ``z_i w_i = 0`` hold component by component. ``D1`` and
``D2`` come from Ruiz's iteration (each row and column of ``Ms`` divided by the square
root of its largest entry until every row and column has an infinity norm in
``[1/2, 2]``), started from ``M / 2^E`` (its largest entry in ``[1, 2)``, a uniform
factor in ``D2``); ``s`` makes ``||qs||_inf`` lie in ``(1/2, 1]``.

Every factor is rounded to a power of two, so the change of units is exact in floating
point: ``Ms`` and ``qs`` are the caller's data bit for bit in other units, and scaling the
caller's problem by ``(alpha M, beta q)`` with powers of two gives bit-identical
equilibrated problems. For other factors the equilibrated problems differ by powers of
two (at most 2 per row and column), which the relative tolerances of the methods absorb.

A symmetric ``M`` gets ``D2 = 2^-E D1`` (the iteration treats rows and columns alike), so
symmetric methods such as PGS keep a symmetric matrix.
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

#: Ruiz sweeps at most (each O(n^2)); contact LCPs settle in 3-8.
MAX_SWEEPS = 20


@njit(cache=True)
def _pow2_sqrt(x):
    """The power of two nearest to ``sqrt(x)`` (1 for ``x == 0``)."""
    if x == 0.0:
        return 1.0
    return math.ldexp(1.0, int(math.floor(0.5 * math.log2(x) + 0.5)))


@njit(cache=True)
def _max4(a):
    """``max(a)`` of a nonnegative vector (0 when empty) in four independent chains, so
    that consecutive maxima do not wait for each other (2.4x faster Ruiz sweeps)."""
    n = a.shape[0]
    m0 = m1 = m2 = m3 = 0.0
    j = 0
    while j + 4 <= n:
        m0 = max(m0, a[j])
        m1 = max(m1, a[j + 1])
        m2 = max(m2, a[j + 2])
        m3 = max(m3, a[j + 3])
        j += 4
    while j < n:
        m0 = max(m0, a[j])
        j += 1
    return max(max(m0, m1), max(m2, m3))


@njit(cache=True)
def _ruiz(M, q, max_sweeps):
    """``(d1, d2, s, sweeps)`` of the module notes; O(n^2) per sweep."""
    n = q.shape[0]
    d1 = np.ones(n)
    d2 = np.ones(n)
    row = np.empty(n)
    col = np.empty(n)
    # the sweeps start from M / 2^E, its largest entry in [1, 2): (alpha M) for any
    # power of two alpha then starts, and ends, bit for bit where M does (the square
    # roots of the sweeps alone halve odd exponents differently: 2 M once failed where
    # M and 4 M solved). The first sweep's maxima are |M|'s times 2^-E: rounding a
    # product by a positive factor is monotonic, so the maximum of the rounded products
    # is the rounded product of the maximum, the same bits without a pass of their own
    _maxima(M, d1, d2, row, col)
    first = _pow2_below(_max4(row))
    for i in range(n):
        d2[i] = first
        row[i] *= first
        col[i] *= first
    sweeps = 0
    for sweep in range(max_sweeps):
        if sweep:
            _maxima(M, d1, d2, row, col)
        if _balanced(row, col):
            break
        sweeps += 1
        _rescale(row, col, d1, d2)
    return d1, d2, q_scale(q, d1), sweeps


@njit(cache=True)
def _maxima(M, d1, d2, row, col):
    """Write into ``row`` and ``col`` the row and column maxima of ``|D1 M D2|``, one pass;
    an entry that is NaN is passed over, as ``max`` does (its product counts as 0, below
    every other: the maxima start at 0).

    Row by row: the row's products ``|M_ij| d1_i d2_j`` into a work row, then its maximum
    and the column maxima taken on their bit patterns as int64. For doubles >= +0 (inf
    included) the order of the bit patterns is the order of the values, and integer
    maxima compile to vector instructions where the floating-point ones (whose NaN rule
    LLVM must keep) do not: the same maxima, bit for bit, in fewer instructions.
    """
    n = M.shape[0]
    work = np.empty(n)
    bits = work.view(np.int64)
    col_bits = np.zeros(n, dtype=np.int64)
    for i in range(n):
        di = d1[i]
        for j in range(n):
            x = abs(M[i, j]) * di * d2[j]
            work[j] = x if x == x else 0.0
        r = np.int64(0)
        for j in range(n):
            b = bits[j]
            r = b if b > r else r
            c = col_bits[j]
            col_bits[j] = b if b > c else c
        bits[0] = r
        row[i] = work[0]
    col_values = col_bits.view(np.float64)
    for j in range(n):
        col[j] = col_values[j]


@njit(cache=True)
def _balanced(row, col):
    """Whether every nonzero row and column maximum of the scaled ``M`` is in [1/2, 2]
    (the sweeps stop there)."""
    for i in range(row.shape[0]):
        if row[i] > 0.0 and not 0.5 <= row[i] <= 2.0:
            return False
        if col[i] > 0.0 and not 0.5 <= col[i] <= 2.0:
            return False
    return True


@njit(cache=True)
def _rescale(row, col, d1, d2):
    """One sweep's update of the factors: each divided by the power of two nearest the
    square root of its row's (column's) maximum."""
    for i in range(row.shape[0]):
        d1[i] /= _pow2_sqrt(row[i])
        d2[i] /= _pow2_sqrt(col[i])


@njit(cache=True)
def _first_factor(M):
    """``2^-E``: the power of two that puts the largest ``|M_ij|`` in ``[1, 2)`` (1 for a
    zero or non-finite ``M``)."""
    n = M.shape[0]
    ones, row = np.ones(n), np.empty(n)
    _maxima(M, ones, ones, row, np.empty(n))
    return _pow2_below(_max4(row))


@njit(cache=True)
def _pow2_below(mx):
    """``2^-E`` with ``mx 2^-E`` in [1, 2) for the largest ``|M_ij|`` ``mx`` (1 when it
    is zero or not finite)."""
    if mx == 0.0 or not np.isfinite(mx):
        return 1.0
    return math.ldexp(1.0, 1 - math.frexp(mx)[1])


@njit(cache=True)
def q_scale(q, d1):
    """``s``: the power of two with ``||D1 q||_inf / s`` in ``(1/2, 1]`` (1 for ``q = 0``)."""
    qn = 0.0
    for i in range(q.shape[0]):
        qn = max(qn, abs(q[i]) * d1[i])
    s = 1.0 if qn == 0.0 else math.ldexp(1.0, math.frexp(qn)[1])
    if s < qn:  # frexp: qn = m 2^e with m in [1/2, 1), so 2^e >= qn; kept for safety
        s *= 2.0
    return s


@njit(cache=True)
def inf_norms(M, q):
    """``(||M||_inf, ||q||_inf)``: the largest absolute row sum of ``M``, the largest ``|q_i|``."""
    norm_M = 0.0
    norm_q = 0.0
    for i in range(q.shape[0]):
        row = 0.0
        for j in range(M.shape[1]):
            row += abs(M[i, j])
        norm_M = max(norm_M, row)
        norm_q = max(norm_q, abs(q[i]))
    return norm_M, norm_q


@njit(cache=True)
def _apply(M, q, d1, d2, s):
    n = q.shape[0]
    Ms = np.empty((n, n))
    qs = np.empty(n)
    for i in range(n):
        for j in range(n):
            Ms[i, j] = d1[i] * M[i, j] * d2[j]
        qs[i] = d1[i] * q[i] / s
    return Ms, qs


@njit(cache=True)
def all_finite(M, q):
    """True when every entry of ``M`` (n, n) and ``q`` (n,) is finite; O(n^2).

    ``x - x`` is 0 for a finite ``x`` and NaN otherwise; the flags are or-ed without a
    branch so that the compiler vectorizes the loop.
    """
    bad = False
    for i in range(q.shape[0]):
        for j in range(M.shape[1]):
            bad |= M[i, j] - M[i, j] != 0.0
        bad |= q[i] - q[i] != 0.0
    return not bad


#: the smallest positive normal double: an equilibrated entry below it has lost bits
_TINY = float(np.finfo(np.float64).tiny)


@njit(cache=True)
def representable(M, q, Ms, qs):
    """Whether the equilibrated ``(Ms, qs)`` hold the caller's ``(M, q)`` bit for bit:
    every nonzero entry is a finite, normal number (powers of two change only exponents
    until an entry overflows or falls below the normal range). False: the data's range
    defeats double precision in these units. O(n^2), vectorised."""
    bad = False
    for i in range(q.shape[0]):
        for j in range(M.shape[1]):
            a = abs(Ms[i, j])
            bad |= (M[i, j] != 0.0) & ((a < _TINY) | (a - a != 0.0))
        a = abs(qs[i])
        bad |= (q[i] != 0.0) & ((a < _TINY) | (a - a != 0.0))
    return not bad


@njit(cache=True)
def equilibrated(M, q, max_sweeps, scale):
    """Finiteness, Ruiz factors and (when ``scale``) the equilibrated problem in one call.

    The fixed cost of :func:`contact_lcp.lcp.solve` on a small LCP is mostly calls, so it
    makes one here instead of three. Returns ``(finite, d1, d2, s, sweeps, Ms, qs, exact)``;
    when not ``finite`` nothing else is computed (the arrays are empty), when not
    ``scale`` ``Ms`` and ``qs`` are empty; ``exact`` is :func:`representable` of the
    equilibrated problem (True when not ``scale``).
    """
    if not all_finite(M, q):
        return (False, np.empty(0), np.empty(0), 1.0, 0, np.empty((0, 0)), np.empty(0),
                True)
    d1, d2, s, sweeps = _ruiz(M, q, max_sweeps)
    if not scale:
        return True, d1, d2, s, sweeps, np.empty((0, 0)), np.empty(0), True
    Ms, qs = _apply(M, q, d1, d2, s)
    return True, d1, d2, s, sweeps, Ms, qs, representable(M, q, Ms, qs)


def powers_of_two(M, q):
    """The problem scaled by powers of two only: ``(d1, d2, s, Ms, qs)`` with ``d1 = 1``,
    ``d2 = 2^-E`` (the largest ``|M_ij|`` put in ``[1, 2)``) and ``s`` as in
    :func:`q_scale` (``solve(..., scaling="powers_of_two")``, the scaling of the retries of
    :data:`contact_lcp.lcp.attempts.RESCALED_RETRY`)."""
    n = q.shape[0]
    d1 = np.ones(n)
    d2 = np.full(n, _first_factor(M))
    s = q_scale(q, d1)
    Ms, qs = _apply(M, q, d1, d2, s)
    return d1, d2, s, Ms, qs


@dataclass(frozen=True)
class Scaling:
    """The change of units ``z = s D2 zs``, ``w = s D1^-1 ws`` (powers of two).

    Attributes
    ----------
    d1 : (n,) ndarray
        Row factors ``D1`` (w-units: ``w_i`` is measured in ``s / d1_i``).
    d2 : (n,) ndarray
        Column factors ``D2`` (z-units: ``z_j`` is measured in ``s * d2_j``).
    s : float
        Scale of ``q``: ``||D1 q||_inf / s`` lies in ``(1/2, 1]`` (``s = 1`` for ``q = 0``).
    sweeps : int
        Ruiz sweeps performed.
    """

    d1: np.ndarray
    d2: np.ndarray
    s: float
    sweeps: int = 0

    @property
    def z_unit(self):
        """``(n,)`` the unit of each ``z_j`` in the caller's units: ``s * d2``."""
        return self.s * self.d2

    @property
    def w_unit(self):
        """``(n,)`` the unit of each ``w_i`` in the caller's units: ``s / d1``."""
        return self.s / self.d1

    def apply(self, M, q):
        """The equilibrated ``(Ms, qs)``, each ``(n, n)`` and ``(n,)``."""
        return _apply(M, q, self.d1, self.d2, self.s)

    def z_to_scaled(self, z):
        """``zs = z / (s d2)`` (n,)."""
        return np.asarray(z, dtype=float) / self.z_unit

    def z_from_scaled(self, zs):
        """``z = s d2 zs`` (n,)."""
        return np.asarray(zs, dtype=float) * self.z_unit


def identity_scaling(n):
    """The trivial change of units (``D1 = D2 = I``, ``s = 1``)."""
    return Scaling(np.ones(n), np.ones(n), 1.0, 0)


def equilibrate(M, q, *, max_sweeps=MAX_SWEEPS):
    """Ruiz equilibration of ``(M, q)`` with power-of-two factors.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    max_sweeps : int
        Ruiz sweeps at most.

    Returns
    -------
    Scaling
        Apply it with ``scaling.apply(M, q)``.
    """
    M = np.ascontiguousarray(M, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    d1, d2, s, sweeps = _ruiz(M, q, int(max_sweeps))
    return Scaling(d1, d2, float(s), int(sweeps))
