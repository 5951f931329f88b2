"""Islands: the step's contact problem split into parts that share no moving body.

Two rows (a contact's three, or a joint-limit row) are coupled when they move a common
block of ``K`` (at most a tree of the world: a free body, or a robot with all its
links; a single coordinate where ``K`` is diagonal, as a sphere's); a fixed
body (the ground, a fixed-base robot's base, a prescribed joint) has no velocity and
couples nothing. The rows of an island act on velocities no other island's rows read, so
the Delassus matrix ``G`` is block diagonal by islands and the step's LCP is the
Cartesian product of the islands' LCPs: solving each alone gives a solution of the whole
one (every island's answer is certified on its own LCP, and the union of certified
answers is certified on the whole with the islands' tolerances). Where the whole LCP's
velocities are unique (the relaxed model's convex QP) they are the monolithic solve's,
and the impulses too wherever an island's LCP has a unique solution
(``test/test_islands.py``); where they are not (the pyramid LCP), the islands' solution
can be another one than the monolithic pivoting reaches, so the pyramid model does not
declare islands (``auto`` does, and solves its small islands with the pyramid).

What it buys: a pivoting solve costs about the cube of its size, so ``p`` equal islands
cost ``1 / p^2`` of the whole; a model chooses per island (``contact.model: auto``); and
an island that sleeps drops out of the step (:mod:`contact_lcp.sim.sleep`).

A model declares that it solves islands alone (``ContactModel.islands``): its guesses
must be splittable by contact, which :func:`split_guess` and :func:`merge_guesses` do for
the pyramid family's :class:`~contact_lcp.contact.guess.PyramidGuess`.
"""

from dataclasses import replace

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from contact_lcp.contact.guess import PyramidGuess
from contact_lcp.contact.problem import ContactProblem
from contact_lcp.contact.report import ContactSolution, Outcome, SolveReport
from contact_lcp.contact.sparse_problem import limit_rows


def dof_blocks(K):
    """(nv,) the block of ``K``'s sparsity pattern each velocity coordinate belongs to
    (a tree of the world, or a single coordinate where the mass matrix is diagonal, as
    a sphere's), -1 for coordinates that do not move (zero rows of ``K``)."""
    label = np.full(K.shape[0], -1, dtype=np.int64)
    if sparse.issparse(K):  # (CSR without stored zeros: sparse_rows.block_diagonal_csr)
        K = sparse.csr_matrix(K)
        dyn = np.flatnonzero(np.diff(K.indptr) > 0)
        pattern = K[dyn][:, dyn]
    else:
        dyn = np.flatnonzero(np.any(K != 0.0, axis=1))
        pattern = sparse.csr_matrix(K[np.ix_(dyn, dyn)] != 0.0)
    if dyn.size:
        _, lab = connected_components(pattern, directed=False)
        label[dyn] = lab
    return label


def island_labels(J, K, k, l):
    """Island of each contact, then of each limit row, and of each velocity coordinate:
    ``(count, (k + l,) labels, (nv,) dof_labels)`` (-1: a coordinate no island moves).

    Parameters
    ----------
    J : (3k + l, nv) ndarray
        Row Jacobian (``ContactProblem.J``).
    K : (nv, nv) ndarray
        Impulse-to-velocity map.
    k, l : int
        Contacts and joint-limit rows.
    """
    units = k + l
    block = dof_blocks(K)
    if units == 0:
        return 0, np.zeros(0, dtype=np.int64), np.full(K.shape[0], -1, dtype=np.int64)
    unit_of_row = np.concatenate([np.repeat(np.arange(k), 3), k + np.arange(l)])
    r, c = J.nonzero() if sparse.issparse(J) else np.nonzero(J)
    keep = block[c] >= 0
    r, c = unit_of_row[r[keep]], block[c[keep]]
    nb = int(block.max()) + 1 if block.size else 0
    # units and blocks as one graph: a unit joins the blocks it moves
    graph = sparse.coo_matrix((np.ones(r.size), (r, units + c)),
                              shape=(units + nb, units + nb))
    _, lab = connected_components(graph, directed=False)
    names, labels = np.unique(lab[:units], return_inverse=True)
    # a coordinate belongs to the island of its block (blocks no row moves: -1)
    of_block = np.full(nb, -1, dtype=np.int64)
    hit = np.searchsorted(names, lab[units:])
    found = (hit < names.size) & (names[np.minimum(hit, names.size - 1)] == lab[units:])
    of_block[found] = hit[found]
    dof_labels = np.where(block >= 0, of_block[np.maximum(block, 0)], -1)
    return names.size, labels.astype(np.int64), dof_labels


