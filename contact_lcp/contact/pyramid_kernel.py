"""The pyramid model's common step in one compiled call: the last step's basis, again.

A standing robot or a resting stack keeps its contacts and which of them carry load from
one step to the next, so the frictional LCP of the step is usually solved by the last
step's basis (no pivot of the search), or by it and a few principal pivots (a contact
that starts or stops sliding changes one or two variables). :func:`warm_pyramid` starts
as the robust method's warm start does (:func:`contact_lcp.lcp.robust.solve_robust` with
``initial_basis``: a principal pivot on the basis block of the equilibrated LCP, a
numerically dependent variable left out, the basic solution accepted when it is
nonnegative to the search's tolerance) and certifies the answer as
:func:`contact_lcp.lcp.residual.certify` does, but

* only on the contacts that carried load in the last step (and every unilateral row): the
  LCP of those contacts, built by the same assembly
  (:func:`contact_lcp.contact.lcp_builder._assemble`), is a few times smaller than the LCP
  of all the contacts found;
* island by island: groups of contacts that no entry of ``G`` couples are solved and
  certified on their own;
* a dropped contact is accepted only when it does not approach (``w_n >= -tol``); then the
  answer, with zero impulse on the dropped contacts and their sliding speeds
  ``lam_i = max(0, max_e(-v_e))``, solves the full LCP (the pyramid model's
  ``drop_unloaded`` argument);
* when the basis is infeasible, up to ``max_flips`` principal pivots on the most
  infeasible variable, by bordering and deflation of the block's inverse (they need not
  converge on these matrices; the answer is certified either way);
* equilibrated by the last step's factors when they still balance this step's LCP (the
  guess carries them: :class:`~contact_lcp.contact.guess.PyramidGuess`), checked in the
  pass over ``M`` that the verdict needs anyway (on contacts that couple only through
  the bodies they share, a stack of boxes, a pass over their coupled blocks alone:
  :func:`_pattern_row_scales`); else by new sweeps, which read ``M``
  two or three times more (on a stack of boxes, the largest part of the rung). Any
  factors that balance ``M`` equilibrate it as the sweeps' own do
  (:mod:`contact_lcp.lcp.scaling`); being powers of two, they give the same block
  inverse and answer in the caller's units, unless a choice made in equilibrated units
  differs (which infeasible variable a principal pivot takes first, a tolerance): then
  another certified basis of the same LCP, which happens on stacks whose contacts'
  impulses are not unique;
* in one call, with no Python between the stages.

When a test fails it returns a nonzero code (``MISS_REASONS``) and the model runs its
general strategy.
"""

import numpy as np
from numba import njit

from contact_lcp.contact.lcp_builder import _assemble
from contact_lcp.lcp.residual import (CERT_FACTOR, balanced_row_scales, row_scales_over,
                                      row_verdict, row_verdict_with, still_balanced)
from contact_lcp.lcp.scaling import MAX_SWEEPS, _ruiz, q_scale

_EPS = float(np.finfo(float).eps)

#: why :func:`warm_pyramid` did not solve the step, by its code
MISS_REASONS = {1: "singular basis block", 2: "negative basic variable",
                3: "negative slack", 4: "not certified", 5: "a dropped contact approaches"}
#: the code of a miss only because a contact left out of the LCP approaches
DROPPED_APPROACHES = 5


@njit(cache=True)
def _norm1(A):
    """Largest column sum of ``|A|``."""
    best = 0.0
    for j in range(A.shape[1]):
        s = 0.0
        for i in range(A.shape[0]):
            s += abs(A[i, j])
        best = max(best, s)
    return best


