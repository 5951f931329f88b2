"""Lemke's method with the lexicographic ratio test and a tie threshold.

The lexicographic rule (Cottle, Pang & Stone 1992, sec. 4.9) compares the tied rows of
``[qbar, B^-1] / d_i`` column by column; in exact arithmetic it never revisits a basis,
so the method cannot cycle. In floating point, "tied" needs a threshold ``delta``: rows
whose ratio is within ``delta`` of the minimum tie, and the same ``delta`` is used in
every column comparison. The seed compares ``delta = 0, 1e-8, 1e-6, 1e-4``.

Step 0 departs from plain Lemke in one point: among rows whose ``q_i`` is within
``delta`` of the most negative, the *largest* index leaves. That is the lexicographic
minimum of the rows ``(q_i, e_i)`` and the choice that leaves every row of
``[qbar, B^-1]`` lexicographically positive after the pivot (the smallest index would
make the rows of the other tied indices lexicographically negative).
"""

from contact_lcp.lcp import tableau as tb
from contact_lcp.lcp.lemke import run_path


def solve_lexicographic(M, q, *, tie_threshold=0.0, max_pivots=None,
                        pivot_tol=tb.PIVOT_TOL):
    """Lexicographic Lemke, covering vector 1.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
        Units of velocity [m/s] for contact LCPs.
    tie_threshold : float
        ``delta`` >= 0, absolute, in the units of the ratios (the entering variable,
        e.g. impulses [N.s]) and of the entries of ``B^-1 / d_i``. 0 means exact ties.
    max_pivots : int, optional
        Pivot limit (Step 0 included); default ``max(1000, 50 n)``.
    pivot_tol : float
        Entries ``d_i <= pivot_tol * ||d||_inf`` never block (see
        :func:`contact_lcp.lcp.lemke.solve_lemke`).

    Returns
    -------
    MethodOutput
        As Lemke's; a ``CYCLE`` here means round-off (or a ``delta`` too coarse) broke the
        lexicographic order.
    """
    if not tie_threshold >= 0.0:
        raise ValueError(f"tie_threshold must be >= 0; received {tie_threshold}")
    return run_path(M, q, tb.RULE_LEXICOGRAPHIC, tie_threshold, max_pivots, pivot_tol)
