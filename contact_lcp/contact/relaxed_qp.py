"""The relaxed model's QP path, in velocities (Anitescu & Hart 2004, section 2.3).

The relaxed LCP of :mod:`contact_lcp.contact.relaxed` is the optimality condition of a
convex QP in the impulses, but that QP is large (``k + k d`` unknowns) and degenerate
(its Hessian ``P'GP`` has the rank of the velocity space, not of the contacts: a settled
pile has several times more edge impulses than degrees of freedom). Its dual is small and
strictly convex: the velocity change ``dv`` that is closest to the free motion in the
kinetic metric while every edge ``g_ie = n_i + mu_i d_ie`` of every friction pyramid
closes no faster than the stabilization allows::

    minimize   1/2 dv' K^+ dv
    subject to g_ie' (u_i + J_i dv) + bias_i >= 0     (multiplier c_ie >= 0)
               limit rows: u_j + J_j dv + bias_j >= 0  (multiplier c_j >= 0)
               dv in range(K)

The contact impulse is ``f_i = sum_e c_ie g_ie`` and the step's velocity ``v_free + K J' f``.
The LCP unknowns follow: ``a_i = sum_e c_ie``, ``b_ie = mu_i c_ie`` and the sliding speed
``lam_i = max(0, -min_e d_ie' v_i)``, and the answer is certified on the relaxed LCP by
:func:`contact_lcp.lcp.residual.certify` like every pivoting answer.

``K`` is block diagonal by the trees of the world (every free body is its own block), so
the QP is sparse: one row per pyramid edge with the few velocity columns of the two
bodies in contact, and a diagonal Hessian once every block of ``K`` is written in its
eigenvectors (``dv = U xi``, ``K = U diag(kappa) U'``, Hessian ``diag(1 / kappa)``). Its
cost grows with the contacts and the bodies, not with the cube of the LCP's size.
"""

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from contact_lcp.contact.ladder import lcp_rung
from contact_lcp.lcp import LCPResult, LCPStatus
from contact_lcp.lcp.residual import certify
from contact_lcp.lcp.sparse_residual import certify_sparse

#: QP backends accepted by the ``qp_solver`` option. Not proxqp: it reports feasible
#: Brazil-nut steps as primal infeasible and can run for minutes without an answer.
QP_SOLVERS = ("clarabel",)

#: Clarabel's KKT factorization. Its ``auto`` picks ``faer`` (multithreaded supernodal),
#: which on two shared cores took 4.2-4.9 s for a 1000-sphere pour's QP (16 784 edge rows,
#: 5988 velocities, 20 iterations) that ``qdldl`` solves in 0.7 s, the same iterations.
CLARABEL_KKT_SOLVER = "qdldl"

#: ``path: auto`` (the relaxed model's default, and the pyramid model's fallback to the
#: relaxation) solves relaxed LCPs with more unknowns than this on the QP path: pivoting
#: costs about the cube of the LCP's size, this QP about its number of edges.
AUTO_QP_SIZE = 300

#: relaxed LCPs larger than this are never pivoted on densely (the QP answer's polish, the
#: relaxed model's LCP rung after a failed QP): a 1000-sphere pour's island of 1750
#: contacts (n = 17 560, 2.5 GB dense) took the process above 11 GB in the polish
MAX_DENSE_SIZE = 8000

#: eigenvalues of a block of K below this fraction of the block's largest are its null
#: space (prescribed or loop-constrained directions)
RANK_RTOL = 1e-12


