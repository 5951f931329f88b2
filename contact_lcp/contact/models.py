"""The contact models by name: ``contact.model`` in a scene picks one.

Each model is one module (``pyramid.py``, ``frictionless.py``, ...) with a
:class:`~contact_lcp.contact.base.ContactModel` subclass, registered here exactly like the
LCP methods in :data:`contact_lcp.lcp.METHODS`.
"""

from contact_lcp.contact.auto import AutoModel
from contact_lcp.contact.base import ContactModel, ModelSettings
from contact_lcp.contact.facet_set import FacetSetModel
from contact_lcp.contact.frictionless import FrictionlessModel
from contact_lcp.contact.no_slip import NoSlipModel
from contact_lcp.contact.pyramid import PyramidModel
from contact_lcp.contact.relaxed import RelaxedModel
from contact_lcp.contact.viscous import ViscousModel
from contact_lcp.exceptions import SceneError

#: model name -> ContactModel subclass
CONTACT_MODELS = {
    "pyramid": PyramidModel,
    "frictionless": FrictionlessModel,
    "viscous": ViscousModel,
    "no_slip": NoSlipModel,
    "facet_set": FacetSetModel,
    "relaxed": RelaxedModel,
    "auto": AutoModel,
}

#: other names that are accepted for a model
ALIASES = {"stewart_trinkle": "pyramid"}


def model_names():
    """Every accepted name, the aliases included, sorted."""
    return sorted(set(CONTACT_MODELS) | set(ALIASES))


def model_class(name):
    """The ContactModel subclass called ``name`` (or an alias of it).

    Raises
    ------
    SceneError
        An unknown name; the message lists the known ones.
    """
    key = ALIASES.get(name, name)
    if key not in CONTACT_MODELS:
        raise SceneError(f"unknown contact model {name!r}; known models: {model_names()}")
    return CONTACT_MODELS[key]


def make_model(name, settings=ModelSettings()) -> ContactModel:
    """A ready model instance for ``name`` built with ``settings``."""
    return model_class(name)(settings)
