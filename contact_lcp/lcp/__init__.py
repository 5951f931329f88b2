"""Pure numerical LCP solvers (numpy, scipy, numba; no Pinocchio, coal or ROS).

``solve(M, q, method=...)`` is the one entry point; it validates the data, dispatches
to the method and certifies the answer with :func:`lcp_error`.
"""

from contact_lcp.lcp.residual import default_tolerance, lcp_error
from contact_lcp.lcp.result import LCPResult, LCPStatus, MethodOutput
from contact_lcp.lcp.solve import METHODS, solve

__all__ = [
    "LCPResult", "LCPStatus", "METHODS", "MethodOutput", "default_tolerance", "lcp_error", "solve",
]
