"""The friction-pyramid contact model (Yamane & Nakamura 2008, eq. 25; Stewart-Trinkle form).

Each contact's Coulomb cone is replaced by a ``d``-sided pyramid inscribed in it (8 sides by
default). Solve strategy, in order, each answer applied only when certified:

1. **Previous basis.** The last step's basis is tried first on the contacts that carried
   load (one compiled call, :mod:`contact_lcp.contact.pyramid_warm`; accepted only
   when certified and no dropped contact approaches; a dropped contact that approaches
   joins the basis by its normal impulse, ``WARM_GROW`` times at most, and ``info
   ['added_contacts']`` counts them). When contacts came or went (other
   surface pairs, or in another order), each contact takes the basis of the nearest last
   contact of its surface pair (``info['mapped_contacts']``; only when at most
   ``max(2, k / 8)`` contacts are new: a landing pile starts afresh). If it does not
   solve the step, the robust search runs on the LCP of those loaded contacts from where
   the compiled call's principal pivots got to (accepted likewise; a contact its answer
   closes joins the next such search, ``GROW_ROUNDS`` at most), then on the frictional
   LCP of all the contacts from the last such answer (robust method only). A standing robot or a tower then needs
   no pivot of the search, or a handful; a settling pile a search on its loaded
   contacts (21 spheres: 8 ms instead of 29). A frictional LCP of ``LAST_BASIS_MAX_ROWS``
   rows or more skips those searches for the two-step solve.
2. **Two-step** (the seed's): the frictionless LCP first, then the frictional one
   warm-started on the contacts it loaded. With ``two_step=False`` the frictional LCP is
   solved cold.
3. **Fallbacks**: the frictional LCP cold, if it was warm-started; with its pyramids on
   the contact frames, if they were turned to the slip. Then, with ``fallback=True``, the
   certified answer of a simpler problem, counted as a fallback: by default (option
   ``fallback_model: relaxed``) Anitescu & Hart's convex relaxation of the same LCP
   (:mod:`contact_lcp.contact.relaxed`, on the same pyramids), which keeps the friction:
   a sticking contact's conditions are the pyramid's, only a sliding one is pushed off at
   ``mu`` times its slip speed for that step, so the next steps start from a state with
   the friction kept (after a frictionless fallback a pile slides, and its next LCPs are
   as hard). Then (or with ``fallback_model: frictionless``) the certified
   frictionless impulse; else a safe stop (no impulse).

Each LCP above is an LCP rung of :mod:`contact_lcp.contact.ladder`; the report's
``rungs`` lists the rungs that ran.

Pyramid orientation. With ``friction_frame="slip"`` (default) each contact's first edge
lies along its last friction impulse (matched by surface pair and nearest point), so that
sliding friction stays exactly opposite to the slip and a contact held by friction (a box
on an incline) has the cone's threshold, whatever the direction. A new contact's edge
points against its tangential velocity after the free motion, or along t1. (Following
the free velocity every step instead makes a rolling, sliding ellipsoid's friction
chatter out of its plane: the impulse itself turns the slip.) ``"fixed"`` keeps every pyramid on the contact frame (the seeds' form).

A contact that sticks well inside its cone (``|f_t| <= KEEP_INSIDE cos(pi / d) mu f_n``,
where the pyramid holds at least ``cos(pi / d) mu f_n`` in every direction) keeps its
pyramid instead. Turned to its impulse, such a contact's friction lies exactly on an
edge, a degenerate vertex: the next step's impulse falls on either side of it and needs
the other neighbouring edge in the basis. In a redundant pile (21 spheres, 45 contacts)
the statically indeterminate friction also turns by 10 degrees a step (median), so the
last basis missed on almost every step (with the pyramids kept, a settled pile is solved
by it); the turn still serves a sliding contact and one near its threshold.
"""

import numpy as np

