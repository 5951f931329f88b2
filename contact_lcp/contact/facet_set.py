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
* ``lambda_f`` row, ``form="seed"``: ``w = d_f + S_s`` (the seed's eq. 11, read as in
  eqs. 9-10: the bracket is ``d_f + c_2 + ... + c_m + psi_1``), so ``lambda_f > 0`` only
  when ``g_f = S_s = 0`` (its Lemma 2.3); ``form="compact"`` (default): ``w = 2 S_s - g_f``,
  equivalent and without ``d`` and ``e``: ``w >= 0`` for the facet attaining the max is
  ``S_s >= 0``, and ``2 S_s - g_f = 0`` with ``g_f <= S_s`` and ``S_s >= 0`` is
  ``g_f = S_s = 0``;
* ``c`` (F - S, the seed's ``c_2..c_m`` of each set, facet 1 being the set's active
  facet, see below): ``w_k = c_k + (c_2 + .. + c_{k-1}) + g_1 - g_k``
  (Lemma 2.1), so that ``S_s = g_1 + sum c = max_f g_f``;
* ``d`` (F, seed form): ``w_f = d_f + g_f`` (Lemma 2.2, ``d_f = |min(g_f, 0)|``);
* ``e`` (S, seed form), the seed's auxiliary variable per set: ``w_s = S_s - alpha e_s``; its row
  is the set's non-penetration ``S_s >= 0``, which the other rows do not imply (with every
  ``lambda = 0`` they hold for a penetrating point too). ``e`` enters no other row, so a
  solution has ``e = 0`` or ``S_s = alpha e_s > 0``; ``alpha`` = the option ``alpha``.

The seed form's ``e`` row makes the matrix lose copositivity (a ``-alpha`` diagonal or a
zero column): our pivoting methods end on rays on it where the compact form solves.

All rows are velocities [m/s]; ``c``, ``d``, ``e`` are velocities too, ``a`` and ``b``
impulses [N.s]. The LCP is passed to :func:`contact_lcp.lcp.solve` like any other; the
generalized impulse ``J_f' f`` comes back in ``ContactSolution.generalized`` (the problem's
own contact rows get no impulse: the facet sets replace them; its limit rows keep theirs).

How it is solved. Each set's facet 1 is first the facet with the largest gap after the
free motion. With ``c = 0`` and only facet 1 of each set pushing, the LCP reduces to the
pyramid LCP of those facets (a principal block: Stewart-Trinkle, which our pivoting
methods solve reliably): frictionless first (with no push at all the free-sliding point
is tried), then frictional: first on the facets the frictionless answer loaded (warm
started there; facets the answer closes are added and it is solved again), kept only when
certified on the whole LCP, as the pyramid model's ``drop_unloaded``; then from the
frictionless basis and cold with a small node budget of the robust search, Lemke's and the
lexicographic method, then the robust search with its full budget (the first certified
answer is kept). On the peg in hole the redundant facets (four corners and two rim edges
on one wall) make the whole pyramid LCP degenerate enough that every method there fails
on some steps; the loaded facets alone are solved in a few dozen pivots. That point, with the
other facets' ``sigma`` at their slip speed, is then certified against the *whole*
facet-set LCP; where a set's facet 1 is not its largest gap at the answer, that facet
becomes facet 1 and it is solved again (at most ``max_switches`` times). Last, the whole
LCP goes to the solver directly. A pivoting method run on the whole LCP from the start
often ends on a ray, or on a jammed answer the LCP also admits (opposite facets pushing,
their friction holding the body).

