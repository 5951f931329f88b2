"""One contact point between body A and body B, and its contact frame."""

import functools
from dataclasses import dataclass

import numpy as np

_E_X = np.array([1.0, 0.0, 0.0])
_E_Y = np.array([0.0, 1.0, 0.0])


def tangent_basis(n_W):
    """(3, 3) ``R_WC`` with columns (n, t1, t2), a right-handed frame built from ``n_W``.

    Rule: ``t1`` is the world x axis projected on the tangent plane and normalised,
    unless ``|n_x| >= 0.9`` where the world y axis is used instead; ``t2 = n x t1``.
    The basis is a smooth function of ``n`` away from ``|n_x| = 0.9``, so contacts with
    the ground (``n = +z``) or on nearly horizontal faces always get ``t1 = x``, ``t2 = y``
    and never flip between steps.
    """
    n = np.asarray(n_W, dtype=float)
    r = _E_X if abs(n[0]) < 0.9 else _E_Y
    t1 = r - (r @ n) * n
    t1 /= np.sqrt(t1 @ t1)
    R = np.empty((3, 3))
    R[:, 0], R[:, 1] = n, t1
    R[:, 2] = (n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2],
               n[0] * t1[1] - n[1] * t1[0])  # n x t1
    return R


@functools.lru_cache(maxsize=1024)
def _frame_of(n):
    """Read-only :func:`tangent_basis` of a normal given as a tuple: contacts with the
    ground, or on one face, share it (a dict look-up instead of a few microseconds)."""
    R = tangent_basis(np.array(n))
    R.setflags(write=False)
    return R


@dataclass(frozen=True, eq=False)
class ContactPoint:
    """A contact (or near-contact within the activation distance) between A and B.

    Attributes
    ----------
    body_a, body_b : str
        Link or free-body names; ``body_a`` is ``"ground"`` for the ground.
    joint_a, joint_b : int
        World-model joint ids that move A and B (0: the universe, fixed).
    p_W : (3,) ndarray
        Contact point in W [m]: midpoint of the witness points on A and B.
    n_W : (3,) ndarray
        Unit normal from A to B.
    distance : float
        Signed distance along ``n_W`` between the witness points [m]; < 0 in penetration.
    mu : float
        Combined friction coefficient of the pair.
    """

    body_a: str
    body_b: str
    joint_a: int
    joint_b: int
    p_W: np.ndarray
    n_W: np.ndarray
    distance: float
    mu: float

    def frame(self):
        """(3, 3) ``R_WC``, columns (n, t1, t2); see :func:`tangent_basis` for the rule.

        Computed once per contact (read-only): the Jacobian, the LCP and every wrench
        query of a step use the same frame.
        """
        R = self.__dict__.get("_R_WC")
        if R is None:
            R = _frame_of(tuple(np.asarray(self.n_W, dtype=float).tolist()))
            object.__setattr__(self, "_R_WC", R)
        return R
