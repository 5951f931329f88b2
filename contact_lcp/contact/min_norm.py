"""Minimum-norm impulses: one answer among the many of redundant contact (S2).

On redundant contact (a box on four coplanar corners, a frame on n legs, a sole of eight
points) the contact LCP has a whole set of solutions: the velocities after the step are
the same for all of them, the impulses are not (Enzenhöfer, Teichmann & Kövecses), and a
pivoting method returns whichever vertex of that set its path reached, which depends on
the order of the contacts and on the last step's basis. With
``contact.force_distribution: min_norm`` the pyramid model (and the frictionless one:
the same face without edges) applies instead, among the LCP solutions on the
complementarity face of its certified answer ``f*`` with the same velocities, the one
of least Euclidean norm ``||f||``. Its kinetic norm
``f' G f = ||J' f||^2_K`` is the same for every such ``f`` (``G`` is positive
semi-definite, so ``G (f - f*) = 0`` exactly when ``J' (f - f*) = 0``: the same
velocities); the Euclidean norm is the one that then distributes the load evenly and
does not depend on the contacts' order.

The face, on the contacts that carry load or touch (``w_n`` within a generous bound,
the contacts a dropped-contact search left out included), in the frictional LCP's
unknowns ``z = [a; b; lam]`` of :mod:`contact_lcp.contact.lcp_builder` with the pyramids
of the answer (``edge_angle``):

* ``lam`` stays at the sliding speeds of ``f*`` (``max(0, -min_e c_e . v_t)``);
* a normal or edge row whose ``w`` is positive (beyond its certification tolerance,
  :func:`contact_lcp.lcp.residual.row_tolerances`; the compiled face,
  :mod:`~contact_lcp.contact.min_norm_kernel`, closes a joint-limit row without impulse
  already beyond round-off: a joint moving off its stop) keeps ``z = 0``; the others
  (``w = 0``, degenerate rows included: they stay complementary with ``w = 0``) take any
  ``z >= 0``;
* a sliding contact (``lam > 0``) stays on its cone's boundary, ``mu a = sum b``; the
  others keep ``mu a - sum b >= 0``;
* ``K J' (f - f*) = 0``: the velocities do not change, so every ``w`` above stays.

Every point of that set solves the LCP. Its equalities are rank-deficient by
construction (four corners, six velocity coordinates), so they enter as the orthonormal
rows ``V`` of their row space (an SVD), ``V x = V x*``; the least-norm point is a QP in
the impulses ``x`` with the sign constraints as its only inequalities, solved by
Clarabel (an interior-point method: no assumption on which inequalities end active),
then polished on the active set Clarabel found by an exact equality-constrained
least-squares solve (so that two orderings of the same contacts agree to round-off, not
to the QP's tolerance) and put back exactly on the equalities. The answer is certified
again as a solution of the face's LCP with the project's residual test (a face whose
rows are all plainly open or closed, by its velocities and pyramids instead:
:mod:`~contact_lcp.contact.min_norm_kernel`), and its velocity change checked (the contacts left out of the face separate faster than the
touch bound, far above that change, so they stay solved); if either fails, the pivoting
answer stays (the solution's ``distribution`` says what happened).

The forces are computed when first read (:class:`~contact_lcp.contact.report.ContactSolution`),
as MuJoCo's and Drake's contact forces are: the step applies the pivoting answer, whose
velocities they share, so a step whose forces nobody reads (a benchmark, a sweep
recording only the state) does not pay for them, and the motion is the same whether
they are read or not.

The pivoting answer's basis and friction directions remain the step's warm start: the
min-norm point is an interior point of the face, its basis singular (four coplanar
corners), so the next step's search starts from the vertex, as with ``any``.
"""

import numpy as np

from contact_lcp.contact.lcp_builder import build_contact_lcp, build_frictionless_lcp
from contact_lcp.contact.min_norm_kernel import (APPLIED, OPEN_FACTOR, UNIQUE, edge_split,
                                                face_contacts, face_velocities,
                                                least_norm_face)
from contact_lcp.contact.report import ContactSolution, Outcome
from contact_lcp.lcp.residual import certify, row_tolerances

