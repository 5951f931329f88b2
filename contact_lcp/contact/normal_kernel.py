"""One compiled call for a step of the normal-row models (viscous, no-slip) with the PPM.

:class:`~contact_lcp.contact.normal_rows.NormalRowsModel` solves a step as: tangential
rows of the touching contacts (damped rows for viscous, eliminated by a Schur complement,
:mod:`contact_lcp.contact.tangential`; no-slip's held rows through the velocities they
leave free, :mod:`contact_lcp.contact.no_slip_space`), the modified PPM on the
equilibrated normal-row LCP (:mod:`contact_lcp.lcp.ppm_kernel`), the residual check of
:func:`contact_lcp.lcp.residual.certify`, then the release of separating contacts and a
re-solve (:mod:`contact_lcp.contact.normal_rows`). Written as Python calls around small
kernels, the glue cost several times the arithmetic (a legged step: ~190 us of which
~40 us of arithmetic). :func:`normal_step` runs the whole sequence in one call, built
from the same compiled pieces (:func:`~contact_lcp.contact.tangential.schur`,
:func:`~contact_lcp.contact.no_slip_space.null_space`, the PPM's ``ppm_kernel``, the
scaling's ``_ruiz`` and the residual's ``row_verdict``), so its answer is the one the
Python sequence computes and is certified by the same per-row test as
:func:`contact_lcp.lcp.solve`.

It covers only the path that succeeds: any solve the PPM does not end, any answer that
does not certify, a damped block that is not positive definite or a non-finite value
returns a non-zero code and the model then runs its Python sequence (which has the PPM's
fallback to the robust search, the frictionless fallback and the safe stop).
"""

import numpy as np
from numba import njit

from contact_lcp.contact.no_slip_space import null_space
from contact_lcp.contact.tangential import cholesky_lower, schur, tangent_impulse
from contact_lcp.contact.viscous_dofs import viscous_dofs, viscous_dofs_impulse
from contact_lcp.lcp.ppm_kernel import ppm_kernel
from contact_lcp.lcp.residual import row_verdict
from contact_lcp.lcp.scaling import MAX_SWEEPS, _apply, _first_factor, _pow2_sqrt, inf_norms, q_scale


#: codes of :func:`normal_step`
SOLVED, PPM_FAILED, NOT_CERTIFIED, NOT_DEFINITE, NOT_FINITE = range(5)
REASONS = {PPM_FAILED: "the PPM ended without an answer", NOT_CERTIFIED: "not certified",
           NOT_DEFINITE: "damped tangential block not positive definite",
           NOT_FINITE: "non-finite LCP or answer"}


@njit(cache=True)
def symmetric_ruiz(A, c, max_sweeps):
    """:func:`contact_lcp.lcp.scaling._ruiz` of a symmetric ``A``, on its upper triangle.

    The column factors of a symmetric matrix stay its row factors times the uniform
    starting factor ``2^-E`` (every factor is a power of two, so ``(|a_ij| d_i) d_j`` and
    ``(|a_ij| d_j) d_i`` are the same number): the same ``(d1, d2, s, sweeps)``, bit for
    bit, for half the reads.
    """
    n = c.shape[0]
    d = np.ones(n)
    first = _first_factor(A)
    row = np.empty(n)
    sweeps = 0
    for _ in range(max_sweeps):
        row[:] = 0.0
        for i in range(n):
            di = d[i]
            for j in range(i, n):
                a = abs(A[i, j]) * di * (first * d[j])
                if a > row[i]:
                    row[i] = a
                if a > row[j]:
                    row[j] = a
        done = True
        for i in range(n):
            if row[i] > 0.0 and not 0.5 <= row[i] <= 2.0:
                done = False
        if done:
            break
        sweeps += 1
        for i in range(n):
            d[i] /= _pow2_sqrt(row[i])
    s = q_scale(c, d)
    return d, first * d, s, sweeps


@njit(cache=True)
def solve_certified(A, c, beta0, max_pivots, singular_tol, keys):
    """The modified PPM on the equilibrated ``(A, c)``, certified.

    Returns ``(code, z, w, err, tol, pivots)``: ``z`` (n,) in the caller's units,
    ``w = A z + c``, ``err`` and ``tol`` as :func:`contact_lcp.lcp.residual.certify`
    (units of ``c``); ``code`` SOLVED, PPM_FAILED, NOT_CERTIFIED or NOT_FINITE.
    """
    n = c.shape[0]
    if n == 0:
        return SOLVED, np.zeros(0), np.zeros(0), 0.0, 0.0, 0
    for i in range(n):
        if not np.isfinite(c[i]):
            return NOT_FINITE, np.zeros(n), c.copy(), np.inf, 0.0, 0
        for j in range(n):
            if not np.isfinite(A[i, j]):
                return NOT_FINITE, np.zeros(n), c.copy(), np.inf, 0.0, 0
    d1, d2, s, _ = symmetric_ruiz(A, c, MAX_SWEEPS)  # A is symmetric as built (schur)
    Ms, qs = _apply(A, c, d1, d2, s)
    norm_M, norm_q = inf_norms(Ms, qs)
    code, zs, _, pivots, _, _ = ppm_kernel(Ms, qs, beta0, max_pivots, singular_tol, keys,
                                           norm_M, norm_q)
    z = zs * (s * d2)
    if code != 0:
        return PPM_FAILED, z, c.copy(), np.inf, 0.0, pivots
    for i in range(n):
        if not np.isfinite(z[i]):
            return NOT_FINITE, z, c.copy(), np.inf, 0.0, pivots
    w, ok, err, tol = row_verdict(A, c, z, d1, d2, s)  # solve()'s per-row verdict
    if not ok:
        return NOT_CERTIFIED, z, w, err, tol, pivots
    return SOLVED, z, w, err, tol, pivots


