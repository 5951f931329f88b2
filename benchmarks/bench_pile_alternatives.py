"""What else was tried on a settled pile's hard frictional LCP, measured on the real step.

Usage::

    .venv/bin/python benchmarks/bench_pile_alternatives.py            # the pour at t = 1.14 s (~12 min)
    .venv/bin/python benchmarks/bench_pile_alternatives.py --compliance 1e-3 --iterations 40
    .venv/bin/python benchmarks/bench_pile_alternatives.py --compliance "" --continuation "" \
        --iterations 0 --nsgs 0 --tresca 0 --proximal 24
    .venv/bin/python benchmarks/bench_pile_alternatives.py --compliance "" --continuation "" \
        --iterations 0 --nsgs 0 --tresca 0 --proximal 7 --newton 60
    .venv/bin/python benchmarks/bench_pile_alternatives.py --scene spheres_21.yaml --steps 40

The contact problem is the one the next step hands to the contact model: of the bundled
pour state ``benchmarks/data/spheres_200_pour.state`` by default (t = 1.14 s, 524 contacts,
n = 5 240; the step the robust search certifies only after 1 853 791 pivots, 780 s, issue
10), or of ``--scene`` after ``--steps`` steps from its start. On it, with the pyramids the
model would use (:meth:`PyramidModel.edge_angles` from the state's guess):

* ``compliance``: the same pyramid LCP built from ``G + eps max(diag G) I`` (a contact
  compliance, as ODE's CFM or MuJoCo's soft constraints; penetration at rest grows with
  ``eps``; ``eps = 0`` is the hard LCP itself), solved cold by ``robust`` under a pivot
  budget. ``certified`` is its own certification (on the compliant LCP);
  ``hard_error_over_tol`` is the same answer's residual on the hard LCP, over that LCP's
  tolerance.
* ``compliance-continuation``: the compliant LCP solved cold at ``eps0``, then ``eps``
  lowered step by step towards ``eps1``, each LCP solved by the lexicographic Lemke path
  on sparse factors (``method='revised'``) warm-started on the last one's final basis
  (``info['final_basis']``); a failed step is retried with the square root of its ratio,
  a successful one lengthens the next by 1.5 (at most 10 x). It stops when an answer
  certifies on the hard LCP, at ``eps1``, or when the ratio falls below ``1 + 1e-4`` (a
  fold of the path in eps: the answer cannot follow eps down). One row per attempt.
* ``relaxed-fixed-point``: Anitescu & Hart's relaxation with each normal row's bias raised
  by ``mu lam`` of the last iterate, solved as the velocity QP
  (:mod:`contact_lcp.contact.relaxed_qp`); a fixed point ``lam`` is a solution of the
  pyramid LCP. One row per iteration: ``|F(lam) - lam|`` [m/s] and the iterate's residual
  on the hard LCP over its tolerance.

* ``nsgs``: nonsmooth block Gauss-Seidel (Moreau, Jean: the granular-media solver) on the
  hard LCP, from z = 0: contact after contact, its own 10-unknown block is solved exactly
  (the project's compiled lexicographic Lemke path; a block whose path ends on a ray,
  which happens when its normal row is 0 to round-off, takes the normal impulse of that
  row alone and no friction, off by that round-off) with the other contacts' impulses
  held. One row per ``--nsgs-every`` sweeps, then one for ``revised`` warm-started on the
  last iterate's support (``parameter``: the support's size).
* ``tresca-fixed-point``: the pyramid LCP with each contact's friction bound ``mu a``
  taken from the last iterate's normal impulse (Tresca friction: a convex QP, solved in
  velocities by Clarabel to 1e-10), the new normal impulses mixed in with ``--tresca-
  damping``; a fixed point is a solution of the pyramid LCP.

* ``proximal``: the proximal point iteration ``z_(j+1)`` solves LCP(M + w R, q - w R z_j)
  with ``R`` the compliance ``eps max(diag G)`` (as in ``compliance``, whose LCP is
  ``w = 1``); a fixed point solves the hard LCP whatever ``w``, and the compliance picks
  one of the pile's non-unique impulses (the one nearest the last). Each iteration is
  ``solve(..., "revised")`` warm-started on the last one's final basis (cold when that
  path fails); ``w`` shrinks by 3 when the hard residual did not halve. One row per
  iteration (``parameter``: ``eps w``), then one ``proximal-crossover`` row: the hard
  LCP by ``solve(..., "revised")`` warm-started on that iterate's final basis.
  ``max_impulse`` is the largest normal or edge impulse of the row's answer [N.s] (a
  failed crossover ends at 1e9-1e13 N.s: an internal force along the pile's null space).
* ``fb-newton``: a semismooth Newton method on the Fischer-Burmeister reformulation
  ``phi(z_i, w_i) = sqrt(z_i^2 + w_i^2) - z_i - w_i = 0`` of the hard LCP, in its
  equilibrated units, with a Levenberg-Marquardt term ``lam`` (redundant contacts make the
  Jacobian singular) and an Armijo backtracking line search on ``|phi|^2 / 2``; each step
  is one sparse LU of the augmented system ``[I H; H' -lam I]``. It starts from the last
  proximal iterate when ``--proximal`` ran, else from z = 0. One row per iteration
  (``parameter``: ``lam``, ``fixed_point_gap``: ``|phi|^2 / 2``).

Nothing here changes the simulator; the rows go to
``benchmarks/results/pile_alternatives_<date>_<revision>.csv``.
"""

