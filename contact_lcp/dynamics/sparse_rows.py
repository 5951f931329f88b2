"""Sparse contact rows and impulse-to-velocity maps for worlds of many small trees.

A world of ``n`` free bodies (a pour of spheres) has ``nv = 6 n`` velocity coordinates, a
block-diagonal ``K = M^-1`` (one 6 x 6 block per body) and contact rows with at most 12
nonzeros (the two bodies' blocks). Stored dense, a 1000-sphere pour's ``K`` is 288 MB and
its candidates' Jacobian (15 000 rows) 720 MB, and their products cost seconds a step;
stored sparse they are a few MB and milliseconds. :data:`SPARSE_MIN_NV` says from which
size the step keeps them sparse (:class:`contact_lcp.sim.stepper.Stepper`).
"""

import numpy as np
from numba import njit
from scipy import sparse

#: worlds split into several trees (:mod:`contact_lcp.dynamics.groups`) with at least
#: this many velocity coordinates (100 free bodies) keep ``K`` and the contact rows sparse
#: in a step whose model solves islands alone; smaller worlds (a robot, a tower, a few
#: bodies) keep the dense path, whose compiled products are fastest there. Measured
#: (nice 19, under load): the 1000-sphere pour's step at t = 0.37 s spent ~15 s of 80 on
#: its dense arrays; the 200-grain Brazil nut (nv = 605) steps in 79 ms instead of 181.
SPARSE_MIN_NV = 600


def wanted(world, islands):
    """Whether a step of ``world`` keeps its rows sparse: a world split into several
    trees with at least :data:`SPARSE_MIN_NV` velocity coordinates, whose model solves
    islands alone (``islands``); never a world kept whole (loop closures)."""
    return bool(islands and len(world.groups) > 1 and world.model.nv >= SPARSE_MIN_NV)


def support_columns(support):
    """The velocity columns of each joint's support as CSR ``(indptr, columns)`` from the
    boolean ``support`` (njoints, nv) of :class:`contact_lcp.dynamics.World`."""
    rows, cols = np.nonzero(support)
    indptr = np.searchsorted(rows, np.arange(support.shape[0] + 1))
    return indptr.astype(np.int64), cols.astype(np.int64)


@njit(cache=True)
def axis_wrench(frames, points, i, j):
    """Axis ``a`` (column j of contact i's frame) and moment ``p x a`` about the world
    origin of contact i's point ``p``: the row's velocity along ``a`` of a point moved by
    a joint is ``(a, p x a) . J_W[:, col]`` over the joint's support columns."""
    p0, p1, p2 = points[i, 0], points[i, 1], points[i, 2]
    a0, a1, a2 = frames[i, 0, j], frames[i, 1, j], frames[i, 2, j]
    return (a0, a1, a2, p1 * a2 - p2 * a1, p2 * a0 - p0 * a2, p0 * a1 - p1 * a0)


@njit(cache=True)
def wrench_entry(w, J_W, col):
    """Column ``col`` of the world-frame joint Jacobian ``J_W`` (6, nv) dotted with the
    axis wrench ``w`` of :func:`axis_wrench`: one entry of a contact row."""
    return (w[0] * J_W[0, col] + w[1] * J_W[1, col] + w[2] * J_W[2, col]
            + w[3] * J_W[3, col] + w[4] * J_W[4, col] + w[5] * J_W[5, col])


@njit(cache=True)
def _contact_entries(frames, points, joint_b, joint_a, J_W, indptr, columns):
    """``(rows, cols, vals)`` of the contact rows (entries of the two sides listed apart:
    the caller's CSR conversion sums those of a column both sides move)."""
    k = frames.shape[0]
    nnz = 0
    for i in range(k):
        for jt in (joint_b[i], joint_a[i]):
            if jt != 0:
                nnz += 3 * (indptr[jt + 1] - indptr[jt])
    rows = np.empty(nnz, dtype=np.int64)
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.empty(nnz)
    n = 0
    for i in range(k):
        for side in range(2):
            jt = joint_b[i] if side == 0 else joint_a[i]
            if jt == 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            for j in range(3):
                w = axis_wrench(frames, points, i, j)
                for t in range(indptr[jt], indptr[jt + 1]):
                    col = columns[t]
                    rows[n] = 3 * i + j
                    cols[n] = col
                    vals[n] = sign * wrench_entry(w, J_W, col)
                    n += 1
    return rows, cols, vals


def contact_jacobian_csr(world, q, contacts):
    """:meth:`contact_lcp.dynamics.World.contact_jacobian` as a ``scipy.sparse``
    CSR matrix (3k, nv): the same rows, with only the columns each contact's two bodies
    move stored."""
    world.ensure_forward(q)
    k, nv = len(contacts), world.model.nv
    if k == 0:
        return sparse.csr_matrix((0, nv))
    indptr, columns = world.support_columns
    rows, cols, vals = _contact_entries(
        np.ascontiguousarray(contacts.R_WC, dtype=float),
        np.ascontiguousarray(contacts.p_W, dtype=float),
        np.asarray(contacts.joint_b, dtype=np.int64), np.asarray(contacts.joint_a, dtype=np.int64),
        world.joint_jacobians, indptr, columns)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(3 * k, nv))


def block_diagonal_csr(blocks, slices, nv):
    """(nv, nv) CSR matrix with the dense square ``blocks[k]`` at rows and columns
    ``slices[k]`` (a group's velocity range), zero elsewhere (the sparse counterpart of
    :func:`contact_lcp.dynamics.groups.block_diagonal`)."""
    rows, cols, vals = [], [], []
    for B, vs in zip(blocks, slices):
        idx = np.arange(vs.start, vs.stop)
        m = idx.size
        if m == 0:
            continue
        rows.append(np.repeat(idx, m))
        cols.append(np.tile(idx, m))
        vals.append(np.asarray(B, dtype=float).ravel())
    if not rows:
        return sparse.csr_matrix((nv, nv))
    K = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(nv, nv))
    K.eliminate_zeros()  # (a block's structural zeros: the pattern is what couples)
    return K
