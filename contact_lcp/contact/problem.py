"""One step's contact problem: the single value every contact model reads.

Rows (the coordinates of ``J``, ``G`` and ``u``): for each of the ``k`` contacts the three
axes (n, t1, t2) of its frame ``R_WC``, then ``l`` frictionless unilateral rows (joint
limits). After a generalized impulse ``J' f`` the velocity is ``v_free + K J' f`` and the
row velocities are ``u + G f`` [m/s or rad/s].

The stabilization ``bias`` (k + l,) is added to the normal rows: a gap ``phi > 0`` may
close within the step (``phi / h``); a penetration is pushed out at ``gamma * phi / h``,
never faster than ``max_correction_speed`` (Anitescu & Hart's term, bounded so that it
cannot launch a body). A contact whose points' paths curve into each other over the step
also keeps that much more gap (``curvature``; :mod:`contact_lcp.sim.curvature`).
"""

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from numba import njit

from contact_lcp.exceptions import InvalidProblem


#: an argument left out (the field's default)
_DEFAULT = object()


@dataclass(frozen=True, eq=False)
class ContactProblem:
    """Everything a contact model needs for one time step (read-only).

    Attributes
    ----------
    h : float
        Time step [s].
    R_WC : (k, 3, 3) ndarray
        Contact frames, columns (n, t1, t2); n from body A to body B.
    p_W : (k, 3) ndarray
        Contact points in W [m].
    phi : (k + l,) ndarray
        Gaps: contact signed distances [m], then joint-limit gaps [rad or m].
    mu : (k,) ndarray
        Friction coefficients.
    J : (3k + l, nv) ndarray
        Row Jacobian (see the module docstring).
    K : (nv, nv) ndarray
        Symmetric map from generalized impulse to velocity change [1/kg] (``M^-1``, or
        its dynamic block when joints are prescribed).
    G : (3k + l, 3k + l) ndarray
        Delassus matrix ``J K J'`` (Yamane & Nakamura's inverse articulated-body inertia
        at the contacts) [1/kg].
    v : (nv,) ndarray
        Velocity at the start of the step.
    v_free : (nv,) ndarray
        Velocity at the end of the step without contact impulses.
    u : (3k + l,) ndarray
        ``J v_free``.
    bias : (k + l,) ndarray
        Stabilization term of the normal rows [m/s].
    num_limits : int
        ``l``.
    pair : (k,) int ndarray
        A key per contact that is equal for contacts of the same surface pair (models
        that carry state across steps match contacts by it).
    extras : Mapping
        Model-specific data a model asked the step for (see
        :attr:`~contact_lcp.contact.base.ContactModel.wants`), e.g. facet sets (not in
        :meth:`arrays`; :func:`contact_lcp.sim.recording.save_problems` records them).

    A step of a large world of free bodies stores ``J``, ``K`` and ``G`` as
    ``scipy.sparse`` CSR matrices (:mod:`contact_lcp.contact.sparse_problem`); such a
    problem is solved island by island, and each model receives its islands dense unless
    it declares that it takes them sparse
    (:meth:`~contact_lcp.contact.base.ContactModel.takes_sparse`).
    """

    h: float
    R_WC: np.ndarray
    p_W: np.ndarray
    phi: np.ndarray
    mu: np.ndarray
    J: np.ndarray
    K: np.ndarray
    G: np.ndarray
    v: np.ndarray
    v_free: np.ndarray
    u: np.ndarray
    bias: np.ndarray
    num_limits: int = 0
    pair: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    extras: Mapping = field(default_factory=dict)

    def __init__(self, h, R_WC, p_W, phi, mu, J, K, G, v, v_free, u, bias, num_limits=0,
                 pair=_DEFAULT, extras=_DEFAULT):
        # the fields in one update of the instance's dict (dataclass keeps a class's own
        # __init__): the one it generates for a frozen class calls object.__setattr__
        # once per field, and every step makes a problem
        self.__dict__.update(
            h=h, R_WC=R_WC, p_W=p_W, phi=phi, mu=mu, J=J, K=K, G=G, v=v, v_free=v_free,
            u=u, bias=bias, num_limits=num_limits,
            pair=np.zeros(0, dtype=np.int64) if pair is _DEFAULT else pair,
            extras={} if extras is _DEFAULT else extras)

    @property
    def num_contacts(self) -> int:
        """``k``."""
        return int(self.mu.shape[0])

    @property
    def num_rows(self) -> int:
        """``3k + l``."""
        return int(self.u.shape[0])

    @property
    def normal_rows(self) -> np.ndarray:
        """(k + l,) row indices of the normals, then of the unilateral rows."""
        k = self.num_contacts
        return np.concatenate([np.arange(0, 3 * k, 3), np.arange(3 * k, self.num_rows)])

    def arrays(self) -> dict:
        """The problem as a dict of arrays (for ``np.savez``; sparse ``J``, ``K``, ``G``
        written dense); see :meth:`from_arrays`."""
        return {name: _dense(getattr(self, name)) for name in _FIELDS}

    @staticmethod
    def from_arrays(data) -> "ContactProblem":
        """A problem from :meth:`arrays` output (or an ``np.load`` of it)."""
        values = {name: np.asarray(data[name]) for name in _FIELDS}
        values["h"] = float(values["h"])
        values["num_limits"] = int(values["num_limits"])
        return ContactProblem(**values)


