"""The minimum-norm impulse of a face, compiled: the common case of
:mod:`contact_lcp.contact.min_norm` (the face, and its QP for the rest).

On the face of a certified answer ``f*`` each contact whose normal row is open (``w_n``
within its certification tolerance) takes

* any impulse inside its pyramid when it sticks (every edge row open, no sliding speed):
  three columns of ``B``, its normal and its two tangents;
* any impulse on its cone's edge when it slides along that edge (only that edge row
  open, the cone row active): one column, ``(1, mu cos, mu sin)`` normalized; or on the
  facet between two neighbouring open edges: two columns spanning their rays;

and each open limit row any non-negative impulse (one column); the other rows keep no
impulse. So ``f = B y`` with orthonormal columns per contact, and ``||f|| = ||y||``. The
velocities stay those of ``f*`` exactly when ``K J' B (y - y*) = 0``, which for ``K``
symmetric positive semi-definite is ``B' G B (y - y*) = 0`` (``G = J K J'``), i.e.
``L' y = L' y*`` with ``B' G B = L L'`` (diagonally pivoted Cholesky, full column rank).

The least-norm ``y`` on those equalities and in every contact's cone is found by an
active set: each contact is free, zeroed, or (sticking) held on one facet of its
pyramid or on the edge between two. Each round solves the least-norm ``y`` with the
active set's equalities (a QR of ``[L, C]``); the contact whose impulse leaves its cone
the most joins the set (zeroed when its normal is negative, else on the facet its
friction points to, or, held on a facet and leaving across the next one, on their
edge); when none does, the equalities' multipliers decide: a zeroed contact's must lie
in its cone's dual, a facet's must be non-negative, else the most negative is released
(an edge's contact onto its other facet, a zeroed sticking contact onto the edge whose
ray lowers the norm the most: released free, either would come back the way it left
and the set would alternate). With nothing to add
or release the point satisfies the KKT conditions of the strictly convex problem, so it
is its unique minimiser; it is then certified as a solution of the face's LCP by the
project's verdict (:func:`contact_lcp.lcp.residual.row_verdict`, on the
Ruiz-equilibrated LCP as every answer), and its velocity change checked. When the set
cycles (``MAX_ROUNDS``), or the face is not of the kinds above, the caller solves the
face's QP.

The face's LCP (``10 s`` rows for ``s`` contacts on 8-edge pyramids), its equilibration
and its two verdicts are most of that work, and a face whose rows are all plainly open
or closed needs none of them: every row's ``w = u + G f*`` within ``OPEN_FACTOR (1 +
||u||_inf)`` of 0 (open) or, for a normal row without impulse and a sliding contact's
edge rows, beyond ``CLOSED_FACTOR (1 + ||u||_inf)`` (closed), and every sliding speed
either within the first bound (sticking) or beyond the second (sliding). A joint-limit
row without impulse is closed already beyond the first bound: a joint moving off its
stop (a standing robot's knee creeps off it at ~1e-7 of the scale, a thousand times a
row's tolerance, for seconds) carries no impulse, and a face without that row holds the
LCP's solutions with ``f*``'s velocities all the same. So: a standing robot's soles, a
resting stack, a joint limit left, a box sliding at some speed
(its slipping edge's ``w`` is 0 by the definition of ``lam``, the others' a fair part of
its speed). The open rows are then told from ``w`` directly, and the answer is
certified by its velocities (``f*``'s: so every ``w`` is ``f*``'s, about 0 on the rows
that carry impulse) and its pyramids (each contact's edge impulses within ``mu`` times
its normal, on a sliding contact equal to it and on its open edges only, to the active
set's slack): the face LCP's complementarity. A row between the two bounds (a slip of
1e-11, a contact leaving at 1e-9 of the scale) sends the face to its LCP as above.

A standing robot's soles, a box on its corners and a frame on its legs end in the
first round (their least-norm loads are positive); a box landing on one edge zeroes its
lifting corners, a sole near its friction limit holds a point on a facet.
"""

import numpy as np
from numba import njit

from contact_lcp.contact.lcp_builder import _assemble
from contact_lcp.lcp.cholesky import back_substitute, forward_substitute
from contact_lcp.lcp.residual import (exceeds_tolerance, row_scales, row_verdict_terms,
                                      row_verdict_with)
from contact_lcp.lcp.scaling import MAX_SWEEPS, _ruiz

#: :func:`least_norm_face` codes: the least-norm impulse applied (certified)
APPLIED = 0
#: the face holds one impulse (``B' G B``, or already the Delassus rows of its contacts,
#: has full rank): ``f*`` stays
UNIQUE = 1
#: the face is not of the kinds above (a sliding contact with more than two open edges,
#: a sticking one with a closed edge row), the active set's equalities are dependent, or
#: the set cycles: the face's QP decides
NEEDS_QP = 2
#: ``f*`` does not certify on the face's LCP, or the least-norm point does not (or moves
#: the velocities): the Python path decides (it knows the near-touching contacts' case)
NOT_CERTIFIED = 3

