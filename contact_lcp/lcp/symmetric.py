"""The symmetric LCP's path of the robust method: the modified principal pivoting
method first (see :func:`symmetric_path`)."""

import numpy as np
from numba import njit

from contact_lcp.lcp.polish import repaired
from contact_lcp.lcp.ppm_kernel import run_ppm
from contact_lcp.lcp.residual import row_certifies
from contact_lcp.lcp.result import LCPStatus, MethodOutput


@njit(cache=True)
def _is_symmetric(M):
    """``M == M'`` exactly, stopping at the first pair that differs (a frictional LCP's
    friction rows differ at once)."""
    n = M.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if M[i, j] != M[j, i]:
                return False
    return True


def symmetric_path(M, q, singular_tol, info, key="paths"):
    """For a symmetric ``M`` (a frictionless contact LCP: positive semidefinite, and
    degenerate when contacts are redundant), the modified principal pivoting method
    (:mod:`contact_lcp.lcp.ppm_kernel`), which keeps its principal blocks nonsingular where
    Lemke's paths cycle on ties (a 4-3-2-1 box pyramid's frictionless LCP, n = 68 of
    rank 30: both Lemke variants cycle, the search spends 3300 nodes, the PPM certifies
    in 36 pivots). Returns its certified answer or None; appends ``'ppm:<status>'`` to
    ``info[key]`` and adds its pivots to ``info[key + '_pivots']`` (``'path_pivots'`` for
    the default key). None at once for a matrix that is not symmetric."""
    if not _is_symmetric(M):
        return None
    n = q.shape[0]
    z, status, pivots, _ = run_ppm(M, q, [], max(100, 10 * n), singular_tol)
    if status is LCPStatus.SOLVED and not row_certifies(M, q, z):
        z = repaired(M, q, z)  # (a row missed by round-off; module polish)
        if z is None:
            z, status = np.zeros(n), LCPStatus.ERROR
    info.setdefault(key, []).append(f"ppm:{status.name.lower()}")
    count = "path_pivots" if key == "paths" else key + "_pivots"
    info[count] = info.get(count, 0) + pivots
    if status is not LCPStatus.SOLVED:
        return None
    return MethodOutput(z, LCPStatus.SOLVED, pivots, dict(info, nodes=0))
