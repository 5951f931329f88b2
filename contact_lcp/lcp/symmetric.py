"""Whether an LCP's matrix is symmetric: a frictionless contact LCP (positive
semidefinite), on which the modified principal pivoting method is tried before the
robust search (:func:`contact_lcp.lcp.attempts.standard_attempts`)."""

import numpy as np
from numba import njit


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


def is_symmetric(M):
    """``M == M'`` exactly (a square float array). The equilibration of
    :func:`contact_lcp.lcp.solve` multiplies by powers of two, exactly, with the same
    factor for row and column ``i`` of a symmetric matrix, so the verdict is the same on
    the data a method pivots on."""
    M = np.ascontiguousarray(M, dtype=float)
    return M.ndim == 2 and M.shape[0] == M.shape[1] and bool(_is_symmetric(M))
