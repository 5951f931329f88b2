"""The frictionless contact model: normal impulses only (one LCP of size k + l)."""

import numpy as np

from contact_lcp.contact.base import ContactModel
from contact_lcp.contact.lcp_builder import build_frictionless_lcp
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport
from contact_lcp.lcp import solve


def solve_frictionless(problem, method, options):
    """Build and solve the frictionless LCP of ``problem``; returns ``(lcp, result)``."""
    lcp = build_frictionless_lcp(problem.G, problem.u, num_contacts=problem.num_contacts,
                                 num_unilateral=problem.num_limits, normal_bias=problem.bias)
    return lcp, solve(lcp.M, lcp.q, method, **options)


def frictionless_impulse(problem, a):
    """Impulses in the problem's rows from normal impulses ``a`` (k + l,)."""
    f = np.zeros(problem.num_rows)
    f[problem.normal_rows] = a
    return f


def safe_stop(problem, report_fields, guess=None):
    """A solution with no impulse, reported as a safe stop (``guess``: the next one)."""
    return ContactSolution(np.zeros(problem.num_rows), SolveReport(**report_fields),
                           guess=guess)


class FrictionlessModel(ContactModel):
    """Frictionless contact: ``w = N'GN a + N'u + bias`` (k + l unknowns)."""

    name = "frictionless"

    def solve(self, problem, guess=None):
        s = self.settings
        lcp, res = solve_frictionless(problem, s.method, s.solver_options)
        fields = dict(status=res.status, pivots=res.pivots, solves=1,
                      failures=int(not res.success), info={"lcp_size": lcp.q.shape[0]})
        if res.success:
            return ContactSolution(frictionless_impulse(problem, res.z), SolveReport(
                Outcome.SOLVED, applied=self.name, method=s.method, certified=True, **fields))
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, applied="none",
                                       method="none", certified=False, fallbacks=2, **fields))
