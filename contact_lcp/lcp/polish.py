"""A claimed solution that misses the per-row verdict by round-off, made exact.

A pivoting method decides which variables are basic with tolerances relative to the
whole problem, so a row whose data are at the round-off level of the rest can end on
the wrong side: a contact LCP row with ``q_i = -2.8e-15`` (the noise of a velocity
~0.1 m/s) and ``z_i = 0`` leaves ``w_i = q_i < 0``, which the per-row verdict of
:mod:`contact_lcp.lcp.residual` rightly rejects (the row's own data call for
``z_i = -q_i / M_ii``). :func:`polish` repairs such an answer by block principal
pivoting from it (Júdice & Pires 1994): the basic set is the method's positive ``z``
plus the rows whose ``w`` is negative (after its round-off-sized components are set to zero); each round solves that principal block, drops
the variables that came out negative and adds the rows whose ``w`` did, until the
answer certifies or :data:`MAX_ROUNDS` rounds are spent. It works on the equilibrated
problem (better conditioned) and :func:`contact_lcp.lcp.solve` re-certifies whatever it
returns, so it can only turn an uncertified claim into a certified answer.
"""

import numpy as np

from contact_lcp.lcp.residual import certify_rows, row_tolerance_vector

_EPS = float(np.finfo(float).eps)

#: block principal pivoting rounds before the repair gives up
MAX_ROUNDS = 8
#: components of an equilibrated answer below ``NOISE n eps (||Ms|| ||zs|| + ||qs||)``
#: are round-off and set to zero first (a backward-stable method leaves errors of
#: ``n eps`` times these norms)
NOISE = 10.0
#: block Gauss-Seidel sweeps over the violated rows before the block pivots
SWEEPS = 5
#: largest principal block it factors (dense: O(m^3), ~0.1 s at m = 1 000)
MAX_BLOCK = 1000


def polish(M, q, Ms, qs, zs, d1, d2, s):
    """``(z, w, ratio, T, Tz, rounds)`` of the first certified answer reached from the
    equilibrated answer ``zs`` (see the module notes; ``rounds`` 0: cleaning its
    round-off, or Gauss-Seidel updates of its violated rows, sufficed), or None.

    ``(Ms, qs)`` is ``(M, q)`` equilibrated by ``(d1, d2, s)``; the returned values are
    those of :func:`contact_lcp.lcp.residual.certify_rows` in the caller's units.
    """
    n = qs.shape[0]
    # round-off left in z: components below what evaluating M z + q in floating point
    # cannot resolve anyway (a friction impulse of 2.5e-13 N.s beside 240 N.s, with no
    # normal impulse under it, violates its cone row by its own data)
    noise = NOISE * n * _EPS * (np.abs(Ms).sum(axis=1).max() * np.abs(zs).max()
                                + np.abs(qs).max())
    zs = np.where(np.abs(zs) <= noise, 0.0, zs)
    finite, z, w, ratio, T, Tz = certify_rows(M, q, zs, d1, d2, s)
    if finite and ratio <= 1.0:
        return z, w, ratio, T, Tz, 0
    lifted = _lifted(M, q, Ms, zs, d1, d2, s)
    if lifted is not None:
        zs = lifted
        finite, z, w, ratio, T, Tz = certify_rows(M, q, zs, d1, d2, s)
        if finite and ratio <= 1.0:
            return z, w, ratio, T, Tz, 0
    # rows whose own data are below what the rest resolves, with the others held: a
    # contact approaching at 2.8e-13 m/s left at z_i = 0 among redundant contacts (whose
    # principal blocks below are singular) takes z_i = -w_i / M_ii
    zs = zs.copy()
    diag = np.diag(Ms)
    usable = diag > 1e-8 * np.abs(Ms).max(axis=1)  # (a friction-cone row's M_ii is 0)
    held = np.zeros(qs.shape[0], dtype=bool)  # rows taken into the block so far
    for _ in range(SWEEPS):
        wv, tol = row_tolerance_vector(M, q, zs * (s * d2), d1, d2, s)
        ws = d1 * wv / s
        new = (np.abs(np.minimum(zs, ws)) > tol) & (np.minimum(zs, ws) < 0.0) & usable
        if not new.any():
            break
        # the violated rows' block solved with the others fixed, every row once violated
        # kept in it (coupled contacts approaching at noise speeds hand their violation
        # to each other row by row)
        held |= new
        bad = np.flatnonzero(held)
        step = np.linalg.lstsq(Ms[np.ix_(bad, bad)], -ws[bad], rcond=None)[0]
        zs[bad] = np.maximum(0.0, zs[bad] + step)
        finite, z, w, ratio, T, Tz = certify_rows(M, q, zs, d1, d2, s)
        if finite and ratio <= 1.0:
            return z, w, ratio, T, Tz, 0
    ws = Ms @ zs + qs
    basic = (zs > 0.0) | (ws < 0.0)
    for rounds in range(1, MAX_ROUNDS + 1):
        x = np.zeros_like(zs)
        if basic.sum() > MAX_BLOCK:
            return None
        if basic.any():
            block = Ms[np.ix_(basic, basic)]
            try:
                x[basic] = np.linalg.solve(block, -qs[basic])
            except np.linalg.LinAlgError:
                return None
        if not np.all(np.isfinite(x)):
            return None
        finite, z, w, ratio, T, Tz = certify_rows(M, q, x, d1, d2, s)
        if finite and ratio <= 1.0:
            return z, w, ratio, T, Tz, rounds
        wx = Ms @ x + qs
        drop, add = basic & (x < 0.0), ~basic & (wx < 0.0)
        if not (drop.any() or add.any()):
            return None
        basic = (basic & ~drop) | add
    return None


def _lifted(M, q, Ms, zs, d1, d2, s):
    """``zs`` with its free lifts made (None: there was none to make).

    A variable ``z_j`` whose row is 0 on its diagonal and at 0 (``|w_j| <= tol_j``) and
    whose column is nonnegative, in rows whose variables are all at 0, can rise without
    breaking any condition: it raises only those rows' ``w`` and leaves its own. It rises
    just enough to lift the most negative of them to 0. This is the sliding speed
    ``lambda`` of an unloaded pyramid contact that slips at round-off speed (a falling
    robot's 35 contacts, some carrying nothing: their edge rows ``D' v + lambda`` ended
    at -5e-9 m/s, ``lambda`` short of the slip by that much); no other row can fix
    them, as a friction impulse there would need a normal one."""
    w, tol = row_tolerance_vector(M, q, zs * (s * d2), d1, d2, s)
    ws = d1 * w / s
    low = ws < -tol
    if not low.any():
        return None
    out, done = zs.copy(), False
    for j in np.flatnonzero((zs >= 0.0) & (np.abs(ws) <= tol) & (np.diag(Ms) == 0.0)):
        col = Ms[:, j]
        rows = np.flatnonzero(col)
        if rows.size == 0 or np.any(col[rows] < 0.0) or np.any(out[rows] != 0.0) \
                or not np.any(low[rows]):
            continue
        rise = np.max(-ws[rows] / col[rows])
        if rise > 0.0:
            out[j] += rise
            ws = ws + rise * col
            low = ws < -tol
            done = True
    return out if done else None


def repaired(M, q, z):
    """:func:`polish` on ``(M, q)`` taken as they are (a method's check on its
    equilibrated data): the repaired ``z`` when it passes the per-row test there, else
    None."""
    n = q.shape[0]
    ones = np.ones(n)
    out = polish(M, q, M, q, np.asarray(z, dtype=float), ones, ones, 1.0)
    return None if out is None else out[0]