def _dense(x):
    """``x`` as an ndarray (a ``scipy.sparse`` matrix expanded)."""
    return x.toarray() if hasattr(x, "toarray") else np.asarray(x)


_FIELDS = ("h", "R_WC", "p_W", "phi", "mu", "J", "K", "G", "v", "v_free", "u", "bias",
           "num_limits", "pair")


@njit(cache=True)
def active_contacts(J_c, v_free, v_next, distance, h, activation):
    """Contacts whose gap, or gap after the free motion or after ``v_next`` (normal row
    ``3i`` of ``J_c`` times the velocity), is within ``activation`` [m]: (a,) increasing
    indices (the contacts a step's problem holds)."""
    out = np.empty(distance.shape[0], dtype=np.int64)
    n = 0
    for i in range(distance.shape[0]):
        u_free = 0.0
        u_next = 0.0
        for c in range(v_free.shape[0]):
            u_free += J_c[3 * i, c] * v_free[c]
            u_next += J_c[3 * i, c] * v_next[c]
        if distance[i] + h * min(0.0, u_free, u_next) <= activation:
            out[n] = i
            n += 1
    return out[:n]


def stabilization_bias(phi, h, gamma, max_correction_speed):
    """Normal-row bias [m/s]: ``phi / h`` for a gap, ``gamma phi / h`` for a penetration,
    the latter no faster than ``max_correction_speed`` [m/s] (None: unbounded)."""
    phi = np.asarray(phi, dtype=float)
    bias = np.where(phi >= 0.0, phi, gamma * phi) / h
    if max_correction_speed is not None:
        bias = np.maximum(bias, -float(max_correction_speed))
    return bias