from contact_lcp.contact.base import ContactModel
from contact_lcp.contact.frictionless import frictionless_impulse, safe_stop, solve_frictionless
from contact_lcp.contact.guess import PyramidGuess
from contact_lcp.contact.ladder import Rungs, lcp_rung, sparse_paths, walked_cold
from contact_lcp.contact.min_norm import distribution, min_norm_impulse, redistributed
from contact_lcp.contact.lcp_builder import build_contact_lcp, build_relaxed_lcp
from contact_lcp.contact.pyramid_warm import (
    ANGLE_SNAP,
    NO_BASIS,
    NO_LOADED_CONTACT,
    OTHER_CONTACTS,
    STICK_SPEED,
    edge_angles,
    first_rung,
    friction_directions,
    keep_inside,
    mapped_flags,
)
from contact_lcp.contact.pyramid_kernel import (
    DROPPED_APPROACHES,
    MISS_REASONS,
    basis_flags,
    full_basis,
    reduced_basis,
)
from contact_lcp.contact.report import (ContactSolution, Outcome, SolveReport, all_pivots,
                                        tally)
from contact_lcp.contact.sparse_problem import limit_rows
from contact_lcp.exceptions import SceneError
from contact_lcp.lcp import LCPStatus

#: methods that accept a warm start ``initial_basis``
WARM_START_METHODS = ("robust",)
#: principal pivots the last step's basis may take before the general strategy runs, at
#: least (and one per 2 rows of G: a settling pile changes many contacts per step, and
#: in a tower the load moves between the coplanar corners of every interface at once)
WARM_FLIPS = 4
#: rows of G per principal pivot of the last basis (``max(WARM_FLIPS, rows // this)``)
WARM_ROWS_PER_FLIP = 2
#: times the last basis's compiled call may add the contacts it left out that approach
#: under its answer, and solve again (``pyramid_warm.first_rung``)
WARM_GROW = 6
#: searches on the loaded contacts, each adding the contacts the last one's answer
#: closed, before the search on all the contacts
GROW_ROUNDS = 3
#: the last basis follows its contacts when at most max(MAP_NEW, k // MAP_NEW_PER) of the
#: k contacts are new (no last contact of their surface pair)
MAP_NEW, MAP_NEW_PER = 2, 8
#: ... and at most this many (a pile being poured gains tens of contacts a step, and the
#: last basis, followed, then costs more pivots than the two-step solve)
MAP_NEW_MAX = 4
#: frictional LCPs of at least this many rows go from a missed last basis straight to the
#: two-step solve: on a large redundant pile the warm-started searches on the loaded
#: contacts end on secondary rays and run cold, while the frictional LCP warm-started on
#: the frictionless answer's loaded normals mostly solves on its warm path
#: (benchmarks/bench_large.py measures it)
LAST_BASIS_MAX_ROWS = 2000
#: pivots that the frictional solves of one such large LCP (``LAST_BASIS_MAX_ROWS`` rows
#: or more) may take together, per row (robust's ``pivot_budget``, unless the solver
#: options set one): the warm path's 50 n, then all the rest for the cold exact-tie path.
#: Without a budget a step whose LCPs defeat every sparse path walks them all again in
#: each retry (hours at n = 5 000) before the fallback; with it, a step ends in a certified
#: fallback within about a quarter of an hour. 400 n is set from the hardest certified
#: LCPs of the 200-sphere pour (benchmarks/bench_hard_lcps.py, bench_large.py), which
#: needed up to ~350 n
LARGE_PIVOTS_PER_ROW = 400


#: ``fallback_model`` values: the problem whose certified answer a failed step applies
FALLBACK_MODELS = ("relaxed", "frictionless")


