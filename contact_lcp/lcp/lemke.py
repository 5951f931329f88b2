"""Lemke's complementary pivot method with the minimum-index ratio rule.

Convention (Yamane & Nakamura 2008; Cottle, Pang & Stone 1992, sec. 4.4): the tableau is
``w = q + M z + c z0`` with covering vector ``c = 1``.

* Step 0: if ``q >= 0`` then ``z = 0`` (0 pivots). Otherwise ``z0`` enters and the row
  with the most negative ``q_i`` leaves (smallest index on ties): pivot 1.
* Step 1: the complement of the variable that just left enters.
* Step 2: the minimum-ratio test over rows with ``m'_i < 0`` in the entering column
  picks the leaving variable (smallest row index on ties). Stop when ``z0`` leaves.

The pivot engine is :mod:`contact_lcp.lcp.tableau`.
"""

import numpy as np

from contact_lcp.lcp import budget as bg
from contact_lcp.lcp import tableau as tb
from contact_lcp.lcp.polish import repaired
from contact_lcp.lcp.residual import row_certifies
from contact_lcp.lcp.result import LCPStatus, MethodOutput

#: Map from the kernels' status codes to LCPStatus.
STATUS = {
    tb.SOLVED: LCPStatus.SOLVED,
    tb.NO_SOLUTION: LCPStatus.NO_SOLUTION,
    tb.CYCLE: LCPStatus.CYCLE,
    tb.ERROR: LCPStatus.ERROR,
    tb.MAX_PIVOTS: LCPStatus.MAX_PIVOTS,
    tb.NUMERICAL_FAILURE: LCPStatus.NUMERICAL_FAILURE,
    tb.STOPPED: LCPStatus.TIME_LIMIT,
}

REASONS = {
    tb.NO_SOLUTION: "secondary ray: no row blocks the entering variable",
    tb.CYCLE: "a basis visited before came again",
    tb.MAX_PIVOTS: "pivot limit reached",
    tb.NUMERICAL_FAILURE: "only pivot elements below pivot_tol * ||d||_inf block",
    tb.STOPPED: "the solve's time limit ran out",
}


def default_max_pivots(n):
    """``max(1000, 50 n)``: Lemke usually needs O(n) pivots; the limit bounds the rest."""
    return max(1000, 50 * n)


def run_path(M, q, rule, delta, max_pivots, pivot_tol):
    """Step 0 then the complementary path; shared by lemke and lexicographic.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    rule : int
        ``tableau.RULE_MIN_INDEX`` or ``tableau.RULE_LEXICOGRAPHIC``.
    delta : float
        Tie threshold of the lexicographic rule (unused by the min-index rule).
    max_pivots : int or None
    pivot_tol : float

    Returns
    -------
    MethodOutput
    """
    n = q.shape[0]
    max_pivots = default_max_pivots(n) if max_pivots is None else int(max_pivots)
    if np.all(q >= 0.0):
        return MethodOutput(np.zeros(n), LCPStatus.SOLVED, 0, {"reason": "q >= 0"})
    code, pivots, last, z, res = bg.call(tb.lemke_run_stoppable, n, M, q, tb.zobrist_keys(n),
                                         rule, float(delta), float(pivot_tol), max_pivots)
    info = {"max_pivots": max_pivots}
    if code == tb.SOLVED:
        info["basis_residual"] = res
    elif ended_at_solution(M, q, code, z):
        info["reason"] = "z0 = 0 at the last basis: its point is a solution"
        info["ended"] = STATUS[code].name
        info["last_entering"] = int(last)
        code = tb.SOLVED
    else:
        info["reason"] = REASONS[code]
        info["last_entering"] = int(last)
    return MethodOutput(z, STATUS[code], int(pivots), info)


