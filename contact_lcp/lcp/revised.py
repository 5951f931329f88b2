"""Lexicographic Lemke on a sparse LU factorization of the basis (revised form).

The dense engine (:mod:`contact_lcp.lcp.tableau`) keeps ``B^-1`` as an n x n array and
updates it at every pivot: O(n^2) time and memory however sparse ``M`` is. A settled pile
of 200 spheres has ~500 contacts, n ~ 5000 rows and ~100 nonzeros per row of ``M``; its
frictional LCP then costs 15 ms per pivot and thousands of pivots, a minute per step.

Here the basis ``B`` (columns of ``[I, -M, -c]``, variables numbered as in the tableau
module) is factorized by SuperLU (:func:`scipy.sparse.linalg.splu`, COLAMD ordering) and
each pivot appends one eta column (product form of the inverse,
``B_k^-1 = E_k ... E_1 B_0^-1``); the factorization is redone from the current basis
every ``refactor`` pivots, and the basic values are then recomputed from ``q`` (which
also refines them). A pivot costs one solve with the factors, one pass over the etas and
the ratio test: O(nnz(L + U) + k n) instead of O(n^2).

The path is the lexicographic one of :func:`contact_lcp.lcp.lexicographic.solve_lexicographic`
with the same tie threshold: tied rows are narrowed by ``B^-1[i, k] / d_i`` for
``k = 0, 1, ...``. The leading ``KEPT_COLUMNS`` columns of ``B^-1`` are kept up to date
once a tie has needed them (O(n) each per pivot), the next ones up to ``LEX_COLUMNS``
solved for when a tie needs them; ties they do not break are narrowed by the tied rows
of ``B^-1``, one transposed solve each. In exact arithmetic both walk the
same bases; the tests compare them pivot for pivot where nothing ties. ``rule="min_index"``
walks plain Lemke's path instead.
"""

import numpy as np
from numba import njit
from scipy import sparse
from scipy.sparse import linalg as spla

from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp import tableau as tb
from contact_lcp.lcp import budget as bg
from contact_lcp.lcp.lemke import REASONS, STATUS, default_max_pivots
from contact_lcp.lcp.residual import raw_tolerance
from contact_lcp.lcp.result import MethodOutput
from contact_lcp.lcp.warm_start import well_conditioned_block

#: ratio-test rules: the lexicographic one, or the minimum index among tied rows
RULES = ("lexicographic", "min_index")
#: pivots between two factorizations of the basis (the eta file's length)
REFACTOR = 100
#: columns of B^-1 that the lexicographic ties compare before they turn to the tied rows
LEX_COLUMNS = 16
#: leading columns of B^-1 kept up to date at every pivot (O(n) each) once a tie needed
#: them; a deeper one is a solve with the factors each time. On degenerate pile LCPs the
#: exact-tie paths tie at almost every pivot and column 0 breaks nearly every tie
#: (benchmarks/data/pour_t084_round3), so keeping all 16 up to date would cost about a
#: fifth of each pivot for ties that never reach them
KEPT_COLUMNS = 2


@njit(cache=True)
def _apply_etas(y, rows, etas, count):
    """``E_count ... E_1 y`` in place: eta ``t`` pivots row ``rows[t]`` on column
    ``etas[t]`` (the transformed entering column of pivot ``t``)."""
    for t in range(count):
        r = rows[t]
        e = etas[t]
        yr = y[r] / e[r]
        if yr != 0.0:
            for i in range(y.shape[0]):
                y[i] -= e[i] * yr
        y[r] = yr


