"""The facet-set LCP (Nguyen & Trinkle): building it from facet rows, separately from
solving it (see :mod:`contact_lcp.contact.facet_set` for the unknowns and rows)."""

from dataclasses import replace

import numpy as np

from contact_lcp.contact.lcp_builder import build_contact_lcp
from contact_lcp.contact.problem import stabilization_bias
from contact_lcp.exceptions import InvalidProblem

#: the closest points of two edges slide at up to this times their relative speed (edges
#: within about 6 degrees of parallel: their contact point is then left to the next step)
MAX_SLIDE_GAIN = 10.0


def sliding_rows(sets, v, h):
    """The sets with each facet's normal row taken at the material points that the motion
    ``v`` carries to the contact within the step.

    A facet row ``n . (v_V - v_F)`` at the set's point is the gap's first-order change
    for the material points there. Over a step the contact point slides: across F's face
    for a vertex (F's point under it moves by ``h u_t``, ``u = v_V - v_F`` at the point),
    along both edges for an edge set (``u = alpha e_V + beta e_F + gamma n``: V's point
    by ``-h alpha e_V``, F's by ``h beta e_F``). When F (or V's edge) also turns at ``w``,
    the gap at the end differs from the row's prediction by ``h (delta x n) . w``, second
    order in h but large when the sliding is fast: a peg falling at 3 m/s past a rim
    while turning at 0.05 rad/s sinks 25 um in a 12.5 ms step. The row at the shifted
    material points, ``n . (v_V(p + delta_V) - v_F(p + delta_F))``, removes that term
    (the sliding ``delta`` itself is taken from ``v``, e.g. the free motion).

    Parameters
    ----------
    sets : FacetSets
        With ``edge`` and ``Jw`` (returned unchanged without them).
    v : (nv,) ndarray
        Velocity that predicts the sliding [m/s, rad/s].
    h : float
        Time step [s].

    Returns
    -------
    FacetSets
    """
    if sets.Jw is None or sets.edge is None or not sets.num_facets:
        return sets
    F = sets.num_facets
    set_of = sets.set_of
    J = np.array(sets.J, dtype=float)
    u_W = np.einsum("fij,fj->fi", sets.R_WC, (J @ v).reshape(F, 3))
    n = sets.normal
    e = sets.edge[set_of]                                   # (F, 2, 3)
    is_edge = (sets.kind[set_of] == 1) & np.any(e[:, 0] != 0.0, axis=1)
    d_V = np.zeros((F, 3))
    d_F = h * (u_W - n * np.einsum("fi,fi->f", n, u_W)[:, None])
    if np.any(is_edge):
        B = np.stack([e[is_edge, 0], e[is_edge, 1], n[is_edge]], axis=2)  # columns
        c = np.linalg.solve(B, u_W[is_edge][:, :, None])[:, :, 0]
        cap = MAX_SLIDE_GAIN * np.linalg.norm(u_W[is_edge], axis=1)
        c = np.clip(c, -cap[:, None], cap[:, None])
        d_V[is_edge] = -h * c[:, :1] * e[is_edge, 0]
        d_F[is_edge] = h * c[:, 1:2] * e[is_edge, 1]
    Jw = sets.Jw[set_of]                                    # (F, 2, 3, nv)
    J[0::3] += (np.einsum("fi,fin->fn", np.cross(d_V, n), Jw[:, 0])
                - np.einsum("fi,fin->fn", np.cross(d_F, n), Jw[:, 1]))
    return replace(sets, J=J)


def set_bias(psi, start, h, gamma, max_correction_speed):
    """(F,) velocity-level term of each facet [m/s] (see the module docstring)."""
    bias = np.asarray(psi, dtype=float) / h
    if len(start) > 1:
        gap = np.maximum.reduceat(psi, start[:-1])
        push = stabilization_bias(np.minimum(gap, 0.0), h, gamma, max_correction_speed)
        shift = np.where(gap < 0.0, push - gap / h, 0.0)
        bias = bias + np.repeat(shift, np.diff(start))
    return bias


