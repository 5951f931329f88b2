"""The kernel of Drumwright's modified principal pivoting method (S4, Alg. 1) for PSD
contact LCPs: :func:`run_ppm`, without a fallback. Its entry point as an LCP method is
:func:`contact_lcp.lcp.ppm.solve_ppm`; the robust method runs it on symmetric LCPs
(:mod:`contact_lcp.lcp.symmetric`).

The method keeps the set ``beta`` of indices whose ``z_i`` may be positive (the paper's
non-basic set), ordered as they entered. Each pass solves the principal block
``M[beta, beta] z_beta = -q_beta`` from an incrementally updated Cholesky factor, forms
``w = M[:, beta] z_beta + q`` and then

* if some ``w_i < 0`` (``i`` outside ``beta``), the most negative enters ``beta``; if
  moreover some ``z_j < 0`` in the *same* solve, the most negative leaves;
* else if some ``z_j < 0``, the most negative leaves;
* else ``(z, w)`` is the solution.

It starts from ``beta = {argmin q}`` (``z = 0`` if ``q >= 0``). On a Delassus matrix
``G = N K N'`` of rank ``m`` (S4, Theorem 1) a solution needs at most ``m`` positive
impulses, so every factor is at most ``m x m`` whatever the number of contacts; a pivot
costs O(k^2) for the factor and O(n k) for ``w``.

The index that leaves is taken from the position of the smallest ``z_beta`` entry *before*
``beta`` changes. Two peers keep ``beta`` sorted and read that position after inserting the
entering index, which removes the wrong variable whenever the entering index sorts before
it (a reproduction failed on about 19 % of random PSD problems); ``test_lcp_ppm.py`` holds
a property test against that.

Two additions make it end on PSD matrices where Alg. 1 alone stalls, both measured on
random rank-deficient PSD problems with planted solutions (12 000 problems, n < 60):

* **Dependent entering index.** When the index that should enter makes the block
  singular (its row is a combination of beta's, which happens with an inconsistent ``q``,
  e.g. a stabilization bias on redundant contacts), the direction that raises ``z_i``
  and keeps ``w`` fixed lowers the QP objective; it is followed until some ``z_j`` of beta
  reaches zero, and ``j`` and ``i`` are exchanged. If nothing blocks it the LCP is
  infeasible (``NO_SOLUTION``). Without it 31 % of those problems with a random ``q``
  stopped on a singular block.
* **Anti-cycling.** Alg. 1's simultaneous enter-and-leave can revisit a set (1 problem in
  3000); on the first repeat the method switches to Murty's least-index rule (one flip
  per pass). With it 12 000 of 12 000 were solved.
"""

import numpy as np
from numba import njit

from contact_lcp.lcp import budget as bg
from contact_lcp.lcp import tableau as tb
from contact_lcp.lcp.cholesky import back_substitute, forward_substitute
from contact_lcp.lcp.residual import certification_tolerance
from contact_lcp.lcp.result import LCPStatus


# Kernel status codes (mapped to LCPStatus by _STATUS).
(_SOLVED, _CYCLE, _MAX_PIVOTS, _SINGULAR, _INFEASIBLE, _INACCURATE, _EXCHANGE,
 _STOPPED) = range(8)
_STATUS = {_SOLVED: LCPStatus.SOLVED, _CYCLE: LCPStatus.CYCLE,
           _MAX_PIVOTS: LCPStatus.MAX_PIVOTS, _SINGULAR: LCPStatus.NUMERICAL_FAILURE,
           _INFEASIBLE: LCPStatus.NO_SOLUTION, _INACCURATE: LCPStatus.NUMERICAL_FAILURE,
           _EXCHANGE: LCPStatus.NUMERICAL_FAILURE, _STOPPED: LCPStatus.TIME_LIMIT}
_STATS = ("swaps", "shifted_swaps", "exchanges", "least_index")
# The named slots of the kernel's statistics array.
SWAPS, SHIFTED_SWAPS, EXCHANGES, LEAST_INDEX = range(len(_STATS))


@njit(cache=True)
def _append(L, k, M, beta, i, singular_tol):
    """Try to add index ``i`` as row ``k`` of the factor of ``M[beta, beta]``."""
    c = M[i, i]
    if not c > 0.0:
        return False
    d2 = c
    for r in range(k):
        s = M[beta[r], i]
        for j in range(r):
            s -= L[r, j] * L[k, j]
        L[k, r] = s / L[r, r]
        d2 -= L[k, r] * L[k, r]
    if not d2 > singular_tol * c:
        return False
    L[k, k] = np.sqrt(d2)
    return True