@njit(cache=True)
def _scaled_column(M, d1, d2, cols, slot, j):
    """The row of ``cols`` that holds column ``j`` of the equilibrated ``D1 M D2``, each
    entry ``d1_i M_ij d2_j`` as :func:`~contact_lcp.lcp.scaling._apply` computes it,
    filled when first asked for; ``slot`` (n + 1,) maps a column to its row (-1: none
    yet), ``slot[n]`` counts the rows used. The basis's pivots read only the columns of
    the variables that are or enter the basis: O(n nb) entries of the O(n^2) matrix."""
    r = slot[j]
    if r < 0:
        n = M.shape[0]
        r = slot[n]
        dj = d2[j]
        for i in range(n):
            cols[r, i] = d1[i] * M[i, j] * dj
        slot[j] = r
        slot[n] = r + 1
    return r


@njit(cache=True)
def _border(X, cols, slot, K, t, i, u, v, tol):
    """Grow the inverse ``X[:t, :t]`` of ``Ms[K[:t], K[:t]]`` by the row and column of
    variable ``i`` (in place, into row and column ``t``), unless its pivot (the Schur
    complement ``M_ii - M[i, K] M[K, K]^-1 M[K, i]``) is at most ``tol`` times the size of
    its row and column: then False and ``X`` unchanged. ``Ms`` is read from its columns
    ``cols[slot[j]]`` (:func:`_scaled_column`; those of ``K[:t]`` and ``i`` filled).
    ``u``, ``v``: work vectors. Callers pass ``t`` and ``i`` as int64 (a literal int
    would compile another signature)."""
    ci = cols[slot[i]]  # column i of Ms
    scale = abs(ci[i])
    for b in range(t):
        scale = max(scale, abs(cols[slot[K[b]], i]), abs(ci[K[b]]))
    piv = ci[i]
    # u = X M[K, i], v = M[i, K] X, both along the rows of X (contiguous): the column
    # M[K, i] gathered once into v's place first
    for c in range(t):
        v[c] = ci[K[c]]
    for r in range(t):
        acc_u = 0.0
        for c in range(t):
            acc_u += X[r, c] * v[c]
        u[r] = acc_u
    for r in range(t):
        v[r] = 0.0
    for c in range(t):
        b = cols[slot[K[c]], i]
        for r in range(t):
            v[r] += b * X[c, r]
    for r in range(t):
        piv -= cols[slot[K[r]], i] * u[r]
    if not abs(piv) > tol * max(scale, 1e-300):
        return False
    for r in range(t):
        for c in range(t):
            X[r, c] += u[r] * v[c] / piv
    for r in range(t):
        X[r, t] = -u[r] / piv
        X[t, r] = -v[r] / piv
    X[t, t] = 1.0 / piv
    return True


@njit(cache=True)
def _bordered_inverse(M, d1, d2, cols, slot, K, nb, tol, capacity):
    """Inverse of the largest block ``Ms[K', K']`` of ``Ms = D1 M D2`` (its columns
    cached in ``cols``, :func:`_scaled_column`) grown from ``K[:nb]`` in order, each
    candidate added only when its pivot (Schur complement) is above ``tol`` times the
    size of its row and column; ``K`` is reordered in place so that ``K[:kept]`` are the
    kept indices (in their order). Returns ``(X, kept)``: the inverse is
    ``X[:kept, :kept]`` of X (capacity, capacity), ``capacity >= nb``, room for the
    principal pivots that may follow."""
    X = np.zeros((capacity, capacity))
    t = 0
    u = np.empty(nb)
    v = np.empty(nb)
    for a in range(nb):
        _scaled_column(M, d1, d2, cols, slot, K[a])
        if not _border(X, cols, slot, K, np.int64(t), np.int64(K[a]), u, v, tol):
            continue
        K[a], K[t] = K[t], K[a]  # the kept ones first, in order
        t += 1
    return X, t


