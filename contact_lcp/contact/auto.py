"""``contact.model: auto``: the pyramid model on small islands, its convex relaxation on
large ones.

The step splits its contacts into islands (:mod:`contact_lcp.contact.islands`) and hands
each to this model alone; an island of at most ``max_pyramid_contacts`` contacts is
solved by the ``pyramid`` model (Stewart-Trinkle, pivoting: exact Coulomb pyramid,
certified), a larger one by ``relaxed`` (Anitescu & Hart's convex relaxation, S3, as a
sparse QP certified as its own LCP). Each island's report names the model that solved it
(``SolveReport.applied``; the step's report lists them in ``info['island_models']``).

Why a size: pivoting on the pyramid LCP costs about the cube of its size and on piles its
pivot counts explode (the 200-sphere pour: 1e4-1e6 pivots a step once ~500 contacts
settle); the relaxation's QP grows with its nonzeros, but it adds its artefact (a sliding
contact separates at ``mu`` times its slip speed), which small islands -- a robot's feet,
a grasp, a stack -- need not pay. :data:`MAX_PYRAMID_CONTACTS`: on the islands of the
200-sphere pour the pyramid's cold solve costs a few milliseconds up to ~30 contacts and
grows to ~0.2 s at 120 and seconds at 300 (the relaxation: 0.05-0.25 s there), so 40
keeps it where it is cheap, and keeps a 10-box tower (40 corner points) and a robot's
soles on it.

Options (``contact.options``): ``max_pyramid_contacts`` (int >= 0, default
:data:`MAX_PYRAMID_CONTACTS`). ``force_distribution: min_norm`` applies to the pyramid
islands (the relaxed model has no min-norm stage).
"""

from dataclasses import replace

from contact_lcp.contact.base import ContactModel, ModelSettings
from contact_lcp.contact.guess import PyramidGuess
from contact_lcp.contact.pyramid import PyramidModel
from contact_lcp.contact.relaxed import RelaxedModel
from contact_lcp.exceptions import SceneError

#: islands of at most this many contacts take the pyramid model (see the module notes)
MAX_PYRAMID_CONTACTS = 40


class AutoModel(ContactModel):
    """``pyramid`` per island up to ``max_pyramid_contacts`` contacts, ``relaxed`` above."""

    name = "auto"
    OPTIONS = {"max_pyramid_contacts": MAX_PYRAMID_CONTACTS}
    GUESS = PyramidGuess
    FORCE_DISTRIBUTIONS = ("any", "min_norm")
    islands = True

    def __init__(self, settings=None):
        settings = ModelSettings() if settings is None else settings
        super().__init__(settings)
        n = self.options["max_pyramid_contacts"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise SceneError("contact model 'auto': option max_pyramid_contacts must be an "
                             f"integer >= 0; received {n!r}")
        self.max_pyramid_contacts = n
        # each model checks its own options: the sub-models take their defaults
        self.pyramid = PyramidModel(replace(settings, options={}))
        self.relaxed = RelaxedModel(replace(settings, options={}, force_distribution="any"))

    def splits(self, problem):
        """Whole when every island would take the pyramid anyway: a problem of at most
        ``max_pyramid_contacts`` contacts is the ``pyramid`` model's, solved as that model
        solves it (one problem, no island labelling: a robot's step costs what it costs
        under ``pyramid``)."""
        return problem.num_contacts > self.max_pyramid_contacts

    def model_for(self, problem):
        """The model that solves ``problem`` (one island)."""
        return self._model_of(problem.num_contacts)

    def _model_of(self, num_contacts):
        return self.pyramid if num_contacts <= self.max_pyramid_contacts else self.relaxed

    def takes_sparse(self, num_contacts, num_limits):
        return self._model_of(num_contacts).takes_sparse(num_contacts, num_limits)

    def warm_up(self, problem, guess):
        """The later rungs of the model that solves ``problem`` whole (islands are solved
        by the same two models)."""
        self.model_for(problem).warm_up(problem, guess)

    def solve(self, problem, guess=None):
        return self.model_for(problem).solve(problem, guess)