#: a pivot of the Cholesky factor of ``B' G B`` at most this times its largest diagonal
#: ends the factor: the rest is the face's freedom. The free directions' Schur
#: complements are round-off (~m eps of the largest); a direction the velocities do see
#: has at least its squared singular value, ~1e-4 of the largest for a 0.05 kg link
#: against a 100 kg body. A direction wrongly taken as free moves the velocities, which
#: the velocity check rejects
RANK_TOL = 1e-11
#: a cone's inequalities hold to this times ``max |y*|`` (round-off of the solves)
SLACK = 1e-12
#: every row of the face whose ``|w|`` (and every contact whose sliding speed) is at most
#: this times ``1 + ||u||_inf`` [m/s] is open (sticking): when every row is so or beyond
#: :data:`CLOSED_FACTOR`, the face's LCP and its verdict are not needed to tell (module
#: notes). The certification tolerances of those rows are ~1e-10 of their scale and
#: more; a sole at rest leaves ~1e-16, a box stack ~1e-14
OPEN_FACTOR = 1e-12
#: ... and a normal row without impulse, or a sliding contact's edge row, whose
#: ``w`` is at least this times ``1 + ||u||_inf`` is closed (a contact whose sliding speed
#: is, slides): beyond any row's certification tolerance, as far as a contact may
#: separate and still join the face (``min_norm.TOUCH_FACTOR``)
CLOSED_FACTOR = 1e-6
#: rounds of the active set (contacts zeroed or put on a facet, or released) before the
#: QP decides
MAX_ROUNDS = 40
#: a contact's state in the active set (``ON_EDGE``: on the two facets around one edge,
#: its impulse along that edge's ray)
FREE, ZEROED, ON_FACET, ON_EDGE = 0, 1, 2, 3


@njit(cache=True)
def _max_abs(x):
    """``max(|x_i|)`` (0 when empty), NaN when an entry is NaN (as ``np.max`` gives it)."""
    m = 0.0
    for i in range(x.shape[0]):
        if x[i] != x[i]:
            return np.nan
        m = max(m, abs(x[i]))
    return m


@njit(cache=True)
def face_contacts(f, vel, u, bias, v_free, k, touch_factor, velocity_tol):
    """``(S, vel_tol)`` of :func:`contact_lcp.contact.min_norm.min_norm_impulse`: the
    contacts (increasing) that ``f`` loads or that touch, ``w_n = vel_n + bias`` at most
    ``touch_factor (1 + ||u||_inf)``, and the velocity change accepted,
    ``velocity_tol max(1, ||v_free||_inf)``."""
    touch = touch_factor * (1.0 + _max_abs(u))
    S = np.empty(k, dtype=np.int64)
    s = 0
    for i in range(k):
        if f[3 * i] > 0.0 or vel[3 * i] + bias[i] <= touch:
            S[s] = i
            s += 1
    return S[:s].copy(), velocity_tol * max(1.0, _max_abs(v_free))


@njit(cache=True)
def face_velocities(f, G, u, bias, v_free, k, touch_factor, velocity_tol):
    """``(S, vel, vel_tol)``: :func:`face_contacts` of dense ``G`` with ``vel = u + G f``
    computed here (one compiled call for the force read of every step)."""
    vel = u + G @ f
    S, vel_tol = face_contacts(f, vel, u, bias, v_free, k, touch_factor, velocity_tol)
    return S, vel, vel_tol