#: ``contact.force_distribution`` values: ``any`` applies the certified pivoting answer as
#: it comes; ``min_norm`` the least-norm LCP solution on its face (module notes)
FORCE_DISTRIBUTIONS = ("any", "min_norm")
#: contacts (loaded or touching) above which the pivoting answer is applied as it comes:
#: the dense SVD of the equalities costs O(n^3) (a pile's hundreds of contacts)
MAX_CONTACTS = 128
#: a contact whose normal velocity is at most this (relative to ``1 + ||u||_inf``) joins
#: the face's contacts; the rows' own tolerances then decide which rows are open
TOUCH_FACTOR = 1e-6
#: tie-break weight of ``||x||^2`` (all impulses, edges included) beside ``||f||^2``: the
#: edge impulses of one friction impulse are otherwise not unique
TIE_BREAK = 1e-9
#: Clarabel's tolerances (gap and feasibility), on the problem scaled to ``max|x*| = 1``
QP_TOL = 1e-10
#: a variable (scaled) at most this is taken as active by the polish
ACTIVE_TOL = 1e-7
#: the velocity change ``||K J' (f - f*)||_inf`` accepted, times ``max(1, ||v_free||_inf)``
#: [m/s or rad/s]: the answer is put on the velocity equalities to round-off (~1e-15)
VELOCITY_TOL = 1e-11


def redistributed(problem, solution, model, num_directions, edge_angle=None):
    """``solution`` whose forces (``f``, computed when first read) are the minimum-norm
    impulse of its face (module notes) when it is a certified answer of the ``model``
    (name) itself, on pyramids of ``num_directions`` edges turned by ``edge_angle`` (0
    edges: the frictionless LCP), and the redistribution certifies; its
    ``distribution`` says what was done (``min_norm``, ``unique``, ``skipped: ...``,
    ``rejected: ...``). The step applies the pivoting answer (``solved``: the same
    velocities), and the guess stays that answer's."""
    r = solution.report
    if r.outcome is not Outcome.SOLVED or r.applied != model or problem.num_rows == 0:
        return solution
    angle = None if edge_angle is None else np.array(edge_angle, dtype=float)
    return ContactSolution(solution.solved, r, solution.generalized, solution.guess,
                           distribution(problem, num_directions, angle))


def distribution(problem, num_directions, edge_angle=None):
    """The ``distribute`` of a :class:`ContactSolution` of ``problem`` (the minimum-norm
    impulse of its face, :func:`redistributed`), for a model that builds its certified
    answer with it at once; ``edge_angle`` is kept as given (not copied)."""

    def distribute(f):
        return min_norm_impulse(problem, f, num_directions, edge_angle)

    return distribute