@njit(cache=True)
def _remove(L, k, p, beta):
    """Remove position ``p`` from beta (size ``k``) and its factor (delete + rank-1 update)."""
    x = L[p + 1:k, p].copy()
    for r in range(p, k - 1):
        beta[r] = beta[r + 1]
        for j in range(k):
            L[r, j] = L[r + 1, j]
    for r in range(k):
        for j in range(p, k - 1):
            L[r, j] = L[r, j + 1]
        L[r, k - 1] = 0.0
    for j in range(k):
        L[k - 1, j] = 0.0
    for j in range(p, k - 1):
        t = x[j - p]
        if t == 0.0:
            continue
        rr = np.sqrt(L[j, j] ** 2 + t * t)
        cth, sth = rr / L[j, j], t / L[j, j]
        L[j, j] = rr
        for r in range(j + 1, k - 1):
            L[r, j] = (L[r, j] + sth * x[r - p]) / cth
            x[r - p] = cth * x[r - p] - sth * L[r, j]


@njit(cache=True)
def _block_solve(L, k, rhs):
    """``M[beta, beta]^-1 rhs`` from the factor (forward then back substitution)."""
    return back_substitute(L, forward_substitute(L, rhs, k), k)


@njit(cache=True)
def ppm_kernel(M, q, beta0, max_pivots, singular_tol, keys, norm_M, norm_q):
    """:func:`ppm_kernel_stoppable` that nothing stops."""
    return ppm_kernel_stoppable(M, q, beta0, max_pivots, singular_tol, keys, norm_M, norm_q,
                             np.zeros(1, dtype=np.int64))


