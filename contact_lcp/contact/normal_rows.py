"""Base of the contact models that solve an LCP on the normal rows only (viscous, no-slip).

Which contacts get tangential rows. A contact of the problem is *touching* when its gap
is at most ``touch_distance`` (the others are near enough to need a normal row but do not
touch yet). A touching contact that the answer leaves unloaded (``f_n = 0``) and
separating (normal velocity at the end of the step above ``release_speed``) is
*released*: its tangential rows are removed and the LCP solved again; a released contact
that the new answer loads gets its rows back (at most ``MAX_RELEASES`` re-solves; the
report's ``info['loaded_released']`` counts loaded contacts left without rows). A model
with ``HOLD_LOADED`` (no-slip, whose promise is that no loaded contact slips) also gives
rows to a contact not yet touching that the answer loads: it closes its gap within the
step (a box tumbling at h = 10 ms loaded an edge 1.8 mm away, which slid at 0.27 m/s).
Without the release, a no-slip equality acts on contacts that lift off: a sliding box
stopped on its front edge, pivoting up, had its rotation stopped by its lifting rear
corners and was thrown upwards (S4's model applied literally, measured in
``test_contact_no_slip.py``).

With the PPM (the default method) a step runs as one compiled call
(:func:`contact_lcp.contact.normal_kernel.normal_step`: the same reduction, solve,
certification and releases); when that call does not end certified, the step is solved
again by the Python sequence below, which has the fallbacks. The ladder (rungs of
:mod:`contact_lcp.contact.ladder`): ``compiled`` (that one call), ``normal_rows`` (the
reduced LCP by the model's method and the standard further attempts, the robust search
after the PPM among them; once per release round), ``frictionless`` (``fallback``),
``safe_stop``.
"""

import numpy as np

from contact_lcp.contact.base import ContactModel, ModelSettings
from contact_lcp.contact.frictionless import frictionless_impulse, safe_stop, solve_frictionless
from contact_lcp.contact.ladder import Rungs, lcp_rung
from contact_lcp.contact.min_norm_normal import redistributed_normal
from contact_lcp.contact.normal_kernel import REASONS, SOLVED, normal_step
from contact_lcp.contact.guess import BasisGuess
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport, tally
from contact_lcp.exceptions import SceneError
from contact_lcp.lcp import METHODS, LCPStatus
from contact_lcp.lcp.tableau import zobrist_keys

#: LCP methods that accept a warm start ``initial_basis``
WARM_START_METHODS = ("robust", "ppm")
#: re-solves after releasing separating contacts, per step
MAX_RELEASES = 4
_EMPTY = np.zeros(0, dtype=np.int64)


