"""What every contact model shares: its settings and the interface the step calls."""

from dataclasses import dataclass, field, replace
from typing import ClassVar, Mapping, Optional

from contact_lcp.contact.min_norm import FORCE_DISTRIBUTIONS
from contact_lcp.exceptions import SceneError


@dataclass(frozen=True)
class ModelSettings:
    """Settings a contact model is built with (from the scene's ``contact`` and ``solver``).

    Attributes
    ----------
    method : str
        LCP method (see :data:`contact_lcp.lcp.METHODS`); ``solver_options`` its options.
    two_step : bool
        Pyramid model: frictionless LCP first, frictional warm-started from its loaded set
        (Yamane & Nakamura's two-step solve).
    warm_start : bool
        Pyramid model: start from the previous step's basis when the contacts are the same.
    drop_unloaded : bool
        Pyramid model: leave contacts unloaded in the frictionless answer out of the
        frictional LCP (accepted only if they then do not penetrate).
    fallback : bool
        Apply a certified frictionless impulse when the model's own solve fails.
    friction_directions : int
        Edges of the friction pyramid.
    friction_frame : str
        ``"slip"``: the pyramid's first edge follows the slip (or the last friction impulse
        when sticking); ``"fixed"``: it lies along the contact frame's t1 (the seeds' form).
    force_distribution : str or None
        ``"any"``: the certified answer as the solver found it; ``"min_norm"``: the
        least-norm impulse with the same velocities on its complementarity face
        (:mod:`contact_lcp.contact.min_norm`; models listing it in their
        ``FORCE_DISTRIBUTIONS``). None (default): ``min_norm`` where the model implements
        it, else ``any`` (the relaxed model's interior-point answer, the facet-set
        model).
    options : Mapping
        Model-specific options (checked against the model's ``OPTIONS``).
    """

    method: str = "robust"
    solver_options: Mapping = field(default_factory=dict)
    two_step: bool = True
    warm_start: bool = True
    drop_unloaded: bool = False
    fallback: bool = True
    friction_directions: int = 8
    friction_frame: str = "slip"
    force_distribution: Optional[str] = None
    options: Mapping = field(default_factory=dict)


class ContactModel:
    """Base of the contact models: turn a ContactProblem into certified impulses.

    A subclass sets ``name``, ``OPTIONS`` (model option -> default) and implements
    :meth:`solve`. It owns its row layout: it builds its own (M)LCP from the problem and
    maps the solution back to impulses in the problem's rows. What it carries from one
    step to the next (a warm start) is a value it returns and takes back (``GUESS``),
    never an attribute.
    """

    name: ClassVar[str] = ""
    OPTIONS: ClassVar[Mapping] = {}
    #: extra data the model needs from the step, by key of ``ContactProblem.extras``
    #: (the step's collision stage provides them; none for the pyramid model)
    wants: ClassVar[tuple] = ()
    #: the ``force_distribution`` values the model implements (declared, not discovered)
    FORCE_DISTRIBUTIONS: ClassVar[tuple] = ("any",)
    #: whether the step may solve the problem island by island
    #: (:mod:`contact_lcp.contact.islands`: the model's guess splits by contact)
    islands: ClassVar[bool] = False

    def splits(self, problem) -> bool:
        """Whether this step's ``problem`` is solved island by island (``islands``); a
        model may solve a problem whole when splitting would change nothing it chooses
        (``auto`` below its pyramid size)."""
        return self.islands

    def takes_sparse(self, num_contacts, num_limits) -> bool:
        """Whether :meth:`solve` takes an island of this size with ``J``, ``K`` and ``G``
        stored sparse (:mod:`contact_lcp.contact.sparse_problem`; otherwise the islands
        of a sparse step are handed over dense)."""
        return False

    def __init__(self, settings: ModelSettings = ModelSettings()):
        unknown = sorted(set(settings.options) - set(self.OPTIONS))
        if unknown:
            raise SceneError(f"contact model {self.name!r}: unknown option(s) {unknown}; "
                             f"valid options: {sorted(self.OPTIONS)}")
        if settings.force_distribution is None:  # the default (ModelSettings)
            settings = replace(settings, force_distribution="min_norm" if "min_norm" in
                               self.FORCE_DISTRIBUTIONS else "any")
        if settings.force_distribution not in FORCE_DISTRIBUTIONS:
            raise SceneError(f"contact.force_distribution must be one of "
                             f"{list(FORCE_DISTRIBUTIONS)}; received "
                             f"{settings.force_distribution!r}")
        if settings.force_distribution not in self.FORCE_DISTRIBUTIONS:
            raise SceneError(f"contact.force_distribution {settings.force_distribution!r} "
                             f"is not implemented by contact model {self.name!r}, which "
                             f"allows {list(self.FORCE_DISTRIBUTIONS)}")
        self.settings = settings
        self.options = {**self.OPTIONS, **dict(settings.options)}

    #: the warm start the model takes and returns (a record of
    #: :mod:`contact_lcp.contact.guess`; None: it always starts cold)
    GUESS: ClassVar[Optional[type]] = None

    def warm_up(self, problem, guess):
        """Run once, on a step's ``problem`` and the ``guess`` its solve returned, the
        rungs of the model's ladder that a run reaches only later (contacts that came or
        went, a last basis that misses, a force distribution's QP), so that their code
        loads before the run and not in the middle of it: a load takes milliseconds, a
        real-time loop's whole period (:func:`contact_lcp.sim.warm.warm_up`). The next
        solve is the same as without it. The base model has no such rung."""

    def solve(self, problem, guess=None):
        """The impulses of one step.

        Parameters
        ----------
        problem : contact_lcp.contact.problem.ContactProblem
        guess : object, optional
            The ``guess`` of the solution of the model's last solve (its warm start; a
            guess of another type, or None, starts cold). The model keeps nothing
            across calls: the same problem and guess give the same answer.

        Returns
        -------
        contact_lcp.contact.report.ContactSolution
            With the guess for the next solve.
        """
        raise NotImplementedError