@njit(cache=True, nogil=True)
def ppm_kernel_stoppable(M, q, beta0, max_pivots, singular_tol, keys, norm_M, norm_q, stop):
    """The modified PPM. Returns ``(status, z, beta, pivots, stats, culprit)``; ``stop[0]``
    set ends it before the next pivot (``_STOPPED``; nogil, for
    :func:`contact_lcp.lcp.budget.call`).

    The sign tolerance of a pass is half the certification tolerance of
    :func:`contact_lcp.lcp.residual.default_tolerance` at the current ``z``:
    :func:`contact_lcp.lcp.residual.certification_tolerance` ``(n, norm_M, norm_q,
    ||z||_inf) + 1e-14``.
    """
    n = q.shape[0]
    L = np.zeros((n, n))
    beta = np.empty(n, dtype=np.int64)
    in_beta = np.zeros(n, dtype=np.bool_)
    z = np.zeros(n)
    stats = np.zeros(4, dtype=np.int64)
    tol = 0.5 * (certification_tolerance(n, norm_M, norm_q, 0.0) + 1e-14)
    if q.min() >= -tol:
        return _SOLVED, z, beta[:0], 0, stats, -1
    k = np.int64(0)  # not a literal 0: _append compiled once (docs/architecture.md)
    for i in beta0:
        if not in_beta[i] and _append(L, k, M, beta, i, singular_tol):
            beta[k] = i
            in_beta[i] = True
            k += 1
    if k == 0:
        i = np.argmin(q)
        if not _append(L, k, M, beta, i, singular_tol):  # (k = 0)
            return _SINGULAR, z, beta[:0], 0, stats, i
        beta[0] = i
        in_beta[i] = True
        k = 1
    pivots = k
    key = np.int64(0)
    for r in range(k):
        key ^= keys[beta[r]]
    # the sets beta seen, by their hashes: the robust search's table (a numba set would
    # compile its own hash table into this kernel, seconds on a cold cache)
    seen, fill = np.zeros(64, dtype=np.int64), np.zeros(1, dtype=np.int64)
    seen, _ = tb.hash_insert(seen, fill, key)
    first = True
    while True:
        if not first:
            key = np.int64(0)
            for r in range(k):
                key ^= keys[beta[r]]
            seen, fresh = tb.hash_insert(seen, fill, key)
            if not fresh:
                if stats[LEAST_INDEX]:
                    return _CYCLE, z, beta[:k].copy(), pivots, stats, -1
                stats[LEAST_INDEX] = 1  # from now on Murty's least-index rule
                seen[:] = 0
                fill[0] = 0
                seen, _ = tb.hash_insert(seen, fill, key)
        first = False
        rhs = np.empty(k)
        for r in range(k):
            rhs[r] = -q[beta[r]]
        zb = _block_solve(L, k, rhs)
        z[:] = 0.0
        norm_z = 0.0
        for r in range(k):
            z[beta[r]] = zb[r]
            norm_z = max(norm_z, abs(zb[r]))
        w = q.copy()
        for r in range(k):
            for i in range(n):
                w[i] += M[i, beta[r]] * zb[r]
        tol = 0.5 * (certification_tolerance(n, norm_M, norm_q, norm_z) + 1e-14)
        i, wmin = -1, 0.0
        for j in range(n):
            if not in_beta[j] and (i < 0 or w[j] < wmin):
                i, wmin = j, w[j]
        j = np.argmin(zb)
        enter = i >= 0 and wmin < -tol
        leave = zb[j] < -tol
        if stats[LEAST_INDEX] and (enter or leave):
            for f in range(n):  # least-index rule: flip the smallest wrong index
                if (in_beta[f] and z[f] < -tol) or (not in_beta[f] and w[f] < -tol):
                    break
            enter, leave = not in_beta[f], in_beta[f]
            if leave:
                for r in range(k):
                    if beta[r] == f:
                        j = r
            else:
                i = f
        if not enter and not leave:
            err = 0.0
            for f in range(n):
                err = max(err, abs(min(z[f], w[f])))
            if err > 2.0 * tol:  # the block solve itself was inaccurate
                return _INACCURATE, z, beta[:k].copy(), pivots, stats, -1
            return _SOLVED, z, beta[:k].copy(), pivots, stats, -1
        if pivots >= max_pivots:
            return _MAX_PIVOTS, z, beta[:k].copy(), pivots, stats, -1
        if stop[0] != 0:
            return _STOPPED, z, beta[:k].copy(), pivots, stats, -1
        left = -1
        if leave:  # j is a position in beta as it was solved: use it before beta changes
            left = beta[j]
            in_beta[left] = False
            _remove(L, k, j, beta)
            k -= 1
            pivots += 1
        if not enter:
            continue
        if _append(L, k, M, beta, i, singular_tol):
            beta[k] = i
            in_beta[i] = True
            k += 1
            pivots += 1
            if leave:
                stats[SWAPS] += 1
                stats[SHIFTED_SWAPS] += i < left
        elif not leave:
            # i depends on beta: the direction z_i = t, z_beta -= t c (c = block^-1 M[beta, i])
            # keeps w and lowers the QP objective at the rate w_i < 0; follow it until a
            # z_j reaches zero and exchange j for i (none: the LCP is infeasible).
            col = np.empty(k)
            for r in range(k):
                col[r] = M[beta[r], i]
            c = _block_solve(L, k, col)
            cmax = 0.0
            for r in range(k):
                cmax = max(cmax, abs(c[r]))
            jb, best = np.int64(-1), np.inf  # not a literal: _remove compiled once
            for r in range(k):
                if c[r] > 1e-12 * max(1.0, cmax):
                    ratio = max(zb[r], 0.0) / c[r]
                    if ratio < best:
                        jb, best = r, ratio
            if jb < 0:
                return _INFEASIBLE, z, beta[:k].copy(), pivots, stats, i
            in_beta[beta[jb]] = False
            _remove(L, k, jb, beta)
            k -= 1
            if not _append(L, k, M, beta, i, singular_tol):
                return _EXCHANGE, z, beta[:k].copy(), pivots, stats, i
            beta[k] = i
            in_beta[i] = True
            k += 1
            pivots += 2
            stats[EXCHANGES] += 1


def run_ppm(M, q, beta0, max_pivots, singular_tol):
    """The kernel, with its status and statistics as ``(z, status, pivots, info)``."""
    n = q.shape[0]
    norm_M = float(np.abs(M).sum(axis=1).max())
    norm_q = float(np.abs(q).max())
    code, z, beta, pivots, stats, culprit = bg.call(
        ppm_kernel_stoppable, n, M, q, np.asarray(beta0, dtype=np.int64), int(max_pivots),
        float(singular_tol), tb.zobrist_keys(n), norm_M, norm_q)
    info = {name: int(x) for name, x in zip(_STATS, stats)}
    info["least_index"] = bool(stats[LEAST_INDEX])
    info["beta"] = beta.tolist()
    reason = {
        _CYCLE: "the set beta repeated",
        _MAX_PIVOTS: f"pivot limit {max_pivots}",
        _SINGULAR: f"diagonal M[{culprit}, {culprit}] is not positive",
        _INFEASIBLE: f"index {culprit} depends on beta and nothing blocks its descent: the "
                     "PSD LCP is infeasible",
        _INACCURATE: "block solve residual above the tolerance",
        _EXCHANGE: f"exchanging index {culprit} left a singular block",
        _STOPPED: "the solve's time limit ran out",
    }.get(code)
    if reason:
        info["reason"] = reason
    return z, _STATUS[code], int(pivots), info