@njit(cache=True)
def _rows_and_bias(J, K, v_free, phi, h, gamma, max_correction_speed):
    """``(finite, G, u, bias)`` of :func:`build_problem` in one compiled pass.

    ``K`` couples only the coordinates of one mechanism: it is block diagonal over the
    world's trees (each free body, each robot), and a contact row of ``J`` is nonzero only
    on the coordinates that move its two bodies. With two blocks or more (a stack, a
    pile, objects in a gripper) ``G`` is summed block by block
    (:func:`_blockwise_products`). With one (a robot alone, a body alone): sparse
    products when ``J`` is at most a quarter full, else dense BLAS products on the
    coordinates some row moves. ``G`` is symmetric: the block sums fill its upper
    triangle and mirror it, the one-block paths symmetrise it as ``(G + G') / 2``.
    """
    m, nv = J.shape
    finite = np.all(np.isfinite(J)) and np.all(np.isfinite(phi))
    bias = np.empty(phi.shape[0])
    for i in range(phi.shape[0]):
        b = phi[i] / h if phi[i] >= 0.0 else gamma * phi[i] / h
        bias[i] = max(b, -max_correction_speed)
    nnz, used = -1, np.zeros(nv, dtype=np.bool_)
    blocks = diagonal_blocks(K)
    if blocks.shape[0] > 2:
        done, G, u, nnz = _blockwise_products(J, K, v_free, blocks, used)
        if done:
            return finite, G, u, bias
    if nnz < 0:  # (else the blocks' pass counted them)
        nnz = _nonzeros(J, np.full(nv, -1, dtype=np.int64), used, np.zeros(0, dtype=np.int64),
                        np.empty((0, 0), dtype=np.int64))
    if 4 * nnz > m * nv:  # a robot's rows fill half of its coordinates: dense BLAS
        # on the coordinates some row moves (a robot's feet: its base and legs, not its
        # arms and head: 18 of Talos's 38)
        idx = np.flatnonzero(used)
        if idx.shape[0] < nv:
            Jc = np.ascontiguousarray(J[:, idx])
            Kc = np.ascontiguousarray(K[idx][:, idx])
            G = (Jc @ Kc) @ Jc.T
            _symmetrize(G)
            return finite, G, Jc @ v_free[idx], bias
        G = (J @ K) @ J.T
        _symmetrize(G)
        return finite, G, J @ v_free, bias
    # nonzeros of K by row (K symmetric: also by column)
    kcols = np.empty((nv, nv), dtype=np.int64)
    kcount = np.zeros(nv, dtype=np.int64)
    for c in range(nv):
        for j in range(nv):
            if K[c, j] != 0.0:
                kcols[c, kcount[c]] = j
                kcount[c] += 1
    # nonzeros of J by row and by column; u = J v_free
    cols = np.empty((m, nv), dtype=np.int64)
    count = np.zeros(m, dtype=np.int64)
    rows_of = np.empty((nv, m), dtype=np.int64)
    rcount = np.zeros(nv, dtype=np.int64)
    u = np.zeros(m)
    for r in range(m):
        for c in range(nv):
            if J[r, c] != 0.0:
                cols[r, count[r]] = c
                count[r] += 1
                rows_of[c, rcount[c]] = r
                rcount[c] += 1
                u[r] += J[r, c] * v_free[c]
    JK = np.zeros((m, nv))
    mark = np.zeros(nv, dtype=np.int64)  # row stamp: columns of JK[r] already listed
    jk_cols = np.empty(nv, dtype=np.int64)
    G = np.zeros((m, m))
    for r in range(m):
        n_jk = 0
        for t in range(count[r]):
            c = cols[r, t]
            a = J[r, c]
            for q in range(kcount[c]):
                j = kcols[c, q]
                JK[r, j] += a * K[c, j]
                if mark[j] != r + 1:
                    mark[j] = r + 1
                    jk_cols[n_jk] = j
                    n_jk += 1
        for t in range(n_jk):
            j = jk_cols[t]
            x = JK[r, j]
            for q in range(rcount[j]):
                s_ = rows_of[j, q]
                G[r, s_] += x * J[s_, j]
    _symmetrize(G)
    return finite, G, u, bias