@njit(cache=True)
def _coupling(Gs, m, d):
    """``(coupled, sparse)``: ``coupled`` (m, m) bool, whether contacts ``a`` and ``b`` (of
    an island without unilateral rows, ``Gs`` its (3m, 3m) Delassus rows, ``d`` edges a
    pyramid) share an entry of ``Gs`` (either of their 3x3 blocks not all zero; a NaN
    counts); ``sparse`` when :func:`_pattern_row_scales` would read less than half of the
    LCP matrix (an entry it reads costs about twice one of the plain pass, which reads
    them all: on a stack of two boxes the plain pass is the faster, on a tower of five the
    pattern)."""
    coupled = np.zeros((m, m), dtype=np.bool_)
    pairs = 0
    for a in range(m):
        for b in range(a, m):
            touch = False
            for t in range(9):  # (the first entry decides for most pairs that couple)
                r, c = 3 * a + t // 3, 3 * b + t % 3
                if Gs[r, c] != 0.0 or Gs[c, r] != 0.0:
                    touch = True
                    break
            coupled[a, b] = coupled[b, a] = touch
            if touch:
                pairs += 1 if a == b else 2
    n = m * (d + 2)
    # (each coupled pair: a contact's normal and edge rows read the other's normal and
    # edges; each contact's edge rows its sliding speed, its sliding speed's row d + 1)
    read = pairs * (d + 1) * (d + 1) + m * d + m * (d + 1)
    return coupled, 2 * read < n * n


@njit(cache=True)
def _pattern_row_scales(M, d1, d2, m, d, coupled):
    """:func:`~contact_lcp.lcp.residual.balanced_row_scales` of the frictional LCP of
    ``m`` contacts and no unilateral row (:func:`~contact_lcp.contact.lcp_builder._assemble`'s
    layout: normals, edges, sliding speeds) whose contacts couple as ``coupled`` says
    (:func:`_coupling`): each row visits only the columns that can hold an entry, in
    column order, so its sum, its largest entry and the column maxima are those of the
    full pass (every entry left out is an exact zero: a product of zero blocks of ``G``,
    whose absolute value adds nothing to a sum or a maximum). On a stack of boxes,
    whose contacts couple only through the boxes they share, most of ``M`` is left
    unread. Returns ``(big, rows, balanced)``."""
    n = M.shape[0]
    nn = m
    lam0 = nn + m * d
    big = np.empty(n)
    rows = np.empty(n)
    col = np.zeros(n)
    cols = np.empty(n, dtype=np.int64)
    for a in range(m):
        # the columns of contact a's normal and edge rows: the normals, then the edges, of
        # the contacts it couples with (increasing), then (edge rows) its sliding speed
        c = 0
        for b in range(m):
            if coupled[a, b]:
                cols[c] = b
                c += 1
        for b in range(m):
            if coupled[a, b]:
                for e in range(d):
                    cols[c] = nn + b * d + e
                    c += 1
        row_scales_over(M, d1, d2, a, a + 1, cols[:c], big, rows, col, True)
        cols[c] = lam0 + a
        row_scales_over(M, d1, d2, nn + a * d, nn + (a + 1) * d, cols[:c + 1], big, rows,
                        col, True)
    for a in range(m):  # a sliding speed's row: its contact's normal and edges
        cols[0] = a
        for e in range(d):
            cols[1 + e] = nn + a * d + e
        row_scales_over(M, d1, d2, lam0 + a, lam0 + a + 1, cols[:d + 1], big, rows, col, True)
    return big, rows, still_balanced(big, d1, col)


