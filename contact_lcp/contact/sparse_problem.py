"""A step's contact problem with sparse rows, for worlds of many small trees.

The stepper keeps ``J``, ``K`` and ``G`` as ``scipy.sparse`` CSR matrices when the world
is large and split into trees (:data:`contact_lcp.dynamics.sparse_rows.SPARSE_MIN_NV`) and
its model solves islands alone: :func:`contact_lcp.contact.islands.solve_islands` then
cuts the problem into islands and hands each model a dense island unless the model takes
a sparse one (:meth:`contact_lcp.contact.base.ContactModel.takes_sparse`: the relaxed
model's QP path). The functions here are :func:`contact_lcp.contact.problem.active_contacts`
and :func:`contact_lcp.contact.problem.assemble` on CSR rows: the same quantities, summed
over stored entries only.
"""

from dataclasses import replace

import numpy as np
from scipy import sparse

from contact_lcp.contact.problem import stabilization_bias


def is_sparse(problem):
    """Whether ``problem``'s ``J``, ``K`` and ``G`` are stored sparse."""
    return sparse.issparse(problem.G)


def densified(problem):
    """``problem`` with dense ``J``, ``K`` and ``G`` (itself when they are)."""
    if not is_sparse(problem):
        return problem
    return replace(problem, J=problem.J.toarray(), K=problem.K.toarray(), G=problem.G.toarray())


def limit_rows(problem):
    """(l, nv) ndarray: the joint-limit rows of ``problem.J`` (dense: guesses keep them)."""
    rows = problem.J[3 * problem.num_contacts:]
    return rows.toarray() if sparse.issparse(rows) else rows


def active_contacts_csr(J_c, v_free, v_next, distance, h, activation):
    """:func:`contact_lcp.contact.problem.active_contacts` of CSR rows ``J_c`` (3f, nv):
    the contacts whose gap, or gap after the free motion or after ``v_next``, is within
    ``activation`` [m] ((a,) increasing indices)."""
    J_n = J_c[0::3]
    closing = np.minimum(0.0, np.minimum(J_n @ v_free, J_n @ v_next))
    return np.flatnonzero(np.asarray(distance) + h * closing <= activation)


def assemble_csr(J_found, active, distance, body_a, body_b, num_geometries, limit_v,
                 limit_sign, limit_gap, K, v_free, h, gamma, max_correction_speed):
    """:func:`contact_lcp.contact.problem.assemble` with CSR ``J_found`` (3f, nv) and ``K``
    (nv, nv): ``(finite, J, phi, G, u, bias, pair)``, ``J`` (3k + l, nv) and ``G = J K J'``
    (symmetrised as ``(G + G') / 2``) CSR."""
    k, l, nv = active.shape[0], limit_v.shape[0], J_found.shape[1]
    rows = (3 * active[:, None] + np.arange(3)).ravel()
    J = J_found[rows]
    if l:
        J_l = sparse.csr_matrix((np.asarray(limit_sign, dtype=float),
                                 (np.arange(l), np.asarray(limit_v))), shape=(l, nv))
        J = sparse.vstack([J, J_l], format="csr")
    phi = np.concatenate([np.asarray(distance, dtype=float)[active],
                          np.asarray(limit_gap, dtype=float)])
    finite = bool(np.all(np.isfinite(J.data)) and np.all(np.isfinite(phi)))
    G = (J @ K @ J.T).tocsr()
    G = ((G + G.T) * 0.5).tocsr()
    u = J @ v_free
    bias = stabilization_bias(phi, h, gamma, max_correction_speed)
    pair = (np.asarray(body_a)[active] * num_geometries
            + np.asarray(body_b)[active]).astype(np.int64)
    return finite, J, phi, G, u, bias, pair
