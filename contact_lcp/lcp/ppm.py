"""Drumwright's modified principal pivoting method (S4, Alg. 1) for PSD contact LCPs.

The method keeps the set ``beta`` of indices whose ``z_i`` may be positive (the paper's
non-basic set), ordered as they entered. Each pass solves the principal block
``M[beta, beta] z_beta = -q_beta`` from an incrementally updated Cholesky factor, forms
``w = M[:, beta] z_beta + q`` and then

* if some ``w_i < 0`` (``i`` outside ``beta``), the most negative enters ``beta``; if
  moreover some ``z_j < 0`` in the *same* solve, the most negative leaves;
* else if some ``z_j < 0``, the most negative leaves;
* else ``(z, w)`` is the solution.

It starts from ``beta = {argmin q}`` (``z = 0`` if ``q >= 0``). On a Delassus matrix
``G = N K N'`` of rank ``m`` (S4, Theorem 1) a solution needs at most ``m`` positive
impulses, so every factor is at most ``m x m`` whatever the number of contacts; a pivot
costs O(k^2) for the factor and O(n k) for ``w``.

The index that leaves is taken from the position of the smallest ``z_beta`` entry *before*
``beta`` changes. Two peers keep ``beta`` sorted and read that position after inserting the
entering index, which removes the wrong variable whenever the entering index sorts before
it (a reproduction failed on about 19 % of random PSD problems); ``test_lcp_ppm.py`` holds
a property test against that.

Two additions make it end on PSD matrices where Alg. 1 alone stalls, both measured on
random rank-deficient PSD problems with planted solutions (12 000 problems, n < 60):

* **Dependent entering index.** When the index that should enter makes the block
  singular (its row is a combination of beta's, which happens with an inconsistent ``q``,
  e.g. a stabilization bias on redundant contacts), the direction that raises ``z_i``
  and keeps ``w`` fixed lowers the QP objective; it is followed until some ``z_j`` of beta
  reaches zero, and ``j`` and ``i`` are exchanged. If nothing blocks it the LCP is
  infeasible (``NO_SOLUTION``). Without it 31 % of those problems with a random ``q``
  stopped on a singular block.
* **Anti-cycling.** Alg. 1's simultaneous enter-and-leave can revisit a set (1 problem in
  3000); on the first repeat the method switches to Murty's least-index rule (one flip
  per pass). With it 12 000 of 12 000 were solved.

When the method still ends without an answer, with ``fallback='robust'`` (default) the
robust pivot search solves the same LCP and ``info['fallback']`` says so.
"""

import numpy as np

from contact_lcp.lcp.cholesky import IncrementalCholesky
from contact_lcp.lcp.residual import default_tolerance
from contact_lcp.lcp.result import LCPStatus, MethodOutput
from contact_lcp.lcp.robust import solve_robust

#: fallback name -> function(M, q, **options) -> MethodOutput
FALLBACKS = {"robust": solve_robust}


def _blocking(c, zb):
    """Position in beta that first reaches zero along ``z_beta - t c`` (t >= 0), or -1.

    ``c = M[beta, beta]^-1 M[beta, i]`` for an index ``i`` dependent on beta: the direction
    (``z_i = t``, ``z_beta -= t c``) leaves ``w`` unchanged and lowers the QP objective
    ``z'Mz/2 + q'z`` at the rate ``w_i < 0``, so it is followed until a ``z_j`` hits zero."""
    grow = c > 1e-12 * max(1.0, float(np.abs(c).max()))
    if not np.any(grow):
        return -1
    ratio = np.where(grow, np.maximum(zb, 0.0) / np.where(grow, c, 1.0), np.inf)
    return int(np.argmin(ratio))


