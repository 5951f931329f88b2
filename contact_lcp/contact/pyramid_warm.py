"""The pyramid model's first rung: the pyramids turned by the last answer, and its basis.

:class:`~contact_lcp.contact.pyramid.PyramidModel` carries from one step to the next a
:class:`~contact_lcp.contact.guess.PyramidGuess`: the friction direction of each contact
of its last certified answer (so that each pyramid's first edge lies along it, see the
model's notes) and that answer's basis. A standing robot or a resting stack keeps its
contacts, so :func:`first_rung` does the common step of the model in one compiled call:
the edge angles from the guess, the last basis on the contacts it loaded
(:func:`~contact_lcp.contact.pyramid_kernel.warm_pyramid`), and, when that certifies, the
basis flags and friction directions of the next guess. When the basis's answer only fails
because a contact it left out approaches, that contact joins the basis by its normal
impulse and the step is solved again (``grow`` times at most): in a tower of boxes on four
coplanar corners each, the load moves between corners from step to step, and a corner
the last answer left unloaded is loaded in the next one. Anything else (other contacts, a
basis that does not solve the step) is the model's ladder's next rung.
"""

import functools

import numpy as np
from numba import njit

from contact_lcp.contact.pyramid_kernel import (DROPPED_APPROACHES, approaches, basis_flags,
                                               warm_pyramid)

#: friction impulse below this fraction of the normal one has no direction (round-off)
NEGLIGIBLE_FRICTION = 1e-9
#: slip speed below which a contact counts as sticking [m/s]
STICK_SPEED = 1e-6
#: a pyramid turned within this of the contact frame's pyramid is not turned [rad]:
#: a turn of round-off size (1.7e-8 rad, from a friction impulse's direction) mixes
#: 1e-8 of one tangent row into the other, which turns exactly dependent rows (a chain's
#: two contacts on a rod, rank 4 of 6) into nearly dependent ones, and every pivoting
#: method then ends on tiny pivots (recorded in config/hoist.yaml at t = 2.729 s)
ANGLE_SNAP = 1e-6
#: a friction impulse at most this fraction of the cone's inscribed circle
#: (``|f_t| <= KEEP_INSIDE cos(pi / d) mu f_n``) sticks well inside the pyramid: its
#: contact keeps its pyramid in the next step instead of turning it to the impulse
KEEP_INSIDE = 0.9


@njit(cache=True)
def nearest_last(point, key, last_keys, last_p):
    """Index of the last step's contact of surface pair ``key`` nearest to ``point`` (3,)
    (the first of equally near ones); -1 when the pair had none."""
    best, nearest = np.inf, -1
    for j in range(last_keys.shape[0]):
        if last_keys[j] != key:
            continue
        d2 = ((point[0] - last_p[j, 0]) ** 2 + (point[1] - last_p[j, 1]) ** 2
              + (point[2] - last_p[j, 2]) ** 2)
        if d2 < best:
            best, nearest = d2, j
    return nearest


@njit(cache=True)
def edge_angles(u, R, p, pair, last_p, last_keys, last_dir, stick_speed, period, snap):
    """See :meth:`~contact_lcp.contact.pyramid.PyramidModel.edge_angles`: (k,) angles [rad]; one within ``snap`` of a
    multiple of ``period = 2 pi / d`` (the turns that give the contact frame's pyramid)
    is set to that multiple."""
    k = pair.shape[0]
    angle = np.zeros(k)
    for i in range(k):
        s1, s2 = u[3 * i + 1], u[3 * i + 2]
        if np.hypot(s1, s2) > stick_speed:
            angle[i] = np.arctan2(-s2, -s1)
        nearest = nearest_last(p[i], pair[i], last_keys, last_p)
        if nearest >= 0:
            g = last_dir[nearest]
            t1 = R[i, 0, 1] * g[0] + R[i, 1, 1] * g[1] + R[i, 2, 1] * g[2]
            t2 = R[i, 0, 2] * g[0] + R[i, 1, 2] * g[1] + R[i, 2, 2] * g[2]
            if np.hypot(t1, t2) > 0.0:
                angle[i] = np.arctan2(t2, t1)
        turns = np.round(angle[i] / period)
        if abs(angle[i] - turns * period) < snap:
            angle[i] = turns * period
    return angle


@functools.lru_cache(maxsize=8)  # (asked every step with the model's one period)
def keep_inside(period):
    """``KEEP_INSIDE cos(period / 2)``: the friction ratio ``|f_t| / (mu f_n)`` below
    which a contact keeps its pyramid."""
    return KEEP_INSIDE * np.cos(0.5 * period)


