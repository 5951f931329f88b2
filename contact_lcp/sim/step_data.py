"""What one world's step reads and writes, in one record (MuJoCo's ``mjData``).

Every stage of :meth:`contact_lcp.sim.stepper.Stepper.step` reads the record and writes
its own fields, in order: the free motion (``v_free``, ``K``, ``lookahead``), the
collision (``found``: every contact within reach), the contact problem (``contacts``: the
active ones, and ``problem``: rows, ``G``, bias), the contact model's solve
(``solution``), the integration (``v_step``). Only ``guess`` lives from one step to the
next: the contact model's warm start, handed to its ``solve`` and replaced by the one
the solve returns (:mod:`contact_lcp.contact.guess`); a state file saves it. The other
fields are the last step's, for inspection.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from contact_lcp.collision.contact_set import ContactSet
from contact_lcp.contact.problem import ContactProblem
from contact_lcp.contact.report import ContactSolution


@dataclass(eq=False)
class StepData:
    """One world's step data (see the module notes). All fields None before a step."""

    #: the contact model's warm start for the next solve (None: cold)
    guess: object = None
    #: (nv,) velocity after the free motion [m/s, rad/s]
    v_free: Optional[np.ndarray] = None
    #: (nv, nv) map from generalized impulse to velocity change [1/kg]
    K: Optional[np.ndarray] = None
    #: (ngeoms,) how far each geometry may move in the step [m]
    lookahead: Optional[np.ndarray] = None
    #: every contact the collision stage found within reach
    found: Optional[ContactSet] = None
    #: the active contacts (those of ``problem``)
    contacts: Optional[ContactSet] = None
    #: the contact problem of the last solve
    problem: Optional[ContactProblem] = None
    #: the contact model's answer applied
    solution: Optional[ContactSolution] = None
    #: (nv,) the velocity over the step, in the frames at its start
    v_step: Optional[np.ndarray] = None

    def clear(self):
        """Forget everything, the warm start included (a reset)."""
        for name in self.__dataclass_fields__:
            setattr(self, name, None)
