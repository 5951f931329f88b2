"""The contact step's LCP solve: frictionless first, then frictional, with fallbacks.

Yamane & Nakamura (2008) solve the frictionless LCP first and start the frictional one
from the contacts that carry load; when the frictional LCP fails they apply the
frictionless result. This module does exactly that, on top of
:func:`contact_lcp.lcp.solve`, and never applies an impulse that ``solve`` did not
certify: when nothing is certified the caller gets ``safe_stop = True`` and zero impulse.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from contact_lcp.contact.lcp_builder import (
    ContactLCP,
    build_contact_lcp,
    build_frictionless_lcp,
)
from contact_lcp.lcp import LCPResult, LCPStatus, solve

#: methods that accept a warm start ``initial_basis``
WARM_START_METHODS = ("robust",)


@dataclass(frozen=True)
class ContactSolve:
    """Outcome of one contact step's solve.

    Attributes
    ----------
    f : (3k + l,) ndarray
        Impulse to apply, in Delassus coordinates (per contact n, t1, t2; then the
        unilateral rows) [N.s]. Zero when ``safe_stop``.
    applied : str
        'frictional', 'frictionless' (fallback) or 'safe_stop'.
    status : LCPStatus or None
        Status of the applied solve (None for safe_stop); the frictional status is in
        ``frictional``.
    method : str
        The LCP method that produced the applied impulse ('none' for safe_stop).
    pivots : int
        Pivots of all solves this step.
    fallbacks : int
        0 when the frictional solve was applied, 1 for frictionless, 2 for safe_stop.
    frictional, frictionless : LCPResult or None
        The individual results (None when not attempted).
    lcp : ContactLCP or None
        The frictional LCP as built (for recording and replay).
    """

    f: np.ndarray
    applied: str
    status: Optional[LCPStatus]
    method: str
    pivots: int
    fallbacks: int
    frictional: Optional[LCPResult] = None
    frictionless: Optional[LCPResult] = None
    lcp: Optional[ContactLCP] = None
    info: dict = field(default_factory=dict)

    @property
    def safe_stop(self):
        """True when no certified impulse existed and the caller must stop safely."""
        return self.applied == "safe_stop"


def _frictional(G, u, mu, k, l, d, bias, method, options, basis):
    """Build and solve the frictional LCP; the impulse ``f`` is None unless certified."""
    lcp = build_contact_lcp(G, u, mu, num_directions=d, num_unilateral=l, normal_bias=bias)
    opts = dict(options)
    if basis is not None and method in WARM_START_METHODS:
        opts["initial_basis"] = basis
    res = solve(lcp.M, lcp.q, method, **opts)
    return lcp, res, (lcp.impulses(res.z) if res.success else None)


def _frictional_loaded_only(G, u, mu, k, l, d, bias, a, method, options, info):
    """The frictional LCP restricted to the contacts loaded in the frictionless solution.

    ``a`` is the frictionless solution (k + l,). The impulse is accepted only when every
    dropped contact ends with a normal velocity >= -tol (no new penetration).
    """
    keep = np.flatnonzero(a[:k] > 0.0)
    rows = np.concatenate([(3 * keep[:, None] + np.arange(3)).ravel(), 3 * k + np.arange(l)])
    normals = np.concatenate([keep, k + np.arange(l)])
    basis = np.flatnonzero(a[normals] > 0.0)
    lcp, res, f_sub = _frictional(G[np.ix_(rows, rows)], u[rows], mu[keep], keep.size, l, d,
                                  bias[normals], method, options, basis)
    if f_sub is None:
        return lcp, res, None
    f = np.zeros(G.shape[0])
    f[rows] = f_sub
    dropped = np.setdiff1d(np.arange(k), keep)
    v_n = (u + G @ f)[3 * dropped] + bias[dropped]
    if np.any(v_n < -res.info["tol"]):
        info["drop_rejected"] = True
        return lcp, res, None
    info["dropped_contacts"] = int(dropped.size)
    return lcp, res, f


def solve_contact_step(G, u, mu, *, num_unilateral=0, normal_bias=None, num_directions=8,
                       method="robust", options=None, two_step=True, drop_unloaded=False,
                       fallback=True):
    """Contact impulses for one time step.

    Parameters
    ----------
    G : (3k + l, 3k + l) ndarray
        Delassus matrix in contact coordinates [1/kg].
    u : (3k + l,) ndarray
        Relative velocity before the impulse [m/s].
    mu : (k,) ndarray
        Friction coefficients.
    num_unilateral : int
        ``l`` frictionless rows (joint limits) after the contacts.
    normal_bias : (k + l,) ndarray, optional
        Stabilization term added to the normal rows [m/s].
    num_directions : int
        Friction pyramid edges.
    method : str
        LCP method for both solves; ``options`` its keyword options.
    two_step : bool
        Solve the frictionless LCP first and warm-start the frictional one on the loaded
        contacts (robust method); also required for the frictionless fallback.
    drop_unloaded : bool
        Leave unloaded contacts out of the frictional LCP. The result is accepted only if
        the dropped contacts end with a non-negative normal velocity; otherwise the full
        frictional LCP is solved.
    fallback : bool
        Apply the certified frictionless impulse when the frictional solve fails.

    Returns
    -------
    ContactSolve
    """
    options = dict(options or {})
    G = np.asarray(G, dtype=float)
    u = np.asarray(u, dtype=float)
    mu = np.asarray(mu, dtype=float)
    l = int(num_unilateral)
    m = G.shape[0]
    k = (m - l) // 3
    d = int(num_directions)
    bias = np.zeros(k + l) if normal_bias is None else np.asarray(normal_bias, dtype=float)
    pivots = 0
    info = {}

    def frictionless():
        fl = build_frictionless_lcp(G, u, num_contacts=k, num_unilateral=l, normal_bias=bias)
        return solve(fl.M, fl.q, method, **options)

    fl_res = basis = None
    if two_step:
        fl_res = frictionless()
        pivots += fl_res.pivots
        if fl_res.success:
            basis = np.flatnonzero(fl_res.z > 0.0)
    fr_lcp = fr_res = f = None
    if drop_unloaded and basis is not None and k > 0:
        fr_lcp, fr_res, f = _frictional_loaded_only(G, u, mu, k, l, d, bias, fl_res.z,
                                                     method, options, info)
        pivots += fr_res.pivots
    if f is None:
        fr_lcp, fr_res, f = _frictional(G, u, mu, k, l, d, bias, method, options, basis)
        pivots += fr_res.pivots
    if f is not None:
        return ContactSolve(f, "frictional", fr_res.status, method, pivots, 0,
                            fr_res, fl_res, fr_lcp, info)
    if fallback and fl_res is None:
        fl_res = frictionless()
        pivots += fl_res.pivots
    if fallback and fl_res.success:
        f = np.zeros(m)
        f[0 : 3 * k : 3] = fl_res.z[:k]
        f[3 * k :] = fl_res.z[k:]
        return ContactSolve(f, "frictionless", fl_res.status, method, pivots, 1,
                            fr_res, fl_res, fr_lcp, info)
    return ContactSolve(np.zeros(m), "safe_stop", None, "none", pivots, 2,
                        fr_res, fl_res, fr_lcp, info)