def build_facet_set_lcp(G, u, bias, mu, start, *, num_directions, num_unilateral=0,
                        limit_bias=None, edge_angle=None, alpha=1.0, form="seed"):
    """The facet-set LCP (layout in the module docstring).

    Parameters
    ----------
    G : (3F + l, 3F + l) ndarray
        Delassus matrix of the facet rows (n, t1, t2 per facet) then the limit rows [1/kg].
    u : (3F + l,) ndarray
        Their velocities after the free motion [m/s].
    bias : (F,) ndarray
        Velocity-level gap terms of the facets (:func:`set_bias`) [m/s].
    mu : (F,) ndarray
        Friction of each facet.
    start : (S + 1,) int ndarray
        Facets of set s are ``start[s]:start[s + 1]``; the first is the set's facet 1.
    num_directions : int
        Pyramid edges per facet.
    num_unilateral : int
        ``l``.
    limit_bias : (l,) ndarray, optional
    edge_angle : (F,) ndarray, optional
        Pyramid rotation of each facet [rad].
    alpha : float
        Weight of the auxiliary variable of each set (>= 0).
    form : {'seed', 'compact'}
        'seed': unknowns ``[a | b | sigma | c | d | e]``; 'compact': ``[a | b | sigma | c]``
        with the lambda rows ``2 S_s - g_f`` (see the module docstring).

    Returns
    -------
    lcp0 : ContactLCP
        The pyramid LCP of the facet rows (its ``impulses`` map ``z[:n0]`` back).
    M : (n, n) ndarray
    q : (n,) ndarray
    """
    start = np.asarray(start, dtype=np.int64)
    F, S, l = int(start[-1]), len(start) - 1, int(num_unilateral)
    if np.shape(bias) != (F,) or np.any(np.diff(start) < 1):
        raise InvalidProblem(f"facet sets: expected non-empty sets and {F} facet biases; "
                             f"received start {start.tolist()} and bias shape {np.shape(bias)}")
    lb = np.zeros(l) if limit_bias is None else np.asarray(limit_bias, dtype=float)
    lcp0 = build_contact_lcp(G, u, mu, num_directions=num_directions, num_unilateral=l,
                             normal_bias=np.concatenate([bias, lb]), edge_angle=edge_angle)
    M0, q0 = lcp0.M, lcp0.q
    n0 = q0.shape[0]
    C = F - S
    n = n0 + C + (F + S if form == "seed" else 0)
    M = np.zeros((n, n))
    q = np.zeros(n)
    M[:n0, :n0], q[:n0] = M0, q0
    set_of = np.repeat(np.arange(S), np.diff(start))
    base = start[:-1][set_of]                      # facet 1 of each facet's set
    pos = np.arange(F) - base                      # position in its set (0 = facet 1)
    ck = np.flatnonzero(pos > 0)                   # facets k >= 2, one c_k each
    rc = n0 + np.arange(C)                         # their rows and columns
    same = set_of[:, None] == set_of[ck][None, :]  # (F, C): c_k of the facet's own set
    if form == "compact":  # lambda rows: 2 S_s - g_f
        M[:F, :n0], q[:F] = 2.0 * M0[base] - M0[:F], 2.0 * q0[base] - q0[:F]
        M[:F, rc] = 2.0 * same
    else:  # lambda rows: d_f + S_s
        M[:F, :n0], q[:F] = M0[base], q0[base]
        M[:F, rc] = 1.0 * same
        M[np.arange(F), n0 + C + np.arange(F)] = 1.0
    # c rows: c_k + c_2 + .. + c_{k-1} + g_1 - g_k
    M[rc, :n0], q[rc] = M0[base[ck]] - M0[ck], q0[base[ck]] - q0[ck]
    M[np.ix_(rc, rc)] = 1.0 * (same[ck] & (pos[ck][None, :] <= pos[ck][:, None]))
    if form == "compact":
        return lcp0, M, q
    # d rows: d_f + g_f
    rd = n0 + C + np.arange(F)
    M[rd, :n0], q[rd] = M0[:F], q0[:F]
    M[rd, rd] = 1.0
    # e rows: S_s - alpha e_s
    re = n0 + C + F + np.arange(S)
    M[re, :n0], q[re] = M0[start[:-1]], q0[start[:-1]]
    M[np.ix_(re, rc)] = 1.0 * (np.arange(S)[:, None] == set_of[ck][None, :])
    M[re, re] = -float(alpha)
    return lcp0, M, q


def free_variables(push, l, d, n):
    """Indices of the LCP unknowns kept when only the facets ``push`` (F,) bool may carry
    an impulse: the others lose their ``lambda_f``, edges ``b_f`` and ``sigma_f`` (all 0)."""
    F = push.size
    drop = np.flatnonzero(~push)
    gone = np.concatenate([drop, F + l + (d * drop[:, None] + np.arange(d)).ravel(),
                           F + l + d * F + drop])
    keep = np.ones(n, dtype=bool)
    keep[gone.astype(np.int64)] = False
    return np.flatnonzero(keep)
