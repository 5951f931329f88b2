"""The frictionless contact model: normal impulses only (one LCP of size k + l)."""

import numpy as np

from contact_lcp.contact.base import ContactModel
from contact_lcp.contact.ladder import Rungs, lcp_rung
from contact_lcp.contact.lcp_builder import build_frictionless_lcp
from contact_lcp.contact.min_norm import redistributed
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport


def solve_frictionless(problem, method, options):
    """Build and solve the frictionless LCP of ``problem`` (an LCP rung of
    :mod:`contact_lcp.contact.ladder`); returns ``(lcp, result)``."""
    lcp = build_frictionless_lcp(problem.G, problem.u, num_contacts=problem.num_contacts,
                                 num_unilateral=problem.num_limits, normal_bias=problem.bias)
    return lcp, lcp_rung(lcp.M, lcp.q, method, options)


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
    """Frictionless contact: ``w = N'GN a + N'u + bias`` (k + l unknowns).

    Its ladder: the frictionless LCP (one LCP rung: the method and the standard further
    attempts), else a safe stop."""

    name = "frictionless"
    FORCE_DISTRIBUTIONS = ("any", "min_norm")

    def solve(self, problem, guess=None):
        solution = self._solve(problem)
        if self.settings.force_distribution == "min_norm":
            return redistributed(problem, solution, self.name, 0)
        return solution

    def _solve(self, problem):
        s = self.settings
        rungs = Rungs()
        lcp, res = solve_frictionless(problem, s.method, s.solver_options)
        rungs.add("frictionless", res)
        if not res.success:
            rungs.add("safe_stop", "applied")
        fields = dict(status=res.status, pivots=res.pivots, solves=1,
                      failures=int(not res.success),
                      info=rungs.into({"lcp_size": lcp.q.shape[0]}))
        if res.success:
            return ContactSolution(frictionless_impulse(problem, res.z), SolveReport(
                Outcome.SOLVED, applied=self.name, method=s.method, certified=True, **fields))
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, applied="none",
                                       method="none", certified=False, fallbacks=2, **fields))
