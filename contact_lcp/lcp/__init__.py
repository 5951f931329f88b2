"""Pure numerical LCP solvers (numpy, scipy, numba; no Pinocchio, coal or ROS).

``solve(M, q, method=...)`` is the one entry point; it validates the data, runs one
method and certifies the answer with :func:`lcp_error`. ``solve_with_retries`` runs a
listed sequence of further attempts when that answer does not certify
(:mod:`contact_lcp.lcp.attempts`).
"""

from contact_lcp.lcp.residual import default_tolerance, lcp_error
from contact_lcp.lcp.result import LCPResult, LCPStatus, MethodOutput
from contact_lcp.lcp.solve import METHODS, solve
from contact_lcp.lcp.attempts import Attempt, solve_with_retries, standard_attempts

__all__ = [
    "Attempt", "LCPResult", "LCPStatus", "METHODS", "MethodOutput", "default_tolerance",
    "lcp_error", "solve", "solve_with_retries", "standard_attempts",
]
