"""Minimum-norm impulses for the normal-row models (no-slip and viscous, S4).

As with the pyramid model (:mod:`contact_lcp.contact.min_norm`), redundant contact gives
these models a set of answers with one velocity (S2): the PPM returns a vertex of it, a
box on four corners carried by two of them. Here the set is simpler, since the
tangential impulses are not bounded by friction:

* viscous: ``f_t = -h B v_t+`` is a function of the velocities, so only the normal
  impulses of the contacts that can carry load move;
* no-slip: the tangential impulses of the held contacts are free (any that keep
  ``T v+ = 0``), so they move too; nearly dependent rows (a face a few um out of its
  plane) make the vertex's ones huge and self-cancelling, and the least-norm ones are
  what the load needs.

The face of the answer ``f*``: the normal rows that carry load or touch (``w_n`` within
the certification tolerance of the step's LCP, or ``OPEN_TOL`` when the model's compiled
step leaves no LCP to take it from) take any ``f_n >= 0`` (under no-slip only those the
answer loads or holds: an unheld contact slips, and must not be loaded), the others keep
``f_n = 0``;
the free tangential rows take any value; and the moved impulses ``x`` keep the
velocity, ``K J_x' x = dv`` (the answer's velocity change less that of the impulses
kept). Every point of it solves the step's LCP: the normal velocities do not change, and
a row that takes load has ``w_n`` within its tolerance. The equalities, rank-deficient
by construction, are taken in the kinetic metric (``K = R R'``) through the SVD of
``R' J_x'``: ``V x = e`` with ``V`` the orthonormal rows of its row space. The least-norm
``V' e`` is the answer when its normal impulses are non-negative; else a QP with those
bounds (Clarabel) finds the active set, and the least-norm point on it is solved exactly
(so that two orderings of the contacts agree to round-off). The result is checked
(velocity change, and the step's LCP certification when given); if a check fails, the
vertex stays and ``info['force_distribution']`` says why.
"""

from dataclasses import replace

import numpy as np

from contact_lcp.contact.no_slip_space import kinetic_factor
from contact_lcp.contact.report import ContactSolution, Outcome
from contact_lcp.lcp.residual import certify, row_tolerances

#: without the step's LCP, a normal row whose velocity is at most this (relative to
#: ``1 + ||u||_inf``) [m/s] may take load: its certification tolerance is of this order
OPEN_TOL = 1e-10
#: a bounded variable of the QP (relative to ``max |x*|``) at most this is taken as active
ACTIVE_TOL = 1e-7
#: Clarabel's tolerances on the problem scaled to ``max |x*| = 1``
QP_TOL = 1e-10
#: the velocity change accepted, times ``max(1, ||v_free||_inf)`` [m/s or rad/s]
VELOCITY_TOL = 1e-11


def redistributed_normal(problem, solution, model, face, held_only=False, deferred=False):
    """``solution`` with the least-norm impulse of its face (module notes) when it is a
    certified answer of ``model`` (name). ``face`` is ``(free_rows, dv, lcp)``, or a
    function of nothing returning it: ``free_rows`` (t,) are the tangential rows whose
    impulses move with it (no-slip's held rows; none for viscous), ``dv`` (nv,) the
    velocity change ``K J' f`` of the answer when the caller has it more accurately than
    from ``f`` (no-slip: ``f`` is large along weakly held directions; None: from ``f``),
    ``lcp`` the normal-row LCP solved (``M``, ``q``), whose certification tolerances then
    say which rows are open and which certify the result (or None); ``held_only``: a
    contact takes load only if the answer loads it or holds it (its tangential rows among
    ``free_rows``: no-slip, where an unheld contact slips). With ``deferred`` the step
    applies the answer as it is, and the least-norm impulse, with the same velocities, is
    computed (``face`` evaluated) when its forces are first read
    (:class:`~contact_lcp.contact.report.ContactSolution`); its ``distribution`` then
    says what was done, else the report's ``info['force_distribution']``."""
    r = solution.report
    if r.outcome is not Outcome.SOLVED or r.applied != model or problem.num_rows == 0:
        return solution

    def distribute(f):
        free_rows, dv, lcp = face() if callable(face) else face
        return least_norm(problem, f, np.asarray(free_rows, dtype=np.int64), dv, lcp,
                          held_only)

    if deferred:
        return ContactSolution(solution.solved, r, solution.generalized, solution.guess,
                               distribute)
    f, note = distribute(solution.f)
    return ContactSolution(f, replace(r, info=dict(r.info, force_distribution=note)),
                           solution.generalized, solution.guess)