@njit(cache=True)
def _ftran(a, y, R, Z, W, wi, perm_r, perm_c, Lp, Li, Lx, Up, Ui, Ux, Bp, Bi, Bx, rows,
           etas, count, work, work2):
    """``y = B^-1 a`` in one compiled pass (:meth:`_Basis.solve` for one dense column).

    ``K = B[R, Z]`` was factorized by SuperLU as ``Pr K Pc = L U`` (``L`` unit lower,
    ``U`` upper, both CSC, ``U``'s rows sorted so that its diagonal ends each column; ``Pr`` maps row ``i`` to ``perm_r[i]``,
    ``x = Pc v`` is ``x_i = v[perm_c[i]]``): ``y_Z = K^-1 a_R``, then
    ``y_W = a_wi - B[wi, Z] y_Z`` (``B[wi, Z]`` as CSR ``Bp, Bi, Bx``), then the eta file.
    ``work`` and ``work2`` are scratch vectors of ``|Z|``.
    """
    m = Z.shape[0]
    u = work
    for i in range(m):
        u[perm_r[i]] = a[R[i]]
    for j in range(m):  # L u = Pr a_R (unit diagonal, stored first in its column)
        uj = u[j]
        if uj != 0.0:
            for p in range(Lp[j], Lp[j + 1]):
                r = Li[p]
                if r > j:
                    u[r] -= Lx[p] * uj
    for j in range(m - 1, -1, -1):  # U v = u (diagonal last in its column)
        end = Up[j + 1] - 1
        uj = u[j] / Ux[end]
        u[j] = uj
        if uj != 0.0:
            for p in range(Up[j], end):
                u[Ui[p]] -= Ux[p] * uj
    yZ = work2
    for i in range(m):
        yZ[i] = u[perm_c[i]]
        y[Z[i]] = yZ[i]
    for k in range(W.shape[0]):
        s = a[wi[k]]
        for p in range(Bp[k], Bp[k + 1]):
            s -= Bx[p] * yZ[Bi[p]]
        y[W[k]] = s
    _apply_etas(y, rows, etas, count)


@njit(cache=True)
def _apply_etas_transposed(y, rows, etas, count):
    """``y' E_count ... E_1`` in place (a row of ``B^-1`` before the factors' solve)."""
    for t in range(count - 1, -1, -1):
        r = rows[t]
        e = etas[t]
        s = 0.0
        for i in range(y.shape[0]):
            s += y[i] * e[i]
        y[r] = (y[r] - s + y[r] * e[r]) / e[r]


@njit(cache=True)
def _pivot_columns(C, d, r):
    """Columns ``C`` of ``B^-1`` after row ``r`` pivots on the transformed column ``d``."""
    for j in range(C.shape[1]):
        cr = C[r, j] / d[r]
        if cr != 0.0:
            for i in range(C.shape[0]):
                C[i, j] -= d[i] * cr
        C[r, j] = cr


@njit(cache=True)
def _dense_column(indptr, indices, data, j, out):
    """Column ``j`` of a CSC matrix into the dense ``out``."""
    out[:] = 0.0
    for p in range(indptr[j], indptr[j + 1]):
        out[indices[p]] = data[p]
    return out


@njit(cache=True)
def _update_basic(x, d, r):
    """Basic values after the entering variable rises to ``x_r / d_r`` (row ``r`` leaves).

    A leaving row whose value is round-off below zero (the ratio test reads it as a
    degenerate 0) leaves at 0: divided by a small ``d_r`` it would start the entering
    variable far below zero (-6e-10 / 2.4e-8 puts a basic variable at -0.025, and the
    path would end on an uncertifiable answer). The answer is recomputed from fresh factors and certified either way."""
    t = x[r] / d[r] if (x[r] > 0.0 or d[r] < 0.0) else 0.0  # (d_r < 0: Step 0)
    for i in range(x.shape[0]):
        x[i] -= d[i] * t
    x[r] = t


@njit(cache=True)
def _narrow(col, d, rows, m, delta):
    """Keep the tied ``rows[:m]`` that are least in ``col[i] / d_i`` (one column of
    ``B^-1``), with the tie threshold of :func:`contact_lcp.lcp.tableau.lexicographic_narrow`;
    returns the new count (``rows`` compacted) and the least row."""
    vmin, vabs = np.inf, 0.0
    for a in range(m):
        v = col[rows[a]] / d[rows[a]]
        vmin = min(vmin, v)
        vabs = max(vabs, abs(v))
    keep = 0
    best = rows[0]
    for a in range(m):
        i = rows[a]
        v = col[i] / d[i]
        if v <= vmin + delta + tb.RATIO_TIE * vabs:
            if keep == 0 or v < col[best] / d[best]:
                best = i
            rows[keep] = i
            keep += 1
    return keep, best


