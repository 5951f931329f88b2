"""Contact points from coal geometry through Pinocchio's GeometryModel.

This package and :mod:`contact_lcp.dynamics` are the only places where Pinocchio and
coal are imported.
"""

from contact_lcp.collision.contact_point import ContactPoint, tangent_basis
from contact_lcp.collision.detector import ContactDetector
from contact_lcp.collision.reduction import combine_friction

__all__ = ["ContactDetector", "ContactPoint", "combine_friction", "tangent_basis"]
