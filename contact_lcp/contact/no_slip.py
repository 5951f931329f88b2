"""No-slip contact (Drumwright, S4 section VI): zero tangential velocity where touching.

At every touching contact the tangential velocity at the end of the step is zero,
``T v+ = 0``, whatever the normal impulse (infinite friction, impulsive: a velocity-level
model, so no Painleve-type inconsistency). That is an MLCP: the tangential rows are
equalities with free impulses, the normal rows (contacts, then joint limits) are
complementary. With redundant contacts (a sole with many points, a grasp) the tangential
rows are dependent and ``T K T'`` is singular; FIND-INDICES
(:mod:`contact_lcp.contact.find_indices`) keeps an independent subset (at most ``nv``
rows, in contact order), which enforces the others too. The free impulses are then
eliminated (:mod:`contact_lcp.contact.tangential`), leaving a symmetric PSD LCP on the
normal rows only (``k + l`` unknowns), solved by the scene's method (``ppm`` suits it).

Scene options (``contact.options``)
-----------------------------------
touch_distance, release_speed : float
    Which contacts do not slip (see :mod:`contact_lcp.contact.normal_rows`): those whose
    gap is at most ``touch_distance`` [m] (default 1e-4), except those left unloaded and
    separating faster than ``release_speed`` [m/s] (default 1e-6).
singular_tol : float
    Relative pivot below which FIND-INDICES counts a row as dependent (default 1e-4): a
    row whose squared distance from the span of the kept rows is at most this fraction of
    its own squared norm (in the metric of ``G``). A row kept at relative distance
    ``delta`` makes the tangential impulses up to ``1 / delta`` times the load, as
    self-cancelling internal impulses; a row dropped there can slip at up to ``delta``
    times the body's speed. A box that landed on another tilted by ~1e-4 rad has its
    face contacts a few um off their contact plane, so beyond the three rows that hold
    the face, the tangential rows also constrain its tilt rates, at ``delta`` ~ 1e-5:
    kept (1e-10, the default before), they carried 8 000 N.s of self-cancelling
    tangential impulse under a 2 kg box (its weight: 0.2 N.s a step), and the box crept
    up at 0.3 um/s; at 1e-4 (``delta`` = 1 %) they are dropped and the impulses stay
    within the load (``test/test_physics_impacts.py``).
"""

import numpy as np

from contact_lcp.contact.base import ModelSettings
from contact_lcp.contact.find_indices import find_indices
from contact_lcp.contact.normal_rows import NormalRowsModel, option_number
from contact_lcp.contact.tangential import reduce_to_normal_rows, tangent_rows_of


_NO_GROUP = np.zeros(0, dtype=np.int64)


class NoSlipModel(NormalRowsModel):
    """Normal LCP with the tangential rows of touching contacts as equalities."""

    name = "no_slip"
    OPTIONS = {**NormalRowsModel.OPTIONS, "singular_tol": 1e-4}

    def __init__(self, settings=ModelSettings()):
        super().__init__(settings)
        self.singular_tol = option_number(self, "singular_tol", positive=True)

    def kernel_args(self, problem):
        """Arguments of the compiled step (:mod:`contact_lcp.contact.normal_kernel`)."""
        return False, 0.0, _NO_GROUP, False, self.singular_tol

    def kernel_info(self, count, rows, candidates):
        """The report's info: contacts held, tangential rows kept and dropped."""
        return {"no_slip_contacts": count, "tangent_rows": rows,
                "dependent_rows": candidates - rows}

    def reduce(self, problem, contacts):
        """Normal-row LCP with the independent tangential rows of ``contacts`` as equalities."""
        on = np.flatnonzero(contacts)
        candidates = tangent_rows_of(on)
        rows, factor = find_indices(problem.G, candidates, singular_tol=self.singular_tol,
                                    max_rank=problem.K.shape[0])
        lcp = reduce_to_normal_rows(problem, rows, W_factor=factor)
        return lcp, {"no_slip_contacts": int(on.size), "tangent_rows": int(rows.size),
                     "dependent_rows": int(candidates.size - rows.size)}
