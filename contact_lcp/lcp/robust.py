"""Robust LCP pivoting: best-first search over Lemke pivot sequences.

Yamane & Nakamura (2008), Algorithms 1 and 2. Lemke's method commits to one leaving row
per pivot; on the degenerate, rank-deficient LCPs of redundant contact the minimum-ratio
rows tie, the pivots become tiny and a single path cycles or loses accuracy. The robust
method instead searches the tree of pivot sequences:

* Step 0 is Lemke's (``z0`` enters, the most negative row leaves); that basis is the root.
* Expanding a node: the complement of the variable that left enters. Every row ``r`` that
  blocks it (``m'_r < 0``) gives a child when the child's basic values ``q'`` (computed in
  O(n) from the parent's, without pivoting) satisfy ``min(q') > -epsilon`` and its basis
  was never queued before (Zobrist hash). Its cost is the parent's plus
  ``exp(-min(q')) - cost_offset``. Its error ``||w - M z - c z0 - q||_inf`` must be at
  most ``max_error``: that is tested when the child is popped, on its pivoted basis (one
  O(n k) residual per expanded node instead of one per child).
* Nodes are expanded in order of cost (a binary heap; equal costs: deeper first). A child
  in which ``z0`` leaves is a complementary basis: the search ends there when its ``z``
  passes the certification tolerance
  (:func:`contact_lcp.lcp.residual.raw_tolerance`).

Two departures from the paper's literal search, both measured on the benchmark's contact
LCPs (rigid boxes, chains, bipeds, n-legged frames; n = 40..320):

* **Cost offset.** On contact LCPs almost every basis is degenerate (``min(q') = 0``), so
  each pivot adds ``exp(0) = 1`` and the paper's total cost is the depth: best-first
  becomes breadth-first, and a 150-pivot path that fails at its end is repaired from the
  root (10^4 nodes, 4 failures in 1040 problems). Subtracting ``cost_offset = 1`` per
  pivot ranks siblings exactly as the paper does but counts only the excess over a
  degenerate pivot; the search then repairs near the failure (1040/1040, at most 5 extra
  nodes). ``cost_offset=0`` is the paper's order.
* **Dive.** A node's children are not all generated: the lexicographic choice among its
  blocking rows (the rule that cannot cycle in exact arithmetic) is tried first and
  expanded at once; its siblings wait in the queue as one *group* under the parent's cost
  (a lower bound of theirs) and are generated when the group is popped. When the
  lexicographic child is rejected all children are generated and the cheapest is
  expanded. So a search that never backtracks costs what lexicographic Lemke costs.
  ``dive=False`` queues every child.

Never worse than Lemke (``lemke_fallback``, the default): when the search has not
certified an answer within a first budget of nodes (about n, 3 n from a warm start), the
lexicographic and the
min-index Lemke paths are walked, and only if neither certifies does the search go on
with its full budget. On the recorded stack and pile LCPs the Lemke paths fail on most
problems that the search's first dive solves, hence this order.

Large sparse problems (``n >= REVISED_MIN_N`` with ``M`` at most ``REVISED_DENSITY``
nonzero; a pile of hundreds of contacts) first walk the lexicographic path with exact
ties on sparse LU factors of the basis (:mod:`contact_lcp.lcp.revised`; from
``initial_basis``, cold, then with the tie threshold and with the min-index rule, see
:func:`_revised_paths`): a pivot there costs the
factors' nonzeros instead of the dense tableau's n^2 (0.3 ms against 6.6 ms at
n = 3290). Only when none certifies does the dense machinery below run.

The search itself (nodes, the heap, the basis inverses) is one compiled kernel,
:mod:`contact_lcp.lcp.robust_kernel`.
"""

import functools

import numpy as np
from scipy import sparse

from contact_lcp.lcp import budget as bg
from contact_lcp.lcp import revised
from contact_lcp.lcp import tableau as tb
from contact_lcp.lcp import warm_start as ws
from contact_lcp.lcp.lemke import STATUS, certifies, lemke_paths, path_limit
from contact_lcp.lcp.residual import raw_tolerance
from contact_lcp.lcp.robust_kernel import NODES, STATS, TOTAL_PIVOTS, run_search
from contact_lcp.lcp.result import LCPStatus, MethodOutput

