"""Result and status of an LCP solve."""

from dataclasses import dataclass, field, fields
from enum import Enum
from types import MappingProxyType
from typing import Mapping

import numpy as np


class ReadOnlyInfo:
    """Base of the frozen records with a read-only ``info`` mapping: the mapping is frozen
    on creation, and the record still pickles (a simulator's state file holds some)."""

    def __post_init__(self):
        object.__setattr__(self, "info", MappingProxyType(dict(self.info)))

    def __reduce__(self):
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["info"] = dict(self.info)
        return _rebuild, (type(self), values)


def _rebuild(cls, values):
    return cls(**values)


class LCPStatus(Enum):
    """How a solve ended.

    SOLVED
        A certified solution: ``error <= tol`` (see :func:`contact_lcp.lcp.solve`).
    NO_SOLUTION
        Lemke's secondary ray: the entering column has no blocking row (m' >= 0).
    CYCLE
        A basis (pivot set) that had already been visited came again.
    ERROR
        The method returned a point whose error exceeds the tolerance (or e_max).
    MAX_PIVOTS
        The pivot, node or iteration limit was reached.
    NUMERICAL_FAILURE
        A singular principal block or a pivot element too small to divide by, or data
        whose range defeats double precision.
    TIME_LIMIT
        The solve's wall-time budget ran out (``time_limit`` of
        :func:`contact_lcp.lcp.solve`).
    """

    SOLVED = "solved"
    NO_SOLUTION = "no_solution"
    CYCLE = "cycle"
    ERROR = "error"
    MAX_PIVOTS = "max_pivots"
    NUMERICAL_FAILURE = "numerical_failure"
    TIME_LIMIT = "time_limit"


@dataclass(frozen=True)
class LCPResult(ReadOnlyInfo):
    """Outcome of :func:`contact_lcp.lcp.solve`.

    Attributes
    ----------
    z : (n,) ndarray
        The returned point (the best one the method reached when not SOLVED).
    w : (n,) ndarray
        ``M z + q``, recomputed by ``solve`` from the caller's data.
    status : LCPStatus
        Why the solve ended.
    method : str
        The method name as given to ``solve``.
    pivots : int
        Pivots (or iterations, for iterative methods) performed.
    error : float
        The per-row natural-map residual of ``z`` (each row's ``|min(zs_i, ws_i)|`` over
        its own tolerance, :mod:`contact_lcp.lcp.residual`) times ``info['tol']``, in the
        units of ``q``: ``error <= info['tol']`` is the certification test.
    info : Mapping
        Method-specific statistics (read-only), e.g. ``nodes`` expanded by the search,
        ``tol`` the certification tolerance, ``reason`` of a failure.
    """

    z: np.ndarray
    w: np.ndarray
    status: LCPStatus
    method: str
    pivots: int
    error: float
    info: Mapping = field(default_factory=dict)

    @property
    def success(self) -> bool:
        """True when the status is SOLVED."""
        return self.status is LCPStatus.SOLVED


@dataclass(frozen=True)
class MethodOutput:
    """What a ``solve_*`` method hands back to :func:`contact_lcp.lcp.solve`.

    ``solve`` turns it into an :class:`LCPResult` after recomputing ``w`` and the error
    itself; a method never certifies its own answer.
    """

    z: np.ndarray
    status: LCPStatus
    pivots: int
    info: Mapping = field(default_factory=dict)
