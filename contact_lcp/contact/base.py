"""What every contact model shares: its settings and the interface the step calls."""

import copy
from dataclasses import dataclass, field
from typing import ClassVar, Mapping

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
    options: Mapping = field(default_factory=dict)


class ContactModel:
    """Base of the contact models: turn a ContactProblem into certified impulses.

    A subclass sets ``name``, ``OPTIONS`` (model option -> default) and implements
    :meth:`solve`. It owns its row layout: it builds its own (M)LCP from the problem and
    maps the solution back to impulses in the problem's rows. It may keep state across
    steps (a warm start), which :meth:`reset` forgets.
    """

    name: ClassVar[str] = ""
    OPTIONS: ClassVar[Mapping] = {}
    #: extra data the model needs from the step, by key of ``ContactProblem.extras``
    #: (the step's collision stage provides them; none for the pyramid model)
    wants: ClassVar[tuple] = ()

    def __init__(self, settings: ModelSettings = ModelSettings()):
        unknown = sorted(set(settings.options) - set(self.OPTIONS))
        if unknown:
            raise SceneError(f"contact model {self.name!r}: unknown option(s) {unknown}; "
                             f"valid options: {sorted(self.OPTIONS)}")
        self.settings = settings
        self.options = {**self.OPTIONS, **dict(settings.options)}

    def solve(self, problem):
        """The impulses of one step.

        Parameters
        ----------
        problem : contact_lcp.contact.problem.ContactProblem

        Returns
        -------
        contact_lcp.contact.report.ContactSolution
        """
        raise NotImplementedError

    def reset(self):
        """Forget what was carried across steps."""

    #: attributes that are the model's configuration, not what it carries across steps
    _CONFIGURATION = ("settings", "options")

    def memory(self):
        """What the model carries across steps, as a dict (a copy; for a state file).

        Every attribute but the settings: a subclass keeps its memory in attributes that
        :meth:`reset` sets, and nothing else that changes from step to step.
        """
        return copy.deepcopy({k: v for k, v in vars(self).items()
                              if k not in self._CONFIGURATION})

    def restore(self, memory):
        """Carry on from a :meth:`memory` of a model with the same settings."""
        self.reset()
        vars(self).update(copy.deepcopy(memory))
