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


def validated(M, q):
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
            f"valid options: {valid + ['tol', 'equilibrate', 'scaling', 'tol_cap', 'time_limit']}"
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


def solve(M, q, method="robust", *, tol=None, equilibrate=True, scaling="ruiz",
          tol_cap=None, time_limit=None, **options):
    """Solve the LCP ``w = M z + q, z >= 0, w >= 0, z.w = 0`` by one method and certify the
    answer.

    The method pivots on the equilibrated problem ``(D1 M D2, D1 q / s)``
    (:mod:`contact_lcp.lcp.scaling`, exact powers of two) and its answer is mapped back
    to the caller's units, so scaling ``M`` or ``q`` (or the rows and columns of ``M``)
    changes neither the path nor the verdict beyond round-off. Certification
    (:func:`contact_lcp.lcp.residual.certify`) measures ``z`` and ``w`` each on its own
    scale; a claimed answer that misses it by round-off only is repaired
    (:mod:`contact_lcp.lcp.polish`).

    One method runs, once: no other method and no retry. A caller that wants another
    attempt when this one does not certify (another scaling, other options, a cold start
    after a warm one, another method) lists it and calls
    :func:`contact_lcp.lcp.attempts.solve_with_retries`, as the contact models do.

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
    scaling : {'ruiz', 'powers_of_two'}
        The equilibration the method pivots on: Ruiz's row and column factors (default),
        or the powers of two of :func:`contact_lcp.lcp.scaling.powers_of_two` alone (one
        factor for ``M``, one for ``q``: a path that Ruiz's factors sent to a ray can
        solve there). Certification is in Ruiz's units either way.
    tol_cap : float, optional
        With ``tol`` None, the verdict's tolerance is at most this (units of ``q``): a
        retry's answer must meet the tolerance of the failed first answer too (see
        :func:`contact_lcp.lcp.attempts.solve_with_retries`). The answer is then judged
        as the method claimed it, without the repair of :mod:`contact_lcp.lcp.polish`
        (the retries have always been held to their claims).
    time_limit : float, optional
        Wall-time budget [s] of the whole call; default
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
    func = checked_method(method, options)
    if scaling not in SCALINGS:
        raise InvalidProblem(f"unknown scaling {scaling!r}; valid: {list(SCALINGS)}")
    M, q = validated(M, q)
    n = q.shape[0]
    with bg.opened(time_limit_of(time_limit, n)) as budget:
        return _solve(M, q, n, method, func, tol, equilibrate, scaling, tol_cap, options,
                      budget)


def checked_method(method, options):
    """The function of ``method`` (InvalidProblem for an unknown one), after checking
    that it takes ``options`` (a TypeError listing the valid ones)."""
    func = METHODS.get(method) if isinstance(method, str) else None
    if func is None:
        raise InvalidProblem(f"unknown method {method!r}; valid methods: {sorted(METHODS)}")
    if options:
        _check_options(method, func, options)
    return func


#: what :func:`solve`'s method may pivot on besides the caller's data (``equilibrate=False``)
SCALINGS = ("ruiz", "powers_of_two")


def time_limit_of(time_limit, n):
    """The wall-time budget [s] of a solve of ``n`` rows: ``time_limit``, or the default
    (:func:`contact_lcp.lcp.budget.default_time_limit`) for None; InvalidProblem for
    anything but a positive number."""
    if time_limit is None:
        return bg.default_time_limit(n)
    if not (isinstance(time_limit, (int, float, np.floating, np.integer))
            and not isinstance(time_limit, bool) and time_limit > 0):
        raise InvalidProblem(f"time_limit must be a positive number of seconds (math.inf: "
                             f"none); received {time_limit!r}")
    return float(time_limit)


def _timed(info, budget):
    """``info`` with the budget's ``time`` and ``time_limit`` (module :func:`solve`)."""
    info["time"] = budget.elapsed()
    info["time_limit"] = budget.time_limit
    return info


def _solve(M, q, n, method, func, tol, equilibrate, scaling, tol_cap, options, budget):
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
        # the data the method pivots on, and their units
        units, Mm, qm = ruiz, Ms, qs
        if scaling == "powers_of_two":
            p1, p2, ps, Mm, qm = powers_of_two(M, q)
            units = Scaling(p1, p2, ps, 0)
        if options:
            options = _scaled_options(method, options, units)
        out: MethodOutput = func(Mm, qm, **options)
        zs = out.z
        if not (type(zs) is np.ndarray and zs.dtype == np.float64 and zs.shape == (n,)):
            zs = np.asarray(zs, dtype=float)
            if zs.shape != (n,):
                return _non_finite(M, q, zs, out, method, ruiz)
        # z back in the caller's units and certified from the caller's data, in one call.
        if units is ruiz:
            finite, z, w, ratio, T, Tz = certify_rows(M, q, zs, d1, d2, s)
        else:
            z = units.z_from_scaled(zs)
            finite = bool(np.all(np.isfinite(z)))
            if finite:
                w, ratio, T, Tz = row_pass(M, q, z, d1, d2, s)
        if finite:
            err, tol_used = reported_error(ratio, T), _tolerance(T, tol, tol_cap)
        if finite and out.status is LCPStatus.SOLVED and not err <= tol_used and tol is None \
                and tol_cap is None:
            # a claim missed by round-off (module polish); a method's failure stays one
            polished = polish(M, q, Ms, qs, zs if units is ruiz else ruiz.z_to_scaled(z),
                              d1, d2, s)
            if polished is not None:
                z, w, ratio, T, Tz, rounds = polished
                err, tol_used = reported_error(ratio, T), _tolerance(T, tol, tol_cap)
                out = MethodOutput(out.z, out.status, out.pivots,
                                   dict(out.info, polished=rounds))
    else:
        out = func(M, q, **options)
        z = np.asarray(out.z, dtype=float)
        finite = z.shape == (n,) and bool(np.all(np.isfinite(z)))
        if finite:
            w, ratio, T, Tz = row_pass(M, q, z, d1, d2, s)
            err = reported_error(ratio, T)
            tol_used = _tolerance(T, tol, tol_cap)
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


def _tolerance(T, tol, tol_cap):
    """The verdict's tolerance: the caller's ``tol``, else the answer's own ``T`` capped
    by ``tol_cap`` (None: no cap)."""
    if tol is not None:
        return float(tol)
    return T if tol_cap is None else min(T, float(tol_cap))


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


def _unrepresentable(M, q, method, scaling):
    """The result of an LCP whose equilibrated data lost bits (an entry fell below the
    normal range or overflowed; :func:`contact_lcp.lcp.scaling.representable`): no method
    runs on them, ``z = 0`` and NUMERICAL_FAILURE."""
    n = q.shape[0]
    z = np.zeros(n)
    err, w, tol = certify(M, q, z, scaling)
    info = {"scale_sweeps": scaling.sweeps, "tol": tol, "tol_z": 0.0, "unrepresentable": True,
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
