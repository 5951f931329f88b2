"""Murty's principal pivoting method with the least-index rule.

Murty (1988), ch. 4 (the "Bard-type" scheme): keep the complementary set ``alpha`` of
indices whose ``z_i`` are basic, solve ``M[alpha, alpha] z_alpha = -q_alpha``, set
``w = M z + q``, and flip the least index ``i`` with ``z_i < 0`` (``i`` in ``alpha``) or
``w_i < 0`` (``i`` not in ``alpha``). It terminates on every P-matrix (possibly after
``2^n`` flips). On the rank-deficient Delassus matrices of redundant contact the principal
blocks become singular and the method has no next step (Enzenhoefer, Teichmann &
Kovecses): that is reported as ``NUMERICAL_FAILURE`` naming the block.

Each flip factorises the block anew (O(k^3) for ``k = |alpha|``): this is the reference
principal pivoting method, not a fast one.
"""

import warnings

import numpy as np
import scipy.linalg

from contact_lcp.lcp import budget as bg
from contact_lcp.lcp.residual import raw_tolerance
from contact_lcp.lcp.result import LCPStatus, MethodOutput


def _block_solve(M, q, idx, singular_tol):
    """``z`` with ``z[idx] = -M[idx, idx]^-1 q[idx]``, or ``(None, rcond)`` if singular."""
    n = q.shape[0]
    z = np.zeros(n)
    if idx.size == 0:
        return z, 1.0
    block = M[np.ix_(idx, idx)]
    with warnings.catch_warnings():  # a singular block is reported through rcond
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        lu, piv = scipy.linalg.lu_factor(block, check_finite=False)
    anorm = float(np.max(np.sum(np.abs(block), axis=0)))
    if anorm == 0.0:
        return None, 0.0
    rcond, _ = scipy.linalg.lapack.dgecon(lu, anorm, norm="1")
    if not rcond > singular_tol:
        return None, float(rcond)
    z[idx] = scipy.linalg.lu_solve((lu, piv), -q[idx], check_finite=False)
    return z, float(rcond)


def solve_murty(M, q, *, max_pivots=None, singular_tol=1e-12):
    """Murty's least-index principal pivoting method.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
        Velocities [m/s] for contact LCPs; ``z`` is then impulses [N.s].
    max_pivots : int, optional
        Flip limit; default ``max(1000, 50 n)``.
    singular_tol : float
        A principal block whose reciprocal condition number (LAPACK ``dgecon``, 1-norm)
        is at most this is singular: ``NUMERICAL_FAILURE``.

    Returns
    -------
    MethodOutput
        ``pivots`` counts flips. Signs are tested against half the certification
        tolerance :func:`contact_lcp.lcp.residual.raw_tolerance`, so a SOLVED answer
        certifies. CYCLE when a set ``alpha`` comes back (possible off P-matrices);
        ``info['alpha']`` is the final set, ``info['reason']`` explains a failure.
    """
    n = q.shape[0]
    max_pivots = max(1000, 50 * n) if max_pivots is None else int(max_pivots)
    alpha = np.zeros(n, dtype=bool)
    seen = set()
    z = np.zeros(n)
    for pivots in range(max_pivots + 1):
        idx = np.flatnonzero(alpha)
        key = alpha.tobytes()
        if key in seen:
            return MethodOutput(z, LCPStatus.CYCLE, pivots, {
                "alpha": idx.tolist(), "reason": "the complementary set alpha repeated"})
        seen.add(key)
        z_new, rcond = _block_solve(M, q, idx, singular_tol)
        if z_new is None:
            return MethodOutput(z, LCPStatus.NUMERICAL_FAILURE, pivots, {
                "alpha": idx.tolist(), "rcond": rcond,
                "reason": f"principal block M[alpha, alpha] with alpha = {idx.tolist()} is "
                          f"singular (reciprocal condition {rcond:.3g} <= {singular_tol:g})"})
        z = z_new
        w = M @ z + q
        tol = 0.5 * raw_tolerance(M, q, z)
        bad = np.flatnonzero(np.where(alpha, z, w) < -tol)
        if bad.size == 0:
            return MethodOutput(z, LCPStatus.SOLVED, pivots,
                                {"alpha": idx.tolist()})
        if pivots == max_pivots:
            break
        if bg.expired():  # the solve's deadline (contact_lcp.lcp.budget)
            return MethodOutput(z, LCPStatus.TIME_LIMIT, pivots, {
                "alpha": idx.tolist(), "reason": "the solve's time limit ran out"})
        alpha[bad[0]] = not alpha[bad[0]]
    return MethodOutput(z, LCPStatus.MAX_PIVOTS, max_pivots, {
        "alpha": np.flatnonzero(alpha).tolist(), "reason": f"flip limit {max_pivots} reached"})
