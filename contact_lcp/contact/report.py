"""What a contact model's solve did: the one status record from the solver to the step info,
the CLI summary and the ROS diagnostics."""

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Mapping, Optional

import numpy as np

from contact_lcp.lcp import LCPResult, LCPStatus
from contact_lcp.lcp.result import ReadOnlyInfo


class Outcome(Enum):
    """How the impulse applied in a step was obtained.

    NO_CONTACT
        Nothing to solve (no active contact or limit row).
    SOLVED
        The model's own problem was solved and certified.
    FALLBACK
        The model's problem failed; the certified answer of a simpler problem was applied
        (the pyramid model's convex relaxation, or the frictionless problem).
    SAFE_STOP
        Nothing was certified: no impulse was applied and the dynamic motion stopped.
    """

    NO_CONTACT = "no_contact"
    SOLVED = "solved"
    FALLBACK = "fallback"
    SAFE_STOP = "safe_stop"


@dataclass(frozen=True)
class SolveReport(ReadOnlyInfo):
    """An honest account of one step's contact solve.

    Attributes
    ----------
    outcome : Outcome
    status : LCPStatus or None
        Status of the model's main solve (the frictional LCP for ``pyramid``), also when a
        fallback was applied; None without contact.
    applied : str
        Which problem produced the applied impulse: the model name, ``"relaxed"`` or
        ``"frictionless"`` (fallbacks) or ``"none"``.
    method : str
        The solver method that produced the applied impulse (``"none"`` if none).
    certified : bool
        The applied impulse passed the residual check (True also without contact).
    pivots : int
        Pivots (or iterations) of every solve of the step.
    solves : int
        LCP (or QP) solves attempted this step.
    failures : int
        Solves that ended without a certified answer (recovered or not).
    fallbacks : int
        0: the model's answer was applied; 1: a fallback (``applied`` says which); 2: a
        safe stop.
    warm_started : bool
        The main solve started from a basis (the previous step's or the frictionless one).
    info : Mapping
        Model-specific extras (read-only); ``info['rungs']`` is :attr:`rungs`.
    """

    outcome: Outcome
    status: Optional[LCPStatus]
    applied: str
    method: str
    certified: bool
    pivots: int = 0
    solves: int = 0
    failures: int = 0
    fallbacks: int = 0
    warm_started: bool = False
    info: Mapping = field(default_factory=dict)

    @property
    def rungs(self) -> tuple:
        """The rungs of the model's fallback ladder that ran, in order, as ``name:outcome``
        (:mod:`contact_lcp.contact.ladder`), e.g. ``('last_basis:miss',
        'frictional_warm:solved')``; empty without contact."""
        return tuple(self.info.get("rungs", ()))

    @property
    def last_basis_only(self) -> bool:
        """Whether the last step's basis alone solved this step (the pyramid model's first
        rung, one compiled solve per contact island, in one active-set round): the step's
        common case."""
        return self.rungs == ("last_basis:solved",) * max(int(self.info.get("islands", 1)), 1)

    @property
    def label(self) -> str:
        """A short name for logs: ``SOLVED``, ``FALLBACK(MAX_PIVOTS)``, ``SAFE_STOP``..."""
        if self.outcome is Outcome.NO_CONTACT:
            return "NO_CONTACT"
        if self.outcome is Outcome.SOLVED:
            return "SOLVED"
        cause = "" if self.status is None else f"({self.status.name})"
        return f"{self.outcome.name}{cause}"


NO_CONTACT = SolveReport(Outcome.NO_CONTACT, None, "none", "none", True)