def velocity_basis(K):
    """``K = U diag(kappa) U'`` with ``U`` sparse and block diagonal by the blocks of
    ``K``'s sparsity pattern.

    Parameters
    ----------
    K : (nv, nv) ndarray
        Symmetric PSD map from generalized impulse to velocity change [1/kg].

    Returns
    -------
    U : (nv, r) scipy.sparse.csc_matrix
        Orthonormal columns spanning ``range(K)``.
    kappa : (r,) ndarray
        The positive eigenvalues [1/kg].
    """
    if sparse.issparse(K):
        return _velocity_basis_csr(sparse.csr_matrix(K))
    nv = K.shape[0]
    dyn = np.flatnonzero(np.any(K != 0.0, axis=1))
    pattern = sparse.csr_matrix(K[np.ix_(dyn, dyn)] != 0.0)
    count, label = connected_components(pattern, directed=False)
    order = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[order], np.arange(count + 1))
    sizes = np.diff(starts)
    single = dyn[order[starts[:-1][sizes == 1]]]  # 1 x 1 blocks (a diagonal M): no eigh
    single = single[K[single, single] > 0.0]
    rows, cols, vals, kappa = [single], [np.arange(single.size)], [np.ones(single.size)], \
        [K[single, single]]
    r = single.size
    for b in np.flatnonzero(sizes > 1):
        idx = dyn[order[starts[b]:starts[b + 1]]]
        lam, V = np.linalg.eigh(K[np.ix_(idx, idx)])
        keep = lam > RANK_RTOL * max(float(lam[-1]), 0.0)
        V, lam = V[:, keep], lam[keep]
        m = lam.size
        rows.append(np.repeat(idx, m))
        cols.append(np.tile(np.arange(r, r + m), idx.size))
        vals.append(V.ravel())
        kappa.append(lam)
        r += m
    if r == 0:
        return sparse.csc_matrix((nv, 0)), np.zeros(0)
    U = sparse.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(nv, r))
    return U, np.concatenate(kappa)


def _velocity_basis_csr(K):
    """:func:`velocity_basis` of a CSR ``K`` without stored zeros: the blocks of its
    pattern gathered by size and decomposed in batches (a pile: one batch of 6 x 6)."""
    nv = K.shape[0]
    dyn = np.flatnonzero(np.diff(K.indptr) > 0)
    count, label = connected_components(K[dyn][:, dyn], directed=False)
    order = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[order], np.arange(count + 1))
    sizes = np.diff(starts)
    rows, cols, vals, kappa, r = [], [], [], [], 0
    for m in np.unique(sizes):
        first = starts[:-1][sizes == m]
        idx = dyn[order[first[:, None] + np.arange(m)]]  # (blocks, m) coordinates
        nb = idx.shape[0]
        B = np.asarray(K[np.repeat(idx, m, axis=1).ravel(), np.tile(idx, (1, m)).ravel()])
        lam, V = np.linalg.eigh(B.reshape(nb, m, m))
        keep = lam > RANK_RTOL * np.maximum(lam[:, -1:], 0.0)  # (a block's null space)
        width = keep.sum(axis=1)
        column = (r + np.cumsum(width) - width)[:, None] + np.cumsum(keep, axis=1) - 1
        take = np.broadcast_to(keep[:, None, :], (nb, m, m))
        rows.append(np.broadcast_to(idx[:, :, None], (nb, m, m))[take])
        cols.append(np.broadcast_to(column[:, None, :], (nb, m, m))[take])
        vals.append(V[take])
        kappa.append(lam[keep])
        r += int(width.sum())
    if r == 0:
        return sparse.csc_matrix((nv, 0)), np.zeros(0)
    U = sparse.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(nv, r))
    return U, np.concatenate(kappa)


def generator_rows(problem, cos, sin):
    """The rows ``S`` (kd + l, 3k + l) that take contact-frame quantities to pyramid edges
    ``g_ie = n_i + mu_i (cos_ie t1_i + sin_ie t2_i)`` (then the limit rows unchanged)."""
    k, l, d = problem.num_contacts, problem.num_limits, cos.shape[1]
    mu = problem.mu[:, None]
    edge = np.arange(k * d)
    base = 3 * np.repeat(np.arange(k), d)
    rows = np.concatenate([edge, edge, edge, k * d + np.arange(l)])
    cols = np.concatenate([base, base + 1, base + 2, 3 * k + np.arange(l)])
    vals = np.concatenate([np.ones(k * d), (mu * cos).ravel(), (mu * sin).ravel(), np.ones(l)])
    return sparse.csr_matrix((vals, (rows, cols)), shape=(k * d + l, 3 * k + l))


