"""The certification of :mod:`contact_lcp.lcp.residual` for an ``M`` stored sparse (CSR).

The per-row verdict and the Ruiz equilibration it is measured in
(:mod:`contact_lcp.lcp.scaling`) only ever read an entry ``M_ij`` through ``|M_ij|`` in a
sum or a maximum, through ``M_ij z_j`` in a sum, or through ``M_ij != 0``; a zero entry
adds nothing to any of them. The kernels here run the same formulas over the stored
entries only, in increasing column order (the dense loops' order), so that for a CSR
matrix with sorted indices and no explicit zeros they return what
:func:`contact_lcp.lcp.residual.certify` returns on ``M.toarray()``, bit for bit
(``test/test_islands.py`` checks it). Their cost is the number of stored entries instead
of ``n^2``: the relaxed model's large LCPs (``n ~ 4500`` on the settled 200-sphere pour)
hold a few per cent of nonzeros, and a dense certification there cost ~0.3 s a solve.
"""


import numpy as np
from numba import njit
from scipy import sparse

from contact_lcp.lcp.residual import (CERT_FACTOR, ROUNDOFF_FACTOR, _tolerance, reported_error,
                                      verdict)
from contact_lcp.lcp.scaling import (MAX_SWEEPS, Scaling, _balanced, _pow2_below, _rescale,
                                     q_scale)

_EPS = float(np.finfo(float).eps)


@njit(cache=True)
def _first_factor_csr(data):
    mx = 0.0
    for x in data:
        mx = max(mx, abs(x))
    return _pow2_below(mx)


@njit(cache=True)
def _ruiz_csr(indptr, indices, data, q, max_sweeps):
    """``(d1, d2, s, sweeps)`` of :func:`contact_lcp.lcp.scaling._ruiz` on CSR ``M``."""
    n = q.shape[0]
    d1 = np.ones(n)
    d2 = np.full(n, _first_factor_csr(data))
    row = np.zeros(n)
    col = np.zeros(n)
    sweeps = 0
    for sweep in range(max_sweeps):
        col[:] = 0.0
        for i in range(n):
            di = d1[i]
            r = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                a = abs(data[p]) * di * d2[j]
                col[j] = max(col[j], a)
                r = max(r, a)
            row[i] = r
        if _balanced(row, col):
            break
        sweeps += 1
        _rescale(row, col, d1, d2)
    return d1, d2, q_scale(q, d1), sweeps


@njit(cache=True)
def _row_terms_csr(indptr, indices, data, q, z, d1, d2, s):
    """``(w, a, mag, floor)`` of :func:`contact_lcp.lcp.residual._row_terms` on CSR ``M``:
    one plain loop over each row's stored entries (with every entry stored, the
    definition of the module notes of :mod:`contact_lcp.lcp.residual` as written)."""
    n = q.shape[0]
    w = np.empty(n)
    a = np.empty(n)
    zs = np.empty(n)
    mag = np.empty(n)
    norm_z = norm_M = norm_q = 0.0
    for j in range(n):
        zs[j] = abs(z[j]) / (s * d2[j])
        norm_z = max(norm_z, zs[j])
    k = CERT_FACTOR * n * _EPS
    for i in range(n):
        acc = q[i]
        big = read = size = rows = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            m = data[p]
            acc += m * z[j]
            e = abs(m) * d2[j]
            big = max(big, e)
            rows += e
            size += e * zs[j]
            if m != 0.0:
                read += zs[j]
        w[i] = acc
        qi = abs(q[i]) / s
        a[i] = k * d1[i] * (big * read + qi)
        mag[i] = d1[i] * (qi + size)
        norm_M = max(norm_M, d1[i] * rows)
        norm_q = max(norm_q, d1[i] * qi)
    floor = ROUNDOFF_FACTOR * n * _EPS * (norm_M * norm_z + norm_q)
    return w, a, mag, floor


@njit(cache=True)
def _row_pass_csr(indptr, indices, data, q, z, d1, d2, s):
    """``(w, ratio, T, Tz)`` of :func:`contact_lcp.lcp.residual.row_pass` on CSR ``M``."""
    w, a, mag, floor = _row_terms_csr(indptr, indices, data, q, z, d1, d2, s)
    tol = _tolerances_csr(indptr, indices, data, d1, d2, a, mag, floor)
    ratio, T, Tz = verdict(w, tol, z, d1, d2, s)
    return w, ratio, T, Tz


@njit(cache=True)
def _tolerances_csr(indptr, indices, data, d1, d2, a, mag, floor):
    """Each row's ``tol_i`` (:func:`contact_lcp.lcp.residual.row_tolerance_vector`) from
    the terms of :func:`_row_terms_csr`: one plain loop over each row's stored entries."""
    n = a.shape[0]
    tol = np.empty(n)
    for i in range(n):
        spread = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            spread += abs(data[p]) * d2[indices[p]] * a[indices[p]]
        tol[i] = _tolerance(a[i], d1[i], spread, mag[i], floor)
    return tol


def _csr(M):
    M = sparse.csr_matrix(M, dtype=float)
    M.eliminate_zeros()
    M.sort_indices()
    return M


def equilibrate_sparse(M, q, *, max_sweeps=MAX_SWEEPS):
    """:func:`contact_lcp.lcp.scaling.equilibrate` of a sparse ``M`` (n, n)."""
    M = _csr(M)
    q = np.ascontiguousarray(q, dtype=float)
    d1, d2, s, sweeps = _ruiz_csr(M.indptr, M.indices, M.data, q, int(max_sweeps))
    return Scaling(d1, d2, float(s), int(sweeps))


def certify_sparse(M, q, z, scaling=None):
    """:func:`contact_lcp.lcp.residual.certify` of a sparse ``M`` (n, n): ``(error, w,
    tol)`` with ``error <= tol`` the per-row test, in the units of ``q``."""
    M = _csr(M)
    q = np.ascontiguousarray(q, dtype=float)
    z = np.ascontiguousarray(z, dtype=float)
    if q.shape[0] == 0:
        return 0.0, np.zeros(0), 0.0
    if scaling is None:
        d1, d2, s, _ = _ruiz_csr(M.indptr, M.indices, M.data, q, MAX_SWEEPS)
    else:
        d1, d2, s = scaling.d1, scaling.d2, float(scaling.s)
    w, ratio, T, _ = _row_pass_csr(M.indptr, M.indices, M.data, q, z, d1, d2, float(s))
    return reported_error(ratio, T), w, float(T)