def min_norm_impulse(problem, f, num_directions, edge_angle=None, *, compiled=True):
    """The least-norm impulse with the velocities of ``f`` on its complementarity face.

    Parameters
    ----------
    problem : ContactProblem
    f : (3k + l,) ndarray
        A certified impulse of the pyramid (or, ``d = 0``, the frictionless) model [N.s].
    num_directions : int
        ``d``, edges of each pyramid (0: the frictionless LCP, normal impulses only).
    edge_angle : (k,) ndarray or None
        First-edge angle of each contact's pyramid [rad] (None: the contact frames').
    compiled : bool
        False: the face's QP decides even a face that the compiled path would (a model's
        warm-up loads that path's code: :meth:`ContactModel.warm_up`).

    Returns
    -------
    f : (3k + l,) ndarray
        The minimum-norm impulse, or the given one (see ``note``).
    note : str
        ``"min_norm"`` (applied), ``"unique"`` (the face holds one impulse), or
        ``"skipped: <why>"`` / ``"rejected: <why>"`` (the given impulse is returned).
    """
    k, l, d = problem.num_contacts, problem.num_limits, num_directions
    f = np.asarray(f, dtype=float)
    if isinstance(problem.G, np.ndarray):
        S, vel, vel_tol = face_velocities(f, problem.G, problem.u, problem.bias,
                                          problem.v_free, k, TOUCH_FACTOR, VELOCITY_TOL)
    else:
        vel = problem.u + problem.G @ f
        S, vel_tol = face_contacts(f, vel, problem.u, problem.bias, problem.v_free, k,
                                   TOUCH_FACTOR, VELOCITY_TOL)
    if S.size + l == 0:
        return f, "unique"
    if S.size > MAX_CONTACTS:
        return f, f"skipped: {S.size} contacts > {MAX_CONTACTS}"
    if compiled and isinstance(problem.G, np.ndarray):  # the common case (module notes)
        code, out = least_norm_face(
            problem.G, problem.u, problem.bias, problem.J, problem.K, problem.mu, f, vel,
            S, l, d,
            np.zeros(k) if edge_angle is None else np.asarray(edge_angle, dtype=float),
            vel_tol, OPEN_FACTOR)
        if code == APPLIED:
            return out, "min_norm"
        if code == UNIQUE:
            return f, "unique"
    face = _Face(problem, f, S, d, edge_angle)
    slight = (f[3 * S] == 0.0) & (vel[3 * S] + problem.bias[S] < 0.0)  # (w_n of S)
    if not face.certified and slight.any():
        # an unloaded contact approaching by a hair (1e-14 m/s), left out of the model's
        # LCP and accepted within that LCP's tolerance, fails its own row's test here:
        # it stays out of the face (it keeps no impulse, and its velocity)
        face = _Face(problem, f, S[~slight], d, edge_angle)
    if not face.certified:
        return f, "skipped: the answer does not certify on the face's LCP"
    V, free = face.equalities()
    if free == 0:
        return f, "unique"
    x = face.least_norm(V)
    if x is None:
        return f, "rejected: the QP found no solution"
    f_S = face.F @ x
    dv = problem.K @ (face.J_S.T @ (f_S - f[face.rows]))
    if not np.all(np.isfinite(dv)) or np.max(np.abs(dv)) > vel_tol:
        return f, "rejected: velocity change"
    if not face.certifies(x):
        return f, "rejected: not certified"
    out = np.zeros_like(f)
    out[face.rows] = f_S
    return out, "min_norm"