import argparse
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_thread  # noqa: E402,F401  (before numpy: one BLAS thread)

import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402
from scipy import sparse  # noqa: E402

from contact_lcp.contact.lcp_builder import build_contact_lcp, build_relaxed_lcp  # noqa: E402
from contact_lcp.contact.report import all_pivots  # noqa: E402
from contact_lcp.contact.relaxed_qp import (lcp_unknowns, velocity_basis,  # noqa: E402
                                            velocity_qp)
from contact_lcp.lcp import solve  # noqa: E402
from contact_lcp.lcp import tableau as tb  # noqa: E402
from contact_lcp.lcp.residual import certify  # noqa: E402
from contact_lcp.lcp.scaling import equilibrate  # noqa: E402
from contact_lcp.sim import Simulator  # noqa: E402

COLUMNS = ("scene", "t", "contacts", "n", "variant", "parameter", "iteration", "status",
           "certified", "pivots", "s", "fixed_point_gap", "hard_error_over_tol",
           "max_impulse", "revision", "date")
STATE = os.path.join(HERE, "data", "spheres_200_pour.state")


class _Captured(Exception):
    """Raised by the capturing stand-in for the model's solve, to end the step there."""


def next_problem(scene, state=None, steps=0):
    """``(t, problem, model, guess)``: the ContactProblem the next step of ``scene``
    (after loading ``state``, or after ``steps`` steps) hands to its contact model, that
    model and the warm start (guess) it was handed."""
    sim = Simulator.from_file(scene)
    if state is not None:
        sim.load_state(state)
    for _ in range(steps):
        sim.step()
    model, captured = sim.model, []

    def capture(problem, guess=None):
        captured.append((problem, guess))
        raise _Captured

    model.solve = capture
    try:
        sim.step()
    except _Captured:
        pass
    finally:
        del model.solve
    if not captured:
        raise SystemExit(f"the step from t = {sim.t:.3f} s had no contact problem")
    problem, guess = captured[0]
    return sim.t, problem, model, guess


def pyramid_lcp(problem, angle, directions, eps=0.0):
    """The pyramid LCP of ``problem`` (``directions`` edges, first edges at ``angle``) with
    ``eps max(diag G)`` added to G's diagonal (0: the hard LCP)."""
    G = problem.G
    if eps:
        G = G + eps * float(np.max(np.diag(G))) * np.eye(G.shape[0])
    return build_contact_lcp(G, problem.u, problem.mu, num_directions=directions,
                             num_unilateral=problem.num_limits, normal_bias=problem.bias,
                             edge_angle=angle)


def compliance_rows(problem, angle, hard, over_tol, eps_list, budget):
    rows = []
    for eps in eps_list:
        lcp = pyramid_lcp(problem, angle, hard.num_directions, eps)
        t0 = time.perf_counter()
        res = solve(lcp.M, lcp.q, "robust", pivot_budget=budget)
        seconds = time.perf_counter() - t0
        hard_residual = over_tol(res.z)
        rows.append({"variant": "compliance", "parameter": eps, "status": res.status.name,
                     "certified": res.success, "pivots": res.info.get("path_pivots",
                                                                      res.pivots),
                     "s": seconds, "hard_error_over_tol": hard_residual})
        print(f"  compliance {eps:g}: {res.status.name}, {rows[-1]['pivots']} pivots, "
              f"{seconds:.1f} s, hard residual {hard_residual:.2e} x tol", flush=True)
    return rows