@njit(cache=True)
def friction_directions(f, R, mu, angle, inside):
    """(k, 3) unit direction in W of each contact's next first pyramid edge: its friction
    impulse's direction; 0 when there is none or it is round-off (below
    ``NEGLIGIBLE_FRICTION`` times the normal impulse: a body resting on a level surface,
    whose pyramid then stays on t1 instead of turning with the noise from step to step,
    which changed the basis of a resting stack). A contact whose friction impulse sticks
    well inside the cone (``|f_t| <= inside mu f_n``) keeps the first edge of its pyramid,
    at ``angle`` (k,) [rad] from its t1 axis (see ``KEEP_INSIDE``)."""
    k = R.shape[0]
    out = np.zeros((k, 3))
    for i in range(k):
        t1, t2 = f[3 * i + 1], f[3 * i + 2]
        n = np.hypot(t1, t2)
        if not (f[3 * i] > 0.0 and n > NEGLIGIBLE_FRICTION * f[3 * i]):  # unloaded: noise
            continue
        if n <= inside * mu[i] * f[3 * i]:
            t1, t2, n = np.cos(angle[i]), np.sin(angle[i]), 1.0
        for a in range(3):
            out[i, a] = (R[i, a, 1] * t1 + R[i, a, 2] * t2) / n
    return out


@njit(cache=True)
def mapped_flags(pair, p, last_keys, last_p, last_a, last_b, last_lam):
    """The last basis's flags (``basis_flags``) moved onto this step's contacts: each
    contact takes those of the nearest last contact of its surface pair (none: not
    basic, and counted as new); unilateral rows keep theirs. Returns ``(basic_a, basic_b,
    basic_lam, new)``."""
    k = pair.shape[0]
    k_last = last_keys.shape[0]
    l = last_a.shape[0] - k_last
    basic_a = np.zeros(k + l, dtype=np.bool_)
    basic_b = np.zeros((k, last_b.shape[1]), dtype=np.bool_)
    basic_lam = np.zeros(k, dtype=np.bool_)
    new = 0
    for i in range(k):
        nearest = nearest_last(p[i], pair[i], last_keys, last_p)
        if nearest >= 0:
            basic_a[i] = last_a[nearest]
            basic_b[i] = last_b[nearest]
            basic_lam[i] = last_lam[nearest]
        else:
            new += 1
    for j in range(l):
        basic_a[k + j] = last_a[k_last + j]
    return basic_a, basic_b, basic_lam, new


#: :func:`first_rung`'s codes that are not ``warm_pyramid``'s ``MISS_REASONS``
NO_BASIS, OTHER_CONTACTS, NO_LOADED_CONTACT = -2, -1, 6


