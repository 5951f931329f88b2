"""Drumwright's modified principal pivoting method (S4, Alg. 1) for PSD contact LCPs, as
an LCP method (``solve(M, q, "ppm")``); the algorithm and its kernel are in
:mod:`contact_lcp.lcp.ppm_kernel`.

When the method ends without an answer it says so; another method on the same LCP is the
caller's choice (:func:`contact_lcp.lcp.attempts.standard_attempts` lists the robust
search after it, ``info['fallback']``).
"""

import numpy as np

from contact_lcp.lcp.ppm_kernel import run_ppm
from contact_lcp.lcp.result import MethodOutput


def solve_ppm(M, q, *, initial_basis=None, max_pivots=None, singular_tol=1e-10):
    """Modified principal pivoting method (Drumwright, S4 Alg. 1).

    Parameters
    ----------
    M : (n, n) ndarray
        Symmetric positive semi-definite (a normal-row Delassus matrix [s/kg]); other
        matrices are accepted but the method may then fail.
    q : (n,) ndarray
        Velocities [m/s] for contact LCPs; ``z`` is then impulses [N.s].
    initial_basis : sequence of int, optional
        Warm start: indices to put in ``beta`` first (e.g. the previous step's loaded
        contacts); dependent ones are skipped. Counted as one pivot each.
    max_pivots : int, optional
        Pivot limit; default ``max(100, 10 n)``.
    singular_tol : float
        Relative pivot below which a principal block counts as singular (see
        :class:`contact_lcp.lcp.cholesky.IncrementalCholesky`).

    Returns
    -------
    MethodOutput
        ``pivots``: PPM pivots (enter or leave). ``info``: ``beta`` the final set;
        ``swaps`` the passes in which one index entered and another left
        (``shifted_swaps`` of them with the entering index the smaller); ``exchanges``
        dependent indices swapped in along a null direction; ``least_index`` whether a
        repeated set switched to Murty's rule; ``reason`` of a failure.
    """
    n = q.shape[0]
    max_pivots = max(100, 10 * n) if max_pivots is None else int(max_pivots)
    beta0 = [] if initial_basis is None else [int(i) for i in np.unique(initial_basis)]
    if any(not 0 <= i < n for i in beta0):
        raise ValueError(f"initial_basis: expected indices in [0, {n}), got {beta0}")
    z, status, pivots, info = run_ppm(M, q, beta0, max_pivots, singular_tol)
    return MethodOutput(z, status, pivots, info)
