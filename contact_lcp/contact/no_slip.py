"""No-slip contact (Drumwright, S4 section VI): zero tangential velocity where touching.

At every touching contact the tangential velocity at the end of the step is zero,
``T v+ = 0``, whatever the normal impulse (infinite friction, impulsive: a velocity-level
model, so no Painleve-type inconsistency). That is an MLCP: the tangential rows are
equalities with free impulses, the normal rows (contacts, then joint limits) are
complementary. With redundant contacts (a sole with many points, a grasp) the tangential
rows are dependent, or nearly so (a face a few um out of its plane), and ``T K T'`` is
singular or ill-conditioned: the free impulses are eliminated through the velocities the
rows leave free (:mod:`contact_lcp.contact.no_slip_space`), which holds every direction
the rows fix down to ``singular_tol`` without the Schur complement's loss of precision,
leaving a symmetric PSD LCP on the normal rows only (``k + l`` unknowns), solved by the
scene's method (``ppm`` suits it). When the tangential impulses exceed what the step
can need (a vertex of the normal answer loading one corner of a nearly flat face: see
``bound_factor``) the step applies the least-norm impulse of the answer's face
(:mod:`contact_lcp.contact.min_norm_normal`); otherwise it applies the answer, and under
``force_distribution: min_norm`` (the default) the forces read are that face's
least-norm impulse, computed when first read (the same velocities). A
contact the answer loads gets rows even if it does not touch yet (it closes its gap in
the step; :mod:`contact_lcp.contact.normal_rows`).

Scene options (``contact.options``)
-----------------------------------
touch_distance, release_speed : float
    Which contacts do not slip (see :mod:`contact_lcp.contact.normal_rows`): those whose
    gap is at most ``touch_distance`` [m] (default 1e-4), except those left unloaded and
    separating faster than ``release_speed`` [m/s] (default 1e-6).
singular_tol : float
    A direction of the tangential rows (a singular value of ``T R``, ``K = R R'``) is
    held when its singular value exceeds this fraction of the largest (default 1e-10);
    below, it is left free, and the rows slip along it by at most that fraction of the
    speed times the largest singular value (~1e-10 m/s for a body moving at 1 m/s).
    Directions held weakly (a face a few um out of plane, its tilt rates ~1e-5 of the
    largest) need large self-cancelling tangential impulses unless the normal impulses
    balance the face; the least-norm redistribution provides that balance.
bound_factor : float
    The answer is redistributed to the least-norm impulse of its face (under
    ``force_distribution: any`` too) when a contact's tangential impulse exceeds this
    many times the step's total normal impulse plus ``max |J' f|`` (the net generalized
    impulse: what the bodies' momentum and load take; default 1); if it still does, or
    the exact hold has no certified answer, the step is solved again holding only the
    directions above ``loose_tol``.
loose_tol : float
    ``singular_tol`` of that second solve (default 1e-2: rows within 1 % of the others'
    span are left free, and may slip by up to 1 % of the speed along them). The
    report's ``info['no_slip_hold']`` says which hold the step applied (``exact`` or
    ``loose``), ``info['no_slip_exact']`` why the exact one was set aside.
"""

from dataclasses import replace

import numpy as np

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.min_norm_normal import redistributed_normal
from contact_lcp.contact.no_slip_space import reduce_no_slip
from contact_lcp.contact.normal_rows import NormalRowsModel, option_number
from contact_lcp.contact.report import Outcome
from contact_lcp.contact.tangential import tangent_rows_of


_NO_GROUP = np.zeros(0, dtype=np.int64)