# inlined into its one caller: numba compiles it there, and LLVM optimizes its code
# once less on a cold cache (each separately compiled level is optimized again by its
# callers)
@njit(cache=True, inline="always")
def _warm_island(G, u, mu, bias, d, angle, keep, lim, basic_a, basic_b, basic_lam,
                 singular_tol, max_flips, f, d1_in, d2_in):
    """:func:`warm_pyramid` on one island: the contacts ``keep`` and the unilateral rows
    ``lim`` (indices after the contacts). Fills their impulses into ``f`` when it solves.
    ``(d1_in, d2_in)``: equilibration factors to try first, in the island's LCP layout
    (empty: none). Returns ``(code, z, w, err, tol, pivots, basic, d1, d2)`` in the
    island's LCP layout (``basic``: the variables of the basis that solved it,
    degenerate ones at 0 too; ``d1``, ``d2``: the factors it was equilibrated by)."""
    k = mu.shape[0]
    m = keep.shape[0]
    l = lim.shape[0]
    rows = np.empty(3 * m + l, dtype=np.int64)
    for a in range(m):
        for c in range(3):
            rows[3 * a + c] = 3 * keep[a] + c
    for j in range(l):
        rows[3 * m + j] = 3 * k + lim[j]
    r = rows.shape[0]
    Gs = np.empty((r, r))
    us = np.empty(r)
    for a in range(r):
        us[a] = u[rows[a]]
        for b in range(r):
            Gs[a, b] = G[rows[a], rows[b]]
    mus = np.empty(m)
    bs = np.empty(m + l)
    cos = np.empty((m, d))
    sin = np.empty((m, d))
    for a in range(m):
        mus[a] = mu[keep[a]]
        bs[a] = bias[keep[a]]
        for e in range(d):
            th = angle[keep[a]] + 2.0 * np.pi * e / d
            cos[a, e] = np.cos(th)
            sin[a, e] = np.sin(th)
    for j in range(l):
        bs[m + j] = bias[k + lim[j]]
    M, q = _assemble(Gs, us, mus, bs, m, l, d, cos, sin)
    n = q.shape[0]
    z = np.zeros(n)
    # the basis in the reduced LCP's coordinates, increasing (normals first)
    nn = m + l
    K = np.empty(n, dtype=np.int64)
    nb = 0
    for a in range(m):
        if basic_a[keep[a]]:
            K[nb] = a
            nb += 1
    for j in range(l):
        if basic_a[k + lim[j]]:
            K[nb] = m + j
            nb += 1
    for a in range(m):
        for e in range(d):
            if basic_b[keep[a], e]:
                K[nb] = nn + a * d + e
                nb += 1
    for a in range(m):
        if basic_lam[keep[a]]:
            K[nb] = nn + m * d + a
            nb += 1
    # the factors given when they still balance M (their check is the verdict's row
    # scales: one pass over M for both), else new sweeps
    big, rows, carried = np.empty(0), np.empty(0), False
    if d1_in.shape[0] == n:
        coupled, sparse = (_coupling(Gs, m, d) if l == 0
                           else (np.zeros((0, 0), np.bool_), False))
        if sparse:  # (contacts apart, a stack of boxes: only the blocks that couple them)
            big, rows, carried = _pattern_row_scales(M, d1_in, d2_in, m, d, coupled)
        else:
            big, rows, carried = balanced_row_scales(M, d1_in, d2_in)
    if carried:
        d1, d2, s = d1_in, d2_in, q_scale(q, d1_in)
    else:
        d1, d2, s, _ = _ruiz(M, q, np.int64(MAX_SWEEPS))
    # the equilibrated LCP (Ms, qs) = (D1 M D2, D1 q / s): qs whole, Ms by the columns
    # the pivots read (each variable in or entering the basis: at most nb + max_flips)
    qs = np.empty(n)
    qn = 0.0
    for i in range(n):
        qs[i] = d1[i] * q[i] / s
        qn = max(qn, abs(qs[i]))
    # (each principal pivot adds at most one variable to the block, and one column)
    capacity = min(n, nb + max_flips)
    cols = np.empty((capacity, n))
    slot = np.full(n + 1, -1, dtype=np.int64)
    slot[n] = 0
    step_tol = CERT_FACTOR * n * _EPS * qn  # the robust warm start's acceptance
    zs = np.zeros(n)
    in_k = np.zeros(n, dtype=np.bool_)
    flips = 0
    # the block's inverse, a numerically dependent variable left out of the basis
    # (redundant contacts: a sphere in a pile touching four others), as the robust warm
    # start does; then updated by bordering (a variable enters) or deflation (one
    # leaves) at O(nb^2) per principal pivot
    X, nb = _bordered_inverse(M, d1, d2, cols, slot, K, np.int64(nb), singular_tol, capacity)
    for i in range(n):
        in_k[i] = False
    for a in range(nb):
        in_k[K[a]] = True
    u = np.empty(n)
    v = np.empty(n)
    w_s = np.empty(n)
    while True:
        zs[:] = 0.0
        for a in range(nb):
            acc = 0.0
            for b in range(nb):
                acc -= X[a, b] * qs[K[b]]
            zs[K[a]] = acc
        # the most infeasible variable, basic (z < 0) or not (w < 0), in equilibrated units
        worst, wi, pos = -step_tol, -1, -1
        for a in range(nb):
            if zs[K[a]] < worst:
                worst, wi, pos = zs[K[a]], K[a], a
        # w = Ms zs + qs, column by column (each w_i summed over the basis in its order,
        # the same bits as row by row; contiguous reads of the cached columns)
        for i in range(n):
            w_s[i] = qs[i]
        for b in range(nb):
            col = cols[slot[K[b]]]
            zb = zs[K[b]]
            for i in range(n):
                w_s[i] += col[i] * zb
        for i in range(n):
            if not in_k[i] and w_s[i] < worst:
                worst, wi, pos = w_s[i], i, -1
        if wi < 0:
            break
        if flips == max_flips:
            for a in range(nb):  # where the pivots got to: a start for the search
                z[K[a]] = 1.0
            return (2 if pos >= 0 else 3), z, z, np.inf, 0.0, nb + flips, in_k, d1, d2
        if pos >= 0:  # z_wi leaves: deflate X by its row and column
            piv = X[pos, pos]
            if not abs(piv) > 0.0:
                return 1, z, z, np.inf, 0.0, nb + flips, in_k, d1, d2
            for r in range(nb):
                for c in range(nb):
                    if r != pos and c != pos:
                        X[r, c] -= X[r, pos] * X[pos, c] / piv
            last = nb - 1
            for r in range(nb):  # move the last row and column into the gap
                X[r, pos] = X[r, last]
            for c in range(nb):
                X[pos, c] = X[last, c]
            X[pos, pos] = X[last, last]
            K[pos] = K[last]
            in_k[wi] = False
            nb = last
        else:  # z_wi enters: border X with its row and column
            _scaled_column(M, d1, d2, cols, slot, wi)
            if not _border(X, cols, slot, K, np.int64(nb), np.int64(wi), u, v, singular_tol):
                return 1, z, z, np.inf, 0.0, nb + flips, in_k, d1, d2
            K[nb] = wi
            in_k[wi] = True
            nb += 1
        flips += 1
    if nb:  # the final block must be well conditioned (as the robust warm start's)
        A = np.empty((nb, nb))
        for a in range(nb):
            for b in range(nb):
                A[a, b] = cols[slot[K[b]], K[a]]
        if not np.all(np.isfinite(X[:nb, :nb])) or \
                _norm1(A[:, :]) * _norm1(X[:nb, :nb]) > 1.0 / singular_tol:  # both 'A' layout
            return 1, z, z, np.inf, 0.0, nb + flips, in_k, d1, d2
    for i in range(n):
        z[i] = zs[i] * s * d2[i]
    # solve()'s per-row verdict (its row scales already summed with the factors' check)
    if carried:
        w, ok, err, tol = row_verdict_with(M, q, z, d1, d2, s, big, rows)
    else:
        w, ok, err, tol = row_verdict(M, q, z, d1, d2, s)
    if not ok:
        return 4, z, w, err, tol, nb + flips, in_k, d1, d2
    # impulses in Delassus coordinates
    for a in range(m):
        i = keep[a]
        f[3 * i] = z[a]
        t1 = 0.0
        t2 = 0.0
        for e in range(d):
            b = z[nn + a * d + e]
            t1 += b * cos[a, e]
            t2 += b * sin[a, e]
        f[3 * i + 1] = t1
        f[3 * i + 2] = t2
    for j in range(l):
        f[3 * k + lim[j]] = z[m + j]
    return 0, z, w, err, tol, nb + flips, in_k, d1, d2