@njit(cache=True)
def diagonal_blocks(K):
    """(b + 1,) int64: the starts of the ``b`` diagonal blocks of the square ``K``, then its
    size: ``K[i, j] == 0`` (exactly) whenever ``i`` and ``j`` are in different blocks, and
    no block splits further. A robot's ``M^-1`` is one block (its first row reaches its
    last column: one pass down the diagonal), a world of free bodies one block a body.
    A NaN counts as an entry."""
    n = K.shape[0]
    starts = np.empty(n + 1, dtype=np.int64)
    count = 0
    reach = -1  # the last column the block being read is known to touch
    for i in range(n):
        if i > reach:
            starts[count] = i
            count += 1
            reach = i
        j = n - 1
        while j > reach:
            if K[i, j] != 0.0 or K[j, i] != 0.0:
                reach = j
                break
            j -= 1
    starts[count] = n
    return starts[:count + 1]


@njit(cache=True)
def _blockwise_products(J, K, v_free, blocks, used):
    """``(done, G, u, nnz)``: ``G = J K J'`` and ``u = J v_free`` for ``K`` block diagonal over
    ``blocks`` (:func:`diagonal_blocks`), each block adding ``J_b K_b J_b'`` (BLAS) on the
    rows that touch it, ``J_b`` their columns of the block that some row moves. A box in
    a tower is touched by the rows of its eight contacts: 24 rows by 6 columns instead
    of the tower's 60 by 30. Consecutive blocks are taken together up to
    :data:`MIN_BLOCK` columns (a sphere's diagonal ``M^-1`` is six blocks of one), and
    those whose ``K`` is zero (prescribed joints) are left out. Each entry of ``G`` sums
    its blocks in order into the upper triangle, which is then mirrored. ``done`` False
    (``G`` empty) when fewer than two blocks remain, or their products would not take
    less than half the multiply-adds of one product over every column some row moves:
    the caller's one-block paths then. ``used`` (nv,) all False on entry: the columns some
    row moves, filled with ``nnz`` (the nonzeros of ``J``) once the blocks' pass has read
    ``J`` (else ``nnz`` is -1), so that those paths need not read it again."""
    m, nv = J.shape
    nb = blocks.shape[0] - 1
    start = np.empty(nb, dtype=np.int64)
    stop = np.empty(nb, dtype=np.int64)
    ng = 0
    b = 0
    while b < nb:
        a, e = blocks[b], blocks[b + 1]
        b += 1
        while b < nb and blocks[b + 1] - a <= MIN_BLOCK:
            e = blocks[b + 1]
            b += 1
        if _any_entry(K, a, e):
            start[ng], stop[ng] = a, e
            ng += 1
    if ng < 2:
        return False, np.empty((0, 0)), np.empty(0), -1
    # the rows that touch each group and the columns some row moves (a world whose
    # blocks do not pay leaves after this pass)
    group = np.full(nv, -1, dtype=np.int64)
    for g in range(ng):
        group[start[g]:stop[g]] = g
    height = np.zeros(ng, dtype=np.int64)
    rows = np.empty((ng, m), dtype=np.int64)
    nnz = _nonzeros(J, group, used, height, rows)
    moved = 0
    width = np.zeros(ng, dtype=np.int64)
    for c in range(nv):
        if used[c]:
            moved += 1
            if group[c] >= 0:
                width[group[c]] += 1
    cost = 0
    for g in range(ng):
        if height[g]:
            cost += height[g] * width[g] * (width[g] + height[g]) + BLOCK_OVERHEAD
    if 2 * cost >= m * moved * (moved + m):
        return False, np.empty((0, 0)), np.empty(0), nnz
    u = np.zeros(m)
    for r in range(m):
        acc = 0.0
        for c in range(nv):
            x = J[r, c]
            if x != 0.0:
                acc += x * v_free[c]
        u[r] = acc
    cols = np.empty((ng, nv), dtype=np.int64)
    for g in range(ng):
        w = 0
        for c in range(start[g], stop[g]):
            if used[c]:
                cols[g, w] = c
                w += 1
    G = np.zeros((m, m))
    for g in range(ng):
        n, w = height[g], width[g]
        if n == 0:
            continue
        Jb = np.empty((n, w))
        for i in range(n):
            for t in range(w):
                Jb[i, t] = J[rows[g, i], cols[g, t]]
        Kb = np.empty((w, w))
        for i in range(w):
            for t in range(w):
                Kb[i, t] = K[cols[g, i], cols[g, t]]
        Gb = (Jb @ Kb) @ Jb.T
        for i in range(n):
            ri = rows[g, i]
            for k in range(i, n):
                G[ri, rows[g, k]] += Gb[i, k]
    for r in range(m):
        for s_ in range(r):
            G[r, s_] = G[s_, r]
    return True, G, u, nnz


