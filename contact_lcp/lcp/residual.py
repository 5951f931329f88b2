"""The single definition of the LCP error and tolerance used to certify every solution.

Consistent units
----------------
``z`` and ``w`` have different units (impulses and velocities for contact LCPs), so a
residual that compares both with one number depends on the units: multiplying ``M`` by
1e3 used to let a ``z`` with a component at -18 % of ``||z||`` pass. Here every answer is
measured in the units of the equilibrated problem (:mod:`contact_lcp.lcp.scaling`):
``zs = z / (s d2)`` and ``ws = d1 w / s`` with ``w = M z + q`` computed from the caller's
data, and

    error_rel = ||min(zs, ws)||_inf,
    tol_rel   = min(1e4 n eps (||Ms||_inf ||zs||_inf + ||qs||_inf), 1e-3),

where ``||Ms||_inf`` and ``||qs||_inf`` are between 1/2 and 2 (no absolute floor).
``error_rel <= tol_rel`` holds or fails the same way for ``(alpha M, beta q)`` and for
``(D1 M D2, D1 q)``: a negative ``z_i``, a negative ``w_i`` and a complementarity gap
``min(z_i, w_i) > 0`` are each compared with the scale of their own variable.

A backward-stable pivoting method leaves an error of about
``n eps (||Ms|| ||zs|| + ||qs||)`` in ``ws`` (Drake's Lemke uses ``n ||M||_inf 10 eps``);
the factor 1e4 leaves room for the ill-conditioned, rank-deficient Delassus matrices of
redundant contact while still rejecting anything visibly wrong. The cap (``TOL_CAP``)
keeps an answer with huge components from licensing a large error elsewhere.

For reporting, both numbers are multiplied by the largest w-unit ``W = max_i s / d1_i``,
so that ``error`` and ``tol`` are in the units of ``q`` (velocities [m/s] for contact
LCPs) and ``error <= tol`` is the same test. ``tol`` is thus also a bound, in the units of
``q``, on how negative a certified ``w_i`` can be.
"""

import numpy as np
from numba import njit

from contact_lcp.lcp.scaling import Scaling, equilibrate, inf_norms

_EPS = float(np.finfo(float).eps)

#: ``tol_rel = CERT_FACTOR * n * eps * (||Ms|| ||zs|| + ||qs||)``.
CERT_FACTOR = 1e4
#: ... but never more than this (equilibrated units, where ``||qs||_inf <= 1``). The
#: formula grows with ``||zs||``, so an answer with a huge component would carry its own
#: license: a Lemke path that ended on a ray at ``||z|| ~ 1e12`` had a tolerance of 1e7
#: m/s on the pour's LCP at t = 1.15 s. A backward-stable answer leaves an error of about
#: ``n eps ||Ms|| ||zs||``, below this cap up to ``||zs|| ~ 1e8`` at n = 5 000.
TOL_CAP = 1e-3


@njit(cache=True)
def certification_tolerance(n, norm_M, norm_q, norm_z):
    """``min(CERT_FACTOR n eps (norm_M norm_z + norm_q), TOL_CAP)``: the certification
    tolerance in equilibrated units (the one definition; compiled callers included)."""
    return min(CERT_FACTOR * n * _EPS * (norm_M * norm_z + norm_q), TOL_CAP)


@njit(cache=True)
def _pass(M, q, z, d1, d2, s):
    """``w = M z + q`` and, in equilibrated units, ``||min(zs, ws)||_inf``, ``||Ms||_inf``,
    ``||qs||_inf``, ``||zs||_inf``."""
    n = q.shape[0]
    w = np.empty(n)
    err = norm_M = norm_q = norm_z = 0.0
    for i in range(n):
        acc = q[i]
        row = 0.0
        for j in range(n):
            acc += M[i, j] * z[j]
            row += abs(M[i, j]) * d2[j]
        w[i] = acc
        zs = z[i] / (s * d2[i])
        ws = d1[i] * acc / s
        err = max(err, abs(min(zs, ws)))
        norm_M = max(norm_M, d1[i] * row)
        norm_q = max(norm_q, d1[i] * abs(q[i]) / s)
        norm_z = max(norm_z, abs(zs))
    return w, err, norm_M, norm_q, norm_z


@njit(cache=True)
def certify_scaled(M, q, zs, d1, d2, s):
    """Map an equilibrated answer back and certify it, in one call (for ``solve``).

    ``z = s d2 zs`` (units of ``z``), then the numbers of :func:`certify` for the scaling
    ``(d1, d2, s)``, bit for bit. Returns ``(finite, z, w, error, tol, W, Z)`` with
    ``W = max_i s / d1_i`` (the largest w-unit) and ``Z = max_j s d2_j`` (the largest
    z-unit); when ``z`` is not finite only ``finite`` (False) and ``z`` are meaningful.
    """
    n = q.shape[0]
    z = np.empty(n)
    W = Z = 0.0
    finite = True
    for i in range(n):
        unit = s * d2[i]
        z[i] = zs[i] * unit
        finite &= z[i] - z[i] == 0.0
        Z = max(Z, unit)
        W = max(W, s / d1[i])
    if not finite:
        return False, z, np.empty(0), np.nan, np.nan, W, Z
    w, err, norm_M, norm_q, norm_z = _pass(M, q, z, d1, d2, s)
    tol = certification_tolerance(n, norm_M, norm_q, norm_z)
    return True, z, w, err * W, tol * W, W, Z