def _warm_block(Ms, indices, singular_tol, info):
    """The warm start's well-conditioned block of ``indices`` (sparse ``Ms``)."""
    n = Ms.shape[0]
    idx = np.unique(np.asarray(indices, dtype=np.int64))
    if idx.size and (idx[0] < 0 or idx[-1] >= n):
        raise InvalidProblem(f"initial_basis must hold indices in [0, {n}); received {idx}")
    if singular_tol <= 0.0:  # the caller vouches for the block (O(b^3) saved)
        return idx
    block = Ms[idx][:, idx].toarray()
    local, dropped, _ = well_conditioned_block(block, np.arange(idx.size), singular_tol)
    if dropped.size:
        info["warm_start_dropped"] = idx[dropped].tolist()
    return idx[local]


class _Basis:
    """``B`` of the current basis as sparse LU factors of an earlier one and an eta file.

    Only the block of ``B`` that the slack columns leave is factorized: with ``W`` the
    positions of the basic slacks (``w_i``, columns ``e_i``), ``wi`` the rows they cover,
    ``Z`` the other positions (``z_j`` and ``z0``) and ``R`` the rows no slack covers,
    ``B y = a`` is ``K y_Z = a_R`` with ``K = B[R, Z]`` (square), then
    ``y_W = a_wi - B[wi, Z] y_Z``. A settled pile's basis has ~1 500 such columns of
    5 000: its factors are 2.4 times cheaper to make and its solves 1.4 times faster
    than those of the whole ``B``."""

    def __init__(self, A, n, refactor):
        self.A, self.n, self.refactor = A, n, refactor
        self.rows = np.zeros(refactor, dtype=np.int64)
        self.etas = np.zeros((refactor, n))
        self.count = 0
        self.factorizations = 0
        self.lu_nnz = 0

    def factorize(self, basis):
        """Factorize the columns ``basis`` of ``A = [I, -M, -c]``; False when singular."""
        n = self.n
        B = self.A[:, basis].tocsc()
        slack = basis < n
        W, Z = np.flatnonzero(slack), np.flatnonzero(~slack)
        wi = basis[W]
        free = np.ones(n, dtype=bool)
        free[wi] = False
        R = np.flatnonzero(free)
        BZ = B[:, Z]
        lu = None
        if Z.size:
            try:
                lu = spla.splu(BZ[R].tocsc(), permc_spec="COLAMD")
            except RuntimeError:  # "Factor is exactly singular"
                return False
        self.lu, self.B = lu, B
        self.W, self.Z, self.wi, self.R = W, Z, wi, R
        self.BWZ = BZ[wi].tocsr()
        if lu is not None:  # the factors as arrays, for _ftran (which needs U's rows sorted)
            L, U = lu.L.tocsc(), lu.U.tocsc()
            U.sort_indices()
            self._factors = (lu.perm_r.astype(np.int64), lu.perm_c.astype(np.int64),
                             L.indptr, L.indices, L.data, U.indptr, U.indices, U.data)
            self._work = (np.empty(Z.size), np.empty(Z.size))
        self.count = 0
        self.cols = None  # the kept columns of B^-1, computed when a tie needs them
        self.factorizations += 1
        if lu is not None:
            self.lu_nnz = max(self.lu_nnz, lu.L.nnz + lu.U.nnz)
        return True

    def _solve_factors(self, a):
        """``B0^-1 a`` with the factors (``a`` (n,) or (n, m))."""
        y = np.empty(a.shape)
        if self.lu is None:
            y[self.W] = a[self.wi]
            return y
        yZ = self.lu.solve(np.ascontiguousarray(a[self.R]))
        y[self.Z] = yZ
        y[self.W] = a[self.wi] - self.BWZ @ yZ
        return y

    def solve(self, a):
        """``B^-1 a`` for a dense ``a``."""
        if a.ndim == 1 and self.lu is not None:
            y = np.empty(self.n)
            B = self.BWZ
            _ftran(a, y, self.R, self.Z, self.W, self.wi, *self._factors, B.indptr, B.indices,
                   B.data, self.rows, self.etas, self.count, *self._work)
            return y
        y = self._solve_factors(a)
        if self.count:
            if y.ndim == 1:
                _apply_etas(y, self.rows, self.etas, self.count)
            else:
                for j in range(y.shape[1]):
                    col = np.ascontiguousarray(y[:, j])
                    _apply_etas(col, self.rows, self.etas, self.count)
                    y[:, j] = col
        return y

    def pivot(self, r, d):
        """Row ``r`` takes the variable whose transformed column is ``d``."""
        self.rows[self.count] = r
        self.etas[self.count] = d
        self.count += 1
        if self.cols is not None:
            _pivot_columns(self.cols, d, r)

    def row(self, i):
        """Row ``i`` of ``B^-1``: ``B0^-T (E' e_i)``, where ``B0' u = b`` is
        ``u_wi = b_W`` and ``K' u_R = b_Z - B[wi, Z]' u_wi``."""
        y = np.zeros(self.n)
        y[i] = 1.0
        if self.count:
            _apply_etas_transposed(y, self.rows, self.etas, self.count)
        u = np.zeros(self.n)
        u[self.wi] = y[self.W]
        if self.lu is not None:
            u[self.R] = self.lu.solve(np.ascontiguousarray(y[self.Z] - self.BWZ.T @ y[self.W]),
                                      trans="T")
        return u

    def column(self, k):
        """Column ``k`` of ``B^-1``."""
        if k >= KEPT_COLUMNS:
            e = np.zeros(self.n)
            e[k] = 1.0
            return self.solve(e)
        if self.cols is None:
            self.cols = np.ascontiguousarray(self.solve(np.eye(self.n, min(KEPT_COLUMNS, self.n))))
        return self.cols[:, k]

    @property
    def full(self):
        return self.count >= self.refactor