class ContactSolution:
    """A contact model's answer for one :class:`~contact_lcp.contact.problem.ContactProblem`.

    Attributes
    ----------
    f : (3k + l,) ndarray
        Impulses in the problem's rows: per contact (n, t1, t2) in its frame, then the
        unilateral rows [N.s]. Zero on a safe stop. Under a force distribution
        (``contact.force_distribution: min_norm``) they are computed from ``solved`` when
        first read: a step whose forces nobody reads does not pay for them.
    solved : (3k + l,) ndarray
        The certified answer as the model's solver found it. ``f`` has the same
        velocities (a redistribution is accepted only so), so the step applies
        ``J' solved``, and the motion does not depend on whether the forces were read.
    report : SolveReport
    generalized : (nv,) ndarray or None
        Generalized impulse to apply [N.s or N.m.s]; None means ``J' solved`` (models
        whose constraints are not the problem's rows give their own).
    guess : object or None
        The warm start for the model's next solve (:mod:`contact_lcp.contact.guess`;
        None: start cold). The caller hands it back to the next ``solve``.
    distribution : str or None
        What the force distribution did (read with ``f``): ``min_norm``, ``unique``,
        ``skipped: <why>`` or ``rejected: <why>`` (:mod:`contact_lcp.contact.min_norm`);
        None when none was asked for. (Models that distribute while they solve, the
        normal-row models of :mod:`contact_lcp.contact.min_norm_normal`, apply the
        distributed impulse and note it in ``report.info['force_distribution']``.)
    """

    __slots__ = ("solved", "report", "generalized", "guess", "_f", "_note", "_distribute")

    def __init__(self, f, report, generalized=None, guess=None, distribute=None):
        """``distribute`` (None: ``f`` is final): a function of ``f`` returning the
        distributed impulses and the note, called once, when ``f`` is first read."""
        self.solved, self.report, self.generalized, self.guess = f, report, generalized, guess
        self._f, self._note, self._distribute = (None, None, distribute) \
            if distribute is not None else (f, None, None)

    @property
    def f(self) -> np.ndarray:
        if self._distribute is not None:
            self._f, self._note = self._distribute(self.solved)
            self._distribute = None
        return self._f

    @property
    def distributes(self) -> bool:
        """Whether ``f`` is (or, read, will be) another impulse than ``solved``."""
        return self._distribute is not None or self._f is not self.solved

    @property
    def distribution(self) -> Optional[str]:
        self.f  # noqa: B018 (computes the distribution when it is pending)
        return self._note if self._note is not None else self.report.info.get(
            "force_distribution")

    @property
    def safe_stop(self) -> bool:
        """True when nothing was certified and the caller must stop the motion."""
        return self.report.outcome is Outcome.SAFE_STOP

    def with_report(self, report):
        """This answer (its forces still computed when read) with another report."""
        out = ContactSolution(self.solved, report, self.generalized, self.guess)
        out._f, out._note, out._distribute = self._f, self._note, self._distribute
        return out

    def with_earlier(self, earlier, rounds):
        """This answer, its report also counting the pivots, solves, failures and
        fallbacks of ``earlier`` reports of the same step (solves on a smaller active set
        that the step redid, their rungs before its own), and
        ``info['active_set_rounds'] = rounds``."""
        r = self.report
        return self.with_report(replace(
            r, pivots=r.pivots + sum(e.pivots for e in earlier),
            solves=r.solves + sum(e.solves for e in earlier),
            failures=r.failures + sum(e.failures for e in earlier),
            fallbacks=r.fallbacks + sum(e.fallbacks for e in earlier),
            info=dict(r.info, active_set_rounds=int(rounds),
                      rungs=tuple(x for e in earlier for x in e.rungs) + r.rungs)))


def tally(results):
    """(pivots, solves, failures) of a sequence of :class:`LCPResult` (None skipped).

    A result's pivots are all it took: robust's ``pivots`` count only the path of its
    answer, so the Lemke paths that failed before it (``info['path_pivots']`` holds
    them all) and solve()'s other attempts (``info['attempt_pivots']``) are added."""
    results = [r for r in results if isinstance(r, LCPResult)]
    return (sum(all_pivots(r) for r in results), len(results),
            sum(1 for r in results if not r.success))


def all_pivots(res):
    """Every pivot of the :class:`LCPResult` ``res``: its answer's and its failed paths'
    (``info['path_pivots']``), and solve()'s other attempts' (``info['attempt_pivots']``)."""
    info = res.info
    return int(max(res.pivots, info.get("path_pivots", 0))) + int(info.get("attempt_pivots", 0))