# inlined into its one caller: numba compiles it there, and LLVM optimizes its code
# once less on a cold cache (each separately compiled level is optimized again by its
# callers)
@njit(cache=True, inline="always")
def warm_pyramid(G, u, mu, bias, l, d, angle, keep, basic_a, basic_b, basic_lam,
                 singular_tol, max_flips, equilibration):
    """The frictional LCP on the contacts ``keep``, solved by the basis of the flags.

    Parameters
    ----------
    G : (3k + l, 3k + l) ndarray
        Delassus matrix of all the contacts and unilateral rows [1/kg].
    u : (3k + l,) ndarray
        Velocity before the impulse [m/s].
    mu : (k,) ndarray
    bias : (k + l,) ndarray
        Normal-row bias [m/s].
    l, d : int
        Unilateral rows; pyramid edges per contact.
    angle : (k,) ndarray
        Angle of each contact's first edge from its t1 axis [rad].
    keep : (m,) int ndarray
        Contacts of the reduced LCP, increasing.
    basic_a : (k + l,) bool ndarray
        Normal impulses (contacts, then unilateral rows) in the basis.
    basic_b : (k, d) bool ndarray
        Edge impulses in the basis.
    basic_lam : (k,) bool ndarray
        Sliding speeds in the basis.
    singular_tol : float
        Reciprocal 1-norm condition number of the basis block below which it is refused.
    max_flips : int
        Principal pivots allowed after the first block: while the basic solution has an
        infeasible variable, the most infeasible one (a negative basic variable leaves,
        a negative slack's variable enters) is flipped, at most this many times.
    equilibration : (2, N) ndarray
        Equilibration factors ``d1``, ``d2`` to try first (:func:`_warm_island`), in the
        layout of the LCP of all ``k`` contacts (``N = k + l + k d + k``), 0 where none
        is known; (2, 0): none. An island is tried on them when it has all of its own.

    Notes
    -----
    The kept contacts and unilateral rows fall into islands (no entry of ``G`` couples
    two islands: bodies that touch neither each other nor a common mechanism); each
    island's LCP is solved and certified on its own, so resting bodies apart cost in
    proportion to their number. ``err`` and ``tol`` are those of the island with the
    largest ``err / tol``; ``z`` and ``w`` are in the layout of the LCP of all kept
    contacts.

    Returns
    -------
    code : int
        0 when the reduced LCP's basic solution is feasible and certified and no dropped
        contact approaches; else why not (``MISS_REASONS``). With 2 or 3 (the pivots ran
        out) ``z`` is positive exactly on the basis they reached (the solved islands'
        answers included): a start for the general search.
    f : (3k + l,) ndarray
        Impulses in Delassus coordinates [N.s] (zero on dropped contacts).
    z : (n,) ndarray
        Solution of the reduced LCP (n = m + l + m d + m).
    w : (n,) ndarray
        ``M z + q`` of the reduced LCP.
    err, tol : float
        Certification error and tolerance of the reduced LCP [m/s].
    pivots : int
        Size of the first basis block plus the flips.
    basic : (n,) bool ndarray
        The basis that solved it, its degenerate variables (basic at 0) included: the
        next step's basis (``z > 0`` would leave them out, and a sticking contact at its
        friction limit would then miss on every other step, its basis switching between
        the one that solves and the one ``z > 0`` gives).
    equilibration : (2, N) ndarray
        The factors each island was equilibrated by, in the layout of
        ``equilibration`` (0 for the contacts left out, and where an island was not
        solved).
    """
    k = mu.shape[0]
    m = keep.shape[0]
    nn = m + l
    n = nn + m * d + m
    f = np.zeros(3 * k + l)
    z = np.zeros(n)
    w = np.zeros(n)
    basic = np.zeros(n, dtype=np.bool_)
    big_n = k + l + k * d + k
    out = np.zeros((2, big_n))
    given = equilibration.shape[1] == big_n
    label = _islands(G, keep, l, k)
    worst, err, tol, pivots, failed = -1.0, 0.0, 0.0, 0, 0
    for isl in range(label.max() + 1 if label.shape[0] else 0):
        members = np.flatnonzero(label == isl)
        ck = keep[members[members < m]]
        cl = members[members >= m] - m
        # island layout -> layout of the LCP of all kept contacts, and of all contacts
        at, full = _island_layout(members[members < m], cl, keep, k, l, d)
        known = given
        for t in range(full.shape[0]):
            g = full[t]
            known = known and equilibration[0, g] > 0.0 and equilibration[1, g] > 0.0
        di = np.empty((2, full.shape[0] if known else 0))
        for t in range(di.shape[1]):
            di[0, t], di[1, t] = equilibration[0, full[t]], equilibration[1, full[t]]
        code, zi, wi, ei, ti, pi, bi, e1, e2 = _warm_island(
            G, u, mu, bias, d, angle, ck, cl, basic_a, basic_b, basic_lam, singular_tol,
            max_flips, f, di[0], di[1])
        pivots += pi
        if code and code not in (2, 3):
            return code, f, z, w, ei, ti, pivots, basic, out
        if code and not failed:
            failed = code  # go on: the other islands' bases complete the search's start
        ratio = ei / ti if ti > 0.0 else 0.0
        if not code and ratio > worst:
            worst, err, tol = ratio, ei, ti
        for t in range(at.shape[0]):
            z[at[t]], w[at[t]], basic[at[t]] = zi[t], wi[t], bi[t]
            if not code:
                out[0, full[t]], out[1, full[t]] = e1[t], e2[t]
    if failed:  # z: the solved islands' answers and the others' last bases (> 0)
        return failed, f, z, w, np.inf, 0.0, pivots, basic, out
    # every dropped contact must not approach under the impulse
    kept = np.zeros(k, dtype=np.bool_)
    for a in range(m):
        kept[keep[a]] = True
    for i in range(k):
        if not kept[i] and approaches(G, u, bias, f, i, tol):
            return DROPPED_APPROACHES, f, z, w, err, tol, pivots, basic, out
    return 0, f, z, w, err, tol, pivots, basic, out