_NO_MATRIX, _NO_VECTOR = np.empty((0, 0)), np.empty(0)  # placeholders of a cold start
_NO_INDEX = np.empty(0, dtype=np.int64)

_REASONS = {
    tb.MAX_PIVOTS: "node limit max_nodes={max_nodes} reached",
    tb.ERROR: "queue exhausted; branches pruned by epsilon or max_error",
    tb.NUMERICAL_FAILURE: "queue exhausted; branches ended on tiny pivots",
    tb.NO_SOLUTION: "queue exhausted; every branch ended in a secondary ray",
    tb.CYCLE: "queue exhausted; every branch led back to a visited basis",
    tb.STOPPED: "the solve's time limit ran out",
}


@functools.lru_cache(maxsize=256)
def _cache_slots(n, cache_size):
    if cache_size is not None:
        return max(0, int(cache_size))
    return int(min(64, max(2, (32 << 20) // (8 * max(n, 1) ** 2))))


#: a warm-started search's first stage is this many times a cold one's
WARM_FIRST_STAGE = 3


def first_stage_nodes(n, warm=False):
    """The search's budget before the Lemke paths are tried: ``max(100, n)``, or
    ``max(100, WARM_FIRST_STAGE n)`` for a warm start."""
    return max(100, (WARM_FIRST_STAGE if warm else 1) * n)


def default_max_nodes(n):
    """``max(10000, 40 n)``: the search budget grows with the problem."""
    return max(10000, 40 * n)


#: problems from this size on whose M has at most ``REVISED_DENSITY`` nonzeros walk the
#: lexicographic path on sparse factors first (:mod:`contact_lcp.lcp.revised`)
REVISED_MIN_N = 1000
REVISED_DENSITY = 0.25


#: above this size the dense stages (the search, whose nodes cost O(n^2) each, and the
#: dense Lemke paths) do not run after the sparse paths failed: at n of a few thousand
#: the search's first stage alone would take hours, so the failure is reported at once
#: instead (``info['reason']``, the last sparse path's status) and the caller's
#: fallbacks run
DENSE_MAX_N = 2000


def revised_first(M):
    """Whether :func:`solve_robust` walks the sparse revised path before the search."""
    n = M.shape[0]
    return n >= REVISED_MIN_N and np.count_nonzero(M) <= REVISED_DENSITY * n * n


def _revised_paths(M, q, initial_basis, tie_threshold, pivot_tol, singular_tol, info,
                   budget=None):
    """The lexicographic path with exact ties on sparse factors, from ``initial_basis`` and
    then from the slack basis, then from the slack basis with ``tie_threshold`` and with
    the min-index rule; the first answer that certifies on these data, or None, and the
    last path's status. Outcomes go to ``info['paths']``.

    Exact ties first: the tie threshold is absolute in the ratios, and an entering column
    with entries of 1e8 turns a tie of 1e-9 into a basic variable at -0.05; on the large
    degenerate pile LCPs (``benchmarks/data/``) the paths with the threshold end on rays
    or uncertified answers where the exact-tie paths certify, and on ordinary warm-started
    LCPs the exact-tie path costs about the same pivots.

    ``budget`` (None: none) bounds the pivots of all the paths together: each path gets
    at most what the earlier ones left, and none starts once it is spent (its status
    MAX_PIVOTS, ``info['paths']`` ending with ``budget:spent``). Within a budget the cold
    exact-tie path is not held to 50 n: it may take all that is left, since the hardest
    certifiable pile LCPs (``benchmarks/data/pour_t096_failed.npz``) need over 100 n on it
    (``benchmarks/bench_hard_lcps.py``)."""
    paths = [("revised-warm", initial_basis, 0.0, "lexicographic")] \
        if initial_basis is not None else []
    paths += [("revised", None, 0.0, "lexicographic")]
    if tie_threshold > 0.0:
        paths += [("revised-tie-threshold", None, tie_threshold, "lexicographic")]
    paths += [("revised-min-index", None, 0.0, "min_index")]
    Ms = sparse.csc_matrix(M)  # once for every path
    for name, basis, delta, rule in paths:
        if bg.expired():
            info.setdefault("paths", []).append("time:spent")
            return None, LCPStatus.TIME_LIMIT
        limit = path_limit(q.shape[0], info, budget, capped=name != "revised")
        if limit == 0:
            return None, LCPStatus.MAX_PIVOTS
        out = revised.solve_revised(Ms, q, tie_threshold=delta, pivot_tol=pivot_tol,
                                    initial_basis=basis, singular_tol=singular_tol, rule=rule,
                                    max_pivots=limit)
        code = out.status
        if code is LCPStatus.SOLVED and not certifies(M, q, out.z):
            code = LCPStatus.ERROR
        info.setdefault("paths", []).append(f"{name}:{code.name.lower()}")
        info.setdefault("path_lengths", []).append(int(out.pivots))
        info["path_pivots"] = info.get("path_pivots", 0) + int(out.pivots)
        if code is LCPStatus.SOLVED:
            extra = {k: out.info[k] for k in ("factorizations", "lu_nnz", "basis_residual",
                                              "warm_start_dropped") if k in out.info}
            return MethodOutput(out.z, code, int(out.pivots), dict(info, nodes=0, **extra)), code
    return None, code


def _spent(info, budget):
    """Whether the Lemke paths recorded in ``info`` have spent the pivot ``budget``."""
    return budget is not None and info.get("path_pivots", 0) >= int(budget)


def solve_robust(M, q, *, epsilon=1e-6, max_error=1e-3, max_nodes=None,
                 initial_basis=None, dive=True, pivot_tol=tb.PIVOT_TOL,
                 tie_threshold=1e-9, cost_offset=1.0, singular_tol=1e-10, cache_size=None,
                 lemke_fallback=True, first_nodes=None, pivot_budget=None):
    """Robust best-first pivot search (Yamane & Nakamura 2008).

    Parameters
    ----------
    M : (n, n) ndarray
    q : (n,) ndarray
        Velocities [m/s] for contact LCPs; ``z`` is then impulses [N.s].
    epsilon : float
        A child is kept when ``min(q') > -epsilon * max(1, ||q||_inf)``: the slack lets
        near-tied rows (which round-off may have put slightly past the minimum ratio)
        branch. Behind :func:`contact_lcp.lcp.solve` the data are equilibrated
        (``||q||_inf <= 1``), so this is ``-epsilon`` in equilibrated units. On the 45
        recorded tower, pyramid and sphere-pile LCPs (n = 200..1130, at most 3000 nodes)
        1e-3 certified 43, 1e-5 44, 1e-6 and 1e-7 all 45 (8.7k and 9.9k nodes in all): a
        wide slack queues ~100 near-ties per node and lets slightly infeasible bases in.
    max_error : float
        A child is kept when its basic solution has
        ``||w - M z - c z0 - q||_inf <= max_error * max(1, ||q||_inf)``, which prunes
        bases made inaccurate by tiny pivots. The final answer must moreover pass the
        certification tolerance of :func:`contact_lcp.lcp.residual.raw_tolerance`.
    max_nodes : int, optional
        Node expansions before giving up with ``MAX_PIVOTS``; default
        :func:`default_max_nodes` (``max(10000, 40 n)``), reported as ``info['max_nodes']``.
    initial_basis : sequence of int, optional
        Warm start: indices ``i`` whose ``z_i`` are basic (e.g. the loaded contacts of a
        frictionless solution). Done as a principal pivot on that block; a numerically
        singular block is reduced (``info['warm_start_dropped']``). If the transformed
        ``q`` is nonnegative that is the answer; otherwise the search runs on the
        principal pivot transform with covering vector 1 in its coordinates.
    dive : bool
        Expand the lexicographic child first and queue its siblings lazily (see the
        module notes); False queues every child, as in the paper.
    pivot_tol : float
        Entries ``d_i <= pivot_tol * ||d||_inf`` of an entering column never block.
    tie_threshold : float
        Tie threshold of the lexicographic choice of the dive (absolute, in the units of
        the ratios, impulses [N.s] for contact LCPs; see
        :func:`contact_lcp.lcp.lexicographic.solve_lexicographic`). On the benchmark's
        1200 contact LCPs 1e-9 needed one backtrack in all, 1e-11 fourteen (one of 5000
        nodes), 0 fourteen failures: exact ties do not survive round-off. The sparse paths
        of large problems walk exact ties first (refactorized bases keep them; see
        :func:`_revised_paths`) and this threshold on their third path.
    cost_offset : float
        Subtracted from each pivot's cost ``exp(-min(q'))``; 0 is the paper's total cost.
    singular_tol : float
        Reciprocal condition number below which the warm-start block is singular.
    cache_size : int, optional
        Basis inverses kept at branch points; default ``min(64, 32 MiB / (8 n^2))``.
    lemke_fallback : bool
        Never worse than Lemke: the search first gets ``first_nodes`` nodes;
        if it has not certified an answer by then, the lexicographic and then the
        min-index Lemke path (cold, each limited to ``max(1000, 50 n)`` pivots) are
        walked and the first answer that certifies is returned; if none does, the
        search runs again from the slack basis with the rest of ``max_nodes``, shared by
        three restarts with ``epsilon``, ``100 epsilon`` and ``epsilon / 100`` (a warm start
        that failed its first stage is abandoned: on the recorded 10-box tower a warm
        search exhausted 16000 nodes where the cold one needs 174). So the method certifies every
        problem either Lemke variant certifies, at the cost of at most
        ``first_nodes`` nodes more. ``info['first_stage']``, ``info['paths']``
        (e.g. ``['lexicographic:no_solution', 'lemke:solved']``) and
        ``info['path_pivots']`` say what ran, ``info['nodes_all_stages']`` the nodes of
        every search stage (``info['nodes']`` is the last one's). Above n = 1 000 on a
        sparse ``M`` the sparse paths of :func:`_revised_paths` run first, and above
        :data:`DENSE_MAX_N` nothing after them. False: the search alone.
    first_nodes : int, optional
        The first stage's budget; default :func:`first_stage_nodes` (``max(100, n)``,
        ``max(100, 3 n)`` with ``initial_basis``: on the 21-sphere pile at h = 50 ms the
        warm search certified in 1.0-2.1 n nodes where the Lemke paths then took
        1100-6100 pivots, 3-8 times as long).
    pivot_budget : int, optional
        Pivots that all the Lemke paths (sparse and dense) may take together (a warm path
        counts its warm-start block, as ``pivots`` does, and takes at least that block and
        one pivot); once it is spent, no further stage starts and the status is that of
        the last path (e.g. MAX_PIVOTS), ``info['paths']`` ending with ``budget:spent``
        when a path was left out. None (default): each path has its own
        ``max(1000, 50 n)``. The search's nodes have their own budget, ``max_nodes``.

    Returns
    -------
    MethodOutput
        ``pivots`` counts the pivots on the path to the answer (Step 0 and the warm-start
        block counted as ``len(initial_basis)`` pivots included). ``info``: ``nodes``
        expanded, ``queued``, ``max_queue``, ``depth``, ``total_pivots`` (all pivots,
        replays included), ``replayed`` and the dead ends of the search by kind. When the
        queue empties the status is ERROR if some branch was pruned by ``epsilon`` or
        ``max_error``, else NUMERICAL_FAILURE if one ended on pivots below ``pivot_tol``,
        else NO_SOLUTION if one ended in a secondary ray, else CYCLE (revisits only).
    """
    n = q.shape[0]
    max_nodes = default_max_nodes(n) if max_nodes is None else int(max_nodes)
    info = {"max_nodes": max_nodes}
    if lemke_fallback and revised_first(M):
        out, status = _revised_paths(M, q, initial_basis, tie_threshold, pivot_tol,
                                     singular_tol, info, pivot_budget)
        if out is not None:
            return out
        spent_budget = _spent(info, pivot_budget)
        if status is LCPStatus.TIME_LIMIT:
            info["reason"] = "the solve's time limit ran out in the sparse Lemke paths"
            return MethodOutput(np.zeros(n), status, int(info.get("path_pivots", 0)), info)
        if n > DENSE_MAX_N or spent_budget:
            info["reason"] = (f"every sparse Lemke path failed ({', '.join(info['paths'])}); "
                              + (f"the pivot budget ({pivot_budget}) is spent" if spent_budget
                                 else f"the dense search is not run above n = {DENSE_MAX_N} "
                                 f"(n = {n}: O(n^2) per node)"))
            return MethodOutput(np.zeros(n), status, int(info.get("path_pivots", 0)), info)
    kept = _NO_INDEX
    if initial_basis is None:
        Binv, qbar, c, basis, where = _NO_MATRIX, _NO_VECTOR, _NO_VECTOR, _NO_INDEX, _NO_INDEX
    else:
        Binv, basis, where, kept, dropped = ws.principal_pivot_basis(M, q, initial_basis,
                                                                     singular_tol)
        info["warm_start_kept"] = kept.tolist()
        if dropped.size:
            info["warm_start_dropped"] = dropped.tolist()
        c, qbar = ws.warm_start_vectors(M, q, Binv, kept)
        if qbar.min() >= -raw_tolerance(M, q, np.zeros(n)):
            z = tb.extract_z(qbar, basis, n)
            return MethodOutput(z, LCPStatus.SOLVED, int(kept.size), dict(info, nodes=0))
    cold = initial_basis is None

    options = (float(max_error), float(pivot_tol), float(tie_threshold))
    rest = (_cache_slots(n, cache_size), bool(dive), float(cost_offset))

    def search(budget, from_slack, eps=epsilon):
        if from_slack:
            vec, state, warm = _NO_VECTOR, (_NO_MATRIX, _NO_VECTOR, _NO_INDEX, _NO_INDEX), 0
        else:
            vec, state, warm = c, (Binv.copy(), qbar.copy(), basis.copy(), where.copy()), kept.size
        return bg.call(run_search, n, M, q, vec, *state, tb.zobrist_keys(n), warm, float(eps),
                       *options, int(budget), *rest, from_slack)

    if first_nodes is None:
        first_nodes = first_stage_nodes(n, initial_basis is not None)
    first = min(max_nodes, int(first_nodes)) if lemke_fallback else max_nodes
    code, stats, z, res = search(first, cold)
    spent = int(stats[NODES])
    if code == tb.SOLVED and spent == 0:  # q >= 0
        return MethodOutput(z, LCPStatus.SOLVED, 0, {"nodes": 0, "max_nodes": max_nodes})
    if lemke_fallback and code not in (tb.SOLVED, tb.STOPPED):
        info["first_stage"] = f"{STATUS[code].name.lower()} after {spent} nodes"
        info["first_stage_pivots"] = int(stats[TOTAL_PIVOTS])
        out = lemke_paths(M, q, pivot_tol, info, pivot_budget)
        if out is not None:
            return out
        if _spent(info, pivot_budget):
            info["reason"] = (f"the Lemke paths failed ({', '.join(info['paths'])}) and the "
                              f"pivot budget ({pivot_budget}) is spent")
            info["nodes_all_stages"] = spent
            return MethodOutput(z, LCPStatus.MAX_PIVOTS, int(info.get("path_pivots", 0)), info)
        if bg.expired():
            info["reason"] = (f"the Lemke paths failed ({', '.join(info['paths'])}) and the "
                              "solve's time limit ran out")
            info["nodes_all_stages"] = spent
            return MethodOutput(z, LCPStatus.TIME_LIMIT, int(info.get("path_pivots", 0)), info)
        if first < max_nodes or not cold:  # a warm start that failed: restart cold
            # The search path depends chaotically on the slack: restarts with a wider
            # and a narrower one share the remaining budget.
            left = max_nodes - first
            for k, eps in enumerate((epsilon, 100.0 * epsilon, 0.01 * epsilon)):
                code, stats, z, res = search(max(left // 3, 1), True, eps)
                spent += int(stats[NODES])
                info["last_stage"] = f"cold search, epsilon={eps:g}"
                if code in (tb.SOLVED, tb.STOPPED):
                    break
    info.update(zip(STATS, stats.tolist()))
    info["nodes_all_stages"] = spent
    if code == tb.SOLVED:
        info["basis_residual"] = res
        pivots = info["depth"]
    else:
        info["reason"] = _REASONS[code].format(max_nodes=max_nodes)
        pivots = info["total_pivots"]
    return MethodOutput(z, STATUS[code], int(pivots), info)