@njit(cache=True)
def _nonzeros(J, group, used, height, rows):
    """The nonzeros of ``J``; ``used`` (nv,) marks the columns that hold one, and
    ``height[g]`` counts the rows with one in a column of group ``g``, which
    ``rows[g, :height[g]]`` lists in order (``group`` (nv,): each column's group, -1 for
    none; ``height`` (groups,), zero on entry; ``rows`` (groups, m), or (0, 0) with no
    group)."""
    last = np.full(height.shape[0], -1, dtype=np.int64)  # the last row counted in each group
    nnz = 0
    for r in range(J.shape[0]):
        for c in range(J.shape[1]):
            if J[r, c] != 0.0:
                nnz += 1
                used[c] = True
                g = group[c]
                if g >= 0 and last[g] != r:
                    last[g] = r
                    rows[g, height[g]] = r
                    height[g] += 1
    return nnz


@njit(cache=True)
def _any_entry(K, a, e):
    """Whether the diagonal block ``K[a:e, a:e]`` holds an entry that is not zero."""
    for i in range(a, e):
        for j in range(a, e):
            if K[i, j] != 0.0:
                return True
    return False


#: blocks of ``K`` are multiplied together up to this many columns (a free body's six)
MIN_BLOCK = 6
#: multiply-adds a block's gathers and BLAS calls count as (:func:`_blockwise_products`)
BLOCK_OVERHEAD = 6000


#: tile size of :func:`_symmetrize` (two 32 x 32 tiles of doubles stay in L1)
_TILE = 32


@njit(cache=True)
def _symmetrize(G):
    """``G <- (G + G') / 2`` in place, tile by tile (the transposed reads and writes of a
    plain loop miss the cache: 26 -> 13 us for m = 192)."""
    m = G.shape[0]
    for bi in range(0, m, _TILE):
        for bj in range(bi, m, _TILE):
            for r in range(bi, min(bi + _TILE, m)):
                for s_ in range(max(bj, r + 1), min(bj + _TILE, m)):
                    g = 0.5 * (G[r, s_] + G[s_, r])
                    G[r, s_] = g
                    G[s_, r] = g


@njit(cache=True)
def assemble(J_found, active, distance, body_a, body_b, num_geometries, limit_v, limit_sign,
             limit_gap, K, v_free, h, gamma, max_correction_speed):
    """A step's problem arrays in one compiled pass: the rows of the ``active`` contacts
    (indices into the contacts found, whose rows are ``J_found`` (3f, nv)), then one
    unilateral row per joint limit (``limit_v`` velocity index, ``limit_sign`` +1 lower,
    -1 upper, ``limit_gap``), and :func:`build_problem`'s ``G``, ``u`` and bias of them.

    Returns ``(finite, J, phi, G, u, bias, pair)``: ``pair`` (k,) the surface-pair keys
    ``body_a * num_geometries + body_b`` of the active contacts; ``finite`` False when
    a row or gap holds NaN or inf.
    """
    k, l, nv = active.shape[0], limit_v.shape[0], J_found.shape[1]
    J = np.zeros((3 * k + l, nv))
    phi = np.empty(k + l)
    pair = np.empty(k, dtype=np.int64)
    for i in range(k):
        c = active[i]
        for r in range(3):
            for j in range(nv):
                J[3 * i + r, j] = J_found[3 * c + r, j]
        phi[i] = distance[c]
        pair[i] = body_a[c] * num_geometries + body_b[c]
    for j in range(l):
        J[3 * k + j, limit_v[j]] = limit_sign[j]
        phi[k + j] = limit_gap[j]
    finite, G, u, bias = _rows_and_bias(J, K, v_free, phi, h, gamma, max_correction_speed)
    return finite, J, phi, G, u, bias, pair