def sub_problem(problem, contacts, limits, dofs, dense=True):
    """The :class:`ContactProblem` of the contacts ``contacts`` (c,) and limit rows
    ``limits`` (m,) of ``problem``, in that order, in the velocity coordinates ``dofs``
    (the blocks of ``K`` those rows move: its rows read no other). Returns ``(sub,
    rows)``, ``rows`` the problem's rows it holds. A sparse ``problem``'s island keeps its
    ``J``, ``K`` and ``G`` sparse unless ``dense``."""
    k = problem.num_contacts
    rows = np.concatenate([(3 * contacts[:, None] + np.arange(3)).ravel(), 3 * k + limits])
    normals = np.concatenate([contacts, k + limits])
    if sparse.issparse(problem.G):
        J, K, G = (problem.J[rows][:, dofs], problem.K[dofs][:, dofs],
                   problem.G[rows][:, rows])
        if dense:
            J, K, G = J.toarray(), K.toarray(), G.toarray()
    else:
        J, K, G = (problem.J[np.ix_(rows, dofs)], problem.K[np.ix_(dofs, dofs)],
                   problem.G[np.ix_(rows, rows)])
    return ContactProblem(
        problem.h, problem.R_WC[contacts], problem.p_W[contacts], problem.phi[normals],
        problem.mu[contacts], J, K, G, problem.v[dofs], problem.v_free[dofs],
        problem.u[rows], problem.bias[normals], int(limits.size), problem.pair[contacts],
        problem.extras), rows


def split_guess(guess, problem, parts):
    """Each island's share of the last step's guess: by contact when the last step had
    exactly these contacts and limit rows (then its basis is reused island by island),
    else the whole guess for each (its friction directions are matched by surface pair
    and point; its basis, for other contacts, is not used)."""
    if not isinstance(guess, PyramidGuess):
        return [guess] * len(parts)
    k = problem.num_contacts
    same = (np.array_equal(guess.pair, problem.pair) and guess.limits.shape[0]
            == problem.num_limits and np.array_equal(guess.limits, limit_rows(problem)))
    if not same:
        return [guess] * len(parts)
    out = []
    for contacts, limits, dofs in parts:
        flags = guess.flags
        if flags is not None:
            a, b, lam = flags
            flags = (a[np.concatenate([contacts, k + limits])], b[contacts], lam[contacts])
        out.append(PyramidGuess(guess.pair[contacts], guess.points[contacts],
                                guess.directions[contacts],
                                guess.limits[np.ix_(limits, dofs)],
                                *(flags or (None, None, None))))
    return out


def merge_guesses(guesses, problem, parts):
    """One :class:`PyramidGuess` for the whole problem from the islands' (None when none
    is one); the basis only when every island has one."""
    if not all(isinstance(g, PyramidGuess) for g in guesses):
        return None
    k, l = problem.num_contacts, problem.num_limits
    nv = problem.J.shape[1]
    points, directions = np.zeros((k, 3)), np.zeros((k, 3))
    limit_rows = np.zeros((l, nv))
    with_basis = all(g.flags is not None for g in guesses)
    if with_basis:
        d = guesses[0].basic_b.shape[1]
        a, b, lam = np.zeros(k + l, bool), np.zeros((k, d), bool), np.zeros(k, bool)
    for g, (contacts, limits, dofs) in zip(guesses, parts):
        points[contacts], directions[contacts] = g.points, g.directions
        limit_rows[np.ix_(limits, dofs)] = g.limits
        if with_basis:
            a[np.concatenate([contacts, k + limits])] = g.basic_a
            b[contacts], lam[contacts] = g.basic_b, g.basic_lam
    flags = (a, b, lam) if with_basis else (None, None, None)
    return PyramidGuess(problem.pair, points, directions, limit_rows, *flags)