@njit(cache=True, fastmath={"reassoc", "nsz"})
def _sum(a):
    """Sum of a 1-D array in any order (vectorised). Non-finite entries make it non-finite
    (only the association is relaxed, not IEEE's inf and NaN rules)."""
    total = 0.0
    for i in range(a.size):
        total += a[i]
    return total


@njit(cache=True)
def zero_is_exact(M, q):
    """``(exact, max(q))``: ``exact`` when ``q >= 0`` and every entry of ``M`` and ``q`` is
    finite (their sum is, without floating-point warnings): ``z = 0`` then solves
    LCP(M, q) exactly. Not exact also when the sum of finite entries overflows (the full
    path sorts that out). ``M`` C-contiguous."""
    if not q.min() >= 0.0:
        return False, 0.0
    return bool(np.isfinite(_sum(M.ravel()) + _sum(q))), q.max()


def relative_tolerance(n, norm_M, norm_q, norm_z):
    """``CERT_FACTOR * n * eps * (norm_M * norm_z + norm_q)`` (dimensionless when the
    norms are those of an equilibrated problem)."""
    return CERT_FACTOR * n * _EPS * (norm_M * norm_z + norm_q)


def raw_tolerance(M, q, z):
    """The tolerance formula applied to ``(M, q, z)`` in whatever units they come, capped
    at ``TOL_CAP`` as :func:`certification_tolerance` is.

    For methods that run on the equilibrated problem (their stopping tests); it is the
    certification tolerance only when ``(M, q)`` is already equilibrated. The cap keeps a
    method from stopping on an answer that :func:`certify` will reject (a path's point
    with a huge internal force and a violated row elsewhere): the robust search would
    return it as SOLVED, ``solve()`` report it as ERROR, and the search's next path would
    never run.
    """
    n = q.shape[0]
    if n == 0:
        return 0.0
    norm_M = float(np.abs(M).sum(axis=1).max())
    return float(certification_tolerance(n, norm_M, float(np.abs(q).max()),
                                         float(np.abs(z).max())))


def certify(M, q, z, scaling=None):
    """Error and tolerance of ``z`` for LCP(M, q), in consistent units, in one pass.

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
    z : (n,) ndarray
    scaling : Scaling, optional
        The equilibration of ``(M, q)``; computed when not given.

    Returns
    -------
    error : float
        ``W ||min(zs, ws)||_inf`` (module notes), in the units of ``q``.
    w : (n,) ndarray
        ``M z + q``.
    tol : float
        ``W tol_rel``, in the units of ``q``.
    """
    M = np.ascontiguousarray(M, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    z = np.ascontiguousarray(z, dtype=float)
    n = q.shape[0]
    if n == 0:
        return 0.0, np.zeros(0), 0.0
    if scaling is None:
        scaling = equilibrate(M, q)
    w, err, norm_M, norm_q, norm_z = _pass(M, q, z, scaling.d1, scaling.d2, scaling.s)
    W = float(np.max(scaling.w_unit))
    return float(err) * W, w, certification_tolerance(n, norm_M, norm_q, norm_z) * W


def lcp_error(M, q, z):
    """Natural-map residual of ``z`` for LCP(M, q) in consistent units.

    Returns
    -------
    error : float
        As :func:`certify`; zero exactly at a solution. Units of ``q``.
    w : (n,) ndarray
        ``M z + q``.
    """
    err, w, _ = certify(M, q, z)
    return err, w


def default_tolerance(M, q, z):
    """Certification tolerance of :func:`certify` (units of ``q``).

    For a humanoid contact LCP (n = 320, velocities ~ 1 m/s) it is about 1e-9 m/s.
    """
    return certify(M, q, z)[2]


__all__ = ["CERT_FACTOR", "TOL_CAP", "Scaling", "certification_tolerance", "certify",
           "default_tolerance", "lcp_error", "raw_tolerance", "relative_tolerance",
           "zero_is_exact"]


@njit(cache=True)
def certification_coefficients(M, q):
    """``(a, b)`` with ``raw_tolerance(M, q, z) == min(a * ||z||_inf + b, TOL_CAP)``.

    The same formula as :func:`raw_tolerance`, evaluated in numba to spare two numpy
    passes per solve of the robust search; ``test_lcp_robust.py`` pins the two together.
    """
    n = q.shape[0]
    norm_M, norm_q = inf_norms(M, q)
    k = 1e4 * n * np.finfo(np.float64).eps
    return k * norm_M, k * norm_q
