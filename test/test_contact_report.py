"""The step report's pivot count: every pivot a solve took, the failed paths' included."""

import numpy as np

from contact_lcp.contact.report import tally
from contact_lcp.lcp import LCPResult, LCPStatus, solve


def _result(status, pivots, **info):
    return LCPResult(np.zeros(2), np.zeros(2), status, "robust", pivots, 0.0,
                     {"tol": 1e-9, **info})


def test_failed_paths_and_retries_count_in_a_steps_pivots():
    """robust's ``pivots`` is its answer's path only; the paths that failed before it
    (``path_pivots`` holds all of them) and solve()'s retries (``attempt_pivots``) are
    pivots the step took too (the pour's step at t = 0.96 s reported 539 741 pivots where
    it walked 800 000)."""
    solved = _result(LCPStatus.SOLVED, 30, path_pivots=130, attempt_pivots=5)
    failed = _result(LCPStatus.MAX_PIVOTS, 40)
    assert tally([solved, failed, None]) == (135 + 40, 2, 1)


def test_a_solve_without_failed_paths_counts_its_pivots_once():
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    res = solve(M, np.array([-1.0, -1.0]), method="robust")
    assert res.success and tally([res]) == (res.pivots, 1, 0)