_WORST = (Outcome.NO_CONTACT, Outcome.SOLVED, Outcome.FALLBACK, Outcome.SAFE_STOP)


def merge_reports(reports, sizes):
    """One :class:`SolveReport` for the step from the islands' (``sizes``: their
    contact counts): the worst outcome, the counters summed, and in ``info`` the
    islands' count, sizes, models and methods (``islands``, ``island_sizes``,
    ``island_models``, ``island_methods``)."""
    worst = max(reports, key=lambda r: _WORST.index(r.outcome))
    applied = sorted({r.applied for r in reports})
    methods = sorted({r.method for r in reports})
    info = {"islands": len(reports), "island_sizes": tuple(int(s) for s in sizes),
            "island_models": tuple(r.applied for r in reports),
            "island_methods": tuple(r.method for r in reports),
            "rungs": tuple(x for r in reports for x in r.rungs)}
    for key in ("lcp_size", "path"):  # the largest island's, for logs that read them
        big = reports[int(np.argmax(sizes))].info
        if key in big:
            info[key] = big[key]
    return SolveReport(
        worst.outcome, worst.status, "+".join(applied), "+".join(methods),
        all(r.certified for r in reports), pivots=sum(r.pivots for r in reports),
        solves=sum(r.solves for r in reports), failures=sum(r.failures for r in reports),
        fallbacks=max(r.fallbacks for r in reports),
        warm_started=all(r.warm_started for r in reports), info=info)


def solve_islands(model, problem, guess=None):
    """``model.solve(problem, guess)`` island by island (one island, or a problem the
    model does not split, :meth:`~contact_lcp.contact.base.ContactModel.splits`: the one
    call, unchanged).

    Returns
    -------
    ContactSolution
        The islands' impulses in ``problem``'s rows, their merged report and guess. A
        safe stop of any island is a safe stop of the step (no impulse anywhere: the
        step then stops every motion, as for a monolithic safe stop).
    """
    k, l = problem.num_contacts, problem.num_limits
    # (then always by island: each dense or not; an ndarray asks no more)
    is_sparse = not isinstance(problem.G, np.ndarray) and sparse.issparse(problem.G)
    split = is_sparse or model.splits(problem)
    count, labels, dof_labels = (island_labels(problem.J, problem.K, k, l) if split
                                 else (1, None, None))
    if count <= 1 and not is_sparse:
        sol = model.solve(problem, guess)
        if not split:
            return sol
        report = replace(sol.report, info=dict(sol.report.info, islands=count,
                                               island_sizes=(k,),
                                               island_models=(sol.report.applied,)))
        return sol.with_report(report)
    parts = [(np.flatnonzero(labels[:k] == i), np.flatnonzero(labels[k:] == i),
              np.flatnonzero(dof_labels == i)) for i in range(count)]
    guesses = split_guess(guess, problem, parts)
    f = np.zeros(problem.num_rows)
    generalized = np.zeros(problem.J.shape[1])
    solutions, placed = [], []
    for (contacts, limits, dofs), g in zip(parts, guesses):
        sub, rows = sub_problem(problem, contacts, limits, dofs,
                                dense=not model.takes_sparse(contacts.size, limits.size))
        sol = model.solve(sub, g)
        solutions.append(sol)
        f[rows] = sol.solved
        generalized[dofs] = sub.J.T @ sol.solved if sol.generalized is None else sol.generalized
        placed.append(rows)
    report = merge_reports([s.report for s in solutions], [p[0].size for p in parts])
    if report.outcome is Outcome.SAFE_STOP:
        f[:], generalized[:] = 0.0, 0.0
    own = any(s.generalized is not None for s in solutions)  # else J' f, as one solve
    guess_out = merge_guesses([s.guess for s in solutions], problem, parts)
    if report.outcome is Outcome.SAFE_STOP or not any(s.distributes for s in solutions):
        distribute = None
    else:  # the islands' forces, each distributed when the step's are first read
        def distribute(solved):
            out = solved.copy()
            for s, rows in zip(solutions, placed):
                out[rows] = s.f
            notes = sorted({s.distribution for s in solutions} - {None})
            return out, "; ".join(notes) if notes else None
    return ContactSolution(f, report, generalized if own else None, guess_out, distribute)
