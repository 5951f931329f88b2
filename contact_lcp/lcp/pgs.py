"""Projected Gauss-Seidel: the iterative baseline of game and robotics engines."""

import numpy as np

from contact_lcp.lcp import budget as bg
from contact_lcp.lcp.residual import raw_tolerance, row_certifies
from contact_lcp.lcp.result import LCPStatus, MethodOutput


def solve_pgs(M, q, *, max_iterations=1000, tolerance=None, omega=1.0, z0=None):
    """Projected Gauss-Seidel (successive over-relaxation with projection onto z >= 0).

    Converges for symmetric positive semi-definite ``M`` with a positive diagonal (and
    for strictly diagonally dominant ``M``); on the non-symmetric frictional contact LCP
    (zero diagonal in the friction-cone rows) it is not defined, and the status says so.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    max_iterations : int
        Sweeps before giving up with ``MAX_PIVOTS`` (one sweep counts as one pivot).
    tolerance : float, optional
        Stop when ``||min(z, w)||_inf`` falls below this, in the units of ``q``. Default:
        half of :func:`contact_lcp.lcp.residual.raw_tolerance` at the current ``z`` and
        then half of each row's own tolerance (``residual.row_certifies``), so that a
        converged PGS answer also passes the per-row certification of ``solve``.
    omega : float
        Relaxation factor in (0, 2).
    z0 : (n,) ndarray, optional
        Initial guess (projected onto z >= 0); default zero.

    Returns
    -------
    MethodOutput
        ``NUMERICAL_FAILURE`` with ``info['reason']`` when a diagonal entry is not positive.
    """
    if not 0.0 < omega < 2.0:
        raise ValueError(f"omega must lie in (0, 2); received {omega}")
    n = q.shape[0]
    diag = np.diag(M).copy()
    z = np.zeros(n) if z0 is None else np.maximum(np.asarray(z0, dtype=float), 0.0)
    if np.all(q >= 0) and z0 is None:
        return MethodOutput(z, LCPStatus.SOLVED, 0, {"iterations": 0})
    if np.any(diag <= 0.0):
        i = int(np.flatnonzero(diag <= 0.0)[0])
        return MethodOutput(
            z, LCPStatus.NUMERICAL_FAILURE, 0,
            {"reason": f"PGS needs a positive diagonal; M[{i}, {i}] = {diag[i]:g}"},
        )
    w = M @ z + q
    for it in range(1, max_iterations + 1):
        for i in range(n):
            zi = max(0.0, z[i] - omega * w[i] / diag[i])
            dz = zi - z[i]
            if dz != 0.0:
                w += dz * M[:, i]
                z[i] = zi
        err = float(np.max(np.abs(np.minimum(z, w))))
        tol = 0.5 * raw_tolerance(M, q, z) if tolerance is None else tolerance
        if err <= tol and (tolerance is not None or row_certifies(M, q, z, 0.5)):
            return MethodOutput(z, LCPStatus.SOLVED, it, {"iterations": it})
        if bg.expired():  # the solve's deadline (contact_lcp.lcp.budget)
            return MethodOutput(z, LCPStatus.TIME_LIMIT, it,
                                {"iterations": it, "reason": "the solve's time limit ran out"})
    return MethodOutput(
        z, LCPStatus.MAX_PIVOTS, max_iterations,
        {"iterations": max_iterations, "reason": f"no convergence in {max_iterations} sweeps"},
    )