@njit(cache=True)
def _island_layout(pos, lim, keep, k, l, d):
    """Where each variable of an island's LCP (its contacts at positions ``pos`` among
    the kept ones ``keep``, increasing, and its unilateral rows ``lim``) sits in the LCP
    of all kept contacts and ``l`` unilateral rows, and in that of all ``k`` contacts:
    ``(at, full)``. Each layout holds the normals, the unilateral rows, the ``d`` edges
    of each contact, the sliding speeds (:func:`_warm_island`'s, and
    :func:`~contact_lcp.contact.lcp_builder.build_contact_lcp`'s)."""
    m = keep.shape[0]
    mi, li = pos.shape[0], lim.shape[0]
    ni, nn, nf = mi + li, m + l, k + l
    at = np.empty(ni + mi * d + mi, dtype=np.int64)
    full = np.empty(ni + mi * d + mi, dtype=np.int64)
    for a in range(mi):
        A, c = pos[a], keep[pos[a]]
        at[a], full[a] = A, c
        at[ni + mi * d + a], full[ni + mi * d + a] = nn + m * d + A, nf + k * d + c
        for e in range(d):
            at[ni + a * d + e], full[ni + a * d + e] = nn + A * d + e, nf + c * d + e
    for j in range(li):
        at[mi + j], full[mi + j] = m + lim[j], k + lim[j]
    return at, full


