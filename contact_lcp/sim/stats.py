"""What a step reports (:class:`StepInfo`) and the run's counters (:class:`SimStats`),
read by the simulator, its checkpoints and the ROS node."""

from dataclasses import dataclass

from contact_lcp.contact.report import Outcome, SolveReport


@dataclass(frozen=True)
class StepInfo:
    """Summary of one step (``timings`` in seconds per stage).

    ``report`` is the contact solve's :class:`~contact_lcp.contact.report.SolveReport`
    (outcome, status, which problem and method produced the applied impulse, certified,
    pivots, fallbacks); the string fields below are read from it. ``num_active``: the
    contacts the solve's answer loads (its active set; the forces read under
    ``force_distribution: min_norm`` may spread the load over more of the touching
    contacts, :attr:`~contact_lcp.sim.stepper.StepRecord.impulse_C`).
    """

    t: float
    num_contacts: int
    num_active: int
    report: SolveReport
    max_penetration: float
    timings: dict

    def __init__(self, t, num_contacts, num_active, report, max_penetration, timings):
        # one update of the instance's dict, not one object.__setattr__ per field (the
        # __init__ dataclass generates for a frozen class): every step returns one
        self.__dict__.update(t=t, num_contacts=num_contacts, num_active=num_active,
                             report=report, max_penetration=max_penetration, timings=timings)

    @property
    def lcp_status(self) -> str:
        """``SOLVED``, ``NO_CONTACT``, ``FALLBACK(<status>)`` or ``SAFE_STOP(<status>)``."""
        return self.report.label

    @property
    def lcp_method(self) -> str:
        """The method that produced the applied impulse, ``/frictionless`` or ``/relaxed``
        on a fallback."""
        r = self.report
        return f"{r.method}/{r.applied}" if r.outcome is Outcome.FALLBACK else r.method

    @property
    def lcp_rungs(self) -> str:
        """The rungs of the model's fallback ladder that ran, in order, as
        ``name:outcome`` separated by spaces (``contact_lcp.contact.ladder``; empty
        without contact)."""
        return " ".join(self.report.rungs)

    @property
    def pivots(self) -> int:
        """Pivots of every solve of the step."""
        return self.report.pivots

    @property
    def fallbacks(self) -> int:
        """0, 1 (a fallback applied) or 2 (safe stop)."""
        return self.report.fallbacks


@dataclass
class SimStats:
    """Counters since the start (or the last reset).

    ``lcp_failures``: solves that ended uncertified (also those a fallback recovered);
    ``fallbacks``: steps that applied a fallback (relaxed or frictionless);
    ``safe_stops``: steps that applied nothing; ``uncertified``: steps whose applied
    impulse was not certified (safe stops); ``warm_starts``: main solves started from a
    basis; ``solves``: LCP solves (the projections' too); ``projections``: steps that
    started by moving bodies out of a penetration deeper than
    ``contact.projection_depth``.
    """

    steps: int = 0
    lcp_failures: int = 0
    fallbacks: int = 0
    safe_stops: int = 0
    uncertified: int = 0
    pivots_total: int = 0
    solves: int = 0
    warm_starts: int = 0
    projections: int = 0

    def add(self, report):
        """Count one step's :class:`~contact_lcp.contact.report.SolveReport`."""
        self.steps += 1
        self.lcp_failures += report.failures
        self.fallbacks += int(report.outcome is Outcome.FALLBACK)
        self.safe_stops += int(report.outcome is Outcome.SAFE_STOP)
        self.uncertified += int(not report.certified)
        self.pivots_total += report.pivots
        self.solves += report.solves
        self.warm_starts += int(report.warm_started)

    def add_projection(self, projection):
        """Count a step's :class:`~contact_lcp.sim.projection.Projection` (its LCP solve
        and pivots; an uncertified one, which the step did not apply, as a failure)."""
        self.projections += int(projection.certified)
        self.solves += 1
        self.pivots_total += projection.pivots
        self.lcp_failures += int(not projection.certified)
