"""Random contact problems shared by the tests of the contact models."""

import numpy as np

from contact_lcp.contact.problem import build_problem


def random_problem(seed, k, nv, gaps, limits=0):
    """A random step: ``k`` contacts (``limits`` unilateral rows) on ``nv`` dofs, SPD
    inertia, some contacts apart, a few surface pairs."""
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((3 * k + limits, nv))
    B = rng.standard_normal((nv, nv))
    K = np.linalg.inv(B @ B.T + 0.1 * np.eye(nv))
    v = rng.standard_normal(nv)
    R = np.tile(np.eye(3), (k, 1, 1))
    phi = np.where(rng.random(k) < gaps, 1e-3, rng.uniform(-1e-3, 0.0, k))
    return build_problem(1e-3, R, np.zeros((k, 3)), phi, np.full(k, 0.5), J, K, v, v,
                         limit_gap=rng.uniform(-1e-3, 1e-3, limits) if limits else None,
                         pair=rng.integers(0, 3, k))