@njit(cache=True)
def approaches(G, u, bias, f, i, tol):
    """Whether contact ``i`` approaches [m/s] by more than ``tol`` under the impulse
    ``f`` (its normal row of ``u + G f``, with its bias)."""
    acc = u[3 * i] + bias[i]
    for c in range(f.shape[0]):
        acc += G[3 * i, c] * f[c]
    return acc < -tol


@njit(cache=True)
def _islands(G, keep, l, k):
    """Island label (0, 1, ...) of each kept contact, then of each unilateral row: two are
    in one island when ``G`` couples any of their rows (union-find)."""
    m = keep.shape[0]
    nodes = m + l
    parent = np.arange(nodes)
    first = np.empty(nodes, dtype=np.int64)
    size = np.empty(nodes, dtype=np.int64)
    for a in range(m):
        first[a], size[a] = 3 * keep[a], 3
    for j in range(l):
        first[m + j], size[m + j] = 3 * k + j, 1
    for a in range(nodes):
        for b in range(a + 1, nodes):
            coupled = False
            for r in range(first[a], first[a] + size[a]):
                for c in range(first[b], first[b] + size[b]):
                    if G[r, c] != 0.0:
                        coupled = True
            if coupled:
                ra, rb = a, b
                while parent[ra] != ra:
                    ra = parent[ra]
                while parent[rb] != rb:
                    rb = parent[rb]
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    label = -np.ones(nodes, dtype=np.int64)
    count = 0
    for a in range(nodes):
        r = a
        while parent[r] != r:
            r = parent[r]
        if label[r] < 0:
            label[r] = count
            count += 1
        label[a] = label[r]
    return label