class _Face:
    """The face of :func:`min_norm_impulse` on contacts ``S`` (and every limit row)."""

    def __init__(self, problem, f, S, d, edge_angle):
        k, l, s = problem.num_contacts, problem.num_limits, S.size
        self.rows = np.concatenate([(3 * S[:, None] + np.arange(3)).ravel(),
                                    3 * k + np.arange(l)]).astype(np.int64)
        normals = np.concatenate([S, k + np.arange(l)]).astype(np.int64)
        G_S, u_S, bias = problem.G[np.ix_(self.rows, self.rows)], problem.u[self.rows], \
            problem.bias[normals]
        if d:
            self.lcp = lcp = build_contact_lcp(
                G_S, u_S, problem.mu[S], num_directions=d, num_unilateral=l,
                normal_bias=bias, edge_angle=None if edge_angle is None else
                np.asarray(edge_angle)[S])
            cos, sin = lcp.edges
        else:
            self.lcp = lcp = build_frictionless_lcp(G_S, u_S, num_contacts=s,
                                                    num_unilateral=l, normal_bias=bias)
            cos = sin = np.zeros((s, 0))
        self.J_S, self.K, self.mu = problem.J[self.rows], problem.K, problem.mu[S]
        f_S = f[self.rows]
        vel = problem.u[self.rows] + problem.G[np.ix_(self.rows, self.rows)] @ f_S
        slip = cos * vel[1:3 * s:3, None] + sin * vel[2:3 * s:3, None]  # (s, d)
        lam = np.maximum(0.0, -slip.min(axis=1, initial=0.0)) if s and d else np.zeros(0)
        a = np.concatenate([f_S[0:3 * s:3], f_S[3 * s:]])
        b = _edge_split(f_S[1:3 * s:3], f_S[2:3 * s:3], cos, sin, d)
        ns, nb = s + l, s * d
        self.z = np.concatenate([a, b.ravel(), lam])
        err, w, T = certify(lcp.M, lcp.q, self.z)
        tol_w, tol_z = row_tolerances(lcp.M, lcp.q, self.z)
        inside = w[ns + nb:] > tol_w[ns + nb:]
        if err > T and np.any(lam[inside] > 0.0):
            # a slip within the edge rows' tolerance, under friction inside the cone:
            # the LCP's answer has lam = 0 there (its cone row is slack)
            lam = np.where(inside, 0.0, lam)
            self.z = np.concatenate([a, b.ravel(), lam])
            err, w, T = certify(lcp.M, lcp.q, self.z)
            tol_w, tol_z = row_tolerances(lcp.M, lcp.q, self.z)
        self.certified = bool(err <= T)
        open_a = w[:ns] <= tol_w[:ns]
        open_b = (w[ns:ns + nb] <= tol_w[ns:ns + nb]).reshape(s, d) & open_a[:s, None]
        sliding = (lam > tol_z[ns + nb:]) & open_a[:s] if d else np.zeros(s, dtype=bool)
        self.var = np.concatenate([np.flatnonzero(open_a),
                                   ns + np.flatnonzero(open_b.ravel())])
        self.x0 = self.z[self.var]
        # F: x -> f on the face's rows
        F = np.zeros((3 * s + l, ns + nb))
        F[3 * np.arange(s), np.arange(s)] = 1.0
        F[3 * s + np.arange(l), s + np.arange(l)] = 1.0
        cols = ns + np.arange(nb).reshape(s, d)
        F[(3 * np.arange(s) + 1)[:, None], cols] = cos
        F[(3 * np.arange(s) + 2)[:, None], cols] = sin
        self.F = F[:, self.var]
        # cone rows mu a - sum b, on the contacts whose normal is open (none: frictionless)
        R = np.zeros((s, ns + nb))
        R[np.arange(s), np.arange(s)] = self.mu
        R[np.arange(s)[:, None], cols] = -1.0
        R = R[:, self.var] if d else np.zeros((s, self.var.size))
        self.R_eq = R[sliding]
        self.R_in = R[open_a[:s] & ~sliding] if d else R[:0]
        self.lam, self.s, self.ns = lam, s, ns

    def equalities(self):
        """``(V, free)``: orthonormal rows (r, nx) spanning the equalities that keep the
        velocities and the sliding contacts' cone equalities (an SVD of the stacked,
        rank-deficient rows), and ``free = nx - r``, the dimension of the face."""
        A = self.K @ (self.J_S.T @ self.F)
        blocks = [A / max(float(np.max(np.abs(A), initial=0.0)), 1e-300)]
        if self.R_eq.shape[0]:
            blocks.append(self.R_eq / max(float(np.max(np.abs(self.R_eq))), 1e-300))
        C = np.vstack(blocks)
        if C.shape[1] == 0:
            return np.zeros((0, 0)), 0
        _, sv, Vt = np.linalg.svd(C, full_matrices=False)
        # numpy.linalg.matrix_rank's cut: a direction kept free moves the velocities by at
        # most its singular value, ~n eps of the largest
        rank = int(np.sum(sv > max(C.shape) * np.finfo(float).eps * sv[0]))
        return Vt[:rank], C.shape[1] - rank

    def least_norm(self, V):
        """The face's least-norm ``x`` (impulses on ``var``) with ``V x = V x*``, or None.

        Solved in ``x`` itself, scaled to ``max|x*| = 1``: the objective ``F'F`` is
        block-diagonal per contact, so the QP's KKT system stays sparse apart from the
        r dense equality rows."""
        scale = max(float(np.max(np.abs(self.x0), initial=0.0)), 1e-300)
        x0 = self.x0 / scale
        H = self.F.T @ self.F + TIE_BREAK * np.eye(x0.size)
        x = _clarabel(H, V, V @ x0, self.R_in)
        if x is None:
            return None
        return _on_equalities(_polished(H, V, V @ x0, self.R_in, x), V, V @ x0) * scale

    def certifies(self, x):
        """Whether ``x`` (impulses on ``var``), with the sliding speeds ``lam``, solves
        the face's LCP by :func:`contact_lcp.lcp.residual.certify`."""
        z = np.zeros_like(self.z)
        z[self.var] = x
        z[z.shape[0] - self.lam.size:] = self.lam
        err, _, T = certify(self.lcp.M, self.lcp.q, z)
        return bool(err <= T)