def continuation_rows(problem, angle, hard, over_tol, eps0, eps1, max_pivots):
    def attempt(eps, basis):
        lcp = pyramid_lcp(problem, angle, hard.num_directions, eps)
        # (singular_tol=0: the last answer's basis is taken as it is, no O(b^3) condition
        # estimate of its block; a singular one fails its factorization)
        opts = {} if basis is None else {"initial_basis": basis, "singular_tol": 0.0}
        res = solve(lcp.M, lcp.q, "revised", max_pivots=max_pivots, **opts)
        block = 0 if basis is None else basis.size - len(res.info.get("warm_start_dropped",
                                                                      ()))
        return res, int(res.pivots) - block

    rows, t0 = [], time.perf_counter()
    res, pivots = attempt(eps0, None)
    eps, ratio, basis = eps0, 1.1, res.info.get("final_basis")
    while True:
        hard_residual = over_tol(res.z)
        rows.append({"variant": "compliance-continuation", "parameter": eps,
                     "iteration": len(rows), "status": res.status.name,
                     "certified": res.success, "pivots": pivots,
                     "s": time.perf_counter() - t0, "hard_error_over_tol": hard_residual})
        print(f"  continuation eps {eps:.4g}: {res.status.name}, {pivots} pivots, hard "
              f"residual {hard_residual:.2e} x tol", flush=True)
        if res.success:
            basis, done_eps = res.info["final_basis"], eps
            ratio = min(1.5 * ratio, 10.0)
        else:
            ratio = np.sqrt(ratio)
        if (res.success and (hard_residual <= 1.0 or eps <= eps1)) or basis is None \
                or ratio < 1.0 + 1e-4:
            return rows
        eps = max(done_eps / ratio, eps1)
        res, pivots = attempt(eps, basis)


def fixed_point_rows(problem, angle, hard, over_tol, iterations):
    k = problem.num_contacts
    lam = np.zeros(k)
    rows = []
    t0 = time.perf_counter()
    for it in range(iterations):
        bias = problem.bias.copy()
        bias[:k] += problem.mu * lam
        shifted = dataclasses.replace(problem, bias=bias)
        relaxed = build_relaxed_lcp(shifted, num_directions=hard.num_directions,
                                    edge_angle=angle)
        found, c, qp_iterations = velocity_qp(shifted, relaxed.edges)
        z = lcp_unknowns(shifted, relaxed, c)
        hard_residual = over_tol(z)
        gap = float(np.max(np.abs(z[-k:] - lam), initial=0.0))
        rows.append({"variant": "relaxed-fixed-point", "parameter": "", "iteration": it,
                     "status": "QP solved" if found else "QP failed",
                     "certified": hard_residual <= 1.0,
                     "pivots": qp_iterations, "s": time.perf_counter() - t0,
                     "fixed_point_gap": gap, "hard_error_over_tol": hard_residual})
        print(f"  fixed point {it}: |F(lam) - lam| = {gap:.2e} m/s, hard residual "
              f"{hard_residual:.2e} x tol", flush=True)
        if not found or hard_residual <= 1.0:
            break
        lam = z[-k:]
    return rows


@njit(cache=True)
def _block_lemke(A, r, keys, z):
    """The small LCP ``(r, A)`` into ``z`` by the project's compiled lexicographic Lemke
    path (:func:`contact_lcp.lcp.tableau.lemke_run`, ``keys`` its Zobrist keys); False
    when the path does not end on a solution (a ray, on a round-off normal row)."""
    if r.min() >= 0.0:
        z[:] = 0.0
        return True
    code, _, _, x, _ = tb.lemke_run(A, r, keys, tb.RULE_LEXICOGRAPHIC, 0.0, tb.PIVOT_TOL,
                                    50 * r.shape[0])
    z[:] = x
    return code == tb.SOLVED