def _run(M, q, beta0, max_pivots, singular_tol):
    """The modified PPM itself; returns ``(z, status, pivots, info)``."""
    n = q.shape[0]
    z = np.zeros(n)
    tol = 0.5 * default_tolerance(M, q, z)
    if q.min() >= -tol:
        return z, LCPStatus.SOLVED, 0, {"beta": []}
    chol = IncrementalCholesky(min(n, 16), singular_tol)
    beta = []
    for i in beta0:
        if chol.try_append(M[beta, i], M[i, i]):
            beta.append(int(i))
    if not beta:
        i = int(np.argmin(q))
        if not chol.try_append(M[beta, i], M[i, i]):
            return z, LCPStatus.NUMERICAL_FAILURE, 0, {
                "beta": [], "reason": f"diagonal M[{i}, {i}] = {M[i, i]} is not positive"}
        beta = [i]
    pivots = len(beta)
    # swaps: passes where one index entered and another left; shifted_swaps: those where
    # the entering index is the smaller (a sorted beta would shift the leaving position).
    stats = {"swaps": 0, "shifted_swaps": 0, "exchanges": 0, "least_index": False}

    def end(status, reason=None):
        info = dict(stats, beta=list(beta))
        if reason:
            info["reason"] = reason
        return z, status, pivots, info

    seen = set()
    in_beta = np.zeros(n, dtype=bool)
    while True:
        in_beta[:] = False
        in_beta[beta] = True
        key = in_beta.tobytes()
        if key in seen:
            if stats["least_index"]:
                return end(LCPStatus.CYCLE, "the set beta repeated")
            stats["least_index"], seen = True, set()  # from now on Murty's rule
        seen.add(key)
        zb = chol.solve(-q[beta])
        z = np.zeros(n)
        z[beta] = zb
        w = M[:, beta] @ zb + q
        tol = 0.5 * default_tolerance(M, q, z)
        i = int(np.argmin(np.where(in_beta, np.inf, w)))
        j = int(np.argmin(zb))
        enter, leave = w[i] < -tol, zb[j] < -tol
        if stats["least_index"] and (enter or leave):
            # Murty's least-index rule (finite on P-matrices): flip the smallest wrong index.
            wrong = np.where(in_beta, z, w) < -tol
            first = int(np.flatnonzero(wrong)[0])
            enter, leave = not in_beta[first], bool(in_beta[first])
            i, j = first, (beta.index(first) if leave else j)
        if not enter and not leave:
            err = float(np.max(np.abs(np.minimum(z, w))))
            if err > 2.0 * tol:  # the block solve itself was inaccurate (ill-conditioned)
                return end(LCPStatus.NUMERICAL_FAILURE,
                           f"block solve residual {err:.3g} above the tolerance")
            return end(LCPStatus.SOLVED)
        if pivots >= max_pivots:
            return end(LCPStatus.MAX_PIVOTS, f"pivot limit {max_pivots}")
        left = -1
        if leave:
            # j is a position in beta as it was solved: use it before beta changes.
            left = beta.pop(j)
            chol.remove(j)
            pivots += 1
        if not enter:
            continue
        if chol.try_append(M[beta, i], M[i, i]):
            beta.append(i)
            pivots += 1
            if leave:
                stats["swaps"] += 1
                stats["shifted_swaps"] += int(i < left)
        elif not leave:
            # i depends on beta: exchange it for the index that blocks the descent.
            j = _blocking(chol.solve(M[beta, i]), zb)
            if j < 0:
                return end(LCPStatus.NO_SOLUTION, f"index {i} depends on beta and nothing "
                           "blocks its descent: the PSD LCP is infeasible")
            beta.pop(j)
            chol.remove(j)
            if not chol.try_append(M[beta, i], M[i, i]):
                return end(LCPStatus.NUMERICAL_FAILURE,
                           f"exchanging index {i} left a singular block")
            beta.append(i)
            pivots += 2
            stats["exchanges"] += 1


def solve_ppm(M, q, *, initial_basis=None, max_pivots=None, singular_tol=1e-10,
              fallback="robust", fallback_options=None):
    """Modified principal pivoting method (Drumwright, S4 Alg. 1), with a fallback.

    Parameters
    ----------
    M : (n, n) ndarray
        Symmetric positive semi-definite (a normal-row Delassus matrix [s/kg]); other
        matrices are accepted but the method may then fail and fall back.
    q : (n,) ndarray
        Velocities [m/s] for contact LCPs; ``z`` is then impulses [N.s].
    initial_basis : sequence of int, optional
        Warm start: indices to put in ``beta`` first (e.g. the previous step's loaded
        contacts); dependent ones are skipped. Counted as one pivot each.
    max_pivots : int, optional
        Pivot limit; default ``max(100, 10 n)``.
    singular_tol : float
        Relative pivot below which a principal block counts as singular (see
        :class:`contact_lcp.lcp.cholesky.IncrementalCholesky`).
    fallback : {'robust', None}
        Method run on the same LCP when the PPM does not reach a certified answer; None
        reports the PPM's own failure.
    fallback_options : Mapping, optional
        Keyword options of the fallback method.

    Returns
    -------
    MethodOutput
        ``pivots``: PPM pivots (enter or leave), plus the fallback's when it ran.
        ``info``: ``beta`` the final set; ``swaps`` the passes in which one index entered
        and another left (``shifted_swaps`` of them with the entering index the smaller);
        ``exchanges`` dependent indices swapped in along a null direction;
        ``least_index`` whether a repeated set switched to Murty's rule; after a fallback ``fallback`` (its name), ``ppm_status``,
        ``ppm_pivots`` and ``ppm_reason``.
    """
    n = q.shape[0]
    max_pivots = max(100, 10 * n) if max_pivots is None else int(max_pivots)
    beta0 = [] if initial_basis is None else [int(i) for i in np.unique(initial_basis)]
    if any(not 0 <= i < n for i in beta0):
        raise ValueError(f"initial_basis: expected indices in [0, {n}), got {beta0}")
    z, status, pivots, info = _run(M, q, beta0, max_pivots, singular_tol)
    if status is LCPStatus.SOLVED or fallback is None:
        return MethodOutput(z, status, pivots, info)
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback: expected one of {sorted(FALLBACKS)} or None, got {fallback!r}")
    out = FALLBACKS[fallback](M, q, **dict(fallback_options or {}))
    info = dict(out.info, fallback=fallback, ppm_status=status.name, ppm_pivots=pivots,
                ppm_reason=info.get("reason", ""))
    return MethodOutput(out.z, out.status, pivots + out.pivots, info)