class NoSlipModel(NormalRowsModel):
    """Normal LCP with the tangential rows of touching contacts as equalities."""

    name = "no_slip"
    OPTIONS = {**NormalRowsModel.OPTIONS, "singular_tol": 1e-10, "loose_tol": 1e-2,
               "bound_factor": 1.0}
    FORCE_DISTRIBUTIONS = ("any", "min_norm")
    HOLD_LOADED = True

    def __init__(self, settings=ModelSettings()):
        super().__init__(settings)
        self.singular_tol = option_number(self, "singular_tol", positive=True)
        self.loose_tol = option_number(self, "loose_tol", positive=True)
        self.bound_factor = option_number(self, "bound_factor", positive=True)

    def solve(self, problem, guess=None):
        """Certified impulses of one step: every direction of the rows held down to
        ``singular_tol``, or down to ``loose_tol`` when the exact hold has no certified
        answer or even its least-norm impulses exceed the bound (module notes; the
        report's ``info['no_slip_hold']`` says which, ``exact`` or ``loose``)."""
        exact = super().solve(problem, guess)
        solved = (exact.report.outcome is Outcome.SOLVED
                  and exact.report.applied == self.name)
        # (without 'force_distribution' in its info the answer was within the bound)
        if solved and ("force_distribution" not in exact.report.info
                       or self.excess(problem, exact.f) <= 1.0):
            return _noting(exact, "exact")
        loose = super().solve(problem, guess, singular_tol=self.loose_tol)
        if solved and loose.report.outcome is not Outcome.SOLVED:
            return _noting(exact, "exact")
        # the step's work includes the exact attempt's; an exact hold without an answer
        # (every direction held can leave the normal LCP infeasible) is the reason to
        # loosen, not a failed solve: info['no_slip_exact'] says why it was set aside
        e = exact.report
        why = (f"impulses {self.excess(problem, exact.f):.3g} times the bound" if solved
               else f"{e.status.value}")
        return _noting(loose, "loose", pivots=e.pivots, solves=e.solves, why=why)

    def reduce(self, problem, contacts, singular_tol=None):
        """Normal-row LCP with every tangential row of ``contacts`` held at ``v+``."""
        on = np.flatnonzero(contacts)
        candidates = tangent_rows_of(on)
        tol = self.singular_tol if singular_tol is None else singular_tol
        lcp = reduce_no_slip(problem, candidates, tol)
        return lcp, {"no_slip_contacts": int(on.size), "tangent_rows": lcp.rank,
                     "dependent_rows": int(candidates.size - lcp.rank)}

    def excess(self, problem, f):
        """The largest tangential impulse of ``f`` over ``bound_factor`` times what the
        step can need: its total normal impulse plus ``max |J' f|`` (the net generalized
        impulse, what the bodies' momentum and load take; self-cancelling impulses add to
        the tangential ones and not to it). Above 1: the impulses are self-cancelling."""
        k = problem.num_contacts
        if k == 0:
            return 0.0
        f_t = np.hypot(f[1:3 * k:3], f[2:3 * k:3])
        need = float(np.sum(f[0:3 * k:3])) + float(np.max(np.abs(problem.J.T @ f)))
        top = float(f_t.max())
        return top / (self.bound_factor * need) if need > 0.0 else (np.inf if top else 0.0)

    def kernel_args(self, problem):
        """Arguments of the compiled step (:mod:`contact_lcp.contact.normal_kernel`)."""
        return False, 0.0, _NO_GROUP, False, self.singular_tol

    def kernel_info(self, count, rows, candidates):
        """The report's info: contacts held, directions held, candidates' rows left."""
        return {"no_slip_contacts": count, "tangent_rows": rows,
                "dependent_rows": candidates - rows}

    def redistribute(self, problem, solution, lcp, held=None):
        """The least-norm impulse of the answer's face (module notes), under ``min_norm``
        or when its impulses exceed the bound (:meth:`excess`); ``lcp`` the normal-row
        LCP solved, or None from the compiled step (rebuilt on the ``held`` contacts)."""
        bounded = self.excess(problem, solution.f) <= 1.0
        if self.settings.force_distribution != "min_norm" and bounded:
            return solution
        f_n = solution.f[problem.normal_rows]

        def face():
            reduced = lcp if lcp is not None else self.reduce(problem, held)[0]
            return reduced.tangent_rows, reduced.velocity_change(f_n), reduced

        # within the bound the answer applies as it is, its least-norm forces computed
        # when read; beyond it the least-norm impulse is what the step applies
        return redistributed_normal(problem, solution, self.name, face, held_only=True,
                                    deferred=bounded)


def _noting(solution, hold, pivots=0, solves=0, why=None):
    """``solution`` with ``info['no_slip_hold'] = hold`` (and ``no_slip_exact = why``),
    the pivots and solves of an earlier attempt added."""
    r = solution.report
    info = dict(r.info, no_slip_hold=hold)
    if why is not None:
        info["no_slip_exact"] = why
    report = replace(r, info=info, pivots=r.pivots + pivots, solves=r.solves + solves)
    return solution.with_report(report)