@njit(cache=True)
def _nsgs_sweeps(M, z, w, idx, ptr, nbr, sweeps, keys):
    """``sweeps`` Gauss-Seidel sweeps over the contact blocks ``idx`` (k, d + 2) of the
    LCP, ``w = M z + q`` kept up to date on the neighbours ``nbr[ptr[i]:ptr[i + 1]]`` of
    each block (``keys``: :func:`contact_lcp.lcp.tableau.zobrist_keys` of a block's
    size); returns how many block solves ended on a ray."""
    k, m = idx.shape
    A, r, zl, dz = np.empty((m, m)), np.empty(m), np.empty(m), np.empty(m)
    rays = 0
    for _ in range(sweeps):
        for i in range(k):
            for a in range(m):
                for b in range(m):
                    A[a, b] = M[idx[i, a], idx[i, b]]
            for a in range(m):
                acc = w[idx[i, a]]
                for b in range(m):
                    acc -= A[a, b] * z[idx[i, b]]
                r[a] = acc
            if not _block_lemke(A, r, keys, zl):
                # a normal row at 0 to round-off: that row's own normal impulse, no
                # friction, the slip speed its edges need (off by that round-off)
                rays += 1
                zl[:] = 0.0
                zl[0] = max(0.0, -r[0] / A[0, 0])
                low = 0.0
                for a in range(1, m - 1):
                    low = min(low, r[a] + A[a, 0] * zl[0])
                zl[m - 1] = -low
            for b in range(m):
                dz[b] = zl[b] - z[idx[i, b]]
                z[idx[i, b]] = zl[b]
            for p in range(ptr[i], ptr[i + 1]):
                j = nbr[p]
                for a in range(m):
                    row = idx[j, a]
                    acc = 0.0
                    for b in range(m):
                        acc += M[row, idx[i, b]] * dz[b]
                    w[row] += acc
    return rays


def contact_blocks(hard):
    """``(idx, ptr, nbr)``: each contact's unknowns ``[a_i, b_i1..b_id, lam_i]`` in the
    LCP's layout, and the contacts whose rows its columns touch (CSR lists)."""
    k, l, d = hard.num_contacts, hard.num_unilateral, hard.num_directions
    nn = k + l
    idx = np.empty((k, d + 2), dtype=np.int64)
    idx[:, 0] = np.arange(k)
    idx[:, 1:d + 1] = nn + np.arange(k)[:, None] * d + np.arange(d)
    idx[:, d + 1] = nn + k * d + np.arange(k)
    touch = np.zeros((k, k), dtype=bool)
    for a in range(d + 2):
        for b in range(d + 2):
            touch |= hard.M[np.ix_(idx[:, a], idx[:, b])] != 0.0
    lists = [np.flatnonzero(touch[:, i]) for i in range(k)]
    ptr = np.concatenate([[0], np.cumsum([x.size for x in lists])]).astype(np.int64)
    return idx, ptr, np.concatenate(lists).astype(np.int64)


def nsgs_rows(hard, over_tol, sweeps, every, max_pivots):
    if hard.num_unilateral:
        raise SystemExit("nsgs: joint-limit rows are not blocked here (the pile scenes "
                         "have none)")
    idx, ptr, nbr = contact_blocks(hard)
    keys = tb.zobrist_keys(idx.shape[1])
    z, w = np.zeros(hard.q.size), hard.q.copy()
    rows, done, t0 = [], 0, time.perf_counter()
    while done < sweeps:
        step = min(every, sweeps - done)
        rays = _nsgs_sweeps(hard.M, z, w, idx, ptr, nbr, step, keys)
        done += step
        w = hard.M @ z + hard.q  # (refreshed: the running update drifts by round-off)
        hard_residual = over_tol(z)
        rows.append({"variant": "nsgs", "parameter": done, "iteration": len(rows),
                     "status": f"{rays} block rays", "certified": hard_residual <= 1.0,
                     "pivots": done, "s": time.perf_counter() - t0,
                     "hard_error_over_tol": hard_residual})
        print(f"  nsgs {done} sweeps: hard residual {hard_residual:.2e} x tol "
              f"({rays} block rays)", flush=True)
        if hard_residual <= 1.0:
            return rows
    support = np.flatnonzero(z > 0.0)
    t0 = time.perf_counter()
    res = solve(hard.M, hard.q, "revised", initial_basis=support, max_pivots=max_pivots)
    rows.append({"variant": "nsgs-warm-revised", "parameter": support.size,
                 "status": res.status.name, "certified": res.success, "pivots": res.pivots,
                 "s": time.perf_counter() - t0, "hard_error_over_tol": over_tol(res.z)})
    print(f"  revised from the iterate's support ({support.size}, "
          f"{len(res.info.get('warm_start_dropped', ()))} dropped as singular): "
          f"{res.status.name}, {res.pivots} pivots", flush=True)
    return rows


