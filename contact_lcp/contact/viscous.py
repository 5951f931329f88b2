"""Purely viscous friction (Drumwright, S4 section IV), implicit in the step.

At every touching contact the tangential impulse opposes the tangential velocity at the
*end* of the step: ``f_t = -h b v_t+`` (both tangent axes, isotropic), with ``b`` the
viscous coefficient [N.s/m]. Implicit in ``v+``, it is equivalent to augmenting the
generalized inertia by ``h T'BT`` (``T`` the tangential rows, ``B = diag(b)``), so it
cannot overshoot and reverse the slip whatever ``b`` and ``h``: a body of mass ``m``
sliding with total coefficient ``b`` slows as ``v <- v / (1 + h b / m)`` per step. The
impulses ``f_t`` are eliminated (:mod:`contact_lcp.contact.tangential`), leaving an LCP on
the normal rows only (``k + l`` unknowns instead of ``(2 + d) k + l`` for the pyramid)
with a symmetric PSD matrix: the modified PPM (``solver.method: ppm``) suits it.

Scene options (``contact.options``)
-----------------------------------
coefficient : float
    ``b`` [N.s/m] (default 10): per contact, or per surface pair with ``per: pair``.
per : {'contact', 'pair'}
    ``contact``: every touching contact has ``b`` (the total grows with the number of
    contact points, as in S4's model); ``pair``: ``b`` is the total of a surface pair,
    split equally among its touching contacts (independent of the point count).
touch_distance, release_speed : float
    Which contacts carry viscous friction (see :mod:`contact_lcp.contact.normal_rows`):
    those whose gap is at most ``touch_distance`` [m] (default 1e-4), except those left
    unloaded and separating faster than ``release_speed`` [m/s] (default 1e-6).
"""

import numpy as np

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.normal_rows import NormalRowsModel, option_number
from contact_lcp.contact.tangential import reduce_to_normal_rows, tangent_rows_of
from contact_lcp.exceptions import SceneError


class ViscousModel(NormalRowsModel):
    """Normal LCP with implicit viscous tangential impulses."""

    name = "viscous"
    OPTIONS = {**NormalRowsModel.OPTIONS, "coefficient": 10.0, "per": "contact"}

    def __init__(self, settings=ModelSettings()):
        super().__init__(settings)
        self.coefficient = option_number(self, "coefficient", nonneg=True)
        if self.options["per"] not in ("contact", "pair"):
            raise SceneError(f"contact model 'viscous': option 'per': expected 'contact' or "
                             f"'pair', got {self.options['per']!r}")
        self.per = self.options["per"]

    def coefficients(self, problem, contacts):
        """(k,) viscous coefficient [N.s/m] of each contact (0 outside ``contacts``)."""
        b = np.where(contacts, self.coefficient, 0.0)
        if self.per == "pair" and problem.num_contacts:
            _, inverse = np.unique(problem.pair, return_inverse=True)
            count = np.bincount(inverse, weights=contacts.astype(float))
            b = b / np.maximum(count[inverse], 1.0)
        return b

    def kernel_args(self, problem):
        """Arguments of the compiled step (:mod:`contact_lcp.contact.normal_kernel`)."""
        if self.per == "pair" and problem.num_contacts:
            _, group = np.unique(problem.pair, return_inverse=True)
            group = group.astype(np.int64).ravel()
        else:
            group = np.zeros(problem.num_contacts, dtype=np.int64)
        return True, self.coefficient, group, self.per == "pair", 0.0

    def kernel_info(self, count, rows, candidates):
        """The report's info: contacts with viscous friction."""
        return {"viscous_contacts": count}

    def reduce(self, problem, contacts):
        """Normal-row LCP with the viscous impulses of ``contacts`` eliminated."""
        b = self.coefficients(problem, contacts)
        damped = np.flatnonzero(b > 0.0)
        rows = tangent_rows_of(damped)
        damping = np.repeat(1.0 / (problem.h * b[damped]), 2)
        lcp = reduce_to_normal_rows(problem, rows, damping=damping)
        return lcp, {"viscous_contacts": int(damped.size)}