@njit(cache=True)
def least_norm_face(G, u, bias, J, K, mu, f, vel, S, l, d, angle, vel_tol, open_factor):
    """The least-norm impulse of the face of ``f*`` (module notes) on the contacts ``S``
    (increasing: those loaded or touching), ``vel = u + G f*``. Returns ``(code, f)``:
    ``f`` the least-norm impulse (``code`` APPLIED), else ``f*`` itself.
    ``open_factor``: :data:`OPEN_FACTOR` (a negative value asks every face of its LCP)."""
    k = mu.shape[0]
    s = S.shape[0]
    if s + l == 0:
        return UNIQUE, f
    nf = 3 * s + l
    rows = np.empty(nf, dtype=np.int64)
    for a in range(s):
        for t in range(3):
            rows[3 * a + t] = 3 * S[a] + t
    for j in range(l):
        rows[3 * s + j] = 3 * k + j
    Gs = np.empty((nf, nf))
    us = np.empty(nf)
    fs = np.empty(nf)
    vs = np.empty(nf)
    for a in range(nf):
        us[a] = u[rows[a]]
        fs[a] = f[rows[a]]
        vs[a] = vel[rows[a]]
        for b in range(nf):
            Gs[a, b] = G[rows[a], rows[b]]
    if nf <= K.shape[0]:
        # at most as many rows as the system has velocities: when the face's Delassus
        # rows have full rank by the same test as B' G B's below, G (f - f*) = 0 only
        # at f = f*, whatever the face: one impulse (point feet, a ball), without the
        # face's LCP and its certification of f* (the step certified f* already)
        _, full = _cholesky_range(Gs, RANK_TOL)
        if full == nf:
            return UNIQUE, f
    bs = np.empty(s + l)
    mus = np.empty(s)
    for a in range(s):
        bs[a] = bias[S[a]]
        mus[a] = mu[S[a]]
    for j in range(l):
        bs[s + j] = bias[k + j]
    # the edges' directions: each contact's first edge turned by the d fixed turns
    # 2 pi e / d (a cosine and a sine a contact, not d of each)
    cos = np.empty((s, d))
    sin = np.empty((s, d))
    turn_c = np.empty(d)
    turn_s = np.empty(d)
    for e in range(d):
        turn_c[e] = np.cos(2.0 * np.pi * e / d)
        turn_s[e] = np.sin(2.0 * np.pi * e / d)
    for a in range(s):
        c0, s0 = np.cos(angle[S[a]]), np.sin(angle[S[a]])
        for e in range(d):
            cos[a, e] = c0 * turn_c[e] - s0 * turn_s[e]
            sin[a, e] = s0 * turn_c[e] + c0 * turn_s[e]
    nn, nb = s + l, s * d
    n = nn + nb + (s if d else 0)  # the face LCP's size
    # the sliding speeds of f*: lam = max(0, -min_e c_e . v_t)
    lam = np.zeros(s)
    for a in range(s):
        worst = 0.0
        for e in range(d):
            worst = min(worst, cos[a, e] * vs[3 * a + 1] + sin[a, e] * vs[3 * a + 2])
        lam[a] = -worst
    # which rows are open (w within its tolerance; no impulse on the others) and which
    # contacts slide: when every row's w and every sliding speed is within ``near`` of 0
    # or beyond ``far`` (module notes: a standing robot's soles, a resting stack, a joint
    # limit left, a sliding box), that is the face, and the face's LCP is not built;
    # otherwise the rows are asked of the face's LCP and its verdict, as every answer's are
    scale = 1.0 + _max_abs(u)
    near, far = open_factor * scale, CLOSED_FACTOR * scale
    open_row = np.ones(nn + nb, dtype=np.bool_)  # normals (and limits), then edges
    fast = True
    for a in range(nn):
        ra = 3 * a if a < s else 3 * s + a - s
        wa = vs[ra] + bs[a]
        if fs[ra] == 0.0 and (wa >= far or (a >= s and wa > near)):
            # separating, with no impulse: a contact beyond ``far``, a joint limit
            # beyond ``near`` (a joint moving off its stop; module notes)
            open_row[a] = False
        elif not abs(wa) <= near:
            fast = False
    sliding = np.zeros(s, dtype=np.bool_)
    for a in range(s):
        if not open_row[a]:
            continue
        # sticking (lam about 0, every edge row open) or sliding (lam beyond ``far``: its
        # slipping edges' rows open, every other edge's beyond ``far``, closed)
        sliding[a] = lam[a] >= far
        if not (sliding[a] or lam[a] <= near):
            fast = False
        for e in range(d):
            we = cos[a, e] * vs[3 * a + 1] + sin[a, e] * vs[3 * a + 2] + lam[a]
            if sliding[a] and we >= far:
                open_row[nn + a * d + e] = False
            elif not abs(we) <= near:
                fast = False
    M, q, z = np.empty((0, 0)), np.empty(0), np.empty(0)  # (the face's LCP, if built)
    d1, d2, big, row_sums, sc = np.empty(0), np.empty(0), np.empty(0), np.empty(0), 1.0
    if not fast:
        if d:
            M, q = _assemble(Gs, us, mus, bs, s, l, d, cos, sin)
        else:
            M = np.empty((nn, nn))
            q = np.empty(nn)
            for a in range(nn):
                ra = 3 * a if a < s else 3 * s + a - s
                q[a] = us[ra] + bs[a]
                for b in range(nn):
                    M[a, b] = Gs[ra, 3 * b if b < s else 3 * s + b - s]
        # f* in the face LCP's unknowns: the normals, the edge split, the sliding speeds
        z = np.zeros(n)
        for a in range(s):
            z[a] = fs[3 * a]
        for j in range(l):
            z[s + j] = fs[3 * s + j]
        if d:
            for a in range(s):
                edge_split(fs[3 * a + 1], fs[3 * a + 2], cos[a], sin[a],
                           z[nn + a * d:nn + (a + 1) * d])
                z[nn + nb + a] = lam[a]
        d1, d2, sc, _ = _ruiz(M, q, np.int64(MAX_SWEEPS))
        big, row_sums = row_scales(M, d2)  # (every verdict below is of this M and d2)
        # the verdict, and the terms of the rows' tolerances: which rows are open (``w_i``
        # within ``tol_i``) is asked of each row below (``exceeds_tolerance``)
        w, ok, _, _, at, mag, floor = row_verdict_terms(M, q, z, d1, d2, sc, big, row_sums)
        if not ok and d:
            # a slip within the edge rows' tolerance under friction inside the cone: the
            # LCP's answer there has lam = 0 (the Python face's rule)
            a_max = _max_abs(at)
            for a in range(s):
                r = nn + nb + a
                if lam[a] > 0.0 and exceeds_tolerance(w[r], sc, np.False_, M, d1, d2, at, mag,
                                                      floor, row_sums, a_max, r):
                    lam[a] = 0.0
                    z[r] = 0.0
            w, ok, _, _, at, mag, floor = row_verdict_terms(M, q, z, d1, d2, sc, big, row_sums)
        if not ok:
            return NOT_CERTIFIED, f
        a_max = _max_abs(at)
        for r in range(nn + nb):
            open_row[r] = not exceeds_tolerance(w[r], sc, np.False_, M, d1, d2, at, mag, floor,
                                                row_sums, a_max, r)
        for a in range(s):
            sliding[a] = d > 0 and exceeds_tolerance(lam[a], sc, np.True_, M, d1, d2, at, mag,
                                                     floor, row_sums, a_max, nn + nb + a)
    # the face's columns B (each at most 3 entries of the face rows) and y*
    m_max = nf
    col_rows = np.zeros((m_max, 3), dtype=np.int64)
    col_coef = np.zeros((m_max, 3))
    col_nnz = np.zeros(m_max, dtype=np.int64)
    # kind: 0 a sticking contact's normal, 1 its tangent, 2 a ray (a sliding contact's
    # edge, a limit, a frictionless normal), 3 and 4 a sliding contact's facet
    kind = np.zeros(m_max, dtype=np.int64)
    ystar = np.zeros(m_max)
    m = np.int64(0)  # not a literal 0: _constraints compiled once (docs/architecture.md)
    for a in range(nn):
        if not open_row[a]:
            continue  # a closed normal row: no impulse
        if a >= s:  # a limit row
            col_rows[m, 0] = 3 * s + a - s
            col_coef[m, 0] = 1.0
            col_nnz[m] = 1
            kind[m] = 2
            ystar[m] = fs[3 * s + a - s]
            m += 1
            continue
        if d == 0:
            col_rows[m, 0] = 3 * a
            col_coef[m, 0] = 1.0
            col_nnz[m] = 1
            kind[m] = 2
            ystar[m] = fs[3 * a]
            m += 1
            continue
        open_edges = 0
        edge = first = 0
        for e in range(d):
            if open_row[nn + a * d + e]:
                if open_edges == 0:
                    first = e
                open_edges += 1
                edge = e
        if not sliding[a]:
            if open_edges < d:
                return NEEDS_QP, f
            for t in range(3):
                col_rows[m, 0] = 3 * a + t
                col_coef[m, 0] = 1.0
                col_nnz[m] = 1
                kind[m] = 0 if t == 0 else 1
                ystar[m] = fs[3 * a + t]
                m += 1
        elif open_edges == 2 and (edge == first + 1 or (first == 0 and edge == d - 1)):
            # on its cone's facet between the two open edges: two orthonormal columns
            # spanning the edges' rays (1, mu cos, mu sin)
            r1 = np.array([1.0, mus[a] * cos[a, first], mus[a] * sin[a, first]])
            r2 = np.array([1.0, mus[a] * cos[a, edge], mus[a] * sin[a, edge]])
            u1 = r1 / np.sqrt(r1 @ r1)
            u2 = r2 - (u1 @ r2) * u1
            u2 /= np.sqrt(u2 @ u2)
            for t, u in ((0, u1), (1, u2)):
                for i in range(3):
                    col_rows[m, i] = 3 * a + i
                    col_coef[m, i] = u[i]
                col_nnz[m] = 3
                kind[m] = 3 + t
                ystar[m] = u[0] * fs[3 * a] + u[1] * fs[3 * a + 1] + u[2] * fs[3 * a + 2]
                m += 1
        else:  # on its open edge's ray: (1, mu cos, mu sin) a
            if open_edges != 1:
                return NEEDS_QP, f
            norm = np.sqrt(1.0 + mus[a] * mus[a])
            col_rows[m, 0], col_rows[m, 1], col_rows[m, 2] = 3 * a, 3 * a + 1, 3 * a + 2
            col_coef[m, 0] = 1.0 / norm
            col_coef[m, 1] = mus[a] * cos[a, edge] / norm
            col_coef[m, 2] = mus[a] * sin[a, edge] / norm
            col_nnz[m] = 3
            kind[m] = 2
            ystar[m] = fs[3 * a] * norm
            m += 1
    if m == 0:
        return UNIQUE, f
    # H = B' Gs B (its upper triangle, mirrored); when every column is one face row (the
    # contacts stick, the limit rows are open or closed), the rows and columns of Gs
    # (1.0 * G_ij * 1.0 is G_ij: the same bits)
    unit = True
    for p in range(m):
        if col_nnz[p] != 1 or col_coef[p, 0] != 1.0:
            unit = False
            break
    H = np.empty((m, m))
    if unit:
        for p in range(m):
            for r in range(p, m):
                H[p, r] = H[r, p] = Gs[col_rows[p, 0], col_rows[r, 0]]
    else:
        for p in range(m):
            for r in range(p, m):
                acc = 0.0
                for i in range(col_nnz[p]):
                    for j in range(col_nnz[r]):
                        acc += col_coef[p, i] * Gs[col_rows[p, i], col_rows[r, j]] * col_coef[r, j]
                H[p, r] = acc
                H[r, p] = acc
    L, rank = _cholesky_range(H, RANK_TOL)
    if rank == m:
        return UNIQUE, f
    # the contacts (groups of columns): first column and size
    start = np.empty(m, dtype=np.int64)
    size = np.empty(m, dtype=np.int64)
    groups = p = 0
    while p < m:
        start[groups] = p
        size[groups] = 3 if kind[p] == 0 else 2 if kind[p] == 3 else 1
        p += size[groups]
        groups += 1
    slack = SLACK * np.abs(ystar).max()
    Lr = np.ascontiguousarray(L[:, :rank])
    e = Lr.T @ ystar[:m]  # L' y = L' y*: the velocities kept
    # the active set: each contact free, zeroed, or (sticking) on one facet of its pyramid
    # or on the edge between two
    state = np.zeros(groups, dtype=np.int64)
    facet = np.zeros(groups, dtype=np.int64)  # ON_FACET: the facet; ON_EDGE: the edge
    y = np.zeros(m)
    split = np.empty(d)  # (_violation's edge impulses)
    for _ in range(MAX_ROUNDS):
        C, owner, col_facet = _constraints(state, facet, start, size, kind, m, mus, cos, sin,
                                           col_rows)
        xi = _least_norm_with(Lr, C, e, y)
        if xi.shape[0] == 0:
            return NEEDS_QP, f  # the constraints and the velocities are not independent
        # the contact whose impulse leaves its cone the most: zeroed (its normal is
        # negative) or put on the facet its friction points to
        worst, add = slack, -1
        for g in range(groups):
            if state[g] != ZEROED:
                v = _violation(y, start[g], kind, col_coef, cos, sin, mus,
                               col_rows[start[g], 0] // 3, split)
                if v > worst:
                    worst, add = v, g
        if add >= 0:
            p = start[add]
            a = col_rows[p, 0] // 3
            if kind[p] != 0 or y[p] < 0.0:
                state[add] = ZEROED
                continue
            j = _sector(y[p + 1], y[p + 2], cos[a], sin[a])
            turn = (j - facet[add]) % d
            if state[add] == ON_FACET and d >= 3 and (turn == 1 or turn == d - 1):
                # held on one facet, its friction leaves across the edge it shares with
                # the next one: the least-norm point lies on that edge (one facet after
                # the other would alternate between the two every round)
                facet[add] = j if turn == 1 else facet[add]
                state[add] = ON_EDGE
            else:
                state[add] = ON_FACET
                facet[add] = j
            continue
        # the constraints' multipliers (y = L mu + C nu): a zeroed contact's lie in its
        # cone's dual, a facet's is non-negative, or the contact is released; with none
        # to release, the point is the least-norm one (KKT)
        mult = np.zeros(m)
        worst, release, dropped = -slack, -1, -1
        for c in range(C.shape[1]):
            g = owner[c]
            if state[g] == ON_FACET or state[g] == ON_EDGE:
                if xi[rank + c] < worst:
                    worst, release, dropped = xi[rank + c], g, col_facet[c]
            else:
                mult += xi[rank + c] * C[:, c]
        for g in range(groups):
            if state[g] == ZEROED:
                v = _dual_violation(mult, start[g], kind, col_coef, cos, sin, mus,
                                    col_rows[start[g], 0] // 3, d)
                if v < worst:
                    worst, release, dropped = v, g, -1
        if release < 0:
            break
        p = start[release]
        if state[release] == ON_EDGE:  # off the facet whose multiplier is negative
            ridge = facet[release]
            facet[release] = (ridge - 1) % d if dropped == ridge else ridge
            state[release] = ON_FACET
        elif state[release] == ZEROED and kind[p] == 0 and d >= 3:
            # a zeroed sticking contact whose multiplier leaves its cone's dual: along
            # the edge ray that lowers the norm the most (released free, its normal
            # would come out negative again and the set would alternate)
            facet[release] = _steepest_edge(mult, p, cos, sin, mus, col_rows[p, 0] // 3, d)[1]
            state[release] = ON_EDGE
        else:
            state[release] = FREE
    else:
        return NEEDS_QP, f
    # f = B y on the face rows; its LCP unknowns (the sliding speeds are unchanged)
    fn = np.zeros(nf)
    for p in range(m):
        for i in range(col_nnz[p]):
            fn[col_rows[p, i]] += col_coef[p, i] * y[p]
    zn = np.zeros(n)
    for a in range(s):
        zn[a] = max(fn[3 * a], 0.0)
        fn[3 * a] = zn[a]
    for j in range(l):
        zn[s + j] = max(fn[3 * s + j], 0.0)
        fn[3 * s + j] = zn[s + j]
    if d:
        for a in range(s):
            edge_split(fn[3 * a + 1], fn[3 * a + 2], cos[a], sin[a],
                       zn[nn + a * d:nn + (a + 1) * d])
            zn[nn + nb + a] = lam[a]
    # the velocities do not move: K J_S' (f - f*)
    nv = K.shape[0]
    g = np.zeros(nv)
    for a in range(nf):
        dfa = fn[a] - fs[a]
        if dfa != 0.0:
            for c2 in range(nv):
                g[c2] += J[rows[a], c2] * dfa
    worst = 0.0
    for i in range(nv):
        acc = 0.0
        for j in range(nv):
            acc += K[i, j] * g[j]
        worst = max(worst, abs(acc))
    if not worst <= vel_tol:
        return NOT_CERTIFIED, f
    if fast:
        # every row plainly open or closed: the answer solves the face's LCP when its
        # impulses lie in their pyramids (its velocities, hence every w, are f*'s; the
        # closed rows carry no impulse): each contact's edge impulses within mu times its
        # normal, on a sliding contact equal to it (its cone row is complementary to its
        # sliding speed) and on its slipping edges only, to the active set's slack
        for a in range(s):
            total = 0.0
            for e in range(d):
                b = zn[nn + a * d + e]
                total += b
                if b > slack and not open_row[nn + a * d + e]:
                    return NOT_CERTIFIED, f
            gap = total - mus[a] * zn[a]
            if not (gap <= slack and (not sliding[a] or -gap <= slack)):
                return NOT_CERTIFIED, f
    else:
        _, ok, _, _ = row_verdict_with(M, q, zn, d1, d2, sc, big, row_sums)
        if not ok:
            return NOT_CERTIFIED, f
    out = np.zeros_like(f)
    for a in range(nf):
        out[rows[a]] = fn[a]
    return APPLIED, out


@njit(cache=True)
def edge_split(t1, t2, cos, sin, b):
    """Write into ``b`` (d,) the non-negative edge impulses giving the friction
    ``(t1, t2)``: on the two edges around its direction (edge ``e`` along
    ``(cos[e], sin[e])``, evenly spaced)."""
    d = b.shape[0]
    for e in range(d):
        b[e] = 0.0
    if t1 == 0.0 and t2 == 0.0:
        return
    step = 2.0 * np.pi / d
    theta = np.arctan2(t2, t1) - np.arctan2(sin[0], cos[0])
    j = int(np.floor((theta % (2.0 * np.pi)) / step)) % d
    j2 = (j + 1) % d
    c1, s1, c2, s2 = cos[j], sin[j], cos[j2], sin[j2]
    det = c1 * s2 - s1 * c2
    b[j] = max((t1 * s2 - t2 * c2) / det, 0.0)
    b[j2] = max((c1 * t2 - s1 * t1) / det, 0.0)


@njit(cache=True)
def _cholesky_range(H, rel_tol):
    """``(L, r)``: ``L[:, :r]`` (m, r) the diagonally pivoted Cholesky factor of the
    symmetric positive semi-definite ``H`` (m, m), ``H = L L'`` on its range, stopped at a
    pivot of at most ``rel_tol`` times the largest diagonal: ``H x = 0`` exactly when
    ``L' x = 0``."""
    m = H.shape[0]
    diag = np.empty(m)
    dmax = 0.0
    for i in range(m):
        diag[i] = H[i, i]
        dmax = max(dmax, diag[i])
    L = np.zeros((m, m))
    piv = np.arange(m)
    r = 0
    while r < m and dmax > 0.0:
        p = r
        for i in range(r + 1, m):
            if diag[piv[i]] > diag[piv[p]]:
                p = i
        piv[r], piv[p] = piv[p], piv[r]
        pj = piv[r]
        if diag[pj] <= rel_tol * dmax:
            break
        ljj = np.sqrt(diag[pj])
        L[pj, r] = ljj
        for i in range(r + 1, m):
            pi = piv[i]
            acc = H[pi, pj]
            for t in range(r):
                acc -= L[pi, t] * L[pj, t]
            L[pi, r] = acc / ljj
            diag[pi] -= L[pi, r] * L[pi, r]
        r += 1
    return L, r


@njit(cache=True)
def _constraints(state, facet, start, size, kind, m, mus, cos, sin, col_rows):
    """The active set's equalities ``C' y = 0`` (m, c), the contact of each column and
    its facet (-1: none): a zeroed contact's unit columns, a facet's inward unit normal
    ``r_j x r_(j+1)`` (its edges' rays ``(1, mu cos, mu sin)``), an edge's two facets'."""
    d = cos.shape[1]
    count = 0
    for g in range(state.shape[0]):
        count += (size[g] if state[g] == ZEROED else 1 if state[g] == ON_FACET else
                  2 if state[g] == ON_EDGE else 0)
    C = np.zeros((m, count))
    owner = np.empty(count, dtype=np.int64)
    col_facet = np.full(count, -1, dtype=np.int64)
    c = 0
    for g in range(state.shape[0]):
        p = start[g]
        if state[g] == ZEROED:
            for i in range(size[g]):
                C[p + i, c] = 1.0
                owner[c] = g
                c += 1
        elif state[g] == ON_FACET or state[g] == ON_EDGE:
            a = col_rows[p, 0] // 3
            for t in range(1 if state[g] == ON_FACET else 2):
                # ON_EDGE e: the facets e - 1 and e, which meet on edge e
                j = facet[g] if state[g] == ON_FACET or t == 1 else (facet[g] - 1) % d
                j2 = (j + 1) % d
                r1 = np.array([1.0, mus[a] * cos[a, j], mus[a] * sin[a, j]])
                r2 = np.array([1.0, mus[a] * cos[a, j2], mus[a] * sin[a, j2]])
                nrm = np.empty(3)  # r1 x r2 (np.cross compiles its shape message: seconds)
                nrm[0] = r1[1] * r2[2] - r1[2] * r2[1]
                nrm[1] = r1[2] * r2[0] - r1[0] * r2[2]
                nrm[2] = r1[0] * r2[1] - r1[1] * r2[0]
                if nrm[0] < 0.0:  # inward: the cone's axis (1, 0, 0) on its positive side
                    nrm = -nrm
                nrm /= np.sqrt(nrm @ nrm)
                for i in range(3):
                    C[p + i, c] = nrm[i]
                owner[c] = g
                col_facet[c] = j
                c += 1
    return C, owner, col_facet


@njit(cache=True)
def _least_norm_with(L, C, e, y):
    """Write into ``y`` the least-norm ``y`` with ``L' y = e`` and ``C' y = 0``; return
    ``xi`` with ``y = L xi[:r] + C xi[r:]`` (the equalities' multipliers), or an empty
    array when ``[L, C]`` has not full column rank (QR by modified Gram-Schmidt, a
    column orthogonalized again when the pass left less than 1/sqrt(2) of its norm (the
    DGKS test: a column that kept more is orthogonal to round-off, and twice is
    enough)."""
    m, r = L.shape
    k = r + C.shape[1]
    Qt = np.empty((k, m))  # the columns of [L, C], orthonormalized, as rows
    for i in range(m):
        for t in range(r):
            Qt[t, i] = L[i, t]
        for t in range(r, k):
            Qt[t, i] = C[i, t - r]
    R = np.zeros((k, k))
    for t in range(k):  # (plain loops: the vectors are short, a temporary costs more)
        full = before = np.sqrt(_dot(Qt, t, t, m))
        for _ in range(2):
            for o in range(t):
                dot = _dot(Qt, o, t, m)
                R[o, t] += dot
                for i in range(m):
                    Qt[t, i] -= dot * Qt[o, i]
            R[t, t] = np.sqrt(_dot(Qt, t, t, m))
            if R[t, t] >= np.sqrt(0.5) * before:
                break
            before = R[t, t]
        if not R[t, t] > RANK_TOL * full:
            return np.empty(0)
        for i in range(m):
            Qt[t, i] /= R[t, t]
    rhs = np.zeros(k)
    for i in range(r):
        rhs[i] = e[i]
    Rt = np.ascontiguousarray(R.T)  # lower triangular: R' w = (e, 0), then R xi = w
    w = forward_substitute(Rt, rhs, k)
    xi = back_substitute(Rt, w, k)
    y[:] = 0.0
    for t in range(k):
        for i in range(m):
            y[i] += w[t] * Qt[t, i]
    return xi


@njit(cache=True)
def _dot(Q, a, b, m):
    """``Q[a] . Q[b]`` over the first ``m`` entries (four chains of additions in flight)."""
    a0 = a1 = a2 = a3 = 0.0
    i = 0
    while i + 4 <= m:
        a0 += Q[a, i] * Q[b, i]
        a1 += Q[a, i + 1] * Q[b, i + 1]
        a2 += Q[a, i + 2] * Q[b, i + 2]
        a3 += Q[a, i + 3] * Q[b, i + 3]
        i += 4
    while i < m:
        a0 += Q[a, i] * Q[b, i]
        i += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True)
def _sector(t1, t2, cos, sin):
    """The pyramid's facet (its first edge ``j``) the friction ``(t1, t2)`` points to,
    the ``d`` edges evenly spaced from ``(cos[0], sin[0])``."""
    d = cos.shape[0]
    theta = np.arctan2(t2, t1) - np.arctan2(sin[0], cos[0])
    return int(np.floor((theta % (2.0 * np.pi)) / (2.0 * np.pi / d))) % d


@njit(cache=True)
def _edge_sum(t1, t2, cos, sin):
    """The sum of the edge impulses of :func:`edge_split` ``(t1, t2)`` without them (``d
    >= 3`` edges, as every pyramid has): the friction's gauge in the pyramid's regular
    polygon, ``max_e (p_e + p_(e+1)) / (1 + cos(2 pi / d))`` with ``p_e`` the friction
    along edge ``e`` (the facet between edges ``e`` and ``e + 1`` lies at ``cos(pi / d)``
    from the axis, along their bisector)."""
    d = cos.shape[0]
    first = last = t1 * cos[0] + t2 * sin[0]
    best = -np.inf
    for e in range(1, d):
        pe = t1 * cos[e] + t2 * sin[e]
        best = max(best, last + pe)
        last = pe
    best = max(best, last + first)
    return max(best, 0.0) / (1.0 + np.cos(2.0 * np.pi / d))


@njit(cache=True)
def _violation(y, p, kind, col_coef, cos, sin, mus, a, b):
    """How far the impulse of the contact (or limit) whose columns start at ``p`` is out
    of its cone (0 inside): a negative normal, friction beyond the pyramid, a facet's
    impulse off it, a ray's negative value [N.s]. ``b`` (d,): room for a facet's edge
    impulses."""
    if kind[p] == 0:
        return max(-y[p], _edge_sum(y[p + 1], y[p + 2], cos[a], sin[a])
                   - mus[a] * max(y[p], 0.0), 0.0)
    if kind[p] == 3:
        fc = col_coef[p] * y[p] + col_coef[p + 1] * y[p + 1]
        edge_split(fc[1], fc[2], cos[a], sin[a], b)
        return max(-fc[0], abs(mus[a] * fc[0] - b.sum()))
    return max(-y[p], 0.0)


@njit(cache=True)
def _steepest_edge(lam, p, cos, sin, mus, a, d):
    """``(worst, e)``: the most negative ``lam . ray`` (0 when none is) over the edge rays
    ``(1, mu cos_e, mu sin_e)`` of a sticking contact's pyramid (columns from ``p``), and
    the first edge ``e`` that reaches it (0 when none is negative)."""
    worst, edge = 0.0, 0
    for e in range(d):
        v = lam[p] + mus[a] * (cos[a, e] * lam[p + 1] + sin[a, e] * lam[p + 2])
        if v < worst:
            edge = e
        worst = min(worst, v)
    return worst, edge


@njit(cache=True)
def _dual_violation(lam, p, kind, col_coef, cos, sin, mus, a, d):
    """The most negative ``lam . ray`` over the rays generating the cone of the contact
    whose columns start at ``p`` (0 when ``lam`` lies in the cone's dual)."""
    if kind[p] == 0:
        return _steepest_edge(lam, p, cos, sin, mus, a, d)[0]
    worst = 0.0
    if kind[p] == 3:
        # the facet's rays in the columns' coordinates: (u1 . r, u2 . r)
        for e in range(d):
            ray = np.array([1.0, mus[a] * cos[a, e], mus[a] * sin[a, e]])
            c1, c2 = col_coef[p] @ ray, col_coef[p + 1] @ ray
            if c1 * c1 + c2 * c2 >= (ray @ ray) * (1.0 - 1e-12):  # a ray of the facet
                worst = min(worst, lam[p] * c1 + lam[p + 1] * c2)
    else:
        worst = min(worst, lam[p])
    return worst
