"""The robust method's best-first search (:mod:`contact_lcp.lcp.robust`) as one compiled kernel.

Only the popped node's basis inverse is formed, by one rank-1 update of its parent's
(O(n^2)). Along a dive the parent is the node just expanded and the pivot happens in
place; on a backtrack the parent is rebuilt by replaying the pivots from its nearest
cached ancestor (or the root) and is then cached, since it is a branch point (bounded
cache, round robin).
"""

import numpy as np
from numba import njit

from contact_lcp.lcp import heap as hp
from contact_lcp.lcp import search_nodes as sn
from contact_lcp.lcp import tableau as tb
from contact_lcp.lcp.residual import TOL_CAP, certification_coefficients

#: the search's statistics, by slot of its int64 array (numba keeps them in one array)
STATS = ("nodes", "queued", "max_queue", "depth", "total_pivots", "replayed",
         "dead_ray", "dead_small_pivot", "dead_revisit", "dead_error")
(NODES, QUEUED, MAX_QUEUE, DEPTH, TOTAL_PIVOTS, REPLAYED,
 DEAD_RAY, DEAD_SMALL_PIVOT, DEAD_REVISIT, DEAD_ERROR) = range(len(STATS))


@njit(cache=True)
def _search(M, MT, q, c, Binv, qbar, basis, where, keys, root_leave, root_depth, eps,
            err_max, pivot_tol, tie_tol, max_nodes, n_slots, dive,
            cost_offset, cold_row, stop):
    """The best-first search; the state arrays hold the root on entry, the end state on
    exit. Returns ``(status, stats)`` with ``stats`` ordered as ``STATS``.

    ``cold_row >= 0`` says that the root is the cold Step 0 in that row
    (:func:`contact_lcp.lcp.search_nodes.cold_root`): it is then rebuilt at the first backtrack instead of copied on
    entry (most searches never backtrack). ``cold_row < 0``: the root is copied.

    Queue entries are nodes (a basis, reached by pivoting row ``prow`` of the parent) or,
    when diving, *sibling groups*: the children of a node other than the one dived into,
    queued under the parent's cost (a lower bound of theirs) and generated when popped.
    ``stop[0]`` set ends the search before the next node (``tableau.STOPPED``).
    """
    n = q.shape[0]
    z0 = 2 * n
    stats = np.zeros(len(STATS), dtype=np.int64)
    cap = 256
    parent = np.empty(cap, dtype=np.int64)
    prow = np.empty(cap, dtype=np.int64)   # the row pivoted (for a group: the dived row)
    leave = np.empty(cap, dtype=np.int64)  # the variable that left; -1 marks a group
    depth = np.empty(cap, dtype=np.int64)
    nhash = np.empty(cap, dtype=np.int64)
    slot_of = np.empty(cap, dtype=np.int64)
    cost = np.empty(cap)
    parent[0], prow[0], leave[0], depth[0] = -1, -1, root_leave, root_depth
    cost[0], slot_of[0], nhash[0] = 0.0, -1, tb.basis_hash(basis, keys)
    # counters passed to kernels start as np.int64, not a literal: numba would also
    # compile each callee for the literal value while it types the loop (docs/architecture.md)
    count = np.int64(1)
    if cold_row < 0:
        root = (Binv.copy(), qbar.copy(), basis.copy(), where.copy())
    else:  # placeholders of the same types until the first backtrack
        root = (np.empty((0, 0)), np.empty(0), np.empty(0, dtype=np.int64),
                np.empty(0, dtype=np.int64))
    cB = np.empty((0, n, n))  # the cache is allocated on the first backtrack
    cq = np.empty((0, n))
    cb = np.empty((0, n), dtype=np.int64)
    cw = np.empty((0, 2 * n + 1), dtype=np.int64)
    slot_node = -np.ones(n_slots, dtype=np.int64)
    next_slot = 0
    table = np.zeros(1024, dtype=np.int64)
    fill = np.zeros(1, dtype=np.int64)
    table, _ = tb.hash_insert(table, fill, nhash[0])
    heap = np.empty(64, dtype=np.int64)
    size = np.int64(0)
    d, qc, work, r_x, ratio = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    rows = np.empty(n, dtype=np.int64)
    cand = np.empty(n, dtype=np.int64)
    kids = np.empty(n, dtype=np.int64)
    path = np.empty(16, dtype=np.int64)
    cert_a, cert_b = certification_coefficients(M, q)
    cur, d_node, nxt = 0, -1, 0
    while nxt >= 0 or size > 0:
        if stats[NODES] >= max_nodes:
            return tb.MAX_PIVOTS, stats
        if stop[0] != 0:
            return tb.STOPPED, stats
        if nxt >= 0:
            x, nxt = nxt, -1
        else:
            x = hp.heap_pop(heap, size, cost, depth)
            size -= 1
        group = leave[x] < 0
        p = parent[x]
        if x != 0 and cur != p:  # backtrack: rebuild the parent, then cache it
            if root[0].shape[0] != n:
                B0, q0, b0, w0, _ = sn.cold_root(q, cold_row)
                root = (B0, q0, b0, w0)
            m, path = sn.restore(p, root, slot_of, parent, prow, leave, MT, c, Binv, qbar,
                               basis, where, d, work, cB, cq, cb, cw, path)
            stats[TOTAL_PIVOTS] += m
            stats[REPLAYED] += m
            if n_slots > 0 and p != 0 and slot_of[p] < 0:  # p is a branch point
                if cB.shape[0] == 0:
                    cB = np.empty((n_slots, n, n))
                    cq = np.empty((n_slots, n))
                    cb = np.empty((n_slots, n), dtype=np.int64)
                    cw = np.empty((n_slots, 2 * n + 1), dtype=np.int64)
                s = next_slot
                next_slot = (next_slot + 1) % n_slots
                if slot_node[s] >= 0:
                    slot_of[slot_node[s]] = -1
                slot_node[s], slot_of[p] = p, s
                sn.copy_state(cB[s], cq[s], cb[s], cw[s], Binv, qbar, basis, where)
            cur, d_node = p, -1
        if group:  # generate the remaining children of p, in its state
            y, skip = p, prow[x]
        else:
            if x != 0:
                e = tb.complement(leave[p], n)
                if d_node != p:
                    tb.entering_column(Binv, MT, c, e, d, where)
                tb.pivot(Binv, qbar, basis, where, d, prow[x], e, work)
                stats[TOTAL_PIVOTS] += 1
                cur, d_node = x, -1
            stats[NODES] += 1
            tb.basic_residual(MT, q, c, basis, qbar, r_x)
            if tb.norm_inf(r_x) > err_max:  # the error test of x, on its pivoted basis
                stats[DEAD_ERROR] += 1
                continue
            y, skip = x, -1
        e = tb.complement(leave[y], n)
        if d_node != y:
            tb.entering_column(Binv, MT, c, e, d, where)
            d_node = y
        # The ratios once; then the rows of min_ratio_row, of the epsilon slack and of
        # lexicographic_row are read off them (the same tests on the same numbers).
        tol = pivot_tol * tb.norm_inf(d)
        t_min, tiny = tb.ratio_test(qbar, d, tol, ratio)
        if t_min == np.inf:
            stats[DEAD_SMALL_PIVOT if tiny else DEAD_RAY] += 1
            continue
        tie = t_min * (1.0 + tb.RATIO_TIE)
        istar = -1
        for i in range(n):
            if ratio[i] <= tie:
                if basis[i] == z0:
                    istar = i
                    break
                if istar < 0:
                    istar = i
        limit = t_min + eps / d[istar]
        lex_limit = tie + tie_tol
        lazy = dive and not group
        m, ties, lex = 0, np.int64(0), -1
        for r in range(n):
            if r != skip and ratio[r] <= limit:
                cand[m] = r
                m += 1
            if lazy and lex < 0 and ratio[r] <= lex_limit:
                if basis[r] == z0:
                    lex = r
                else:
                    rows[ties] = r
                    ties += 1
        if lazy:  # try the lexicographic child alone first
            if lex < 0 and ties > 0:
                lex = tb.lexicographic_narrow(d, Binv, rows, ties, tie_tol)
            lazy = False
            for a in range(m):
                if cand[a] == lex:
                    cand[a], cand[0], lazy = cand[0], lex, True
        while True:
            children, rejected, dive_kid = 0, 0, -1
            for a in range(1 if lazy else m):
                r = cand[a]
                t = qbar[r] / d[r]
                qmin = t
                for i in range(n):
                    v = qbar[i] - d[i] * t
                    if i != r and v < qmin:
                        qmin = v
                if qmin <= -eps:
                    rejected += 1
                    continue
                if basis[r] == z0:  # complementary basis: accept if certifiable
                    for i in range(n):
                        qc[i] = qbar[i] - d[i] * t
                    qc[r] = t
                    basis[r] = e
                    tb.basic_residual(MT, q, c, basis, qc, r_x)
                    znorm = 0.0
                    for i in range(n):
                        if n <= basis[i] < 2 * n:
                            znorm = max(znorm, abs(qc[i]))
                    basis[r] = z0
                    # the candidate within half the global tolerance (half: a margin);
                    # solve() then judges it row by row and repairs a row that only
                    # round-off put on the wrong side (lcp.polish)
                    tol_c = 0.5 * min(cert_a * znorm + cert_b, TOL_CAP)
                    if tb.norm_inf(r_x) <= tol_c and qmin >= -tol_c:
                        tb.pivot(Binv, qbar, basis, where, d, r, e, work)
                        stats[TOTAL_PIVOTS] += 1
                        stats[DEPTH] = depth[y] + 1
                        return tb.SOLVED, stats
                    rejected += 1
                    continue
                h = nhash[y] ^ keys[e] ^ keys[basis[r]]
                table, fresh = tb.hash_insert(table, fill, h if h != 0 else 1)
                if not fresh:
                    continue
                if count + 1 >= parent.shape[0]:
                    parent, prow, leave = hp.grow(parent), hp.grow(prow), hp.grow(leave)
                    depth, nhash = hp.grow(depth), hp.grow(nhash)
                    slot_of, cost = hp.grow(slot_of), hp.grow(cost)
                parent[count], prow[count], leave[count] = y, r, basis[r]
                depth[count], nhash[count], slot_of[count] = depth[y] + 1, h, -1
                cost[count] = cost[y] + np.exp(-qmin) - cost_offset
                kids[children] = count
                if dive_kid < 0 or cost[count] < cost[dive_kid]:
                    dive_kid = count
                count += 1
                children += 1
            stats[QUEUED] += children
            if lazy and children == 1:
                if m > 1:  # the siblings, under y's cost: a lower bound of theirs
                    parent[count], prow[count], leave[count] = y, cand[0], -1
                    depth[count], slot_of[count], cost[count] = depth[y], -1, cost[y]
                    heap = hp.heap_push(heap, size, count, cost, depth)
                    size += 1
                    count += 1
                nxt = kids[0]
                break
            if lazy:  # the lexicographic child was not kept: generate them all
                lazy = False
                continue
            if children == 0 and not group:
                stats[DEAD_ERROR if rejected else DEAD_REVISIT] += 1
            for a in range(children):
                if dive and kids[a] == dive_kid:
                    nxt = dive_kid
                else:
                    heap = hp.heap_push(heap, size, kids[a], cost, depth)
                    size += 1
            break
        stats[MAX_QUEUE] = max(stats[MAX_QUEUE], size)
    if stats[DEAD_ERROR]:
        return tb.ERROR, stats
    if stats[DEAD_SMALL_PIVOT]:
        return tb.NUMERICAL_FAILURE, stats
    if stats[DEAD_RAY]:
        return tb.NO_SOLUTION, stats
    return tb.CYCLE, stats