def lcp_unknowns(problem, lcp, c):
    """The relaxed LCP's ``z = [a; b; lam]`` from the edge multipliers ``c`` (kd + l,)."""
    k, l, d = problem.num_contacts, problem.num_limits, lcp.num_directions
    cos, sin = lcp.edges
    ce = c[:k * d].reshape(k, d)
    a = np.concatenate([ce.sum(axis=1), c[k * d:]])
    b = problem.mu[:, None] * ce
    f = np.empty(3 * k + l)
    f[0:3 * k:3] = a[:k]
    f[1:3 * k:3] = (b * cos).sum(axis=1)
    f[2:3 * k:3] = (b * sin).sum(axis=1)
    f[3 * k:] = a[k:]
    rows = problem.u + problem.G @ f
    slip = cos * rows[1:3 * k:3, None] + sin * rows[2:3 * k:3, None]
    lam = np.maximum(0.0, -slip.min(axis=1, initial=np.inf)) if k else np.zeros(0)
    return np.concatenate([a, b.ravel(), lam])


def qp_rows(problem, edges):
    """The velocity QP's constraint rows in the coordinates ``xi`` (``dv = U xi``).

    Returns
    -------
    A : (kd + l, r) scipy.sparse.csc_matrix
        Edge rows then limit rows, ``A xi + b >= 0``.
    b : (kd + l,) ndarray
        Their values at ``xi = 0`` (free motion plus stabilization) [m/s].
    kappa : (r,) ndarray
        The eigenvalues of ``K`` [1/kg] (the Hessian is ``diag(1 / kappa)``).
    """
    k, l = problem.num_contacts, problem.num_limits
    U, kappa = velocity_basis(problem.K)
    S = generator_rows(problem, *edges)
    A = (S @ sparse.csr_matrix(problem.J) @ U).tocsc()  # edge rows in the coordinates xi
    bias = np.zeros(3 * k + l)
    bias[problem.normal_rows] = problem.bias
    return A, S @ (problem.u + bias), kappa


def velocity_qp(problem, edges, *, solver="clarabel", tol=1e-12, rows=None):
    """Solve the velocity QP of the module notes.

    Parameters
    ----------
    problem : ContactProblem
    edges : tuple of (k, d) ndarray
        Cosines and sines of every contact's pyramid edges.
    solver : str
        A backend in :data:`QP_SOLVERS`.
    tol : float
        The solver's tolerance [m/s].
    rows : tuple, optional
        :func:`qp_rows` of ``(problem, edges)`` when the caller has them.

    Returns
    -------
    found : bool
    c : (kd + l,) ndarray
        Edge and limit-row multipliers [N.s] (clipped at 0).
    iterations : int
    """
    A, b, kappa = qp_rows(problem, edges) if rows is None else rows
    if kappa.size == 0:  # nothing can move: feasible only if nothing closes
        return bool(np.all(b >= -tol)), np.zeros(b.shape[0]), 0
    P = sparse.diags(1.0 / kappa, format="csc")
    found, c, iters = _BACKENDS[solver](P, A, b, tol)
    return found, np.maximum(c, 0.0), iters


#: proximal steps of :func:`refine_active_set` per active set (one factorization each)
REFINE_STEPS = 8
#: the proximal shift ``delta``, relative to the largest diagonal entry of ``H_AA``:
#: directions of ``H_AA`` with smaller eigenvalues keep the interior point's values
#: (pushing them to the equations' exact solution amplified the answer's round-off to
#: multipliers of -1e2 times the largest at 1e-10 and 1e-8 on two of five pour problems)
REFINE_SHIFT = 1e-6
#: active sets :func:`refine_active_set` solves at most (one factorization each): a
#: blocking step takes one row out of the set, a join adds one per contact, and the
#: interior point's set is usually a few rows from the answer's, so this bounds the cost
#: of a set it cannot finish (the polish comes next) at about a second on a pile's 3 000
#: rows rather than bounding the rounds a good set needs
REFINE_ROUNDS = 30
#: a row starts closed when its multiplier, in units of the largest, exceeds ``ratio``
#: times its slack, in units of the largest ``|b|``: rows the interior point left
#: undecided start open and join if they close. :func:`solve_relaxed_qp` tries these in
#: turn. On eight pour problems the plain comparison (1) put an open row in the set of
#: three, whose equations then had no solution; 1e4 refined all eight (with
#: ``REFINE_SHIFT``), 100 seven.
CLOSED_RATIOS = (1e4, 100.0)