class PyramidModel(ContactModel):
    """Frictional contact with a ``friction_directions``-sided pyramid.

    Options (``contact.options`` in a scene): ``fallback_model`` (see
    :data:`FALLBACK_MODELS` and the module notes, step 3).
    """

    name = "pyramid"
    OPTIONS = {"fallback_model": "relaxed"}
    GUESS = PyramidGuess
    FORCE_DISTRIBUTIONS = ("any", "min_norm")
    #: one problem per step: the pyramid LCP can have solutions with different velocities,
    #: and islands solved apart can reach another one than the whole problem's pivoting
    #: (config/ring.yaml's late penetration went from 0.05 to 0.11 mm); ``auto`` solves
    #: its pyramid islands apart
    islands = False

    def __init__(self, settings=None):
        from contact_lcp.contact.base import ModelSettings

        super().__init__(ModelSettings() if settings is None else settings)
        fallback = self.options.get("fallback_model", "relaxed")
        if fallback not in FALLBACK_MODELS:
            raise SceneError(f"contact model {self.name!r}: option fallback_model must be one "
                             f"of {FALLBACK_MODELS}; received {fallback!r}")
        self._budget = None  # pivots left to the contact solve running (None: no budget)

    # --------------------------------------------------------------- orientation
    def edge_angles(self, problem, guess):
        """(k,) angle of each contact's first edge from its t1 axis [rad].

        The direction of the contact's last friction impulse (the LCP's own answer: for a
        sliding contact, opposite to the slip after the impulse; for a held one, against
        the load), matched to the nearest point of the same surface pair in the last
        step (the :class:`PyramidGuess` ``guess``, or None); else against the tangential
        velocity after the free motion; else t1. A contact that stuck well inside its cone
        keeps its last pyramid (``KEEP_INSIDE``). The angles are kept for
        :meth:`_remember` (None: every pyramid on its contact frame).
        """
        k = problem.num_contacts
        self._used_angle = None
        if self.settings.friction_frame == "fixed" or k == 0:
            return None
        last_pair, last_p, last_dir = _orientation(guess)
        self._used_angle = edge_angles(problem.u, problem.R_WC, problem.p_W, problem.pair,
                                       last_p, last_pair, last_dir, STICK_SPEED,
                                       self._period(), ANGLE_SNAP)
        return self._used_angle

    def _done(self, problem, results, res, f, warm, info, rungs, keep=None):
        """The certified frictional answer ``f`` with the guess for the next step,
        reported with the ladder's ``rungs``. ``res`` solved the LCP of the contacts
        ``keep`` (None: all of them)."""
        pivots, solves, failures = tally(results)
        sparse_paths(results, info)
        return ContactSolution(f, SolveReport(
            Outcome.SOLVED, res.status, self.name, self.settings.method, True, pivots=pivots,
            solves=solves, failures=failures, warm_started=warm, info=rungs.into(info)),
            guess=self._remember(problem, res.z, f, keep))

    def _period(self):
        return 2.0 * np.pi / self.settings.friction_directions

    def _angle(self, problem):
        """(k,) first-edge angles of the pyramids of the answer being remembered [rad]."""
        used = self.__dict__.get("_used_angle")
        return np.zeros(problem.num_contacts) if used is None else used

    def _remember(self, problem, z, f, keep=None):
        """The :class:`PyramidGuess` of the answer ``z`` (of the LCP of the contacts
        ``keep``, None: all) with impulses ``f``."""
        k, l, d = problem.num_contacts, problem.num_limits, self.settings.friction_directions
        keep = np.arange(k) if keep is None else np.asarray(keep, dtype=np.int64)
        directions = friction_directions(f, problem.R_WC, problem.mu, self._angle(problem),
                                         keep_inside(self._period()))
        return PyramidGuess(problem.pair, problem.p_W, directions, limit_rows(problem),
                            *basis_flags(z, k, l, d, keep))

    # --------------------------------------------------------------------- solve
    def _frictional(self, problem, angle, basis):
        s = self.settings
        lcp = build_contact_lcp(problem.G, problem.u, problem.mu,
                                num_directions=s.friction_directions,
                                num_unilateral=problem.num_limits, normal_bias=problem.bias,
                                edge_angle=angle)
        opts = self._options()
        if basis is not None and s.method in WARM_START_METHODS:
            opts["initial_basis"] = basis
        return lcp, self._charged(lcp_rung(lcp.M, lcp.q, s.method, opts))

    def _options(self):
        """The solver options of a frictional solve: the settings', with what is left of
        this contact solve's pivot budget (``LARGE_PIVOTS_PER_ROW``) when it has one."""
        opts = dict(self.settings.solver_options)
        if self._budget is not None:
            opts["pivot_budget"] = max(self._budget, 0)
        return opts

    def _charged(self, res):
        """``res``, with every pivot it took charged to this contact solve's pivot budget:
        those of all robust's Lemke paths (``info['path_pivots']``; ``pivots`` counts only
        the answer's path) and of solve()'s other attempts (``info['attempt_pivots']``)."""
        if self._budget is not None:
            self._budget -= all_pivots(res)
        return res

    def _rows(self, problem):
        """Rows of ``problem``'s frictional LCP: ``d + 2`` per contact, one per limit."""
        return problem.num_contacts * (self.settings.friction_directions + 2) + problem.num_limits

    def _start_budget(self, problem):
        """The pivot budget of this contact solve's frictional LCPs (None: none): for a
        large LCP and the robust method, ``LARGE_PIVOTS_PER_ROW`` per row unless the
        solver options set ``pivot_budget`` themselves."""
        s = self.settings
        rows = self._rows(problem)
        self._budget = None
        if s.method == "robust" and rows >= LAST_BASIS_MAX_ROWS:
            self._budget = int(s.solver_options.get("pivot_budget",
                                                    LARGE_PIVOTS_PER_ROW * rows))

    def _loaded_only(self, problem, angle, keep, basis, info):
        """The frictional LCP on the contacts ``keep`` (increasing), warm-started on
        ``basis`` (indices in its layout); accepted only when every dropped contact ends
        without approaching (w_n >= -tol). Returns ``(result, f or None, keep)``."""
        k, l = problem.num_contacts, problem.num_limits
        rows = np.concatenate([(3 * keep[:, None] + np.arange(3)).ravel(), 3 * k + np.arange(l)])
        normals = np.concatenate([keep, k + np.arange(l)])
        s = self.settings
        lcp = build_contact_lcp(problem.G[np.ix_(rows, rows)], problem.u[rows], problem.mu[keep],
                                num_directions=s.friction_directions, num_unilateral=l,
                                normal_bias=problem.bias[normals],
                                edge_angle=None if angle is None else angle[keep])
        opts = self._options()
        if s.method in WARM_START_METHODS:
            opts["initial_basis"] = basis
        res = self._charged(lcp_rung(lcp.M, lcp.q, s.method, opts))
        if not res.success:
            return res, None, keep
        f = np.zeros(problem.num_rows)
        f[rows] = lcp.impulses(res.z)
        dropped = np.setdiff1d(np.arange(k), keep)
        w_n = (problem.u + problem.G @ f)[3 * dropped] + problem.bias[dropped]
        if np.any(w_n < -res.info["tol"]):
            info["drop_rejected"] = True
            self._approaching = dropped[w_n < -res.info["tol"]]
            return res, None, keep
        info["dropped_contacts"] = int(dropped.size)
        return res, f, keep

    def _first(self, problem, guess, basis):
        """The first rung (:func:`~contact_lcp.contact.pyramid_warm.first_rung`): the
        pyramids' edge angles (kept in ``_used_angle``) and, with ``basis`` ``(pair,
        limit rows, basic_a, basic_b, basic_lam, equilibration)`` (None: none; the
        factors of the LCP it solved, or (2, 0)), the step solved by it.
        Returns ``(code, solution or None, z)``."""
        s, k = self.settings, problem.num_contacts
        last_pair, last_p, last_dir = _orientation(guess)
        b_pair, b_limits, a, b, lam, factors = _NO_BASIS if basis is None else basis
        limits = problem.J[3 * k:]
        slip = s.friction_frame != "fixed"
        period = self._period()
        code, f, z, nb, solves, kept, added, a, b, lam, directions, angle, factors = first_rung(
            problem.G, problem.u, problem.mu, problem.bias, problem.R_WC, problem.p_W,
            problem.pair, limits, slip, period, s.friction_directions, last_pair,
            last_p, last_dir, b_pair, b_limits, a, b, lam,
            float(s.solver_options.get("singular_tol", 1e-10)),
            max(WARM_FLIPS, problem.u.shape[0] // WARM_ROWS_PER_FLIP), WARM_GROW,
            keep_inside(period), factors)
        used = self._used_angle = angle if slip and k else None
        if code:
            return code, None, z
        # the forces' distribution at once (solve() would wrap the answer in another
        # solution for it; the angles are this call's own array, kept as they are)
        spread = (distribution(problem, s.friction_directions, used)
                  if s.force_distribution == "min_norm" and problem.u.shape[0] else None)
        return 0, ContactSolution(f, self.warm_report(nb, solves, z.shape[0], k - kept, added),
                                  guess=PyramidGuess(problem.pair, problem.p_W, directions,
                                                     limits, a, b, lam, factors),
                                  distribute=spread), z

    def _missed(self, problem, code, z, flags):
        """Where the search starts after the basis ``flags`` missed with ``code`` (and
        the reduced LCP's ``z``): ``_miss_reason``, ``_miss_basis``, ``_miss_start``."""
        k, l, d = problem.num_contacts, problem.num_limits, self.settings.friction_directions
        basic_a, basic_b, basic_lam = flags
        keep = np.flatnonzero(basic_a[:k])
        self._miss_basis, self._miss_start = None, None
        self._miss_reason = MISS_REASONS.get(code, "no loaded contact")
        if code in (2, 3):  # the search starts where the pivots got to
            self._miss_basis = full_basis(*basis_flags(z, k, l, d, keep))
            self._miss_start = keep, np.flatnonzero(z > 0.0)
        elif code not in (DROPPED_APPROACHES, NO_LOADED_CONTACT):
            self._miss_start = keep, reduced_basis(basic_a, basic_b, basic_lam, keep)

    def warm_report(self, pivots, solves, lcp_size, dropped, added):
        """The report of a step solved by the last step's basis (one compiled call of
        ``solves`` LCP solves, ``added`` contacts added to the basis's loaded ones); the
        last one again when it says the same (reports are immutable: a standing robot's
        steps share one)."""
        key = (pivots, solves, lcp_size, dropped, added)
        last = self.__dict__.get("_warm_report")
        if last is not None and last[0] == key:
            return last[1]
        info = {"warm_source": "previous_step", "lcp_size": int(lcp_size),
                "dropped_contacts": int(dropped), "rungs": ("last_basis:solved",)}
        if added:
            info["added_contacts"] = int(added)
        report = SolveReport(Outcome.SOLVED, LCPStatus.SOLVED, self.name, self.settings.method,
                             True, pivots=int(pivots), solves=int(solves), failures=0,
                             warm_started=True, info=info)
        self._warm_report = (key, report)
        return report

    def warm_up(self, problem, guess):
        """The ladder's later rungs once (:meth:`ContactModel.warm_up`): the last basis
        mapped onto contacts that came or went, the search from a basis (the rungs after
        a miss), and the force distribution's QP (the faces its compiled path leaves)."""
        if not isinstance(guess, PyramidGuess) or guess.flags is None or problem.num_rows == 0:
            return
        solution = self._solve(problem, guess)
        if solution.report.outcome is not Outcome.SOLVED:
            return
        if problem.num_contacts:
            mapped_flags(problem.pair, problem.p_W, guess.pair, guess.points, *guess.flags)
        # the rungs after a miss: the search on the last loaded contacts, then on all
        a, b, lam = guess.flags
        keep = np.flatnonzero(a[:problem.num_contacts])
        self._start_budget(problem)
        if keep.size:
            self._loaded_only(problem, self._used_angle, keep, reduced_basis(a, b, lam, keep),
                              {})
        self._frictional(problem, self._used_angle, full_basis(a, b, lam))
        if self.settings.force_distribution == "min_norm":
            min_norm_impulse(problem, solution.solved, self.settings.friction_directions,
                             self._used_angle, compiled=False)

    def solve(self, problem, guess=None):
        solution = self._solve(problem, guess)
        if self.settings.force_distribution == "min_norm" and not solution.distributes:
            return redistributed(problem, solution, self.name,
                                 self.settings.friction_directions,
                                 self.__dict__.get("_used_angle"))
        return solution

    def _solve(self, problem, guess):
        s = self.settings
        guess = guess if isinstance(guess, PyramidGuess) else None
        basis = None
        last = None if guess is None else guess.flags
        if s.warm_start and s.method in WARM_START_METHODS and last is not None:
            basis = (guess.pair, guess.limits, *last,
                     _NO_FACTORS if guess.equilibration is None else guess.equilibration)
        code, done, z = self._first(problem, guess, basis)
        if done is not None:  # the common step: the last basis solves it
            return done
        k = problem.num_contacts
        angle = self._used_angle
        self._start_budget(problem)
        results, info = [], {}
        flags = None if code in (NO_BASIS, OTHER_CONTACTS) else guess.flags
        if code == OTHER_CONTACTS and k:  # contacts came or went
            *flags, new = mapped_flags(problem.pair, problem.p_W, guess.pair,
                                       guess.points, *guess.flags)
            if flags[0].any() and new <= max(MAP_NEW, min(MAP_NEW_MAX, k // MAP_NEW_PER)):
                info["mapped_contacts"] = True
                code, done, z = self._first(problem, guess,
                                            (problem.pair, guess.limits, *flags, _NO_FACTORS))
                if done is not None:
                    return done
            else:  # nothing to start from, or another situation (a pile landing)
                flags = None
        lcp = res = None
        warm = False
        rungs = Rungs()
        if flags is not None:
            self._missed(problem, code, z, flags)
            rungs.add("last_basis", "miss")
            info["warm_miss"] = self._miss_reason  # why the last basis did not solve it
            if self._rows(problem) >= LAST_BASIS_MAX_ROWS:
                flags = None  # (module notes, step 1: large LCPs go to the two-step)
        if flags is not None:
            info["warm_source"] = "previous_step"
            start = self._miss_basis
            keep, basis = (None, None) if self._miss_start is None else self._miss_start
            for _ in range(GROW_ROUNDS if keep is not None else 0):
                # the search on the last loaded contacts, and those its answers close
                sub, f, keep = self._loaded_only(problem, angle, keep, basis, info)
                results.append(sub)
                rungs.add("loaded", sub if f is not None or not sub.success else "rejected")
                if f is not None:
                    info["lcp_size"] = sub.z.shape[0]
                    return self._done(problem, results, sub, f, True, info, rungs, keep)
                if not sub.success:
                    break
                # its basis, and the normals of the contacts it closes
                a, b, lam = basis_flags(sub.z, k, problem.num_limits, s.friction_directions,
                                        keep)
                a[self._approaching] = True
                start = full_basis(a, b, lam)
                keep = np.union1d(keep, self._approaching)
                basis = reduced_basis(a, b, lam, keep)
            lcp, res = self._frictional(problem, angle, full_basis(*flags)
                                        if start is None else start)
            results.append(rungs.add("frictional_warm", res))
            warm = True
            info["warm_source"] = "previous_step"
        fl = None
        if res is None or not res.success:
            basis = None
            if s.two_step:
                _, fl = solve_frictionless(problem, s.method, s.solver_options)
                results.append(rungs.add("frictionless", fl))
                if fl.success:
                    basis = np.flatnonzero(fl.z > 0.0)
            if s.drop_unloaded and basis is not None and problem.num_contacts:
                keep = np.flatnonzero(fl.z[:k] > 0.0)
                normals = np.concatenate([keep, k + np.arange(problem.num_limits)])
                sub, f, keep = self._loaded_only(problem, angle, keep,
                                                 np.flatnonzero(fl.z[normals] > 0.0), info)
                results.append(sub)
                rungs.add("loaded", sub if f is not None or not sub.success else "rejected")
                if f is not None:
                    return self._done(problem, results, sub, f, True, info, rungs, keep)
            lcp, res = self._frictional(problem, angle, basis)
            results.append(res)
            warm = basis is not None and s.method in WARM_START_METHODS
            rungs.add("frictional_warm" if warm else "frictional", res)
            info["warm_source"] = "frictionless" if warm else "none"
            if not res.success and warm and not walked_cold(res):
                # the warm start can mislead; try cold once
                lcp, res = self._frictional(problem, angle, None)
                results.append(rungs.add("frictional_cold", res))
                warm = False
            if not res.success and angle is not None and np.any(angle != 0.0):
                # Pyramids turned to the slip can make a degenerate LCP (a chain's two
                # dependent contacts on a rod, turned differently: every method ends on
                # tiny pivots); the contact frames' pyramids keep the friction.
                lcp, res = self._frictional(problem, None, basis)
                self._used_angle = None
                results.append(rungs.add("contact_frame", res))
                info["edge_frame"] = "contact frame (retry)"
        info["lcp_size"] = lcp.q.shape[0]
        if res.success:
            return self._done(problem, results, res, lcp.impulses(res.z), warm, info, rungs)
        pivots, solves, failures = tally(results)
        sparse_paths(results, info)
        common = dict(pivots=pivots, solves=solves, failures=failures, warm_started=warm,
                      info=info)
        # no basis for the next step; the last answer's friction directions stay
        left = None if guess is None else guess.without_basis()
        if s.fallback and self.options.get("fallback_model", "relaxed") == "relaxed":
            rl, rel = self._relaxed(problem)
            results.append(rungs.add("relaxed", rel))
            pivots, solves, failures = tally(results)
            common.update(pivots=pivots, solves=solves, failures=failures)
            if rel.success:
                rungs.into(info)
                return ContactSolution(rl.impulses(rel.z), SolveReport(
                    Outcome.FALLBACK, res.status, "relaxed", rel.method, True, fallbacks=1,
                    **common), guess=left)
        if s.fallback and fl is None:
            _, fl = solve_frictionless(problem, s.method, s.solver_options)
            rungs.add("frictionless", fl)
            pivots, solves, failures = tally(results + [fl])
            common.update(pivots=pivots, solves=solves, failures=failures)
        if s.fallback and fl.success:
            rungs.into(info)
            return ContactSolution(frictionless_impulse(problem, fl.z), SolveReport(
                Outcome.FALLBACK, res.status, "frictionless", s.method, True, fallbacks=1,
                **common), guess=left)
        rungs.add("safe_stop", "applied")
        rungs.into(info)
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, status=res.status,
                                       applied="none", method="none", certified=False,
                                       fallbacks=2, **common), guess=left)

    def _relaxed(self, problem):
        """Anitescu & Hart's convex relaxation of this step's LCP, on the pyramids of the
        last attempt, solved as the relaxed model's ``path: auto`` does (its velocity QP
        above ``AUTO_QP_SIZE`` unknowns, else the scene's LCP method), certified on the
        relaxed LCP. Returns ``(lcp, result)``."""
        from contact_lcp.contact.relaxed_qp import AUTO_QP_SIZE, solve_relaxed_qp

        s = self.settings
        lcp = build_relaxed_lcp(problem, num_directions=s.friction_directions,
                                edge_angle=self.__dict__.get("_used_angle"))
        if lcp.q.shape[0] > AUTO_QP_SIZE:
            return lcp, solve_relaxed_qp(problem, lcp)
        return lcp, lcp_rung(lcp.M, lcp.q, s.method, s.solver_options)


#: a basis of :meth:`PyramidModel._first` without equilibration factors to try (the
#: guess's ``equilibration``), and no basis to try
_NO_FACTORS = np.zeros((2, 0))
_NO_BASIS = (np.zeros(0, dtype=np.int64), np.zeros((0, 0)), np.zeros(0, dtype=np.bool_),
             np.zeros((0, 0), dtype=np.bool_), np.zeros(0, dtype=np.bool_), _NO_FACTORS)
_NO_ORIENTATION = (np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3)))


def _orientation(guess):
    """``(pair, points, directions)`` of a guess's contacts (empty for None)."""
    return _NO_ORIENTATION if guess is None else (guess.pair, guess.points, guess.directions)