Only facets whose gap after the free motion is within ``push_tolerance`` of their set's
largest may push (the others' ``lambda``, edges and ``sigma`` are left out): the seed's
LCP also admits, for a vertex sliding level onto a facet across a seam or crack, an
answer where the facet's side stops it and the impulse itself tips the body down, which
pivoting methods were seen to pick.

Rows at the sliding contact. Each facet's normal row is taken at the material points the
free motion carries to the contact during the step
(:func:`~contact_lcp.contact.facet_lcp.sliding_rows`), not at the set's point: a peg
falling at 3 m/s past a hole's rim while turning at 0.05 rad/s otherwise sinks 25 um into
the wall in one 12.5 ms step (the rim slides 4 cm along the turning peg's side).

Stabilization. A set whose point is outside (``max psi >= 0``) uses ``psi_f / h``. One that
is inside by ``-max psi`` shifts every facet's term by the same amount so that the set is
pushed out at ``gamma max psi / h``, no faster than ``max_correction_speed`` (the problem's
rule, applied to the set's gap, not to each plane: a plane the point is merely behind is not
a penetration).
"""

import numpy as np

from contact_lcp.contact.base import ContactModel, ModelSettings
from contact_lcp.contact.facet_lcp import (
    build_facet_set_lcp,
    free_variables,
    set_bias,
    sliding_rows,
)
from contact_lcp.contact.frictionless import (
    frictionless_impulse,
    safe_stop,
    solve_frictionless,
)
from contact_lcp.contact.ladder import Rungs, lcp_rung
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport, tally
from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp import LCPResult, LCPStatus
from contact_lcp.lcp.residual import certify

#: methods that accept a warm start ``initial_basis``
WARM_START_METHODS = ("robust",)
#: node budget of the robust search's first tries (warm, then cold)
QUICK_NODES = 300
#: solves of the frictional LCP on the loaded facets (each adds the facets closed)
LOADED_ROUNDS = 3
#: slip speed below which a facet's pyramid keeps its t1 axis [m/s]
STICK_SPEED = 1e-6


class FacetSetModel(ContactModel):
    """Vertex (and edge) against a facet set, with the seed's auxiliary variables.

    Options: ``form`` ('compact' or 'seed', see the module docstring), ``alpha`` (the
    seed's weight of ``e``), ``prune_distance`` [m] (a set whose predicted gap after the
    free motion exceeds this on some facet is left out), ``push_tolerance`` [m] (only
    facets whose predicted gap after the free motion is within this of the set's largest
    may push; ``inf``: any facet), ``max_switches`` (re-solves with another facet 1),
    ``stabilization`` (gamma) and ``max_correction_speed`` [m/s] (None:
    ``0.5 * 9.81 * h``), applied to each set's gap; ``loaded_first`` (solve the
    frictional LCP on the facets the frictionless answer loaded first).
    """

    name = "facet_set"
    wants = ("facet_sets",)
    OPTIONS = {"form": "compact", "alpha": 1.0, "prune_distance": 1e-3, "push_tolerance": 1e-3,
               "max_switches": 4, "stabilization": 1.0, "max_correction_speed": None,
               "loaded_first": True}

    def __init__(self, settings=None):
        super().__init__(ModelSettings() if settings is None else settings)

    # ------------------------------------------------------------------ rows
    def _rows(self, problem, sets):
        """Active sets: facet order (facet 1 of each first), set starts, facet biases
        and which facets may push (see ``push_tolerance``)."""
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
        return order, start, bias[order], np.array(push, dtype=bool)

    def _build(self, problem, sets, order, start, bias, push):
        """The facet-set LCP of one facet order: ``(lcp0, M, q, var, J)``."""
        s, k, l = self.settings, problem.num_contacts, problem.num_limits
        rows = (3 * order[:, None] + np.arange(3)).ravel()
        J = np.vstack([sets.J[rows], problem.J[3 * k:]])
        G = (J @ problem.K) @ J.T
        G = 0.5 * (G + G.T)
        angle = None
        if s.friction_frame == "slip":  # first pyramid edge against the slip, as pyramid
            vt = (J[: 3 * order.size] @ problem.v).reshape(-1, 3)[:, 1:]
            angle = np.where(np.hypot(vt[:, 0], vt[:, 1]) > STICK_SPEED,
                             np.arctan2(-vt[:, 1], -vt[:, 0]), 0.0)
        mu = np.repeat(sets.mu, np.diff(sets.start))[order]
        lcp0, M, q = build_facet_set_lcp(G, J @ problem.v_free, bias, mu, start,
                                         num_directions=s.friction_directions,
                                         num_unilateral=l, limit_bias=problem.bias[k:],
                                         edge_angle=angle, alpha=self.options["alpha"],
                                         form=self.options["form"])
        var = free_variables(push, l, s.friction_directions, q.shape[0])
        return lcp0, M, q, var, J

    # ----------------------------------------------------------------- solves
    def _two_step(self, M, q, var, F, l, n0):
        """Frictionless (unknowns ``a`` and the auxiliary ones) for the free-sliding point
        (tried when nothing pushes) and a warm start; then frictional, cold, then from the
        frictionless basis. ``(result, results, warm)``."""
        s = self.settings
        fl = np.flatnonzero((var < F + l) | (var >= n0))
        first = lcp_rung(M[np.ix_(fl, fl)], q[fl], s.method, s.solver_options)
        self._rungs.add("frictionless", first)
        results, basis = [first], None
        if first.success:
            z = np.zeros(q.shape[0])
            z[fl] = first.z
            if not np.any(z[var < F] > 0.0):
                cand = self._sliding(M, q, var, z, F, l, n0)
                err, w, tol = certify(M, q, cand)
                if err <= tol:
                    self._rungs.add("free_sliding", "solved")
                    return LCPResult(cand, w, LCPStatus.SOLVED, s.method, 0, err,
                                     {"tol": tol, "free_sliding": True}), results, True
                self._rungs.add("free_sliding", "rejected")
            basis = np.flatnonzero(z > 0.0)
            if self.options["loaded_first"]:
                sub, res = self._loaded_only(M, q, var, z, F, l, n0, first.info.get("tol", 0.0))
                results += sub
                if res is not None:
                    return res, results, True
        # Cold and warm (from the frictionless basis) starts each fail on some peg-in-hole
        # steps after 10^4 robust-search nodes where the other, or Lemke's method, solves
        # in ~50 pivots: cheap tries first (small node budget, Lemke, lexicographic Lemke),
        # then the robust search with its full budget.
        opts = dict(s.solver_options)
        warm_ok = basis is not None and s.method in WARM_START_METHODS
        warm = [("frictional_warm", s.method, dict(opts, initial_basis=basis))] if warm_ok else []
        tries = warm + [("frictional", s.method, opts)]
        if s.method == "robust":
            quick = dict(opts, max_nodes=min(opts.get("max_nodes", QUICK_NODES), QUICK_NODES))
            tries = ([("quick_warm", "robust", dict(quick, initial_basis=basis))]
                     if warm_ok else []) + [
                ("quick", "robust", quick), ("lemke", "lemke", {}),
                ("lexicographic", "lexicographic", {})] + tries
        for name, method, run in tries:
            res = self._rungs.add(name, lcp_rung(M, q, method, run))
            results.append(res)
            if res.success:
                return res, results, "initial_basis" in run
        return res, results, False

    def _loaded_only(self, M, q, var, z, F, l, n0, tol0):
        """The frictional LCP on the facets the frictionless answer ``z`` loaded or holds
        closed (``w <= tol0``, its certification tolerance [m/s]: a box's fourth corner on
        a plane, which friction's moment loads) with their ``lambda``, edges and ``sigma``, the limit rows and the
        auxiliary unknowns, warm-started there; its answer, the others' ``sigma`` at their slip speed, is
        returned only when certified on the whole ``(M, q)``; facets it closes are added
        and it is solved again (``LOADED_ROUNDS`` times at most). ``(results, answer)``:
        the solve made (none when nothing is loaded or nothing is left out) and the
        certified :class:`LCPResult` or None (the plain tries then run)."""
        s, d = self.settings, self.settings.friction_directions
        facet = np.full(var.size, -1)
        is_a = var < F
        facet[is_a] = var[is_a]
        is_b = (var >= F + l) & (var < F + l + d * F)
        facet[is_b] = (var[is_b] - F - l) // d
        is_s = (var >= F + l + d * F) & (var < n0)
        facet[is_s] = var[is_s] - F - l - d * F
        loaded = np.zeros(F, dtype=bool)
        loaded[var[is_a & (z > 0.0)]] = True
        w0 = M[is_a] @ z + q[is_a]  # the frictionless answer's normal rows [m/s]
        loaded[var[is_a][w0 <= tol0]] = True
        opts = dict(s.solver_options)
        results, basis_z = [], z
        for _ in range(LOADED_ROUNDS):
            keep = np.flatnonzero(np.where(facet >= 0, loaded[facet], True))
            if not loaded.any() or keep.size == var.size:
                return results, None
            if s.method in WARM_START_METHODS:
                opts["initial_basis"] = np.flatnonzero(basis_z[keep] > 0.0)
            res = self._rungs.add("loaded", lcp_rung(M[np.ix_(keep, keep)], q[keep], s.method,
                                                     opts))
            results.append(res)
            if not res.success:
                return results, None
            full = np.zeros(var.size)
            full[keep] = res.z
            full = self._sliding(M, q, var, full, F, l, n0)
            err, w, tol = certify(M, q, full)
            if err <= tol:
                return results, LCPResult(full, w, LCPStatus.SOLVED, res.method, 0, err,
                                          dict(res.info or {}, tol=tol, loaded_only=True))
            closing = var[is_a & (w < -tol)]  # facets left out that the answer closes
            closing = closing[~loaded[closing]]
            if not closing.size:
                return results, None
            loaded[closing] = True
            basis_z = full
        return results, None

    def _sliding(self, M, q, var, z, F, l, n0):
        """``z`` with each facet whose ``sigma`` is 0 given its slip speed (edges 0)."""
        d = self.settings.friction_directions
        z = z.copy()
        w = M @ z + q
        is_b = (var >= F + l) & (var < F + l + d * F)
        slip = np.zeros(F)
        np.maximum.at(slip, (var[is_b] - F - l) // d, -w[is_b])
        is_s = np.flatnonzero((var >= F + l + d * F) & (var < n0))
        is_s = is_s[z[is_s] == 0.0]
        z[is_s] = slip[var[is_s] - F - l - d * F]
        return z

    def _active_facets(self, problem, sets, order, start, bias, push):
        """The pyramid LCP of each set's facet 1, certified on the whole facet-set LCP,
        facet 1 switched where it is not the largest gap. ``(lcp0, z, J, results, warm,
        switches)`` with ``z`` None when no certified answer was found."""
        d, l = self.settings.friction_directions, problem.num_limits
        results, warm = [], False
        for switch in range(int(self.options["max_switches"]) + 1):
            lcp0, M, q, var, J = self._build(problem, sets, order, start, bias, push)
            F, n0 = order.size, lcp0.q.shape[0]
            Mv, qv = (M, q) if var.size == q.size else (M[np.ix_(var, var)], q[var])
            base = start[:-1]
            head = np.zeros(q.shape[0], dtype=bool)
            head[base] = True
            head[F: F + l] = True
            head[F + l + (d * base[:, None] + np.arange(d)).ravel()] = True
            head[F + l + d * F + base] = True
            sub = np.flatnonzero(head[var])
            res, more, warm = self._two_step(Mv[np.ix_(sub, sub)], qv[sub], var[sub], F, l, n0)
            results += more
            if not res.success:
                return lcp0, None, J, results, warm, switch
            z = np.zeros(var.size)
            z[sub] = res.z
            z = self._sliding(Mv, qv, var, z, F, l, n0)
            if self.options["form"] == "seed":  # d_f = |min(g_f, 0)| (e = 0, c = 0)
                zz = np.zeros(q.shape[0])
                zz[var] = z
                g = lcp0.M[:F] @ zz[:n0] + lcp0.q[:F]
                d_at = np.flatnonzero((var >= n0 + F - (len(start) - 1))
                                      & (var < n0 + 2 * F - (len(start) - 1)))
                z[d_at] = np.maximum(-g[var[d_at] - (n0 + F - (len(start) - 1))], 0.0)
            err, _, tol = certify(Mv, qv, z)
            full = np.zeros(q.shape[0])
            full[var] = z
            if err <= tol:
                return lcp0, full, J, results, warm, switch
            g = lcp0.M[:F] @ full[:n0] + lcp0.q[:F]
            perm = np.arange(F)
            for s_ in range(len(start) - 1):
                a, b = start[s_], start[s_ + 1]
                best = a + int(np.argmax(g[a:b]))
                if best != a and g[best] > g[a]:
                    perm[a:b] = np.concatenate([[best], np.delete(np.arange(a, b), best - a)])
            if np.array_equal(perm, np.arange(F)):
                break
            order, bias, push = order[perm], bias[perm], push[perm].copy()
            push[start[:-1]] = True
        return lcp0, None, J, results, warm, switch

    @staticmethod
    def _sets(problem):
        sets = problem.extras.get("facet_sets") if problem.extras else None
        if sets is None:
            raise InvalidProblem("the facet_set model needs problem.extras['facet_sets'] "
                                 "(the step provides it for models that want it)")
        return sliding_rows(sets, problem.v_free, problem.h)

    def lcp(self, problem):
        """The whole facet-set LCP of ``problem`` (the one the last resort of
        :meth:`solve` hands to the solver), for replaying recorded problems.

        Returns
        -------
        M : (n, n) ndarray
        q : (n,) ndarray
        facets : int
            Facets of the kept sets (0, with ``n = l``, when none is kept).
        """
        sets = self._sets(problem)
        order, start, bias, push = self._rows(problem, sets)
        _, M, q, var, _ = self._build(problem, sets, order, start, bias, push)
        return M[np.ix_(var, var)], q[var], int(order.size)

    def solve(self, problem, guess=None):
        s = self.settings
        sets = self._sets(problem)
        k, l = problem.num_contacts, problem.num_limits
        order, start, bias, push = self._rows(problem, sets)
        info = {"facet_sets": len(start) - 1, "facets": int(order.size)}
        self._rungs = rungs = Rungs()  # (this solve's; the helpers add theirs)
        if order.size + l == 0:
            return ContactSolution(np.zeros(problem.num_rows), SolveReport(
                Outcome.SOLVED, None, self.name, s.method, True, info=info))
        lcp0, z, J, results, warm, switches = self._active_facets(problem, sets, order, start,
                                                                  bias, push)
        info["switches"] = switches
        status = results[-1].status if results else None
        if z is None:  # last resort: the whole facet-set LCP
            rungs.add("whole_sets", "tried")
            lcp0, M, q, var, J = self._build(problem, sets, order, start, bias, push)
            res, more, warm = self._two_step(M[np.ix_(var, var)], q[var], var, order.size, l,
                                             lcp0.q.shape[0])
            results += more
            status = res.status
            if res.success:
                z = np.zeros(q.shape[0])
                z[var] = res.z
        fallback = False
        if z is None and s.fallback:  # frictionless facet sets (a and c only), certified
            fl = np.flatnonzero((var < order.size + l) | (var >= lcp0.q.shape[0]))
            Mv, qv = M[np.ix_(var, var)], q[var]
            res = lcp_rung(Mv[np.ix_(fl, fl)], qv[fl], s.method, s.solver_options)
            results.append(self._rungs.add("frictionless_sets", res))
            if res.success:
                z = np.zeros(q.shape[0])
                z[var[fl]] = res.z
                fallback = True
        pivots, solves, failures = tally(results)
        if z is not None:
            f_rows = lcp0.impulses(z[: lcp0.q.shape[0]])
            f = np.zeros(problem.num_rows)
            f[3 * k:] = f_rows[3 * order.size:]
            info["pushing_facets"] = int(np.count_nonzero(f_rows[0: 3 * order.size: 3] > 0))
            return ContactSolution(f, SolveReport(
                Outcome.FALLBACK if fallback else Outcome.SOLVED,
                status if fallback else LCPStatus.SOLVED,
                "frictionless" if fallback else self.name, s.method, True, pivots=pivots,
                solves=solves, failures=failures, fallbacks=int(fallback),
                warm_started=warm and not fallback, info=rungs.into(info)),
                generalized=J.T @ f_rows)
        if s.fallback and problem.num_rows:
            _, fl = solve_frictionless(problem, s.method, s.solver_options)
            rungs.add("frictionless", fl)
            pivots, solves, failures = tally(results + [fl])
            if fl.success:
                return ContactSolution(frictionless_impulse(problem, fl.z), SolveReport(
                    Outcome.FALLBACK, status, "frictionless", s.method, True,
                    pivots=pivots, solves=solves, failures=failures, fallbacks=1,
                    info=rungs.into(info)))
        rungs.add("safe_stop", "applied")
        return safe_stop(problem, {"outcome": Outcome.SAFE_STOP, "status": status,
                                   "applied": "none", "method": "none", "certified": False,
                                   "pivots": pivots, "solves": solves, "failures": failures,
                                   "fallbacks": 2, "info": rungs.into(info)})