def _edge_split(t1, t2, cos, sin, d):
    """(s, d) non-negative edge impulses giving the friction ``(t1, t2)`` (s,) of each
    contact: on the two edges around its direction (any friction inside the pyramid is
    so written; :func:`~contact_lcp.contact.min_norm_kernel.edge_split`)."""
    s = t1.shape[0]
    b = np.zeros((s, d))
    if d:
        for i in range(s):
            edge_split(float(t1[i]), float(t2[i]), cos[i], sin[i], b[i])
    return b


def _clarabel(H, V, e, R):
    """``min x'Hx  s.t.  V x = e, x >= 0, R x >= 0`` by Clarabel: ``x`` or None."""
    import clarabel
    from scipy import sparse

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = QP_TOL
    n = H.shape[0]
    P = sparse.csc_matrix(np.triu(H + H.T))
    A = sparse.csc_matrix(np.vstack([V, -np.eye(n), -R]))  # one conversion: small sizes
    b = np.concatenate([e, np.zeros(n + R.shape[0])])
    cones = [clarabel.ZeroConeT(V.shape[0])] if V.shape[0] else []
    cones.append(clarabel.NonnegativeConeT(n + R.shape[0]))
    sol = clarabel.DefaultSolver(P, np.zeros(n), A, b, cones, settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        return None
    x = np.asarray(sol.x, dtype=float)
    return x if np.all(np.isfinite(x)) else None


def _on_equalities(x, V, e, rounds=3):
    """``x`` moved onto ``V x = e`` (rows of ``V`` orthonormal) and ``x >= 0``: an
    unpolished QP answer is within the QP's tolerance of the equalities, not on them (the
    edge impulses that leave ``f`` unchanged are nearly free, so the polish on their
    active set can leave the bounds); each round projects on the equalities over the
    positive entries and clips what went negative."""
    x = np.maximum(x, 0.0)
    for _ in range(rounds):
        r = V @ x - e
        if not r.size or np.max(np.abs(r)) <= np.finfo(float).eps * max(1.0, np.max(x)):
            break
        pos = x > 0.0
        x[pos] -= np.linalg.lstsq(V[:, pos], r, rcond=None)[0]
        x = np.maximum(x, 0.0)
    return x


def _polished(H, V, e, R, x):
    """``x`` moved to the exact minimiser of ``x'Hx`` with ``V x = e`` and the bounds and
    cone rows active at ``x`` held as equalities (kept only if it stays feasible)."""
    free = x > ACTIVE_TOL
    if not free.any():
        return x
    act = R @ x <= ACTIVE_TOL
    E = np.vstack([V[:, free], R[act][:, free]])
    rhs = np.concatenate([e, np.zeros(int(act.sum()))])
    Hf = H[np.ix_(free, free)]
    if E.shape[0]:
        xp = np.linalg.lstsq(E, rhs, rcond=None)[0]
        if np.max(np.abs(E @ xp - rhs)) > ACTIVE_TOL:
            return x
        _, sv, Vt = np.linalg.svd(E, full_matrices=True)
        rank = int(np.sum(sv > max(E.shape) * np.finfo(float).eps * sv[0] * 100.0))
        Z = Vt[rank:].T
    else:
        xp, Z = np.zeros(int(free.sum())), np.eye(int(free.sum()))
    if Z.shape[1]:
        t = np.linalg.solve(Z.T @ Hf @ Z, -Z.T @ (Hf @ xp))
        xp = xp + Z @ t
    out = np.zeros_like(x)
    out[free] = xp
    if np.all(np.isfinite(out)) and out.min() >= -ACTIVE_TOL * 1e-3 and np.all(
            R @ out >= -ACTIVE_TOL * 1e-3):
        return out
    return x
