"""The convex relaxation of the pyramid model (Anitescu & Hart 2004, eq. 2.10).

The normal row of each contact gets a ``-mu lam`` term, ``lam`` being the contact's
sliding-speed multiplier: a sliding contact must separate at ``mu`` times its slip speed::

    w_n = n'v+ + phi/h - mu lam >= 0  perp  a >= 0

With the edge-form friction rows of :mod:`contact_lcp.contact.lcp_builder` the LCP matrix
(:func:`contact_lcp.contact.lcp_builder.build_relaxed_lcp`) becomes::

    M = [[N'GN, N'GC, -mu],
         [C'GN, C'GC,  E ],
         [ mu , -E' ,  0 ]]

which is not symmetric but positive semidefinite (``M + M'`` is twice the PSD block
``P'GP``, ``P = [N C]``, padded with zeros). The LCP is then exactly the KKT system of the
convex QP in the impulses ``x = [a; b]``::

    minimize 1/2 x' (P'GP) x + (P'u + [bias; 0])' x
    subject to x >= 0,  mu_i a_i - sum_e b_ie >= 0   (multiplier lam_i)

so the step can be solved by a QP library or by our pivot solvers; both give the same
velocity (the QP's ``P x`` image, hence ``v+``, is unique even when ``x`` is not).

Known artefact (Anitescu & Hart, Anitescu 2006): a sliding body is pushed off the surface
at ``mu`` times its slip speed: a particle sliding at 1 m/s with ``mu = 0.5`` hops.

Options (``contact.options`` in a scene)
----------------------------------------
path : ``"auto"`` (default), ``"lcp"`` or ``"qp"``
    Solve with the scene's LCP method, or as the velocity QP of
    :mod:`contact_lcp.contact.relaxed_qp`; ``"auto"`` takes the LCP path up to
    :data:`~contact_lcp.contact.relaxed_qp.AUTO_QP_SIZE` unknowns and the QP path above
    (pivoting costs about the cube of the LCP's size, the sparse QP about its number of
    edges).
qp_solver : ``"clarabel"`` (default and only)
    The QP backend: clarabel, which solves the large relaxed steps in tens of iterations
    (:data:`contact_lcp.contact.relaxed_qp.QP_SOLVERS` says why it is the only one).
qp_tolerance : float
    Tolerance given to the QP solver [m/s] (default 1e-12: at 1e-10 clarabel's answers on
    the Brazil nut came within a factor 2 of the certification's tolerance, at 1e-8 they
    failed it). Every answer is certified on the LCP residual like a pivoting one.
cross_check : bool
    Solve by the other path too and put the largest difference of ``v+`` [m/s] in the
    report's ``info["path_difference"]`` (testing and benchmarking; default False).
"""

import time

import numpy as np

from contact_lcp.contact.frictionless import frictionless_impulse, safe_stop, solve_frictionless
from contact_lcp.contact.guess import PyramidGuess
from contact_lcp.contact.ladder import Rungs, lcp_rung
from contact_lcp.contact.lcp_builder import build_relaxed_lcp
from contact_lcp.contact.pyramid import WARM_START_METHODS, PyramidModel
from contact_lcp.contact.pyramid_kernel import full_basis
from contact_lcp.contact.relaxed_qp import (AUTO_QP_SIZE, MAX_DENSE_SIZE, QP_SOLVERS, dense_M,
                                           solve_relaxed_qp)
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport, tally
from contact_lcp.contact.sparse_problem import densified
from contact_lcp.exceptions import SceneError

PATHS = ("auto", "lcp", "qp")


