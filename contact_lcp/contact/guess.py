"""Warm starts: what one contact solve hands to the next, as a value (Drake's
``SapSolver::SolveWithGuess``).

A model's :meth:`~contact_lcp.contact.base.ContactModel.solve` takes the guess the last
solve returned (``ContactSolution.guess``) and returns the next one; the model itself
keeps nothing across steps. The step keeps the guess in its step data
(:class:`contact_lcp.sim.step_data.StepData`), a state file saves it
(:mod:`contact_lcp.sim.checkpoint`), and a test can replay a solve from any guess.

Each guess is a frozen record of arrays; a state file checks every field's shape before a
compiled kernel reads it (:func:`contact_lcp.sim.state_checks.guess`).
"""

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np


@dataclass(frozen=True, eq=False)
class PyramidGuess:
    """The pyramid family's memory of its last certified frictional answer.

    Attributes
    ----------
    pair : (k,) int ndarray
        Surface-pair keys of its contacts (``ContactProblem.pair``).
    points : (k, 3) ndarray
        Its contact points in W [m] (a new contact is matched to the nearest last one of
        its surface pair).
    directions : (k, 3) ndarray
        Unit direction in W of each contact's next first pyramid edge (0: none).
    limits : (l, nv) ndarray
        Its joint-limit rows (the basis is reused only for the same rows).
    basic_a, basic_b, basic_lam : (k + l,), (k, d), (k,) bool ndarray, or None
        Its basis (``pyramid_kernel.basis_flags``); None after a step whose frictional
        solve failed (the edge directions still orient the next pyramids).
    equilibration : (2, k + l + k d + k) ndarray, or None
        The equilibration factors ``d1``, ``d2`` (:mod:`contact_lcp.lcp.scaling`, powers
        of two) of the frictional LCP that the basis solved, in the layout of the LCP of
        all its contacts (normals, limit rows, edges, sliding speeds), 0 for the
        contacts that LCP left out. The next step tries them first on its LCP of the
        same contacts (:mod:`contact_lcp.contact.pyramid_kernel`). None when the step
        was not solved by a basis of the last one.
    """

    pair: np.ndarray
    points: np.ndarray
    directions: np.ndarray
    limits: np.ndarray
    basic_a: Optional[np.ndarray] = None
    basic_b: Optional[np.ndarray] = None
    basic_lam: Optional[np.ndarray] = None
    equilibration: Optional[np.ndarray] = None

    def __init__(self, pair, points, directions, limits, basic_a=None, basic_b=None,
                 basic_lam=None, equilibration=None):
        # one update of the instance's dict, not one object.__setattr__ per field (the
        # __init__ dataclass generates for a frozen class): the model makes one a step
        self.__dict__.update(pair=pair, points=points, directions=directions, limits=limits,
                             basic_a=basic_a, basic_b=basic_b, basic_lam=basic_lam,
                             equilibration=equilibration)

    @property
    def flags(self):
        """``(basic_a, basic_b, basic_lam)``, or None without a basis."""
        return None if self.basic_a is None else (self.basic_a, self.basic_b, self.basic_lam)

    def without_basis(self):
        """This guess with only the friction directions (after a failed solve)."""
        return replace(self, basic_a=None, basic_b=None, basic_lam=None, equilibration=None)


@dataclass(frozen=True, eq=False)
class BasisGuess:
    """The normal-row models' memory: surface-pair keys (k,) of the last solve and the
    rows (b,) basic in its answer."""

    pair: np.ndarray
    basis: np.ndarray


#: the guess records by name (what a state file may hold; its checks:
#: :func:`contact_lcp.sim.state_checks.guess`)
GUESSES = {cls.__name__: cls for cls in (PyramidGuess, BasisGuess)}