def least_norm(problem, f, free_rows, dv=None, lcp=None, held_only=False):
    """``(f, note)``: the least-norm impulse of the face of ``f`` (module notes), with
    ``note`` ``min_norm``, ``unique`` or ``rejected: <why>`` (``f`` then returned);
    ``dv``, ``lcp`` and ``held_only`` as :func:`redistributed_normal`."""
    f = np.asarray(f, dtype=float)
    nr = problem.normal_rows
    dv = problem.K @ (problem.J.T @ f) if dv is None else np.asarray(dv, dtype=float)
    w_n = problem.J[nr] @ (problem.v_free + dv) + problem.bias
    if lcp is None:
        tol = OPEN_TOL * (1.0 + float(np.max(np.abs(problem.u), initial=0.0)))
    else:
        tol, _ = row_tolerances(lcp.M, lcp.q, f[nr])
    touching = w_n <= tol
    if held_only:
        held = np.zeros(nr.size, dtype=bool)
        held[np.unique(free_rows[free_rows < 3 * problem.num_contacts] // 3)] = True
        touching[:problem.num_contacts] &= held[:problem.num_contacts]
    open_n = nr[(f[nr] > 0.0) | touching]
    rows = np.concatenate([open_n, free_rows])
    if rows.size == 0:
        return f, "unique"
    bounded = np.zeros(rows.size, dtype=bool)
    bounded[:open_n.size] = True
    # the moved impulses' velocity change: the answer's, less that of the rows kept
    kept = f.copy()
    kept[rows] = 0.0
    target = dv - problem.K @ (problem.J.T @ kept)
    R, P = kinetic_factor(np.ascontiguousarray(problem.K, dtype=float))
    E = R.T @ problem.J[rows].T  # (r, x): velocity change in the kinetic metric
    U, sv, Vt = np.linalg.svd(E, full_matrices=False)
    rank = int(np.sum(sv > max(E.shape) * np.finfo(float).eps * sv[0])) if sv.size else 0
    if rank == rows.size:
        return f, "unique"
    # V x = e: the rows of E's row space, right-hand side by its pseudo-inverse
    V = Vt[:rank]
    e = (U[:, :rank].T @ (P @ target)) / sv[:rank]
    scale = max(float(np.max(np.abs(e))), 1e-300)
    e = e / scale
    x = V.T @ e
    if np.any(x[bounded] < 0.0):
        x = _bounded(V, e, bounded)
        if x is None:
            return f, "rejected: the QP found no solution"
    x = x * scale
    change = problem.K @ (problem.J[rows].T @ x) - target
    if not np.all(np.isfinite(change)) or np.max(np.abs(change), initial=0.0) > (
            VELOCITY_TOL * max(1.0, float(np.max(np.abs(problem.v_free), initial=0.0)))):
        return f, "rejected: velocity change"
    out = f.copy()
    out[rows] = x
    if lcp is not None:
        err, _, T = certify(lcp.M, lcp.q, out[nr])
        if not err <= T:
            return f, "rejected: not certified"
    return out, "min_norm"


def _bounded(V, e, bounded):
    """The least-norm ``x`` with ``V x = e`` and ``x[bounded] >= 0``, or None: Clarabel
    finds the active bounds, then the least-norm point with them held is solved exactly."""
    x = _clarabel(V, e, bounded)
    if x is None:
        return None
    free = ~(bounded & (x <= ACTIVE_TOL))
    exact = np.zeros_like(x)
    exact[free] = np.linalg.lstsq(V[:, free], e, rcond=None)[0]  # least-norm solution
    if np.all(exact[bounded] >= 0.0) and np.allclose(V @ exact, e, rtol=0, atol=1e-12):
        return exact
    # the active set within the QP's tolerance: the bounds clipped, on the equalities
    x[bounded] = np.maximum(x[bounded], 0.0)
    return x if np.allclose(V @ x, e, rtol=0, atol=1e-12) else None


def _clarabel(V, e, bounded):
    """``min ||x||^2  s.t.  V x = e, x[bounded] >= 0`` by Clarabel: ``x`` or None."""
    import clarabel
    from scipy import sparse

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = QP_TOL
    n = V.shape[1]
    idx = np.flatnonzero(bounded)
    S = np.zeros((idx.size, n))
    S[np.arange(idx.size), idx] = -1.0
    A = sparse.csc_matrix(np.vstack([V, S]))
    b = np.concatenate([e, np.zeros(idx.size)])
    cones = [clarabel.ZeroConeT(V.shape[0])] if V.shape[0] else []
    cones.append(clarabel.NonnegativeConeT(idx.size))
    sol = clarabel.DefaultSolver(sparse.identity(n, format="csc"), np.zeros(n), A, b,
                                 cones, settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        return None
    x = np.asarray(sol.x, dtype=float)
    return x if np.all(np.isfinite(x)) else None