def proximal_rows(problem, angle, hard, over_tol, eps, iterations, max_pivots):
    """The proximal iteration and its crossovers (module notes)."""
    R = pyramid_lcp(problem, angle, hard.num_directions, eps).M - hard.M
    rows_, cols_ = np.nonzero(R)
    vals = R[rows_, cols_]
    R = sparse.csr_matrix((vals, (rows_, cols_)), shape=R.shape)
    Mw = hard.M.copy()
    impulses = hard.q.size - problem.num_contacts  # (then the slip speeds)
    z, basis, weight, last = np.zeros(hard.q.size), None, 1.0, np.inf
    rows, t0 = [], time.perf_counter()
    best = z
    for it in range(iterations):
        Mw[rows_, cols_] = hard.M[rows_, cols_] + weight * vals
        qw = hard.q - weight * (R @ z)
        warm = {} if basis is None else {"initial_basis": basis, "singular_tol": 0.0}
        res = solve(Mw, qw, "revised", max_pivots=max_pivots, **warm)
        pivots = all_pivots(res)
        if not res.success and basis is not None:  # a warm path may end on a ray
            res = solve(Mw, qw, "revised", max_pivots=max_pivots)
            pivots += all_pivots(res)
        ratio = over_tol(res.z) if res.success else np.inf
        rows.append({"variant": "proximal", "parameter": eps * weight, "iteration": it,
                     "status": res.status.name, "certified": ratio <= 1.0, "pivots": pivots,
                     "s": time.perf_counter() - t0, "hard_error_over_tol": ratio,
                     "max_impulse": float(np.max(res.z[:impulses], initial=0.0))})
        print(f"  proximal {it} (eps w = {eps * weight:.3g}): {res.status.name}, {pivots} "
              f"pivots, hard residual {ratio:.3g} x tol", flush=True)
        if res.success:
            best = res.z
        if not res.success or ratio <= 1.0:
            break
        z, basis = res.z, res.info["final_basis"]
        cross = solve(hard.M, hard.q, "revised", initial_basis=basis, singular_tol=0.0,
                      max_pivots=max_pivots)
        rows.append({"variant": "proximal-crossover", "parameter": eps * weight,
                     "iteration": it, "status": cross.status.name,
                     "certified": cross.success, "pivots": all_pivots(cross),
                     "s": time.perf_counter() - t0, "hard_error_over_tol": over_tol(cross.z),
                     "max_impulse": float(np.max(cross.z[:impulses], initial=0.0))})
        print(f"    crossover: {cross.status.name} (certified {cross.success}), hard "
              f"residual {rows[-1]['hard_error_over_tol']:.3g} x tol, largest impulse "
              f"{rows[-1]['max_impulse']:.3g} N.s", flush=True)
        if ratio > 0.5 * last:
            weight /= 3.0
        last = ratio
    return rows, best


