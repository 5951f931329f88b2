"""Peer LCP solvers (the optional ``bench`` extra), wrapped so that only their solve is timed.

Each peer splits in an untimed ``prepare(M, q)`` (format conversion, program building) and
a timed ``run(state)`` that returns a :class:`PeerOutput`. The harness never trusts
``PeerOutput.claimed``: it recomputes :func:`contact_lcp.lcp.residual.lcp_error` and
compares it with :func:`contact_lcp.lcp.residual.default_tolerance`, as ``solve`` does for
our own methods.

* ``quantecon`` -- ``quantecon.optimize.lcp_lemke(M, q)``: Lemke's method with the
  lexicographic ratio test, compiled by numba; same convention as ours
  (``w = M z + q >= 0, z >= 0, z'w = 0``, checked on a planted problem by
  :func:`check_convention`). Status 1 is its iteration limit, 2 a secondary ray.
* ``drake`` -- ``pydrake.solvers.MobyLcpSolver().Solve(prog)`` on a ``MathematicalProgram``
  holding one ``AddLinearComplementarityConstraint(M, q, z)`` (the only route bound in
  Python). Its ``DoSolve`` runs ``SolveLcpLemkeRegularized``: Lemke on ``M + lambda I`` for
  ``lambda = 0, 1e-20 ... 1e0`` and it accepts a point that solves the *regularized* LCP,
  so its success flag can be wrong for ``M`` itself. On failure it gives no cause; we
  count that as ``ERROR``. Building the program is not timed, and is reported as
  ``setup_ms``.
"""

from dataclasses import dataclass

import numpy as np

from contact_lcp.lcp.result import LCPStatus


@dataclass(frozen=True)
class PeerOutput:
    """What a peer returned: its point, whether it claimed success, its own status."""

    z: np.ndarray
    claimed: bool
    status: LCPStatus
    pivots: int = -1
    reason: str = ""


@dataclass(frozen=True)
class Peer:
    """A peer solver: ``prepare(M, q) -> state`` (untimed), ``run(state) -> PeerOutput``."""

    name: str
    prepare: object
    run: object
    version: str = ""
    notes: str = ""


def pivot_limit(n):
    """Pivot budget given to the peers that take one: ``max(1000, 50 n)``."""
    return max(1000, 50 * n)


def quantecon_peer():
    """The quantecon peer, or None when quantecon is not installed."""
    try:
        import quantecon
        from quantecon.optimize import lcp_lemke
    except ImportError:
        return None

    def prepare(M, q):
        return np.ascontiguousarray(M, dtype=float), np.ascontiguousarray(q, dtype=float)

    def run(state):
        M, q = state
        res = lcp_lemke(M, q, max_iter=pivot_limit(q.shape[0]))
        status = {0: LCPStatus.SOLVED, 1: LCPStatus.MAX_PIVOTS, 2: LCPStatus.NO_SOLUTION}
        return PeerOutput(np.array(res.z), bool(res.success), status.get(int(res.status),
                          LCPStatus.ERROR), int(res.num_iter), f"quantecon status {res.status}")

    # Compile once (numba, cache=True) before anything is timed.
    run(prepare(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, -1.0])))
    return Peer("quantecon", prepare, run, quantecon.__version__,
                "lexicographic Lemke (numba); max_iter = max(1000, 50 n)")


def drake_peer():
    """The Drake MobyLcpSolver peer, or None when pydrake is not installed."""
    try:
        import pydrake
        from pydrake.solvers import MathematicalProgram, MobyLcpSolver
    except ImportError:
        return None
    solver = MobyLcpSolver()

    def prepare(M, q):
        prog = MathematicalProgram()
        z = prog.NewContinuousVariables(q.shape[0], "z")
        prog.AddLinearComplementarityConstraint(M, q, z)
        return prog, z

    def run(state):
        prog, z = state
        result = solver.Solve(prog)
        claimed = bool(result.is_success())
        x = np.array(result.GetSolution(z), dtype=float)
        status = LCPStatus.SOLVED if claimed else LCPStatus.ERROR
        return PeerOutput(x, claimed, status, -1, str(result.get_solution_result()))

    run(prepare(np.eye(2), np.array([-1.0, 1.0])))
    return Peer("drake", prepare, run, getattr(pydrake, "__version__", ""),
                "MobyLcpSolver.Solve = regularized Lemke; pivots not exposed")


PEER_FACTORIES = {"quantecon": quantecon_peer, "drake": drake_peer}


def available_peers(names=None):
    """The installed peers among ``names`` (default all), in that order."""
    peers = []
    for name in names or PEER_FACTORIES:
        peer = PEER_FACTORIES[name]()
        if peer is not None:
            peers.append(peer)
    return peers


def check_convention(peer, n=6, seed=0):
    """Solve a planted LCP and return the max error of the peer's ``z`` against it.

    ``M = A A' + I`` is positive definite so the solution is unique; ``z*`` has half its
    entries zero and ``q = w* - M z*`` with ``w*`` complementary. A peer that solves
    ``w = M z - q`` or ``w = -(M z + q)`` would be far from ``z*``.
    """
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    M = A @ A.T + np.eye(n)
    z_star = np.where(np.arange(n) % 2 == 0, rng.uniform(0.5, 2.0, n), 0.0)
    w_star = np.where(z_star > 0, 0.0, rng.uniform(0.5, 2.0, n))
    q = w_star - M @ z_star
    out = peer.run(peer.prepare(M, q))
    return float(np.max(np.abs(out.z - z_star)))