def refine_active_set(rows, c, k, d, ratio=CLOSED_RATIOS[0]):
    """Finish an interior-point answer on the active set it points to.

    An interior-point answer leaves ``c_i s_i`` of the order of its tolerance on every
    row (``s = A xi + b``, the slack): tiny multipliers on open rows and tiny slacks on
    closed ones, which the per-row certification of a large LCP rejects (the 200-sphere
    pour: rows with ``c ~ 1e-8`` N.s beside ``s ~ 1e-6`` m/s). The answer is finished by
    a primal active-set method on the QP's dual, ``min 1/2 c'Hc + b'c`` over ``c >= 0``
    (``H = A diag(kappa) A'``, the Delassus matrix of the edges, singular on redundant
    contact), started from the interior point:

    - a row starts closed where its multiplier, in units of the largest, exceeds
      ``ratio`` times its slack, in units of the largest ``|b|``
      (:data:`CLOSED_RATIOS`); the iterate is the interior point's multipliers on the
      closed rows, 0 on the open ones;
    - each round solves ``H_AA c_A = -b_A`` on the closed rows ``A`` by proximal steps
      ``(H_AA + delta I) c+ = delta c - b_A`` from the iterate (``delta``:
      :data:`REFINE_SHIFT`), which converge to the solution nearest the iterate along
      the directions the shift does not hide;
    - if that solution has negative multipliers, the iterate moves towards it only as
      far as every multiplier stays nonnegative, and the rows that reached 0 there (the
      blocking rows) open (moving all the way and opening every negative row at once
      swings the set by hundreds of rows a round on a settled pour, which never
      settles);
    - otherwise the iterate is that solution, and rows left open that close (a contact
      just touching, whose load the interior point spread over all its edges) join
      the set, one edge per contact and round, the most violated (its other edges carry
      the same load redundantly); with none, the answer is found.

    At most :data:`REFINE_ROUNDS` sets are solved. The caller certifies the answer like
    any other.

    Parameters
    ----------
    rows : tuple
        :func:`qp_rows` ``(A, b, kappa)``.
    c : (kd + l,) ndarray
        The interior-point multipliers [N.s].
    k, d : int
        Contacts and edges per contact (the first ``kd`` rows are the contacts' edges).
    ratio : float
        How much larger a multiplier than its slack (each in its units) closes a row.

    Returns
    -------
    (kd + l,) ndarray or None
        Nonnegative multipliers with ``c_i = 0`` on open rows and ``s_i = 0`` on closed
        ones to the precision of the solve, or None when no set within the rounds gave
        that (the caller then has other means; every answer is certified anyway).
    """
    from scipy.sparse.linalg import splu

    A, b, kappa = rows
    Kd = sparse.diags(kappa)
    s = A @ (kappa * (A.T @ c)) + b
    c_unit = max(float(c.max(initial=0.0)), 1e-300)
    s_unit = max(float(np.abs(b).max(initial=0.0)), 1e-300)
    closed = c / c_unit > ratio * s / s_unit
    x_cur = np.where(closed, c, 0.0)
    for _ in range(REFINE_ROUNDS):
        idx = np.flatnonzero(closed)
        x = np.zeros(0)
        if idx.size:
            A_c = A[idx]
            H = (A_c @ Kd @ A_c.T).tocsc()
            delta = REFINE_SHIFT * max(float(H.diagonal().max()), 1e-300)
            try:
                lu = splu((H + delta * sparse.eye(idx.size, format="csc")).tocsc())
            except RuntimeError:  # exactly singular even with the shift
                return None
            x = x_cur[idx]
            for _ in range(REFINE_STEPS):
                x = lu.solve(delta * x - b[idx])
            if not np.all(np.isfinite(x)):
                return None
        negative = x < -1e-12 * c_unit
        blocked = bool(negative.any())
        if blocked:  # a blocking step: as far towards x as c >= 0 allows
            x0 = x_cur[idx]
            alpha = float(np.min(x0[negative] / (x0[negative] - x[negative])))
            x = np.maximum(x0 + alpha * (x - x0), 0.0)
            blocking = negative & (x <= 1e-12 * c_unit)
            x[blocking] = 0.0
            closed[idx[blocking]] = False
        x_cur = np.zeros_like(c)
        x_cur[idx] = x
        if blocked:
            continue
        s = A @ (kappa * (A.T @ x_cur)) + b
        join = _most_violated(~closed & (s < -1e-12 * s_unit), s, k, d)
        if not join.any():
            return np.maximum(x_cur, 0.0)
        closed |= join
    return None