def newton_rows(hard, over_tol, units, iterations, z0, lam=1e-2):
    """The Levenberg-Marquardt Fischer-Burmeister Newton iteration (module notes) from
    ``z0`` (caller's units)."""
    from scipy.sparse.linalg import splu

    n = hard.q.size
    Ms, qs = units.apply(hard.M, hard.q)
    S = sparse.csr_matrix(Ms)
    impulses = n - hard.num_contacts  # (then the slip speeds)

    def phi(z):
        w = S @ z + qs
        r = np.hypot(z, w)
        return r - z - w, w, r

    zs = units.z_to_scaled(z0)
    F, w, r = phi(zs)
    psi, rows, t0 = 0.5 * F @ F, [], time.perf_counter()
    eye = sparse.identity(n, format="csr")
    for it in range(iterations):
        # an element of the generalized Jacobian: (z/r - 1, w/r - 1), at r = 0 any point of
        # the unit circle shifted by (-1, -1) (here both -1 + 1/sqrt 2)
        live = r > 0.0
        ra = np.where(live, r, 1.0)
        da = np.where(live, zs / ra - 1.0, -1.0 + np.sqrt(0.5))
        db = np.where(live, w / ra - 1.0, -1.0 + np.sqrt(0.5))
        H = sparse.diags(da) + sparse.diags(db) @ S
        K = sparse.bmat([[eye, H], [H.T, -lam * eye]], format="csc")
        dz = splu(K).solve(np.concatenate([-F, np.zeros(n)]))[n:]
        step, accepted = 1.0, False
        for _ in range(30):
            Fn, wn, rn = phi(zs + step * dz)
            psin = 0.5 * Fn @ Fn
            if psin <= (1.0 - 1e-4 * step) * psi:
                accepted = True
                break
            step *= 0.5
        if accepted:
            zs, F, w, r, psi = zs + step * dz, Fn, wn, rn, psin
            if step == 1.0:
                lam = max(lam / 3.0, 1e-12)
        else:
            lam *= 10.0
        z = units.z_from_scaled(np.maximum(zs, 0.0))
        ratio = over_tol(z)
        rows.append({"variant": "fb-newton", "parameter": lam, "iteration": it,
                     "status": f"step {step:.3g}" if accepted else "no descent",
                     "certified": ratio <= 1.0, "pivots": 0, "s": time.perf_counter() - t0,
                     "fixed_point_gap": psi, "hard_error_over_tol": ratio,
                     "max_impulse": float(np.max(z[:impulses], initial=0.0))})
        print(f"  fb-newton {it}: |phi|^2/2 = {psi:.3e}, step {step:.3g}, lam {lam:.1e}, "
              f"hard residual {ratio:.3g} x tol", flush=True)
        if ratio <= 1.0:
            break
    return rows


