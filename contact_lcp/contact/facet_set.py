"""The facet-set contact model (Nguyen & Trinkle, eqs. 3-11): a point against a *set* of
facets, free on the union of their half-spaces.

A set ``s`` (from :mod:`contact_lcp.collision.facets`, in ``problem.extras["facet_sets"]``)
is a point and the nearby facets ``f`` of a convex piece, with gaps ``psi_f`` and rows
``J_f`` (n, t1, t2). At the end of the step each facet's gap, at velocity level, is
``g_f = psi_f / h + J_f,n v+`` (plus the stabilization below). The set is non-penetrating
when ``S_s = max_f g_f >= 0``; only the facet that attains the max may push.

Unknowns ``z = [a | b | sigma | c | d | e]`` and rows ``w = M z + q``:

* ``a`` (F + l): normal impulse of every facet (``lambda_f``), then the joint-limit rows;
  ``b`` (F d) pyramid edges and ``sigma`` (F) sliding speeds: the Stewart-Trinkle friction
  of each facet in its own plane (:func:`~contact_lcp.contact.lcp_builder.build_contact_lcp`
  on the facet rows). A facet's friction is bounded by ``mu lambda_f``, so only the pushing
  facet has friction. These rows are the pyramid model's except the normal ones:
* ``lambda_f`` row: ``w = d_f + S_s`` (the seed's eq. 11, read as in eqs. 9-10: the
  bracket is ``d_f + c_2 + ... + c_m + psi_1``), so ``lambda_f > 0`` only when
  ``g_f = S_s = 0`` (its Lemma 2.3);
* ``c`` (F - S, the seed's ``c_2..c_m`` of each set, facet 1 being the set's facet with
  the largest gap after the free motion, so that ``c = 0`` at ``z = 0`` and a pivoting
  method starts from the free motion's active facet): ``w_k = c_k + (c_2 + .. + c_{k-1}) + g_1 - g_k``
  (Lemma 2.1), so that ``S_s = g_1 + sum c = max_f g_f``;
* ``d`` (F): ``w_f = d_f + g_f`` (Lemma 2.2, ``d_f = |min(g_f, 0)|``);
* ``e`` (S), the seed's auxiliary variable per set: ``w_s = S_s - alpha e_s``; its row
  is the set's non-penetration ``S_s >= 0``, which the other rows do not imply (with every
  ``lambda = 0`` they hold for a penetrating point too). ``e`` enters no other row, so a
  solution has ``e = 0`` or ``S_s = alpha e_s > 0``; ``alpha`` = the option ``alpha``.

All rows are velocities [m/s]; ``c``, ``d``, ``e`` are velocities too, ``a`` and ``b``
impulses [N.s]. The LCP is passed to :func:`contact_lcp.lcp.solve` like any other; the
generalized impulse ``J_f' f`` comes back in ``ContactSolution.generalized`` (the problem's
own contact rows get no impulse: the facet sets replace them; its limit rows keep theirs).

Stabilization. A set whose point is outside (``max psi >= 0``) uses ``psi_f / h``. One that
is inside by ``-max psi`` shifts every facet's term by the same amount so that the set is
pushed out at ``gamma max psi / h``, no faster than ``max_correction_speed`` (the problem's
rule, applied to the set's gap, not to each plane: a plane the point is merely behind is not
a penetration).
"""

import numpy as np

from contact_lcp.contact.base import ContactModel, ModelSettings
from contact_lcp.contact.frictionless import frictionless_impulse, safe_stop, solve_frictionless
from contact_lcp.contact.lcp_builder import build_contact_lcp
from contact_lcp.contact.problem import stabilization_bias
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport, tally
from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp import solve

#: slip speed below which a facet's pyramid keeps its t1 axis [m/s]
STICK_SPEED = 1e-6


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
    cidx = np.full(F, -1)
    cidx[pos > 0] = n0 + np.arange(C)              # column of c_k (facets k >= 2)
    in_set_c = [cidx[start[s] + 1:start[s + 1]] for s in range(S)]
    if form == "compact":  # lambda rows: 2 S_s - g_f
        M[:F, :n0], q[:F] = 2.0 * M0[base] - M0[:F], 2.0 * q0[base] - q0[:F]
        for f in range(F):
            M[f, in_set_c[set_of[f]]] = 2.0
    else:  # lambda rows: d_f + S_s
        M[:F, :n0], q[:F] = M0[base], q0[base]
        for f in range(F):
            M[f, in_set_c[set_of[f]]] = 1.0
        M[np.arange(F), n0 + C + np.arange(F)] = 1.0
    # c rows: c_k + c_2 + .. + c_{k-1} + g_1 - g_k
    for f in np.flatnonzero(pos > 0):
        r = cidx[f]
        M[r, :n0], q[r] = M0[base[f]] - M0[f], q0[base[f]] - q0[f]
        M[r, in_set_c[set_of[f]][: pos[f]]] = 1.0
    if form == "compact":
        return lcp0, M, q
    # d rows: d_f + g_f
    rd = n0 + C + np.arange(F)
    M[rd, :n0], q[rd] = M0[:F], q0[:F]
    M[rd, rd] = 1.0
    # e rows: S_s - alpha e_s
    for s in range(S):
        r = n0 + C + F + s
        M[r, :n0], q[r] = M0[start[s]], q0[start[s]]
        M[r, in_set_c[s]] = 1.0
        M[r, r] = -float(alpha)
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