def build_problem(h, R_WC, p_W, distance, mu, J, K, v, v_free, *, limit_gap=None,
                  gamma=1.0, max_correction_speed=None, pair=None, extras=None,
                  curvature=None):
    """Assemble a :class:`ContactProblem` (``G = J K J'``, ``u = J v_free``, the bias).

    Parameters
    ----------
    h : float
        Time step [s] (> 0).
    R_WC, p_W, distance, mu
        Per contact, as in :class:`ContactProblem` (``distance`` (k,) [m]).
    J : (3k + l, nv) ndarray
        Contact rows then ``l`` unilateral rows.
    K : (nv, nv) ndarray
    v, v_free : (nv,) ndarray
    limit_gap : (l,) ndarray, optional
        Gaps of the unilateral rows.
    gamma : float
        Stabilization gain in [0, 1].
    max_correction_speed : float or None
        Cap on the push-out speed of a penetration [m/s].
    pair : (k,) int ndarray, optional
        Surface-pair key per contact.
    extras : Mapping, optional
        Model-specific data (see :class:`ContactProblem`).
    curvature : (k,) ndarray, optional
        Each contact's curvature defect over the step [m]
        (:func:`contact_lcp.sim.curvature.curvature_defects`); its negative part (paths
        that curve into each other) is added to the gap the normal row keeps, beyond the
        stabilization and its cap.
    """
    k = int(np.shape(mu)[0])
    limit_gap = np.zeros(0) if limit_gap is None else np.asarray(limit_gap, dtype=float)
    l = limit_gap.shape[0]
    J = np.asarray(J, dtype=float)
    if J.shape[0] != 3 * k + l:
        raise InvalidProblem(f"J must have {3 * k + l} rows for {k} contacts and {l} "
                             f"unilateral rows; received shape {J.shape}")
    phi = np.concatenate([np.asarray(distance, dtype=float), limit_gap]) if l else \
        np.asarray(distance, dtype=float)
    finite, G, u, bias = _rows_and_bias(
        np.ascontiguousarray(J), np.ascontiguousarray(K, dtype=float),
        np.asarray(v_free, dtype=float), phi, float(h), float(gamma),
        np.inf if max_correction_speed is None else float(max_correction_speed))
    pair = np.zeros(k, dtype=np.int64) if pair is None else np.asarray(pair, dtype=np.int64)
    return problem_from_rows(float(h), np.asarray(R_WC, dtype=float),
                             np.asarray(p_W, dtype=float), np.asarray(mu, dtype=float), J, K, v,
                             v_free, (finite, phi, G, u, bias), l, pair, dict(extras or {}),
                             curvature)


def problem_from_rows(h, R_WC, p_W, mu, J, K, v, v_free, rows, l, pair, extras, curvature):
    """The :class:`ContactProblem` of rows ``J`` whose ``rows = (finite, phi, G, u, bias)``
    :func:`_rows_and_bias` or :func:`assemble` computed (arguments as
    :func:`build_problem`'s, as arrays): InvalidProblem when they hold NaN or inf; the
    negative part of ``curvature`` (k,) [m] (or None) added to the contacts' bias."""
    finite, phi, G, u, bias = rows
    if not finite:
        raise InvalidProblem("contact Jacobian and gaps must be finite; they contain NaN or inf")
    if curvature is not None:
        k = mu.shape[0]
        bias[:k] += np.minimum(np.asarray(curvature, dtype=float), 0.0) / h
    return ContactProblem(h, R_WC, p_W, phi, mu, J, K, G, v, v_free, u, bias, l, pair, extras)
