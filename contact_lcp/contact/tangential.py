"""Normal-only LCPs for models whose tangential impulse is linear in the tangential velocity.

Drumwright's viscous and no-slip models (S4, sections IV and VI) both make the tangential
impulse ``f_t`` of the touching contacts an affine function of the normal impulse
``f_n``, so that only the normal rows remain complementary. In the problem's row
coordinates (``w = u + G f``, ``G = J K J'``):

* viscous: ``f_t = -h B v_t+`` with ``B = diag(b)`` [N.s/m] and ``v_t+ = u_t + G_tn f_n +
  G_tt f_t``, hence ``W f_t = -(u_t + G_tn f_n)`` with ``W = G_tt + (h B)^-1``;
* no-slip: ``v_t+ = 0`` on an independent subset of the tangential rows (FIND-INDICES),
  hence the same with ``W = G_tt`` restricted to that subset.

Eliminating ``f_t`` leaves the LCP on the normal rows (contacts, then joint limits)::

    A = G_nn - G_nt W^-1 G_tn,   c = u_n + bias - G_nt W^-1 u_t,   w_n = A f_n + c,

a Schur complement of the PSD matrix ``[[G_nn, G_nt], [G_tn, W]]`` (``W`` positive
definite), hence symmetric PSD (S4, eqs. 41 and 56). Written with the generalized inertia
it is ``N K~ N'`` with ``K~ = (K^-1 + h T'BT)^-1`` (viscous: the inertia augmented by
the damping, by the Woodbury identity) or ``K~`` the inertia restricted to ``T v = 0``.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve



@dataclass(frozen=True, eq=False)
class ReducedLCP:
    """The normal-row LCP of a viscous or no-slip step and the map back to impulses.

    Attributes
    ----------
    M : (n, n) ndarray
        ``A`` above, symmetric PSD [1/kg]; ``n = k + l`` normal rows.
    q : (n,) ndarray
        ``c`` above [m/s].
    normal_rows : (n,) int ndarray
        Rows of the problem the unknowns belong to.
    tangent_rows : (t,) int ndarray
        Rows of the problem whose impulse is eliminated.
    solve_W : callable
        ``x -> W^-1 x`` for ``x`` (t,) or (t, p).
    """

    M: np.ndarray
    q: np.ndarray
    normal_rows: np.ndarray
    tangent_rows: np.ndarray
    solve_W: object

    def impulses(self, problem, f_n):
        """Impulses (3k + l,) in the problem's rows [N.s] from normal impulses ``f_n`` (n,)."""
        f = np.zeros(problem.num_rows)
        f[self.normal_rows] = f_n
        t = self.tangent_rows
        if t.size:
            f[t] = -self.solve_W(problem.u[t] + problem.G[np.ix_(t, self.normal_rows)] @ f_n)
        return f


def reduce_to_normal_rows(problem, tangent_rows, W_factor=None, damping=None):
    """Eliminate the impulses of ``tangent_rows``; see the module notes.

    Parameters
    ----------
    problem : contact_lcp.contact.problem.ContactProblem
    tangent_rows : (t,) int ndarray
        Tangential rows whose impulse is eliminated.
    W_factor : object with ``solve(b)``, optional
        A factor of ``G[tangent_rows, tangent_rows]`` (no-slip, from FIND-INDICES).
    damping : (t,) ndarray, optional
        ``1 / (h b)`` per row [s/kg] added to the diagonal of ``G_tt`` (viscous).

    Returns
    -------
    ReducedLCP
    """
    nr = problem.normal_rows
    t = np.asarray(tangent_rows, dtype=np.int64)
    G, u = problem.G, problem.u
    A = G[np.ix_(nr, nr)].copy()
    c = u[nr] + problem.bias
    if t.size == 0:
        return ReducedLCP(A, c, nr, t, lambda x: np.zeros_like(x))
    if W_factor is not None:
        solve_W = W_factor.solve
    else:
        W = G[np.ix_(t, t)] + np.diag(np.asarray(damping, dtype=float))
        factor = cho_factor(W, lower=True, check_finite=False)
        solve_W = lambda x: cho_solve(factor, x, check_finite=False)  # noqa: E731
    G_tn = G[np.ix_(t, nr)]
    X = solve_W(np.column_stack([G_tn, u[t]]))  # W^-1 [G_tn, u_t] in one solve
    A -= G_tn.T @ X[:, :-1]
    A = 0.5 * (A + A.T)
    c = c - G_tn.T @ X[:, -1]
    return ReducedLCP(A, c, nr, t, solve_W)


def tangent_rows_of(contacts):
    """(2c,) rows (t1, t2 of each contact index in ``contacts``), in contact order."""
    contacts = np.asarray(contacts, dtype=np.int64)
    return (3 * contacts[:, None] + np.array([1, 2])).ravel()

