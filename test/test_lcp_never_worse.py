"""The robust method is never worse than Lemke: it certifies every problem that Lemke or
lexicographic Lemke certifies, spending at most ``max(100, n)`` search nodes before it
walks their paths."""

import numpy as np
from hypothesis import given, settings, strategies as st

from contact_lcp.contact.lcp_builder import build_contact_lcp
from contact_lcp.lcp import solve

SETTINGS = settings(max_examples=60, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def contact_lcp(seed, k, dofs, d, mu_max):
    """Frictional contact LCP from ``G = J M^-1 J'``: random ``J`` (3k, dofs), SPD mass."""
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((3 * k, dofs))
    B = rng.standard_normal((dofs, dofs))
    G = J @ np.linalg.inv(B @ B.T + 0.1 * dofs * np.eye(dofs)) @ J.T
    u = J @ rng.standard_normal(dofs)
    u[0::3] -= rng.uniform(0.0, 1.0)  # approaching contacts
    lcp = build_contact_lcp(G, u, rng.uniform(0.05, mu_max, k), num_directions=d)
    return lcp.M, lcp.q


def random_lcp(seed, n):
    """No structure: secondary rays and cycles happen."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) + rng.uniform(0, 2) * np.eye(n), rng.standard_normal(n)


def check_never_worse(M, q):
    lemke = solve(M, q, method="lemke")
    lex = solve(M, q, method="lexicographic")
    robust = solve(M, q, method="robust")
    if lemke.success or lex.success:
        assert robust.success, (lemke.status, lex.status, robust.status, dict(robust.info))
    if "paths" in robust.info:  # the first stage failed: at most both paths after it
        assert robust.info["path_pivots"] <= lex.pivots + lemke.pivots
        assert robust.info["first_stage"].endswith(f"after {max(100, q.size)} nodes") or \
            not robust.info["first_stage"].startswith("max_pivots")
    return robust


@SETTINGS
@given(seeds, st.integers(1, 8), st.integers(3, 18), st.sampled_from([3, 4, 8]),
       st.sampled_from([0.5, 3.0, 10.0]))
def test_never_worse_on_contact_lcps(seed, k, dofs, d, mu_max):
    check_never_worse(*contact_lcp(seed, k, dofs, d, mu_max))


@SETTINGS
@given(seeds, st.integers(1, 15))
def test_never_worse_on_random_lcps(seed, n):
    check_never_worse(*random_lcp(seed, n))


@SETTINGS
@given(seeds, st.integers(1, 8), st.integers(3, 18))
def test_warm_start_is_never_worse(seed, k, dofs):
    """A warm start from a wrong basis still certifies whatever Lemke certifies."""
    M, q = contact_lcp(seed, k, dofs, 4, 1.0)
    rng = np.random.default_rng(seed)
    basis = np.flatnonzero(rng.random(k) < 0.5)
    warm = solve(M, q, method="robust", initial_basis=basis)
    if solve(M, q, method="lemke").success or solve(M, q, method="lexicographic").success:
        assert warm.success, (warm.status, dict(warm.info))
