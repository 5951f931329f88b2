"""One entry point for every LCP method: validate, dispatch, certify."""

import functools
import inspect

import numpy as np

from contact_lcp.exceptions import InvalidProblem
from contact_lcp.lcp.residual import (certify, certify_rows, relative_tolerance,
                                      reported_error, row_pass, zero_is_exact)
from contact_lcp.lcp.polish import polish
from contact_lcp.lcp.result import LCPResult, LCPStatus, MethodOutput
from contact_lcp.lcp.scaling import MAX_SWEEPS, Scaling, equilibrated, powers_of_two
from contact_lcp.lcp import lemke, lexicographic, murty, pgs, ppm, revised, robust
from contact_lcp.lcp import budget as bg

#: method name -> function(M, q, **options) -> MethodOutput
METHODS = {
    "robust": robust.solve_robust,
    "lemke": lemke.solve_lemke,
    "lexicographic": lexicographic.solve_lexicographic,
    "murty": murty.solve_murty,
    "revised": revised.solve_revised,
    "pgs": pgs.solve_pgs,
    "ppm": ppm.solve_ppm,
}


def _validate(M, q):
    """``(M, q)`` as C-contiguous float arrays of shapes ``(n, n)`` and ``(n,)``; their
    finiteness is checked by the caller (:func:`_raise_non_finite`)."""
    M = np.ascontiguousarray(M, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    if q.ndim != 1:
        raise InvalidProblem(f"q must be a vector of shape (n,); received shape {q.shape}")
    n = q.shape[0]
    if M.shape != (n, n):
        raise InvalidProblem(
            f"M must be square with shape ({n}, {n}) to match q of length {n}; "
            f"received shape {M.shape}"
        )
    return M, q


def _raise_non_finite(M, q):
    """Raise InvalidProblem naming the first non-finite entry of ``M`` or ``q``."""
    if not np.all(np.isfinite(M)):
        bad = np.argwhere(~np.isfinite(M))[0]
        raise InvalidProblem(f"M must be finite; M[{bad[0]}, {bad[1]}] = {M[tuple(bad)]}")
    bad = int(np.flatnonzero(~np.isfinite(q))[0])
    raise InvalidProblem(f"q must be finite; q[{bad}] = {q[bad]}")


@functools.lru_cache(maxsize=None)
def _keyword_options(func):
    params = inspect.signature(func).parameters
    return tuple(p.name for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY)


def _check_options(method, func, options):
    valid = list(_keyword_options(func))
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise TypeError(
            f"unknown option(s) {unknown} for method {method!r}; "
            f"valid options: {valid + ['tol', 'equilibrate', 'time_limit']}"
        )


def _scaled_options(method, options, scaling):
    """Options given in the caller's units, converted to the equilibrated ones."""
    if method != "pgs":
        return options
    options = dict(options)
    if options.get("z0") is not None:
        options["z0"] = scaling.z_to_scaled(options["z0"])
    if options.get("tolerance") is not None:
        options["tolerance"] = float(options["tolerance"]) / float(np.max(scaling.w_unit))
    return options


def solve(M, q, method="robust", *, tol=None, equilibrate=True, time_limit=None, **options):
    """Solve the LCP ``w = M z + q, z >= 0, w >= 0, z.w = 0`` and certify the answer.

    The method pivots on the equilibrated problem ``(D1 M D2, D1 q / s)``
    (:mod:`contact_lcp.lcp.scaling`, exact powers of two) and its answer is mapped back
    to the caller's units, so scaling ``M`` or ``q`` (or the rows and columns of ``M``)
    changes neither the path nor the verdict beyond round-off. Certification
    (:func:`contact_lcp.lcp.residual.certify`) measures ``z`` and ``w`` each on its own
    scale.

    Parameters
    ----------
    M : (n, n) array_like
        The LCP matrix (for contact LCPs: built from the Delassus matrix, [s/kg]).
    q : (n,) array_like
        The LCP vector (for contact LCPs: velocities [m/s]).
    method : str
        One of ``METHODS``: 'robust' (default), 'lemke', 'lexicographic', 'murty', 'pgs'.
    tol : float, optional
        Certification tolerance on the error (units of ``q``, see
        :func:`contact_lcp.lcp.residual.certify`). Default: the scaled tolerance
        ``1e4 n eps (||Ms|| ||zs|| + ||qs||)`` expressed in the units of ``q``. A method
        that claims success with a larger error is reported as ``LCPStatus.ERROR``.
    equilibrate : bool
        Pivot on the equilibrated problem (default). False hands the caller's data to
        the method as they are (for comparisons); certification is the same either way.
    time_limit : float, optional
        Wall-time budget [s] of the whole call (retries included); default
        :func:`contact_lcp.lcp.budget.default_time_limit` (``5 s + 2 us n^2``),
        ``math.inf`` for none. When it runs out the status is ``LCPStatus.TIME_LIMIT``
        (the best point so far, certified as any other). Pivot budgets are the methods'
        options (``max_pivots``, robust's ``max_nodes`` and ``pivot_budget``).
        ``info['time']`` is the time spent, ``info['time_limit']`` the budget. Ctrl-C
        (KeyboardInterrupt) reaches a running solve within a pivot
        (:mod:`contact_lcp.lcp.budget`) and propagates.
    **options
        Keyword options of the method (see each ``solve_*``); an unknown one is a
        ``TypeError`` that lists the valid ones. Tie thresholds and pivot tolerances act
        in equilibrated units; PGS's ``z0`` and ``tolerance`` are in the caller's.

    Returns
    -------
    LCPResult
        Never raises for what the algorithm can reach; the status says why it ended.
        ``info['tol']`` is the tolerance used (units of ``q``: the largest of the rows'
        bounds on how negative a certified ``w_i`` can be; the verdict is per row, see
        :mod:`contact_lcp.lcp.residual`, and ``error <= tol`` is that verdict),
        ``info['tol_z']`` the same bound for ``z`` (units of ``z``, the largest over
        components), ``info['scale_sweeps']`` the Ruiz sweeps. Data whose range defeats
        double precision (an equilibrated entry overflows or leaves the normal range)
        give NUMERICAL_FAILURE without running the method.
        An LCP with ``q >= 0`` and no method options returns ``z = 0`` at once, whatever
        the method (``info['trivial']``, no pivot).

    Raises
    ------
    InvalidProblem
        ``M`` or ``q`` of the wrong shape or not finite, or an unknown method.
    TypeError
        An option the method does not take.
    """
    func = METHODS.get(method) if isinstance(method, str) else None
    if func is None:
        raise InvalidProblem(f"unknown method {method!r}; valid methods: {sorted(METHODS)}")
    if options:
        _check_options(method, func, options)
    M, q = _validate(M, q)
    n = q.shape[0]
    if time_limit is None:
        time_limit = bg.default_time_limit(n)
    elif not (isinstance(time_limit, (int, float, np.floating, np.integer))
              and not isinstance(time_limit, bool) and time_limit > 0):
        raise InvalidProblem(f"time_limit must be a positive number of seconds (math.inf: "
                             f"none); received {time_limit!r}")
    with bg.opened(float(time_limit)) as budget:
        return _solve(M, q, n, method, func, tol, equilibrate, options, budget)


def _timed(info, budget):
    """``info`` with the budget's ``time`` and ``time_limit`` (module :func:`solve`)."""
    info["time"] = budget.elapsed()
    info["time_limit"] = budget.time_limit
    return info


def _solve(M, q, n, method, func, tol, equilibrate, options, budget):
    """:func:`solve` on validated data, under ``budget``."""
    if n == 0:
        return LCPResult(np.zeros(0), np.zeros(0), LCPStatus.SOLVED, method, 0, 0.0,
                         {"tol": 0.0, "tol_z": 0.0})
    if not options:  # (with options, the method runs: it checks their values, e.g. an
        exact, q_max = zero_is_exact(M, q)  # initial basis's range)
        if exact:
            return _trivial(q, q_max, method, tol)
    # One compiled call: finiteness, the Ruiz factors and the equilibrated problem.
    finite, d1, d2, s, sweeps, Ms, qs, exact = equilibrated(M, q, MAX_SWEEPS,
                                                           bool(equilibrate))
    if not finite:
        _raise_non_finite(M, q)
    ruiz = Scaling(d1, d2, s, sweeps)
    if not exact:
        res = _unrepresentable(M, q, method, ruiz)
        return LCPResult(res.z, res.w, res.status, method, 0, res.error,
                         _timed(dict(res.info), budget))
    if equilibrate:
        raw_options = options
        if options:
            options = _scaled_options(method, options, ruiz)
        out: MethodOutput = func(Ms, qs, **options)
        zs = out.z
        if not (type(zs) is np.ndarray and zs.dtype == np.float64 and zs.shape == (n,)):
            zs = np.asarray(zs, dtype=float)
            if zs.shape != (n,):
                return _non_finite(M, q, zs, out, method, ruiz)
        # z back in the caller's units and certified from the caller's data, in one call.
        finite, z, w, ratio, T, Tz = certify_rows(M, q, zs, d1, d2, s)
        err = reported_error(ratio, T)
        tol_used = T if tol is None else float(tol)
        if finite and out.status is LCPStatus.SOLVED and not err <= tol_used and tol is None:
            # a claim missed by round-off (module polish); a method's failure stays one
            polished = polish(M, q, Ms, qs, zs, d1, d2, s)
            if polished is not None:
                z, w, ratio, T, Tz, rounds = polished
                err, tol_used = reported_error(ratio, T), T
                out = MethodOutput(out.z, out.status, out.pivots,
                                   dict(out.info, polished=rounds))
        if finite and not (out.status is LCPStatus.SOLVED and err <= tol_used) \
                and not bg.expired():
            retry, spent = _retries(M, q, Ms, qs, func, method, raw_options, ruiz, out,
                                    tol_used if tol is None else None, tol)
            if retry is not None:
                out, z, w, err, tol_used = retry
                _, _, T, Tz = row_pass(M, q, z, d1, d2, s)
            elif spent > out.pivots:  # the failed retries' pivots, beside the path's
                out = MethodOutput(out.z, out.status, out.pivots,
                                   dict(out.info, attempt_pivots=spent - int(out.pivots)))
    else:
        out = func(M, q, **options)
        z = np.asarray(out.z, dtype=float)
        finite = z.shape == (n,) and bool(np.all(np.isfinite(z)))
        if finite:
            w, ratio, T, Tz = row_pass(M, q, z, d1, d2, s)
            err = reported_error(ratio, T)
            tol_used = T if tol is None else float(tol)
    if not finite:
        res = _non_finite(M, q, z, out, method, ruiz)
        return LCPResult(res.z, res.w, res.status, method, res.pivots, res.error,
                         _timed(dict(res.info), budget))
    info = _timed(dict(out.info), budget)
    info["scale_sweeps"] = sweeps
    status = out.status
    info["tol"] = float(tol_used)
    # the largest z-side bound of the same verdict (residual.row_tolerances per row)
    info["tol_z"] = float(Tz * (tol_used / T if T > 0.0 else 1.0))
    if status is LCPStatus.SOLVED and not err <= tol_used:
        status = LCPStatus.ERROR
        info["claimed"] = LCPStatus.SOLVED.name
        info["reason"] = (f"the method's answer does not certify: error {err:.3g} > tol "
                          f"{tol_used:.3g} (some row's residual exceeds that row's own "
                          "tolerance)")
    return LCPResult(z, w, status, method, int(out.pivots), err, info)


def _trivial(q, q_max, method, tol=None):
    """The answer ``z = 0`` of an LCP with ``q >= 0`` (finite data): exact, whatever ``M``
    and the method, and the same verdict under any positive scaling of rows, columns or
    ``q``. Nothing is equilibrated, so the tolerance is the certification formula at
    ``z = 0`` on the caller's ``q`` (``1e4 n eps ||q||_inf``, units of ``q``) unless the
    caller gave one. Such a call (every contact separating) costs 5-8 us at n = 90
    instead of ~88 us: the Ruiz sweeps and the certification pass are O(n^2) each, and
    the finiteness check (:func:`zero_is_exact`) sums ``M`` in vectorised order."""
    n = q.shape[0]
    tol = relative_tolerance(n, 0.0, q_max, 0.0) if tol is None else float(tol)
    return LCPResult(np.zeros(n), q.copy(), LCPStatus.SOLVED, method, 0, 0.0,
                     {"tol": tol, "tol_z": 0.0, "scale_sweeps": 0, "trivial": True})


#: methods whose failed path on the Ruiz-equilibrated problem is walked once more on the
#: problem scaled by powers of two only (M / 2^E, q / s). Ruiz's row and column factors
#: can turn a nearly degenerate column into a tie that sends every Lemke path to a
#: secondary ray: a hoist chain's 3-contact LCP (n = 30, edges orthogonal to the chain's
#: plane) ended on rays with all three methods and solved in 12 pivots unscaled. The
#: retry's answer is certified in the same units as the first (scale-invariant verdicts:
#: (alpha M, beta q) with powers of two give the same scalar-scaled problem bit for bit).
#: ``revised`` walks the lexicographic path and takes the same retry.
RESCALED_RETRY = ("robust", "lemke", "lexicographic", "revised")

#: methods whose failed path is first walked once more on the same equilibrated problem
#: with these options (each only where the caller did not set it): a pivot tolerance above
#: the round-off that the basis inverse accumulates, and an absolute tie threshold above
#: that of its entries. On a nearly rank-deficient contact LCP (pyramid_3's first contact,
#: n = 360, rank 108; issue 10) the dense B^-1 had drifted by 5e-8 ||d|| from the exact
#: inverse of a basis of condition 800; entries of the entering column that are exactly 0
#: then read 4e-9 ||d||, above the default pivot tolerance 1e-9, and which degenerate rows
#: blocked (and which row the lexicographic rule picked among ties resolved only by
#: round-off, with a zero threshold) depended on the last bits of the data: under
#: (alpha M, q) with alpha = 1e-6 ... 1e6 the paths ended in cycles, rays or uncertified
#: bases. With these options both methods walk the same 33 pivots for every alpha and
#: for the random D1 M D2 of the sweep. The retry is reported in ``info['tolerant_retry']``.
TOLERANT_RETRY = {
    "lemke": {"pivot_tol": 1e-7},
    "lexicographic": {"pivot_tol": 1e-7, "tie_threshold": 1e-9},
    "revised": {"pivot_tol": 1e-7, "tie_threshold": 1e-9},
}


def _retries(M, q, Ms, qs, func, method, options, ruiz, first, first_tol, tol):
    """The retries of a failed first path, in order: :data:`TOLERANT_RETRY` on the
    equilibrated ``(Ms, qs)``, then :data:`RESCALED_RETRY`, and for a warm-started path
    all of them once more from the slack basis. Returns ``(retry, spent)``:
    ``retry`` is ``(out, z, w, err, tol)`` of the first that certifies in the units of
    ``ruiz`` (to the caller's ``tol``, or, ``tol`` None, to the smaller of ``first_tol``,
    the first path's, and that of its own answer; ``out`` carries every path's pivots,
    ``info['first_status']`` and the retry's key) and ``spent`` None, else None and
    ``spent`` the pivots of the first path and every retry.
    A ``pivot_budget`` option is shared: each retry gets what the paths before it left,
    and none runs once it is spent."""
    retry, spent = _retry_paths(M, q, Ms, qs, func, method, options, ruiz, first, first_tol,
                                tol, int(first.pivots))
    if retry is None and options.get("initial_basis") is not None \
            and options.get("pivot_budget") is None:  # (a budget's caller plans its paths)
        # a warm start can end on a basis whose answer is accurate only to the global
        # tolerance (a disk pile's LCP: w = -1.5e-8 m/s in a row of scale 1e-3, where the
        # cold path certifies on the powers-of-two scaling): the retries once more from
        # the slack basis, with the path on Ruiz's scaling first
        cold = {k: v for k, v in options.items() if k != "initial_basis"}
        again, pivots = _retry(M, q, Ms, qs, ruiz, func,
                               _scaled_options(method, cold, ruiz) if cold else cold, ruiz,
                               first_tol, tol)
        if again is not None:
            return _retried(again, spent, first, cold_retry=True), None
        retry, spent = _retry_paths(M, q, Ms, qs, func, method, cold, ruiz, first, first_tol,
                                    tol, spent + pivots)
        if retry is not None:
            out, z, w, err, tol_used = retry
            retry = (MethodOutput(out.z, out.status, out.pivots,
                                  dict(out.info, cold_retry=True)), z, w, err, tol_used)
    return retry, spent


def _retry_paths(M, q, Ms, qs, func, method, options, ruiz, first, first_tol, tol, spent):
    """:data:`TOLERANT_RETRY` then :data:`RESCALED_RETRY` (see :func:`_retries`), after
    ``spent`` pivots."""
    extra = {k: v for k, v in TOLERANT_RETRY.get(method, {}).items() if k not in options}
    if extra:
        retry, pivots = _retry(M, q, Ms, qs, ruiz, func,
                               _scaled_options(method, dict(options, **extra), ruiz), ruiz,
                               first_tol, tol)
        if retry is not None:
            return _retried(retry, spent, first, tolerant_retry=extra), None
        spent += pivots
    if method in RESCALED_RETRY:
        if options.get("pivot_budget") is not None:
            left = int(options["pivot_budget"]) - spent
            if left <= 0:
                return None, spent
            options = dict(options, pivot_budget=left)
        d1, d2, s, Mp, qp = powers_of_two(M, q)
        scalar = Scaling(d1, d2, s, 0)
        retry, pivots = _retry(M, q, Mp, qp, scalar, func,
                               _scaled_options(method, options, scalar) if options else options,
                               ruiz, first_tol, tol)
        if retry is not None:
            return _retried(retry, spent, first, rescaled_retry=True), None
        spent += pivots
    return None, spent


def _retry(M, q, Ms, qs, scaling, func, options, ruiz, first_tol, tol):
    """One more path on ``(Ms, qs)`` (the caller's problem in the units of ``scaling``):
    ``((out, z, w, err, tol_used), pivots)`` when it certifies in the units of ``ruiz``
    to ``tol_used``, else ``(None, pivots)``. ``tol_used`` is the caller's ``tol``, or,
    ``tol`` None, the smaller of ``first_tol`` and the tolerance of the retry's own
    answer. The certification tolerance grows with ``||z||``, so neither alone will do:
    on the pour's LCP at t = 1.15 s (n = 5 240) a first path that ended on a ray at
    ``||z|| ~ 1e12`` had one of ~1e7 m/s, which a retry's answer violating a friction
    cone by 0.15 N.s passed; and on a contact LCP of the scaling tests a retry's own
    answer, with a component at -73 beside others of ~1e15, passed its own."""
    n = q.shape[0]
    out = func(Ms, qs, **options)
    zs = np.asarray(out.z, dtype=float)
    if zs.shape != (n,) or not np.all(np.isfinite(zs)):
        return None, int(out.pivots)
    z = scaling.z_from_scaled(zs)
    err, w, own = certify(M, q, z, ruiz)
    tol = min(own, first_tol) if tol is None else float(tol)
    if not (out.status is LCPStatus.SOLVED and err <= tol):
        return None, int(out.pivots)
    return (out, z, w, err, tol), int(out.pivots)


def _retried(retry, spent, first, **key):
    """``retry`` with the pivots ``spent`` before it (added to its pivots and reported as
    ``info['attempt_pivots']``), ``key`` and ``first_status`` in its info (the first
    path's status as :func:`solve` would have reported it: ERROR for a claimed solution
    that did not certify)."""
    out, z, w, err, tol = retry
    status = LCPStatus.ERROR if first.status is LCPStatus.SOLVED else first.status
    info = dict(out.info, first_status=status.name, attempt_pivots=spent, **key)
    return MethodOutput(z, out.status, int(out.pivots) + spent, info), z, w, err, tol


def _unrepresentable(M, q, method, scaling):
    """The result of an LCP whose equilibrated data lost bits (an entry fell below the
    normal range or overflowed; :func:`contact_lcp.lcp.scaling.representable`): no method
    runs on them, ``z = 0`` and NUMERICAL_FAILURE."""
    n = q.shape[0]
    z = np.zeros(n)
    err, w, tol = certify(M, q, z, scaling)
    info = {"scale_sweeps": scaling.sweeps, "tol": tol, "tol_z": 0.0,
            "reason": "the data's range defeats double precision: an entry of the "
                      "equilibrated problem is not a normal, finite number"}
    return LCPResult(z, w, LCPStatus.NUMERICAL_FAILURE, method, 0, err, info)


def _non_finite(M, q, z, out, method, scaling):
    """The result of a method that returned a point of the wrong shape or not finite:
    its finite components (zeros for a wrong shape), certified, and a failure status."""
    n = q.shape[0]
    z = np.asarray(z, dtype=float)
    info = dict(out.info)
    info["scale_sweeps"] = scaling.sweeps
    status = LCPStatus.NUMERICAL_FAILURE if out.status is LCPStatus.SOLVED else out.status
    z = np.where(np.isfinite(z), z, 0.0) if z.shape == (n,) else np.zeros(n)
    err, w, _ = certify(M, q, z, scaling)
    info["reason"] = "method returned a non-finite point"
    return LCPResult(z, w, status, method, out.pivots, err, info)