def _most_violated(mask, s, k, d):
    """``mask`` kept only at each of the ``k`` contacts' most negative slack (its ``d``
    edge rows come first; the limit rows after them are kept as they are)."""
    out = mask.copy()
    if k:
        edges = np.where(mask[:k * d], s[:k * d], np.inf).reshape(k, d)
        best = np.argmin(edges, axis=1)
        out[:k * d] = False
        hit = np.isfinite(edges[np.arange(k), best])
        out[np.arange(k)[hit] * d + best[hit]] = True
    return out


def solve_relaxed_qp(problem, lcp, *, solver="clarabel", tol=1e-12):
    """Solve the relaxed step as the velocity QP above and certify it on ``lcp``.

    Parameters
    ----------
    problem : ContactProblem
    lcp : ContactLCP
        :func:`contact_lcp.contact.lcp_builder.build_relaxed_lcp` of ``problem`` (its edge
        directions are the QP's).
    solver : str
        A backend in :data:`QP_SOLVERS`.
    tol : float
        Tolerance given to the solver (gap and feasibility) [m/s].

    Returns
    -------
    LCPResult
        ``z`` in ``lcp``'s layout, method ``"qp:<solver>"``, ``pivots`` the solver's
        iterations. An answer the certification rejects is finished on its active set
        (:func:`refine_active_set`, method ``"qp:<solver>+refine"``), and if that is not
        certified either, polished by the robust pivot search from the basis
        :func:`polish_basis` reads off the answer (method ``"qp:<solver>+polish"``; on a
        dense copy of ``M``: seconds at n ~ 4000). ``info['attempts']`` then lists what
        ran, e.g. ``('interior_point:uncertified', 'refine:solved')``, which the step
        report's rungs show (``qp:solved(interior_point:uncertified+refine:solved)``).
        ``lcp.M`` may be sparse (certified by
        :func:`contact_lcp.lcp.sparse_residual.certify_sparse`).
    """
    if solver not in QP_SOLVERS:
        raise ValueError(f"solver must be one of {QP_SOLVERS}; received {solver!r}")
    method = f"qp:{solver}"
    rows = qp_rows(problem, lcp.edges)
    found, c, iters = velocity_qp(problem, lcp.edges, solver=solver, tol=tol, rows=rows)
    if not found or not np.all(np.isfinite(c)):
        z = np.zeros(lcp.q.shape[0])
        err, w, _ = _certify(lcp, z)
        return LCPResult(z, w, LCPStatus.NUMERICAL_FAILURE, method, iters, err,
                         {"tol": tol, "reason": "QP solver found no solution"})
    z = lcp_unknowns(problem, lcp, c)
    err, w, tol_lcp = _certify(lcp, z)
    if err <= tol_lcp:
        return LCPResult(z, w, LCPStatus.SOLVED, method, iters, err, {"tol": tol_lcp})
    # Accurate to the solver's tolerance but not to the certification's: solve again on
    # the active set the answer points to (certified like any answer), and if that is not
    # enough, one principal pivot on the set the answer points to (polish_basis; the
    # search goes on from there if that set is wrong; dense: seconds at n ~ 4000).
    # info['attempts'] names each finish tried, as the step report's rungs show them
    ran = ("interior_point:uncertified",)
    for ratio in CLOSED_RATIOS if rows[2].size else ():
        refined = refine_active_set(rows, c, lcp.num_contacts, lcp.num_directions, ratio)
        if refined is None:
            continue
        z_r = lcp_unknowns(problem, lcp, refined)
        err_r, w_r, tol_r = _certify(lcp, z_r)
        if err_r <= tol_r:
            return LCPResult(z_r, w_r, LCPStatus.SOLVED, method + "+refine", iters, err_r,
                             {"tol": tol_r, "qp_error": err, "closed_ratio": ratio,
                              "attempts": ran + ("refine:solved",)})
    if rows[2].size:
        ran += ("refine:failed",)
    if lcp.q.shape[0] > MAX_DENSE_SIZE:
        return LCPResult(z, w, LCPStatus.NUMERICAL_FAILURE, method, iters, err,
                         {"tol": tol_lcp, "reason": f"not certified, and n = {lcp.q.shape[0]} "
                          f"is above MAX_DENSE_SIZE = {MAX_DENSE_SIZE} for the dense polish",
                          "attempts": ran})
    polished = lcp_rung(dense_M(lcp), lcp.q, "robust", {"initial_basis": polish_basis(lcp, z)})
    info = dict(polished.info, qp_error=err, polished=True,
                polish_attempts=polished.info.get("attempts", ()),
                attempts=ran + (f"polish:{polished.status.name.lower()}",))
    return LCPResult(polished.z, polished.w, polished.status, method + "+polish",
                     iters + polished.pivots, polished.error, info)