@njit(cache=True, nogil=True)
def run_search(M, q, c, Binv, qbar, basis, where, keys, warm_pivots, eps, err_max,
               pivot_tol, tie_tol, max_nodes, n_slots, dive, cost_offset, cold, stop):
    """Step 0, the search and a refinement of the answer in one call.

    With ``cold`` the state arguments are ignored and the slack basis (``c = 1``) is used
    (and ``q >= 0`` returns ``z = 0`` with no node expanded). ``eps`` and ``err_max`` are
    scaled by ``max(1, ||q||_inf)`` here. ``stop``: see :func:`_search` (nogil, for
    :func:`contact_lcp.lcp.budget.call`). Returns ``(status, stats, z, basis_residual)``.
    """
    n = q.shape[0]
    if cold and np.all(q >= 0.0):
        return tb.SOLVED, np.zeros(len(STATS), dtype=np.int64), np.zeros(n), 0.0
    scale = max(1.0, tb.norm_inf(q))
    MT = np.ascontiguousarray(M.T)
    if cold:
        c = np.ones(n)
        cold_row = np.argmin(q)
        Binv, qbar, basis, where, leaving = sn.cold_root(q, cold_row)
    else:
        cold_row = -1
        d0 = -np.dot(Binv, c)  # the z0 column, -1 in the basis coordinates
        leaving = tb.pivot(Binv, qbar, basis, where, d0, np.argmin(qbar), 2 * n, np.empty(n))
    code, stats = _search(M, MT, q, c, Binv, qbar, basis, where, keys, leaving, warm_pivots + 1,
                          eps * scale, err_max * scale, pivot_tol, tie_tol, max_nodes, n_slots,
                          dive, cost_offset, cold_row, stop)
    stats[TOTAL_PIVOTS] += warm_pivots + 1
    res = tb.refine(MT, q, c, Binv, qbar, basis) if code == tb.SOLVED else -1.0
    return code, stats, tb.extract_z(qbar, basis, n), res
