"""The convex relaxation of the pyramid model (Anitescu & Hart 2004, eq. 2.10).

The normal row of each contact gets a ``-mu lam`` term, ``lam`` being the contact's
sliding-speed multiplier: a sliding contact must separate at ``mu`` times its slip speed::

    w_n = n'v+ + phi/h - mu lam >= 0  perp  a >= 0

With the edge-form friction rows of :mod:`contact_lcp.contact.lcp_builder` the LCP matrix
becomes::

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
path : ``"lcp"`` (default) or ``"qp"``
    Solve with the scene's LCP method, or with the QP library.
qp_solver : ``"proxqp"`` (default) or ``"clarabel"``
    The qpsolvers backend of the QP path.
qp_tolerance : float
    Absolute tolerance given to the QP solver, and certification tolerance of its answer
    on the LCP residual [m/s] (default 1e-12: at 1e-10 proxqp left 2e-8 m/s of angular
    velocity error on a box stack, clarabel 1e-7).
cross_check : bool
    Solve by the other path too and put the largest difference of ``v+`` [m/s] in the
    report's ``info["path_difference"]`` (testing and benchmarking; default False).
"""

import dataclasses
import time

import numpy as np

from contact_lcp.contact.frictionless import frictionless_impulse, safe_stop, solve_frictionless
from contact_lcp.contact.lcp_builder import build_contact_lcp
from contact_lcp.contact.pyramid import WARM_START_METHODS, PyramidModel
from contact_lcp.contact.pyramid_kernel import full_basis
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport, tally
from contact_lcp.exceptions import SceneError
from contact_lcp.lcp import LCPResult, LCPStatus, solve
from contact_lcp.lcp.residual import certify

#: QP backends of qpsolvers accepted by the ``qp_solver`` option
QP_SOLVERS = ("proxqp", "clarabel")
PATHS = ("lcp", "qp")


def build_relaxed_lcp(problem, *, num_directions=8, edge_angle=None):
    """The relaxed contact LCP of a :class:`~contact_lcp.contact.problem.ContactProblem`.

    Parameters
    ----------
    problem : ContactProblem
    num_directions : int
        ``d``, pyramid edges per contact.
    edge_angle : (k,) ndarray, optional
        Angle of each contact's first edge from its t1 axis [rad].

    Returns
    -------
    contact_lcp.contact.lcp_builder.ContactLCP
        Unknowns ``[a (k + l); b (k d); lam (k)]`` as the pyramid LCP; ``M`` has
        ``-mu_i`` at (normal row i, lam column i).
    """
    lcp = build_contact_lcp(problem.G, problem.u, problem.mu, num_directions=num_directions,
                            num_unilateral=problem.num_limits, normal_bias=problem.bias,
                            edge_angle=edge_angle)
    k, nn = lcp.num_contacts, lcp.num_normals
    M = lcp.M.copy()
    lam0 = nn + k * lcp.num_directions
    M[np.arange(k), lam0 + np.arange(k)] = -problem.mu
    return dataclasses.replace(lcp, M=M)


def qp_data(lcp):
    """The convex QP whose KKT system is the relaxed LCP ``lcp``.

    Returns
    -------
    P : (nx, nx) ndarray
        Symmetric PSD Hessian, ``nx = k + l + k d`` [s/kg].
    c : (nx,) ndarray
        Linear term [m/s].
    A_in : (k, nx) ndarray or None
        Friction rows ``sum_e b_ie - mu_i a_i <= 0`` (None without contacts).
    """
    k, nn, d = lcp.num_contacts, lcp.num_normals, lcp.num_directions
    nx = nn + k * d
    P = lcp.M[:nx, :nx]
    P = 0.5 * (P + P.T)
    c = lcp.q[:nx].copy()
    if k == 0:
        return P, c, None
    A_in = -lcp.M[nx:, :nx]  # rows [mu, -E'] of M, negated
    return P, c, A_in