@njit(cache=True)
def first_rung(G, u, mu, bias, R, P, pair, J_limits, slip, period, d, last_pair, last_p,
               last_dir, basis_pair, basis_limits, basic_a, basic_b, basic_lam, singular_tol,
               max_flips, grow, inside, equilibration):
    """The edge angles of this step's pyramids and, when the basis given is of the same
    contacts and joint-limit rows, the frictional LCP solved by it.

    Parameters
    ----------
    G, u, mu, bias
        The step's :class:`~contact_lcp.contact.problem.ContactProblem` arrays; ``R``
        (k, 3, 3), ``P`` (k, 3) its frames and points, ``pair`` (k,) its pair keys,
        ``J_limits`` (l, nv) its joint-limit rows.
    slip : bool
        Turn the pyramids to the friction (``friction_frame: slip``); else angles 0.
    period : float
        ``2 pi / d`` [rad]; ``d`` edges per pyramid.
    last_pair, last_p, last_dir
        The guess's contacts: pair keys (k0,), points (k0, 3), friction directions (k0, 3)
        (empty without a guess).
    basis_pair, basis_limits, basic_a, basic_b, basic_lam
        The basis to try and the contacts and limit rows it belongs to (empty
        ``basis_pair`` and ``basic_a``: none).
    singular_tol, max_flips
        As :func:`~contact_lcp.contact.pyramid_kernel.warm_pyramid`.
    grow : int
        Times the contacts left out that approach under the answer may join the basis
        (by their normal impulses) and the step be solved again.
    inside : float
        :func:`keep_inside` of ``period``.
    equilibration : (2, N) ndarray
        Equilibration factors to try first (the guess's, in the layout of the LCP of all
        the contacts: :func:`~contact_lcp.contact.pyramid_kernel.warm_pyramid`); (2, 0):
        none.

    Returns
    -------
    code : int
        0 solved; :data:`NO_BASIS` no basis or other limit rows; :data:`OTHER_CONTACTS`
        the basis's contacts are not these; :data:`NO_LOADED_CONTACT`; else
        ``warm_pyramid``'s miss code.
    f, z : ndarray
        Impulses (3k + l,) and the reduced LCP's solution (``warm_pyramid``'s).
    pivots, solves, kept, added : int
        The basis blocks' sizes plus flips, summed over the LCPs solved (``solves``:
        1 + the times contacts were added); contacts of the reduced LCP that solved it
        (of the first one on a miss); of those, the ones the basis given did not load
        (0 on a miss).
    basic_a, basic_b, basic_lam, directions
        The next guess's basis flags and friction directions (k, 3) (when solved).
    angle : (k,) ndarray
        Each pyramid's first-edge angle [rad] (always).
    equilibration : (2, N) ndarray
        When solved: the factors that equilibrated the LCP that solved it, in the layout
        of the argument (the next guess's); else (2, 0).
    """
    k, l = pair.shape[0], J_limits.shape[0]
    none_b = np.zeros((0, d), dtype=np.bool_)
    none_a = np.zeros(0, dtype=np.bool_)
    none_e = np.zeros((2, 0))
    if slip and k > 0:
        angle = edge_angles(u, R, P, pair, last_p, last_pair, last_dir, STICK_SPEED, period,
                            ANGLE_SNAP)
    else:
        angle = np.zeros(k)
    same = basic_a.shape[0] > 0 and basis_limits.shape[0] == l and \
        basic_a.shape[0] == basis_pair.shape[0] + l
    if same:
        for j in range(l):
            for c in range(J_limits.shape[1]):
                if basis_limits[j, c] != J_limits[j, c]:
                    same = False
    if not same:
        return (NO_BASIS, np.zeros(0), np.zeros(0), 0, 0, 0, 0, none_a, none_b, none_a,
                np.zeros((0, 3)), angle, none_e)
    if basis_pair.shape[0] != k:
        same = False
    else:
        for i in range(k):
            if basis_pair[i] != pair[i]:
                same = False
    if not same:
        return (OTHER_CONTACTS, np.zeros(0), np.zeros(0), 0, 0, 0, 0, none_a, none_b, none_a,
                np.zeros((0, 3)), angle, none_e)
    keep = np.flatnonzero(basic_a[:k])
    loaded = keep.shape[0]  # (the basis given's loaded contacts)
    if keep.shape[0] + l == 0:
        return (NO_LOADED_CONTACT, np.zeros(0), np.zeros(0), 0, 0, 0, 0, none_a, none_b,
                none_a, np.zeros((0, 3)), angle, none_e)
    # the contacts left out that approach join the basis by their normal impulses, and
    # the step is solved again (at most ``grow`` times); a miss after that reports the first
    # call's miss (its z is the start of the model's search, as without the added
    # contacts). One call site of warm_pyramid, which numba inlines: a level less of
    # separately compiled code for LLVM to optimize again (seconds on a cold cache).
    grown_a, grown_keep, solves, nb, tol = basic_a, keep, 0, 0, 0.0
    code, f, z, basic = NO_BASIS, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.bool_)
    factors = none_e
    while True:
        c2, probe, z2, _, _, tol, n2, b2, e2 = warm_pyramid(
            G, u, mu, bias, l, d, angle, grown_keep, grown_a, basic_b, basic_lam,
            singular_tol, max_flips, equilibration)
        nb += n2
        solves += 1
        if solves == 1:
            code, f, z, basic, factors = c2, probe, z2, b2, e2
        elif c2 == 0:
            code, f, z, basic, keep, factors = 0, probe, z2, b2, grown_keep, e2
        if c2 != DROPPED_APPROACHES or solves > grow:
            break
        grown_a = grown_a.copy()
        for i in range(k):
            if not grown_a[i] and approaches(G, u, bias, probe, i, tol):
                grown_a[i] = True
        grown_keep = np.flatnonzero(grown_a[:k])
    if code:
        return (code, f, z, nb, solves, keep.shape[0], 0, none_a, none_b, none_a,
                np.zeros((0, 3)), angle, none_e)
    a, _, _ = basis_flags(z, k, l, d, keep)
    _, b, lam = basis_flags(basic.astype(np.float64), k, l, d, keep)
    return (0, f, z, nb, solves, keep.shape[0], keep.shape[0] - loaded, a, b, lam,
            friction_directions(f, R, mu, angle, inside), angle, factors)