@njit(cache=True)
def _reduce(G, J, K, u, v_free, bias, k, l, contacts, viscous, coefficient, group,
            per_pair, h, singular_tol):
    """Tangential rows of ``contacts`` and the normal rows' LCP ``(A, c)``:
    ``(ok, A, c, t, L, Y, y, dofs, P, Ls, Q, hb, count, rows, candidates)``. Viscous:
    ``dofs`` True when the rows were eliminated through the dofs (:func:`viscous_dofs`:
    ``P, Ls, Q, hb``), else through ``W = L L'`` (``Y, y``). No-slip: through the
    velocities the rows leave free (:func:`~contact_lcp.contact.no_slip_space.null_space`),
    ``f_t = y + Y f_n`` (``L`` empty). ``count`` the contacts given rows, ``rows`` the
    directions they hold (no-slip: the rank; viscous: the rows)."""
    nr = np.empty(k + l, dtype=np.int64)
    for i in range(k):
        nr[i] = 3 * i
    for i in range(l):
        nr[k + i] = 3 * k + i
    on = np.flatnonzero(contacts)
    cand = np.empty(2 * on.size, dtype=np.int64)
    for a in range(on.size):
        cand[2 * a] = 3 * on[a] + 1
        cand[2 * a + 1] = 3 * on[a] + 2
    nv = K.shape[0]
    empty = np.zeros((0, 0))
    hb = np.zeros(0)
    if viscous:
        b = np.zeros(k)
        if per_pair:  # b is the pair's total, split among its touching contacts
            count = np.zeros(k)
            for i in range(k):
                if contacts[i]:
                    count[group[i]] += 1.0
            for i in range(k):
                if contacts[i]:
                    b[i] = coefficient / max(count[group[i]], 1.0)
        else:
            for i in range(k):
                if contacts[i]:
                    b[i] = coefficient
        damped = np.flatnonzero(b > 0.0)
        t = np.empty(2 * damped.size, dtype=np.int64)
        for a in range(damped.size):
            t[2 * a] = 3 * damped[a] + 1
            t[2 * a + 1] = 3 * damped[a] + 2
        m = t.size
        hb = np.empty(m)
        for i in range(m):
            hb[i] = h * b[t[i] // 3]
        if m > nv:  # more damped rows than dofs: through the dofs
            ok, A, c, P, Ls, Q = viscous_dofs(J, K, u, bias, nr, t, hb)
            if ok:
                return (True, A, c, t, empty, empty, hb[:0], True, P, Ls, Q, hb,
                        damped.size, t.size, cand.size)
        W = np.empty((m, m))
        for i in range(m):
            for j in range(m):
                W[i, j] = G[t[i], t[j]]
            W[i, i] += 1.0 / hb[i]
        ok, L = cholesky_lower(W)
        count_on = damped.size
    else:
        A, c, F_n, f_0, _, _, rank = null_space(J, K, v_free, bias, nr, cand, singular_tol)
        return (True, A, c, cand, empty, F_n, f_0, False, empty, empty, empty, hb, on.size,
                rank, cand.size)
    A, c, Y, y = schur(G, u, bias, nr, t, L)
    return ok, A, c, t, L, Y, y, False, empty, empty, empty, hb, count_on, t.size, cand.size


@njit(cache=True)
def normal_step(G, J, K, u, v_free, bias, phi, k, l, viscous, coefficient, group, per_pair,
                h, singular_tol, touch_distance, release_speed, max_releases,
                pair, last_pair, last_basis, max_pivots, ppm_singular_tol, keys):
    """A whole step of a normal-row model with the PPM (see the module notes).

    Parameters
    ----------
    G, J, K, u, v_free : (r, r), (r, nv), (nv, nv), (r,), (nv,) ndarray
        The problem's Delassus matrix [1/kg], rows, inverse inertia [1/kg], free row
        velocities [m/s], ``r = 3k + l``, and free velocity.
    bias, phi : (k + l,) ndarray
        Stabilization [m/s] and gaps [m] of the normal rows.
    k, l : int
        Contacts and unilateral rows.
    viscous : bool
        Viscous model (damped rows, coefficient [N.s/m], ``group`` (k,) pair index per
        contact, ``per_pair``), else no-slip (every direction of the rows above
        ``singular_tol`` of the largest held, :mod:`contact_lcp.contact.no_slip_space`;
        every contact the answer loads is held, touching or not).
    h : float
        Time step [s].
    touch_distance, release_speed, max_releases
        As :class:`~contact_lcp.contact.normal_rows.NormalRowsModel`.
    pair, last_pair : (k,), (k',) int64 ndarray
        Surface-pair keys of the contacts and of the last solved step's (``k' = 0``: no
        last step).
    last_basis : (b,) int64 ndarray
        Normal rows loaded in the last step's answer (sorted): the warm start of the
        first PPM solve when the contacts are the same (same pair keys, in order).
    max_pivots, ppm_singular_tol, keys
        The PPM's pivot limit, singular tolerance and Zobrist keys ((2n+1,) int64).

    Returns
    -------
    tuple
        ``(code, f, basis, warm, pivots, solves, released, loaded_released, count,
        tangent_rows, candidates, held)``: ``f`` (r,) impulses [N.s]; ``basis`` the
        normal rows loaded in the answer (the next step's ``last_basis``); ``warm`` whether
        ``last_basis`` was used; ``released`` touching contacts left without tangential
        rows, ``loaded_released`` those of them that carry load; ``count`` contacts given
        rows, ``tangent_rows`` the directions they hold of the ``candidates`` offered, and
        ``held`` (k,) which contacts had rows (last solve).
    """
    n = k + l
    warm = last_pair.shape[0] == k and last_basis.shape[0] > 0
    if warm:
        for i in range(k):
            if pair[i] != last_pair[i]:
                warm = False
                break
        for i in range(last_basis.shape[0]):
            if last_basis[i] >= n:
                warm = False
    beta0 = last_basis if warm else np.zeros(0, dtype=np.int64)
    touch = np.empty(k, dtype=np.bool_)
    for i in range(k):
        touch[i] = phi[i] <= touch_distance
    contacts = touch.copy()
    basis = beta0
    pivots = 0
    solves = 0
    code = SOLVED
    z = np.zeros(n)
    w = np.zeros(n)
    err = tol = 0.0
    t = np.zeros(0, dtype=np.int64)
    L = np.zeros((0, 0))
    Y = np.zeros((0, n))
    y = np.zeros(0)
    dofs = False
    P = Ls = Q = np.zeros((0, 0))
    hb = np.zeros(0)
    count = rows = ncand = 0
    held = contacts.copy()
    for _ in range(max_releases + 1):
        held = contacts.copy()  # the rows of the answer kept last
        ok, A, c, t, L, Y, y, dofs, P, Ls, Q, hb, count, rows, ncand = _reduce(
            G, J, K, u, v_free, bias, k, l, held, viscous, coefficient, group, per_pair,
            h, singular_tol)
        if not ok:
            code = NOT_DEFINITE
            break
        code, z, w, err, tol, piv = solve_certified(A, c, basis, max_pivots,
                                                    ppm_singular_tol, keys)
        solves += 1
        pivots += piv
        if code != SOLVED:
            break
        basis = np.flatnonzero(z > 0.0)
        changed = False
        for i in range(k):
            loaded = z[i] > 0.0
            if contacts[i] and not loaded and w[i] > release_speed:
                contacts[i] = False  # lifting off: released
                changed = True
            elif (touch[i] or not viscous) and not contacts[i] and loaded:
                contacts[i] = True   # loaded again (no-slip: any loaded contact)
                changed = True
        if not changed:
            break
    f = np.zeros(3 * k + l)
    released = loaded_released = 0
    if code == SOLVED:
        for i in range(k):
            if touch[i] and not held[i]:
                released += 1
            if (touch[i] or not viscous) and not held[i] and z[i] > 0.0:
                loaded_released += 1
        for i in range(k):
            f[3 * i] = z[i]
        for i in range(l):
            f[3 * k + i] = z[k + i]
        if t.size and dofs:
            u_t = np.empty(t.size)
            for a in range(t.size):
                u_t[a] = u[t[a]]
            ft = viscous_dofs_impulse(P, Ls, Q, hb, u_t, z)
            for a in range(t.size):
                f[t[a]] = ft[a]
        elif t.size and not viscous:
            ft = y + Y @ z
            for a in range(t.size):
                f[t[a]] = ft[a]
        elif t.size:
            ft = tangent_impulse(L, Y, y, z)
            for a in range(t.size):
                f[t[a]] = ft[a]
    return (code, f, basis, warm, pivots, solves, released, loaded_released, count, rows,
            ncand, held)