def tresca_rows(problem, angle, hard, over_tol, iterations, damping):
    """The Tresca fixed point (module notes): min 1/2 xi' diag(1/kappa) xi + sum mu_i a_i
    lam_i over the velocity change ``dv = U xi`` and the slip ``lam`` >= 0, subject to
    every normal row and every pyramid edge row (plus ``lam_i``) >= 0; its multipliers
    are the LCP's ``a`` and ``b``."""
    import clarabel

    if problem.num_limits:
        raise SystemExit("tresca: joint-limit rows are not handled here")
    k, d = problem.num_contacts, hard.num_directions
    cos, sin = hard.edges
    U, kappa = velocity_basis(problem.K)
    J, u = problem.J, problem.u
    Jn = sparse.csr_matrix(J[0:3 * k:3]) @ U
    Jt = (cos[:, :, None] * J[1:3 * k:3][:, None, :]
          + sin[:, :, None] * J[2:3 * k:3][:, None, :]).reshape(k * d, -1)
    ut = (cos * u[1:3 * k:3, None] + sin * u[2:3 * k:3, None]).ravel()
    A = sparse.bmat([[Jn, None], [sparse.csr_matrix(Jt) @ U,
                                  sparse.kron(sparse.identity(k), np.ones((d, 1)))],
                     [None, sparse.identity(k)]]).tocsc()
    b = np.concatenate([u[0:3 * k:3] + problem.bias, ut, np.zeros(k)])
    P = sparse.block_diag([sparse.diags(1.0 / kappa), sparse.csc_matrix((k, k))]).tocsc()
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    settings.tol_ktratio = 1e-8
    cone = [clarabel.NonnegativeConeT(A.shape[0])]
    a_last, rows, t0 = np.zeros(k), [], time.perf_counter()
    for it in range(iterations):
        cost = np.concatenate([np.zeros(kappa.size), problem.mu * a_last])
        sol = clarabel.DefaultSolver(P, cost, -A, b, cone, settings).solve()
        y = np.maximum(np.asarray(sol.z, dtype=float), 0.0)
        lam = np.maximum(np.asarray(sol.x, dtype=float)[kappa.size:], 0.0)
        z = np.concatenate([y[:k], y[k:k + k * d], lam])
        hard_residual = over_tol(z)
        gap = float(np.max(np.abs(y[:k] - a_last), initial=0.0))
        rows.append({"variant": "tresca-fixed-point", "parameter": damping, "iteration": it,
                     "status": str(sol.status), "certified": hard_residual <= 1.0,
                     "pivots": int(sol.iterations), "s": time.perf_counter() - t0,
                     "fixed_point_gap": gap, "hard_error_over_tol": hard_residual})
        print(f"  tresca {it}: |a - a_last| = {gap:.2e} N.s, hard residual "
              f"{hard_residual:.2e} x tol", flush=True)
        if hard_residual <= 1.0:
            break
        a_last = damping * y[:k] + (1.0 - damping) * a_last
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scene", default="spheres_200.yaml",
                        help="a bundled scene name or a path (default spheres_200.yaml)")
    parser.add_argument("--state", default=None,
                        help="a state file to start from (default: the bundled pour state "
                             "for spheres_200.yaml, else none)")
    parser.add_argument("--steps", type=int, default=0, help="steps to take first")
    parser.add_argument("--compliance", default="0,1e-3,1e-4,1e-5",
                        help="comma-separated eps (relative to max diag G; 0: the hard "
                             "LCP itself); '' for none")
    parser.add_argument("--budget", type=int, default=150_000,
                        help="robust's pivot budget per compliant LCP")
    parser.add_argument("--continuation", default="1e-4:1e-10",
                        help="eps0:eps1 of the compliance continuation; '' for none")
    parser.add_argument("--iterations", type=int, default=30,
                        help="relaxed fixed-point iterations (0: none)")
    parser.add_argument("--nsgs", type=int, default=25_000,
                        help="block Gauss-Seidel sweeps (0: none)")
    parser.add_argument("--nsgs-every", type=int, default=1000,
                        help="sweeps per nsgs row")
    parser.add_argument("--tresca", type=int, default=30,
                        help="Tresca fixed-point iterations (0: none)")
    parser.add_argument("--tresca-damping", type=float, default=1.0,
                        help="weight of the new normal impulses in each Tresca bound")
    parser.add_argument("--proximal", type=int, default=0,
                        help="proximal iterations (0: none)")
    parser.add_argument("--proximal-eps", type=float, default=1e-3,
                        help="compliance of the proximal metric (relative to max diag G)")
    parser.add_argument("--newton", type=int, default=0,
                        help="Fischer-Burmeister Newton iterations (0: none)")
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    scene = args.scene if os.path.exists(args.scene) else os.path.join(ROOT, "config",
                                                                       args.scene)
    state = args.state
    if state is None and os.path.basename(scene) == "spheres_200.yaml" and not args.steps:
        state = STATE
    revision = common.git_revision()
    date, stamp = common.utc_stamp()
    t, problem, model, guess = next_problem(scene, state, args.steps)
    angle = model.edge_angles(problem, guess)
    hard = pyramid_lcp(problem, angle, model.settings.friction_directions)
    units = equilibrate(hard.M, hard.q)  # once: every row is measured on this LCP

    def over_tol(z):
        """``z``'s residual on the hard LCP over that LCP's tolerance."""
        err, _, tol = certify(hard.M, hard.q, z, units)
        return err / tol

    print(f"{os.path.basename(scene)} from t = {t:.3f} s: {problem.num_contacts} contacts, "
          f"n = {hard.q.size}", flush=True)
    eps_list = [float(e) for e in args.compliance.split(",") if e.strip()]
    rows = compliance_rows(problem, angle, hard, over_tol, eps_list, args.budget)
    if args.continuation:
        eps0, eps1 = (float(e) for e in args.continuation.split(":"))
        rows += continuation_rows(problem, angle, hard, over_tol, eps0, eps1, args.budget)
    rows += fixed_point_rows(problem, angle, hard, over_tol, args.iterations)
    if args.nsgs:
        rows += nsgs_rows(hard, over_tol, args.nsgs, args.nsgs_every, args.budget)
    if args.tresca:
        rows += tresca_rows(problem, angle, hard, over_tol, args.tresca, args.tresca_damping)
    start = np.zeros(hard.q.size)
    if args.proximal:
        prox, start = proximal_rows(problem, angle, hard, over_tol, args.proximal_eps,
                                    args.proximal, args.budget)
        rows += prox
    if args.newton:
        rows += newton_rows(hard, over_tol, units, args.newton, start)
    common_fields = {"scene": os.path.basename(scene), "t": round(t, 6),
                     "contacts": problem.num_contacts, "n": hard.q.size,
                     "revision": revision, "date": date}
    rows = [{**common_fields, **r} for r in rows]
    path = common.results_path("pile_alternatives", revision, stamp, args.results_dir)
    common.write_csv(path, rows, COLUMNS)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