def solve_relaxed_qp(lcp, *, solver="proxqp", tol=1e-12):
    """Solve the relaxed LCP as its convex QP and certify the answer on the LCP residual
    (an answer the certification does not accept is polished by a principal pivot on the
    set the QP found positive; ``info["polished"]``).

    Parameters
    ----------
    lcp : ContactLCP
        From :func:`build_relaxed_lcp`.
    solver : str
        A qpsolvers backend in :data:`QP_SOLVERS`.
    tol : float
        Absolute tolerance given to the solver; the answer counts as solved when
        ``||min(z, M z + q)||_inf <= max(tol, default LCP tolerance)`` [m/s].

    Returns
    -------
    LCPResult
        ``z = [x; lam]`` (``lam`` the QP's inequality multipliers), method ``"qp:<solver>"``,
        ``pivots`` the solver's iterations when it reports them, else 0.
    """
    import qpsolvers

    P, c, A_in = qp_data(lcp)
    nx = P.shape[0]
    b_in = None if A_in is None else np.zeros(A_in.shape[0])
    if solver == "clarabel":  # clarabel takes CSC matrices (qpsolvers would convert, and warn)
        from scipy import sparse

        P = sparse.csc_matrix(P)
        A_in = None if A_in is None else sparse.csc_matrix(A_in)
    problem = qpsolvers.Problem(P, c, A_in, b_in, lb=np.zeros(nx))
    opts = ({"eps_abs": tol, "eps_rel": 0.0} if solver == "proxqp" else
            {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "tol_ktratio": tol})
    sol = qpsolvers.solve_problem(problem, solver=solver, **opts)
    method = f"qp:{solver}"
    n = lcp.q.shape[0]
    if not sol.found or sol.x is None:
        z = np.zeros(n)
        err, w, _ = certify(lcp.M, lcp.q, z)
        return LCPResult(z, w, LCPStatus.NUMERICAL_FAILURE, method, 0, err,
                         {"tol": tol, "reason": "QP solver found no solution"})
    lam = np.zeros(n - nx) if sol.z is None else np.asarray(sol.z, dtype=float)
    z = np.maximum(np.concatenate([sol.x, lam]), 0.0)
    err, w, tol_lcp = certify(lcp.M, lcp.q, z)
    tol_used = max(float(tol), tol_lcp)
    iters = getattr(sol, "extras", {}).get("info", None)
    iters = int(getattr(iters, "iter", 0) or 0) if iters is not None else 0
    if err <= tol_used:
        return LCPResult(z, w, LCPStatus.SOLVED, method, iters, err, {"tol": tol_used})
    # An interior-point answer is accurate to about its tolerance, which the certification
    # (in consistent units) may not accept: polish it by one principal pivot on the set
    # the QP found positive (the pivoting search goes on from there if that set is wrong).
    basis = np.flatnonzero(z > 1e-9 * max(float(z.max()), 1e-300))
    polished = solve(lcp.M, lcp.q, "robust", initial_basis=basis)
    info = dict(polished.info, qp_error=err, polished=True)
    return LCPResult(polished.z, polished.w, polished.status, method + "+polish",
                     iters + polished.pivots, polished.error, info)


class RelaxedModel(PyramidModel):
    """Anitescu & Hart's convex relaxation of the pyramid model (``relaxed``).

    The pyramid orientation (``friction_frame``) and the memory of friction directions are
    the pyramid model's. Failures fall back to the other path, then to the frictionless
    impulse (``fallback``), then to a safe stop.
    """

    name = "relaxed"
    OPTIONS = {"path": "lcp", "qp_solver": "proxqp", "qp_tolerance": 1e-12,
               "cross_check": False}

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

    def _solve_path(self, path, lcp, basis):
        s, o = self.settings, self.options
        if path == "qp":
            return solve_relaxed_qp(lcp, solver=o["qp_solver"], tol=float(o["qp_tolerance"]))
        opts = dict(s.solver_options)
        if basis is not None and s.method in WARM_START_METHODS:
            opts["initial_basis"] = basis
        return solve(lcp.M, lcp.q, s.method, **opts)

    def _method(self, path):
        return f"qp:{self.options['qp_solver']}" if path == "qp" else self.settings.method

    def solve(self, problem):
        s, o = self.settings, self.options
        lcp = build_relaxed_lcp(problem, num_directions=s.friction_directions,
                                edge_angle=self.edge_angles(problem))
        path = o["path"]
        other = "lcp" if path == "qp" else "qp"
        same = (self._last_pair is not None and np.array_equal(self._last_pair, problem.pair)
                and problem.num_limits == 0)
        basis = full_basis(*self._last_flags) if same else None
        info = {"lcp_size": lcp.q.shape[0], "path": path}
        t0 = time.perf_counter()
        res = self._solve_path(path, lcp, basis)
        info["path_time"] = time.perf_counter() - t0
        results = [res]
        if not res.success and path == "lcp" and basis is not None:
            res = self._solve_path(path, lcp, None)
            results.append(res)
        if o["cross_check"] or not res.success:
            alt = self._solve_path(other, lcp, None)
            results.append(alt)
            if res.success and alt.success:
                dv = problem.K @ (problem.J.T @ (lcp.impulses(res.z) - lcp.impulses(alt.z)))
                info["path_difference"] = float(np.max(np.abs(dv), initial=0.0))
            elif alt.success:
                info["path"], res, path = other, alt, other
        pivots, solves, failures = tally(results)
        common = dict(pivots=pivots, solves=solves, failures=failures,
                      warm_started=basis is not None, info=info)
        if res.success:
            f = lcp.impulses(res.z)
            self._remember(problem, res, f)
            return ContactSolution(f, SolveReport(Outcome.SOLVED, res.status, self.name,
                                                  self._method(path), True, **common))
        self._last_pair = None
        if s.fallback:
            _, fl = solve_frictionless(problem, s.method, s.solver_options)
            pivots, solves, failures = tally(results + [fl])
            common.update(pivots=pivots, solves=solves, failures=failures)
            if fl.success:
                return ContactSolution(frictionless_impulse(problem, fl.z), SolveReport(
                    Outcome.FALLBACK, res.status, "frictionless", s.method, True,
                    fallbacks=1, **common))
        return safe_stop(problem, dict(outcome=Outcome.SAFE_STOP, status=res.status,
                                       applied="none", method="none", certified=False,
                                       fallbacks=2, **common))
