"""Invariants of every method on random PSD and contact-structured LCPs (hypothesis)."""

import numpy as np
from hypothesis import example, given, settings, strategies as st

from contact_lcp.contact.lcp_builder import build_contact_lcp, build_frictionless_lcp
from contact_lcp.lcp import METHODS, LCPStatus, solve

FAILURES = frozenset(LCPStatus) - {LCPStatus.SOLVED}
SETTINGS = settings(max_examples=50, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def psd_lcp(seed, n, rank, shift):
    """``M = A A' + shift I`` with ``A`` (n, rank); ``q`` standard normal."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, rank))
    return A @ A.T + shift * np.eye(n), rng.standard_normal(n)


def contact_lcp(seed, k, dofs, d, friction=True):
    """Contact LCP of ``k`` contacts on a system of ``dofs`` generalized velocities.

    Random Jacobian ``J`` (3k, dofs) and SPD mass matrix; ``G = J M^-1 J'`` has rank
    ``<= dofs``, so with ``3k > dofs`` the LCP is degenerate as in redundant contact.
    """
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((3 * k, dofs))
    B = rng.standard_normal((dofs, dofs))
    M_inv = np.linalg.inv(B @ B.T + dofs * np.eye(dofs))
    G = J @ M_inv @ J.T
    u = J @ rng.standard_normal(dofs)
    if friction:
        return build_contact_lcp(G, u, rng.uniform(0.1, 1.0, k), num_directions=d)
    return build_frictionless_lcp(G, u, num_contacts=k)


def check_invariants(M, q, res):
    """Certified => complementary within tol; otherwise an explained failure status."""
    z, w = res.z, res.w
    # w is M z + q up to summation order: two orders differ by at most
    # 2 n eps sum_j |M_ij z_j| + eps |q_i| per row (z can be ~1e4 on near-singular M).
    eps = np.finfo(float).eps
    bound = 2 * len(q) * eps * (np.abs(M) @ np.abs(z)) + eps * np.abs(q) + 1e-300
    assert np.all(np.abs(w - (M @ z + q)) <= bound), (res.method, np.abs(w - (M @ z + q)).max())
    if res.status is LCPStatus.SOLVED:
        # tol bounds a negative w_i (units of q), tol_z a negative z_i (units of z); each
        # product z_i w_i is at most tol_z |w_i| + tol |z_i| for a certified answer.
        tol, tol_z = res.info["tol"], res.info["tol_z"]
        assert np.all(z >= -tol_z) and np.all(w >= -tol), (res.method, res.error, tol)
        bound = tol_z * np.abs(w).sum() + tol * np.abs(z).sum() + 1e-300
        assert abs(z @ w) <= bound, (res.method, z @ w, bound)
    else:
        assert res.status in FAILURES
        assert res.info.get("reason"), (res.method, res.status, dict(res.info))


@SETTINGS
@given(seeds, st.integers(1, 12), st.integers(1, 12), st.sampled_from([0.0, 1e-3, 1.0]))
@example(seed=11036543, n=12, rank=8, shift=0.0)  # z ~ 4e4: w's round-off ~ 5e-11
def test_every_method_on_random_psd_lcps(seed, n, rank, shift):
    M, q = psd_lcp(seed, n, min(rank, n), shift)
    for method in METHODS:
        check_invariants(M, q, solve(M, q, method=method))


@SETTINGS
@given(seeds, st.integers(1, 12), st.floats(1e-3, 10.0))
def test_robust_solves_positive_definite_lcps(seed, n, shift):
    M, q = psd_lcp(seed, n, n, shift)
    res = solve(M, q, method="robust")
    assert res.success, (res.status, dict(res.info))


@SETTINGS
@given(seeds, st.integers(1, 6), st.integers(3, 12), st.sampled_from([3, 4, 8]))
def test_every_method_on_contact_lcps(seed, k, dofs, d):
    lcp = contact_lcp(seed, k, dofs, d)
    for method in METHODS:
        res = solve(lcp.M, lcp.q, method=method)
        check_invariants(lcp.M, lcp.q, res)
        if method == "robust":  # Stewart-Trinkle LCPs always have a solution
            assert res.success, (res.status, dict(res.info))


@SETTINGS
@given(seeds, st.integers(1, 6), st.integers(3, 12))
def test_robust_warm_start_is_as_good_as_cold_start(seed, k, dofs):
    """Two-step solve: the frictional LCP started on the frictionless loaded contacts."""
    frictionless = contact_lcp(seed, k, dofs, 8, friction=False)
    first = solve(frictionless.M, frictionless.q, method="robust")
    assert first.success
    lcp = contact_lcp(seed, k, dofs, 8)
    cold = solve(lcp.M, lcp.q, method="robust")
    warm = solve(lcp.M, lcp.q, method="robust", initial_basis=np.flatnonzero(first.z > 0))
    check_invariants(lcp.M, lcp.q, warm)
    assert cold.success and warm.success, (cold.status, warm.status, dict(warm.info))