class RelaxedModel(PyramidModel):
    """Anitescu & Hart's convex relaxation of the pyramid model (``relaxed``).

    The pyramid orientation (``friction_frame``) and the memory of friction directions are
    the pyramid model's. Its ladder (rungs of :mod:`contact_lcp.contact.ladder`): the
    chosen path (``lcp``, warm-started from the last basis when the contacts are the
    same, or ``qp``), the LCP path cold (``lcp_cold``) after a warm one that failed, the
    other path, then the frictionless impulse (``fallback``), then a safe stop.
    """

    name = "relaxed"
    OPTIONS = {"path": "auto", "qp_solver": "clarabel", "qp_tolerance": 1e-12,
               "cross_check": False}
    #: the relaxed LCP's solutions are not the pyramid LCP's: no min-norm stage (yet)
    FORCE_DISTRIBUTIONS = ("any",)
    #: its velocities are unique (a convex QP's): islands solved apart give the same
    islands = True

    def __init__(self, settings=None):
        super().__init__(settings)
        o = self.options
        if o["path"] not in PATHS:
            raise SceneError(f"contact model 'relaxed': option path must be one of {PATHS}; "
                             f"received {o['path']!r}")
        if o["qp_solver"] not in QP_SOLVERS:
            raise SceneError(f"contact model 'relaxed': option qp_solver must be one of "
                             f"{QP_SOLVERS}; received {o['qp_solver']!r}")
        if not float(o["qp_tolerance"]) > 0.0:
            raise SceneError("contact model 'relaxed': option qp_tolerance must be > 0; "
                             f"received {o['qp_tolerance']!r}")

    def _path(self, num_contacts, num_limits):
        """The path (``lcp`` or ``qp``) option ``path`` takes for a problem of this size."""
        path = self.options["path"]
        if path == "auto":
            size = num_contacts * (self.settings.friction_directions + 2) + num_limits
            path = "qp" if size > AUTO_QP_SIZE else "lcp"
        return path

    def takes_sparse(self, num_contacts, num_limits):
        """The QP path reads ``J``, ``K`` and ``G`` sparse; pivoting needs them dense."""
        return self._path(num_contacts, num_limits) == "qp"

    def _solve_path(self, path, problem, lcp, basis):
        s, o = self.settings, self.options
        if path == "qp":
            return solve_relaxed_qp(problem, lcp, solver=o["qp_solver"],
                                    tol=float(o["qp_tolerance"]))
        opts = dict(s.solver_options)
        if basis is not None and s.method in WARM_START_METHODS:
            opts["initial_basis"] = basis
        return lcp_rung(dense_M(lcp), lcp.q, s.method, opts)

    def _method(self, path):
        return f"qp:{self.options['qp_solver']}" if path == "qp" else self.settings.method

    def _relaxed_lcp(self, problem, guess):
        """``(path, problem, lcp)``: the path for ``problem``, the problem as that path
        reads it (dense for pivoting) and its relaxed LCP."""
        path = self._path(problem.num_contacts, problem.num_limits)
        if path == "lcp":
            problem = densified(problem)
        # the QP path reads M only to certify, which a sparse M makes ~n^2 / nnz cheaper
        lcp = build_relaxed_lcp(problem, num_directions=self.settings.friction_directions,
                                edge_angle=self.edge_angles(problem, guess),
                                sparse_M=path == "qp")
        return path, problem, lcp

    def warm_up(self, problem, guess):
        """The relaxed ladder's later rung once (:meth:`ContactModel.warm_up`): the other
        path, as a failed solve or ``cross_check`` runs it (the QP's solver: its import
        alone takes tens of milliseconds)."""
        if problem.num_rows == 0:
            return
        guess = guess if isinstance(guess, PyramidGuess) else None
        path, problem, lcp = self._relaxed_lcp(problem, guess)
        if path == "lcp" or lcp.q.shape[0] <= MAX_DENSE_SIZE:
            self._solve_path("qp" if path == "lcp" else "lcp", problem, lcp, None)

    def solve(self, problem, guess=None):
        s, o = self.settings, self.options
        guess = guess if isinstance(guess, PyramidGuess) else None
        path, problem, lcp = self._relaxed_lcp(problem, guess)
        other = "lcp" if path == "qp" else "qp"
        same = (guess is not None and guess.flags is not None
                and np.array_equal(guess.pair, problem.pair) and problem.num_limits == 0)
        basis = full_basis(*guess.flags) if same else None
        info = {"lcp_size": lcp.q.shape[0], "path": path}
        rungs = Rungs()
        t0 = time.perf_counter()
        res = rungs.add(path, self._solve_path(path, problem, lcp, basis))
        info["path_time"] = time.perf_counter() - t0
        results = [res]
        if not res.success and path == "lcp" and basis is not None:
            res = rungs.add("lcp_cold", self._solve_path(path, problem, lcp, None))
            results.append(res)
        dense_ok = lcp.q.shape[0] <= MAX_DENSE_SIZE  # (pivoting needs M dense)
        if (o["cross_check"] or not res.success) and (path == "lcp" or dense_ok):
            alt = rungs.add(other, self._solve_path(other, problem, lcp, None))
            results.append(alt)
            if res.success and alt.success:
                dv = problem.K @ (problem.J.T @ (lcp.impulses(res.z) - lcp.impulses(alt.z)))
                info["path_difference"] = float(np.max(np.abs(dv), initial=0.0))
            elif alt.success:
                info["path"], res, path = other, alt, other
        pivots, solves, failures = tally(results)
        common = dict(pivots=pivots, solves=solves, failures=failures,
                      warm_started=basis is not None, info=rungs.into(info))
        if res.success:
            f = lcp.impulses(res.z)
            return ContactSolution(f, SolveReport(Outcome.SOLVED, res.status, self.name,
                                                  self._method(path), True, **common),
                                   guess=self._remember(problem, res.z, f))
        left = None if guess is None else guess.without_basis()
        if s.fallback:
            problem = densified(problem)  # (the frictionless LCP is pivoted on)
            _, fl = solve_frictionless(problem, s.method, s.solver_options)
            rungs.add("frictionless", fl)
            pivots, solves, failures = tally(results + [fl])
            common.update(pivots=pivots, solves=solves, failures=failures)
            rungs.into(info)
            if fl.success:
                return ContactSolution(frictionless_impulse(problem, fl.z), SolveReport(
                    Outcome.FALLBACK, res.status, "frictionless", s.method, True,
                    fallbacks=1, **common), guess=left)
        rungs.add("safe_stop", "applied")
        rungs.into(info)
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, status=res.status,
                                       applied="none", method="none", certified=False,
                                       fallbacks=2, **common), guess=left)