def solve_revised(M, q, *, tie_threshold=1e-9, pivot_tol=tb.PIVOT_TOL, max_pivots=None,
                  refactor=REFACTOR, initial_basis=None, singular_tol=1e-10,
                  rule="lexicographic"):
    """Lexicographic Lemke on a sparse factorization of the basis.

    Parameters
    ----------
    M : (n, n) ndarray or scipy.sparse matrix
    q : (n,) ndarray
    tie_threshold : float
        ``delta`` >= 0 of the lexicographic rule, as in
        :func:`contact_lcp.lcp.lexicographic.solve_lexicographic`.
    pivot_tol : float
        Entries ``d_i <= pivot_tol * ||d||_inf`` of an entering column never block.
    max_pivots : int, optional
        Default ``max(1000, 50 n)``.
    refactor : int
        Pivots between two factorizations of the basis.
    initial_basis : sequence of int, optional
        Warm start as in :func:`contact_lcp.lcp.robust.solve_robust`: the basis with
        ``z_i`` basic for these ``i`` (reduced to a well-conditioned block,
        ``info['warm_start_dropped']``), covering vector ``B 1`` so that Step 0 is the
        cold one's in basis coordinates. Without it: the slack basis, covering vector 1.
    singular_tol : float
        Reciprocal condition number below which the warm-start block is singular; 0
        takes the block as it is (no O(b^3) condition estimate; a singular basis still
        ends the path with NUMERICAL_FAILURE when it is factorized).
    rule : str
        ``"lexicographic"`` (default) or ``"min_index"`` (plain Lemke's ties: the first
        tied row).

    Returns
    -------
    MethodOutput
        ``info``: ``factorizations``, ``lu_nnz`` (the largest factors' nonzeros),
        ``lexicographic_columns`` and ``lexicographic_rows`` (columns of ``B^-1``
        compared, rows computed, to break ties), ``basis_residual`` ``||B x - q||_inf``
        of the answer, ``final_basis`` the indices ``i`` whose ``z_i`` is basic at the
        end, sorted (those at 0 included: as ``initial_basis`` of a nearby LCP it keeps
        the degenerate basic variables that ``z > 0`` would drop).
    """
    if not tie_threshold >= 0.0:
        raise ValueError(f"tie_threshold must be >= 0; received {tie_threshold}")
    if int(refactor) < 1:
        raise ValueError(f"refactor must be >= 1; received {refactor}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; received {rule!r}")
    lexicographic = rule == "lexicographic"
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    max_pivots = default_max_pivots(n) if max_pivots is None else int(max_pivots)
    info = {"factorizations": 0, "lu_nnz": 0, "lexicographic_columns": 0,
            "lexicographic_rows": 0}
    if n == 0 or (initial_basis is None and q.min() >= 0.0):
        return MethodOutput(np.zeros(n), STATUS[tb.SOLVED], 0, info)
    Ms = sparse.csc_matrix(M)
    kept = np.zeros(0, dtype=np.int64)
    if initial_basis is not None:
        kept = _warm_block(Ms, initial_basis, singular_tol, info)
    c = np.ones(n)  # the covering vector: B 1 of the first basis
    c[kept] = 0.0
    c -= np.asarray(Ms[:, kept].sum(axis=1)).ravel()
    A = sparse.hstack([sparse.identity(n, format="csc"), -Ms,
                       sparse.csc_matrix(-c[:, None])], format="csc")
    z0 = 2 * n
    keys = tb.zobrist_keys(n)
    basis = np.arange(n)
    basis[kept] = n + kept
    lu = _Basis(A, n, int(refactor))
    if not lu.factorize(basis):
        info["reason"] = "the warm-start basis is singular"
        return MethodOutput(np.zeros(n), STATUS[tb.NUMERICAL_FAILURE], 0, info)
    x = lu.solve(q) if kept.size else q.copy()
    if kept.size and x.min() >= -raw_tolerance(Ms, q, np.zeros(n)):
        z = np.zeros(n)
        z[kept] = np.maximum(x[kept], 0.0)
        info["final_basis"] = np.sort(kept)
        return MethodOutput(z, STATUS[tb.SOLVED], int(kept.size), info)
    # Step 0: z0 enters, the lexicographically least row of (x_i, e_i) leaves: the last
    # one within delta of the most negative (x = q from the slack basis).
    r = 0
    for i in range(n):
        if (x[i] <= x[r] + tie_threshold) if lexicographic else (x[i] < x[r]):
            r = i
    d = -np.ones(n)  # B^-1 (-c): the covering vector is B 1
    rows = np.empty(n, dtype=np.int64)
    a = np.empty(n)
    h = tb.basis_hash(basis, keys)
    seen = set()
    pivots = int(kept.size)
    entering = z0
    code = tb.RUNNING
    while code == tb.RUNNING:
        _update_basic(x, d, r)
        leaving = int(basis[r])
        basis[r] = entering
        h ^= int(keys[entering]) ^ int(keys[leaving])
        pivots += 1
        if leaving == z0:
            code = tb.SOLVED
            break
        if h in seen:
            code = tb.CYCLE
            break
        seen.add(h)
        if lu.full:
            if not lu.factorize(basis):
                code = tb.NUMERICAL_FAILURE
                break
            x = lu.solve(q)
        else:
            lu.pivot(r, d)
        if pivots >= max_pivots:
            code = tb.MAX_PIVOTS
            break
        if bg.expired():  # the solve's deadline (contact_lcp.lcp.budget)
            code = tb.STOPPED
            break
        entering = tb.complement(leaving, n)
        d = lu.solve(_dense_column(A.indptr, A.indices, A.data, entering, a))
        tol = pivot_tol * tb.norm_inf(d)
        best, t_min, tiny = tb.min_ratio_row(x, d, tol, basis, z0)
        if best < 0:
            code = tb.NUMERICAL_FAILURE if tiny else tb.NO_SOLUTION
            break
        if lexicographic:
            m, r = tb.tied_rows(x, d, tol, tie_threshold, t_min, basis, z0, rows)
        else:
            r = best
        k = 0
        while r < 0:  # narrow the ties by the leading columns of B^-1 (kept up to date)
            col = lu.column(k)
            info["lexicographic_columns"] += 1
            m, best = _narrow(col, d, rows, m, tie_threshold)
            k += 1
            if m == 1 or k == n:
                r = best
            elif k == LEX_COLUMNS:  # then by the tied rows of B^-1, one solve each
                # (the columns already compared keep every tied row: the search goes on
                # where they left off)
                tied = rows[:m].copy()
                R = np.array([lu.row(i) for i in tied])
                info["lexicographic_rows"] += m
                r = tied[tb.lexicographic_narrow(d[tied], R, np.arange(m), m, tie_threshold)]
    if code == tb.SOLVED:
        if lu.factorize(basis):  # the answer from fresh factors (refines it)
            x = lu.solve(q)
            info["basis_residual"] = float(np.abs(lu.B @ x - q).max())
    else:
        info["reason"] = REASONS.get(code, "")
    info["factorizations"] = lu.factorizations
    info["lu_nnz"] = lu.lu_nnz
    z = np.zeros(n)
    zb = (basis >= n) & (basis < 2 * n)
    z[basis[zb] - n] = x[zb]
    info["final_basis"] = np.sort(basis[zb] - n)
    return MethodOutput(z, STATUS[code], pivots, info)