class NormalRowsModel(ContactModel):
    """Solve the normal-row LCP of a subclass's reduction, release, fall back.

    A subclass implements :meth:`reduce`. This class solves the reduced LCP with the
    scene's method (warm-started from the last step's loaded set when the step has the
    same contacts), releases separating contacts (module notes), maps the answer back to
    impulses, and falls back to the certified frictionless impulse (``fallback=True``) or
    a safe stop.

    Options: ``touch_distance`` [m] (default 1e-4), ``release_speed`` [m/s] (default
    1e-6); ``method``: the LCP method of the normal-row LCP, default ``ppm`` (S4's; the
    LCP is PSD), None for the scene's ``solver.method`` (whose ``solver.options`` then
    apply). A scene can thus keep ``solver.method: robust`` for the pyramid model and
    switch models without changing it.
    """

    OPTIONS = {"touch_distance": 1e-4, "release_speed": 1e-6, "method": "ppm"}
    GUESS = BasisGuess
    FORCE_DISTRIBUTIONS = ("any", "min_norm")
    #: whether a loaded contact farther than ``touch_distance`` gets tangential rows too
    #: (module notes); the compiled step (viscous) gives rows to touching contacts only
    HOLD_LOADED = False

    def __init__(self, settings=ModelSettings()):
        super().__init__(settings)
        self.touch_distance = option_number(self, "touch_distance", nonneg=True)
        self.release_speed = option_number(self, "release_speed", nonneg=True)
        method = self.options["method"]
        if method is not None and method not in METHODS:
            raise SceneError(f"contact model {self.name!r}: option 'method': expected one of "
                             f"{sorted(METHODS)} or null, got {method!r}")
        self.method = settings.method if method is None else method
        self.method_options = dict(settings.solver_options) if method is None else {}

    def reduce(self, problem, contacts, **options):
        """``(ReducedLCP, info)`` with tangential rows on ``contacts`` ((k,) bool)."""
        raise NotImplementedError

    def redistribute(self, problem, solution, lcp, held=None):
        """The answer, whose forces under ``force_distribution: min_norm`` are the
        least-norm normal impulses with the same velocities, computed when first read
        (:mod:`contact_lcp.contact.min_norm_normal`; the tangential impulses are
        functions of the velocities here). ``lcp`` is the reduced LCP solved, or None
        from the compiled step, which gives ``held`` (k,): the contacts it gave rows."""
        if self.settings.force_distribution != "min_norm":
            return solution
        return redistributed_normal(problem, solution, self.name, (_EMPTY, None, None),
                                    deferred=True)

    def kernel_args(self, problem):
        """``(viscous, coefficient, group, per_pair, singular_tol)`` of
        :func:`~contact_lcp.contact.normal_kernel.normal_step` (None: no compiled step)."""
        return None

    def kernel_info(self, count, rows, candidates):
        """The report's info of the compiled step: ``count`` contacts got tangential rows,
        ``rows`` of the ``candidates`` offered were kept."""
        return {}

    def _compiled(self, problem, guess):
        """The step in one compiled call: ``(solution, None)``, or ``(None, reason)`` when
        it did not certify, or ``(None, None)`` when the model or method has none."""
        args = self.kernel_args(problem)
        if args is None or self.method != "ppm" or self.method_options:
            return None, None
        viscous, coefficient, group, per_pair, singular_tol = args
        k, l = problem.num_contacts, problem.num_limits
        n = k + l
        last = guess is not None
        (code, f, basis, warm, pivots, solves, released, loaded_released, count, rows,
         candidates, held) = normal_step(
            problem.G, np.ascontiguousarray(problem.J), problem.K, problem.u,
            problem.v_free, problem.bias, problem.phi, k, l, viscous, coefficient,
            group, per_pair, problem.h, singular_tol, self.touch_distance, self.release_speed, MAX_RELEASES, problem.pair,
            guess.pair if last else _EMPTY, guess.basis if last else _EMPTY,
            max(100, 10 * n), 1e-10, zobrist_keys(n))
        if code != SOLVED:
            return None, REASONS[code]
        info = self.kernel_info(count, rows, candidates)
        info.update(lcp_size=n, released=released, loaded_released=loaded_released)
        return self.redistribute(problem, ContactSolution(f, SolveReport(
            Outcome.SOLVED, LCPStatus.SOLVED, self.name, self.method, True, pivots=pivots,
            solves=solves, failures=0, warm_started=warm,
            info=dict(info, rungs=("compiled:solved",))),
            guess=BasisGuess(problem.pair, basis)), None, held), None

    def _warm_basis(self, problem, n, guess):
        if (guess is None or self.method not in WARM_START_METHODS
                or not np.array_equal(guess.pair, problem.pair)
                or guess.basis.size == 0 or guess.basis.max() >= n):
            return None
        return guess.basis

    def solve(self, problem, guess=None, **reduce_options):
        """Certified impulses of one step (see the class notes); ``reduce_options`` go to
        :meth:`reduce` (the compiled step, if any, is used only without them)."""
        s = self.settings
        k = problem.num_contacts
        touch = problem.phi[:k] <= self.touch_distance
        contacts = touch.copy()
        eligible = np.ones(k, dtype=bool) if self.HOLD_LOADED else touch
        n = k + problem.num_limits
        guess = guess if isinstance(guess, BasisGuess) else None
        done, miss = (None, None) if reduce_options else self._compiled(problem, guess)
        if done is not None:
            return done
        rungs = Rungs()
        if miss is not None:
            rungs.add("compiled", "miss")
        basis = self._warm_basis(problem, n, guess)
        warm = basis is not None
        results = []
        for _ in range(MAX_RELEASES + 1):
            held = contacts.copy()  # the rows of the answer kept last
            lcp, info = self.reduce(problem, held, **reduce_options)
            opts = dict(self.method_options)
            if basis is not None and self.method in WARM_START_METHODS:
                opts["initial_basis"] = basis
            res = lcp_rung(lcp.M, lcp.q, self.method, opts)
            results.append(rungs.add("normal_rows", res))
            if not res.success:
                break
            basis = np.flatnonzero(res.z > 0.0)
            loaded = res.z[:k] > 0.0
            lifting = contacts & ~loaded & (res.w[:k] > self.release_speed)
            regained = eligible & ~contacts & loaded
            if not (lifting.any() or regained.any()):
                break
            contacts = (contacts & ~lifting) | regained
        info["lcp_size"] = n
        if miss is not None:
            info["compiled_miss"] = miss  # why the one-call step was not used
        info["released"] = int(np.count_nonzero(touch & ~held))
        if res.success:
            # loaded (touching, or any under HOLD_LOADED), yet without tangential rows in
            # the answer: the release did not settle
            info["loaded_released"] = int(np.count_nonzero(eligible & ~held
                                                           & (res.z[:k] > 0.0)))
        if res.success:
            if "fallback" in res.info:
                info["solver_fallback"] = res.info["fallback"]
            pivots, solves, failures = tally(results)
            return self.redistribute(problem, ContactSolution(
                lcp.impulses(problem, res.z), SolveReport(
                    Outcome.SOLVED, res.status, self.name, self.method, True, pivots=pivots,
                    solves=solves, failures=failures, warm_started=warm,
                    info=rungs.into(info)), guess=BasisGuess(problem.pair, basis)), lcp,
                held)
        fl = None
        if s.fallback:
            _, fl = solve_frictionless(problem, s.method, s.solver_options)
            results.append(rungs.add("frictionless", fl))
        pivots, solves, failures = tally(results)
        if fl is None or not fl.success:
            rungs.add("safe_stop", "applied")
        common = dict(pivots=pivots, solves=solves, failures=failures, warm_started=warm,
                      info=rungs.into(info))
        if fl is not None and fl.success:
            return ContactSolution(frictionless_impulse(problem, fl.z), SolveReport(
                Outcome.FALLBACK, res.status, "frictionless", s.method, True, fallbacks=1,
                **common))
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, status=res.status,
                                       applied="none", method="none", certified=False,
                                       fallbacks=2, **common))


def option_number(model, key, *, nonneg=False, positive=False):
    """The model option ``key`` as a float, or a SceneError naming what was expected."""
    x = model.options[key]
    ok = (not isinstance(x, bool) and isinstance(x, (int, float)) and np.isfinite(x)
          and (not nonneg or x >= 0) and (not positive or x > 0))
    if not ok:
        want = "a number > 0" if positive else "a number >= 0" if nonneg else "a number"
        raise SceneError(f"contact model {model.name!r}: option {key!r}: expected {want}, "
                         f"got {x!r}")
    return float(x)