def solve_lemke(M, q, *, max_pivots=None, pivot_tol=tb.PIVOT_TOL):
    """Lemke's method, covering vector 1, minimum-ratio test with min-index ties.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
        Units of velocity [m/s] for contact LCPs; ``z`` is then in impulse [N.s].
    max_pivots : int, optional
        Pivot limit (Step 0 included); default ``max(1000, 50 n)``. Murty's example needs
        ``2^n`` pivots, so ``n = 16`` ends in ``MAX_PIVOTS`` by default.
    pivot_tol : float
        Entries ``d_i <= pivot_tol * ||d||_inf`` of the entering column are round-off and
        never block; when only such entries would block, the status is
        ``NUMERICAL_FAILURE`` (on exact data the ray is reported as ``NO_SOLUTION``).

    Returns
    -------
    MethodOutput
        ``z`` of the last basis; status SOLVED, NO_SOLUTION (secondary ray), CYCLE (a basis
        repeats: min-index Lemke can cycle on degenerate problems), MAX_PIVOTS or
        NUMERICAL_FAILURE; ``info['reason']`` on failure.
    """
    return run_path(M, q, tb.RULE_MIN_INDEX, 0.0, max_pivots, pivot_tol)


def certified_path(M, q, rule, delta, pivot_tol, max_pivots):
    """Lemke's path with ``rule``; ``(z, pivots, status code, ended)`` where SOLVED means
    the answer passed the certification test on these (equilibrated) data. A path that
    ended on a ray, a cycle or tiny pivots from a basis whose point certifies (z0 fell to
    0 on a degenerate pivot, as in :func:`run_path`) is SOLVED; ``ended`` then names how
    it ended (else None)."""
    n = q.shape[0]
    code, pivots, _, z, _ = bg.call(tb.lemke_run_stoppable, n, M, q, tb.zobrist_keys(n), rule,
                                    delta, pivot_tol, max_pivots)
    ended = None
    if code == tb.SOLVED:
        if not certifies(M, q, z):
            z2 = repaired(M, q, z)  # (a row missed by round-off; module polish)
            if z2 is None:
                code = tb.ERROR
            else:
                z = z2
    elif ended_at_solution(M, q, code, z):
        ended, code = STATUS[code].name.lower(), tb.SOLVED
    return z, int(pivots), code, ended


def ended_at_solution(M, q, code, z):
    """Whether a path that ended with ``code`` (not SOLVED) left a solution behind: z0
    fell to 0 on a degenerate pivot and stayed basic (its row did not block the next
    entering column), so the path ran on to a ray, a cycle or tiny pivots from a basis
    whose point ``z`` is already complementary and feasible (certified here)."""
    return code != tb.SOLVED and certifies(M, q, z)


def certifies(M, q, z):
    """Whether ``z`` passes the per-row certification test on these (equilibrated) data
    (:func:`contact_lcp.lcp.residual.row_certifies`)."""
    return row_certifies(M, q, z)


def path_limit(n, info, budget, capped=True):
    """The pivot limit of the next Lemke path: ``max(1000, 50 n)``, or what the paths
    recorded in ``info['path_pivots']`` left of ``budget`` (None: no budget) when that is
    less (or, ``capped=False``, in any case); 0 when it is spent, recorded as
    ``budget:spent`` in ``info['paths']``."""
    limit = default_max_pivots(n)
    if budget is not None:
        left = int(budget) - info.get("path_pivots", 0)
        limit = max(min(limit, left) if capped else left, 0)
        if limit == 0:
            info.setdefault("paths", []).append("budget:spent")
    return limit


def lemke_paths(M, q, pivot_tol, info, budget=None):
    """The lexicographic then the min-index Lemke path; the first certified answer or
    None. Their outcomes are appended to ``info['paths']``, their pivots added to
    ``info['path_pivots']``; with a ``budget`` that count (from whatever paths ran before)
    stays within it: a path gets what is left, and none starts once it is spent."""
    for name, rule, delta in (("lexicographic", tb.RULE_LEXICOGRAPHIC, 0.0),
                              ("lemke", tb.RULE_MIN_INDEX, 0.0)):
        if bg.expired():
            info.setdefault("paths", []).append("time:spent")
            return None
        max_pivots = path_limit(q.shape[0], info, budget)
        if max_pivots == 0:
            return None
        z, pivots, code, ended = certified_path(M, q, rule, float(delta), float(pivot_tol),
                                                max_pivots)
        info.setdefault("paths", []).append(f"{name}:{STATUS[code].name.lower()}")
        info["path_pivots"] = info.get("path_pivots", 0) + pivots
        if ended is not None:
            info["path_ended"] = ended
        if code == tb.SOLVED:
            return MethodOutput(z, LCPStatus.SOLVED, pivots, dict(info, nodes=0))
    return None