@njit(cache=True)
def basis_flags(z, k, l, d, keep):
    """The basis (``z > 0``) of a pyramid LCP on the contacts ``keep`` as per-contact flags.

    Returns ``basic_a`` (k + l,), ``basic_b`` (k, d), ``basic_lam`` (k,) of the full set of
    ``k`` contacts (False for contacts not in ``keep``).
    """
    m = keep.shape[0]
    nn = m + l
    basic_a = np.zeros(k + l, dtype=np.bool_)
    basic_b = np.zeros((k, d), dtype=np.bool_)
    basic_lam = np.zeros(k, dtype=np.bool_)
    for a in range(m):
        basic_a[keep[a]] = z[a] > 0.0
        basic_lam[keep[a]] = z[nn + m * d + a] > 0.0
        for e in range(d):
            basic_b[keep[a], e] = z[nn + a * d + e] > 0.0
    for j in range(l):
        basic_a[k + j] = z[m + j] > 0.0
    return basic_a, basic_b, basic_lam


def full_basis(basic_a, basic_b, basic_lam):
    """Indices of the basic variables in the LCP of all ``k`` contacts (the layout of
    :func:`contact_lcp.contact.lcp_builder.build_contact_lcp`)."""
    k, d = basic_b.shape
    nn = basic_a.shape[0]
    return np.concatenate([np.flatnonzero(basic_a), nn + np.flatnonzero(basic_b.ravel()),
                           nn + k * d + np.flatnonzero(basic_lam)])


def reduced_basis(basic_a, basic_b, basic_lam, keep):
    """Indices of the basic variables in the LCP of the contacts ``keep`` (increasing)
    and every unilateral row (the layout of :func:`warm_pyramid`'s reduced LCP)."""
    k, d = basic_b.shape
    m, l = keep.shape[0], basic_a.shape[0] - k
    nn = m + l
    return np.concatenate([np.flatnonzero(basic_a[keep]), m + np.flatnonzero(basic_a[k:]),
                           nn + np.flatnonzero(basic_b[keep].ravel()),
                           nn + m * d + np.flatnonzero(basic_lam[keep])])