def polish_basis(lcp, z):
    """The polish's first basis from an answer ``z`` in ``lcp``'s layout: the positive
    normal and limit impulses and ``lam``, and at each contact the positive ones of the
    two adjacent edges that carry the most.

    A contact's friction impulse lies in one face of its pyramid, spanned by two
    adjacent edges; an interior point spreads it over all ``d``, and those columns make
    the warm block singular many times over, whose reduction (a pivoted QR of the
    block) then costs more than the pivoting.
    """
    k, nn, d = lcp.num_contacts, lcp.num_normals, lcp.num_directions
    lam0 = nn + k * d
    positive = z > 1e-9 * max(float(z.max(initial=0.0)), 1e-300)
    parts = [np.flatnonzero(positive[:nn]), lam0 + np.flatnonzero(positive[lam0:])]
    if k and d:
        b = z[nn:lam0].reshape(k, d)
        first = np.argmax(b + np.roll(b, -1, axis=1), axis=1)  # the face (j, j + 1 mod d)
        for j in (first, (first + 1) % d):
            col = nn + np.arange(k) * d + j
            parts.append(col[positive[col]])
    return np.unique(np.concatenate(parts))


def dense_M(lcp):
    """``lcp.M`` as a dense array (pivoting methods need one)."""
    return lcp.M.toarray() if sparse.issparse(lcp.M) else lcp.M


def _certify(lcp, z):
    """:func:`contact_lcp.lcp.residual.certify` of ``z`` on ``lcp``, dense or sparse."""
    if sparse.issparse(lcp.M):
        return certify_sparse(lcp.M, lcp.q, z)
    return certify(lcp.M, lcp.q, z)


def _clarabel(P, A, b, tol):
    """``min 1/2 x'Px s.t. A x + b >= 0`` by Clarabel: ``(found, multipliers, iterations)``."""
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
    settings.tol_ktratio = 1e-8
    settings.direct_solve_method = CLARABEL_KKT_SOLVER
    cone = [clarabel.NonnegativeConeT(A.shape[0])] if A.shape[0] else []
    sol = clarabel.DefaultSolver(P, np.zeros(P.shape[0]), -A, b, cone, settings).solve()
    found = str(sol.status) in ("Solved", "AlmostSolved")
    return found, np.asarray(sol.z, dtype=float), int(sol.iterations)


_BACKENDS = {"clarabel": _clarabel}