class FacetSetModel(ContactModel):
    """Vertex (and edge) against a facet set, with the seed's auxiliary variables.

    Options: ``alpha`` (the seed's weight of ``e``), ``prune_distance`` [m] (a set whose
    predicted gap after the free motion exceeds this on some facet is left out),
    ``push_tolerance`` [m] (only facets whose predicted gap after the free motion is within
    this of the set's largest may push; ``inf``: any facet, the seed's LCP unrestricted),
    ``stabilization`` (gamma) and ``max_correction_speed`` [m/s] (None:
    ``0.5 * 9.81 * h``), applied to each set's gap.
    """

    name = "facet_set"
    wants = ("facet_sets",)
    OPTIONS = {"form": "compact", "alpha": 1.0, "prune_distance": 1e-3, "push_tolerance": 1e-3,
               "stabilization": 1.0, "max_correction_speed": None}

    def __init__(self, settings=None):
        super().__init__(ModelSettings() if settings is None else settings)

    def _rows(self, problem, sets):
        """Facet rows of the active sets (facet 1 of each first), their biases and which
        facets may push (see ``push_tolerance``)."""
        o, h = self.options, problem.h
        cap = o["max_correction_speed"]
        cap = 0.5 * 9.81 * h if cap is None else cap
        bias = set_bias(sets.psi, sets.start, h, o["stabilization"], cap)
        u_n = sets.J[0::3] @ problem.v_free + bias
        keep, order, push = [], [], []
        for s in range(len(sets)):
            fs = np.arange(sets.start[s], sets.start[s + 1])
            best = u_n[fs].max()
            if h * best <= o["prune_distance"]:
                keep.append(len(fs))
                fs = fs[np.argsort(-u_n[fs], kind="stable")]
                order.extend(fs)
                push.extend(h * (best - u_n[fs]) <= o["push_tolerance"])
        order = np.array(order, dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
        rows = (3 * order[:, None] + np.arange(3)).ravel()
        return order, start, bias[order], rows, np.array(push, dtype=bool)

    def solve(self, problem):
        s = self.settings
        sets = problem.extras.get("facet_sets")
        if sets is None:
            raise InvalidProblem("the facet_set model needs problem.extras['facet_sets'] "
                                 "(the step provides it for models that want it)")
        k, l = problem.num_contacts, problem.num_limits
        order, start, bias, rows, push = self._rows(problem, sets)
        if order.size + l == 0:
            return ContactSolution(np.zeros(problem.num_rows), SolveReport(
                Outcome.SOLVED, None, self.name, s.method, True,
                info={"facet_sets": 0, "facets": 0}))
        J = np.vstack([sets.J[rows], problem.J[3 * k:]])
        JK = J @ problem.K
        G = JK @ J.T
        G = 0.5 * (G + G.T)
        u = J @ problem.v_free
        vt = (J[: 3 * order.size] @ problem.v).reshape(-1, 3)[:, 1:]
        angle = np.where(np.hypot(vt[:, 0], vt[:, 1]) > STICK_SPEED,
                         np.arctan2(-vt[:, 1], -vt[:, 0]), 0.0)
        mu = np.repeat(sets.mu, np.diff(sets.start))[order]
        if order.size == 0:
            start = np.zeros(1, dtype=np.int64)
        lcp0, M, q = build_facet_set_lcp(G, u, bias, mu, start,
                                         num_directions=s.friction_directions,
                                         num_unilateral=l, limit_bias=problem.bias[k:],
                                         edge_angle=angle, alpha=self.options["alpha"],
                                         form=self.options["form"])
        var = free_variables(push, l, s.friction_directions, q.shape[0])
        res = solve(M[np.ix_(var, var)], q[var], s.method, **dict(s.solver_options))
        info = {"facet_sets": len(start) - 1, "facets": int(order.size), "lcp_size": var.size}
        if res.success:
            z = np.zeros(q.shape[0])
            z[var] = res.z
            f_rows = lcp0.impulses(z[: lcp0.q.shape[0]])
            f = np.zeros(problem.num_rows)
            f[3 * k:] = f_rows[3 * order.size:]
            info["pushing_facets"] = int(np.count_nonzero(f_rows[0: 3 * order.size: 3] > 0))
            return ContactSolution(f, SolveReport(
                Outcome.SOLVED, res.status, self.name, s.method, True, pivots=res.pivots,
                solves=1, failures=0, info=info), generalized=J.T @ f_rows)
        results = [res]
        if s.fallback and problem.num_rows:
            _, fl = solve_frictionless(problem, s.method, s.solver_options)
            results.append(fl)
            pivots, solves, failures = tally(results)
            if fl.success:
                return ContactSolution(frictionless_impulse(problem, fl.z), SolveReport(
                    Outcome.FALLBACK, res.status, "frictionless", s.method, True,
                    pivots=pivots, solves=solves, failures=failures, fallbacks=1, info=info))
        pivots, solves, failures = tally(results)
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, status=res.status,
                                       applied="none", method="none", certified=False,
                                       pivots=pivots, solves=solves, failures=failures,
                                       fallbacks=2, info=info))
