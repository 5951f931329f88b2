"""The frictional LCP of contacts that couple only through shared bodies (a stack of
boxes): its assembly skips the zero blocks and the first rung's equilibration check reads
only the blocks that couple, with the same answers as the passes over every entry."""

import numpy as np
import pytest

from contact_lcp.contact.lcp_builder import _assemble
from contact_lcp.contact.pyramid_kernel import _coupling, _pattern_row_scales
from contact_lcp.lcp.residual import balanced_row_scales
from contact_lcp.lcp.scaling import MAX_SWEEPS, _ruiz


def _stack(rng, m, bodies, d):
    """A random LCP of ``m`` contacts between ``bodies`` free bodies and the ground
    (body 0): each body's 6x6 block of K on its own, so two contacts couple only when
    they share a body. Returns ``(G, u, mu, bias, cos, sin, pairs)``."""
    pairs = [tuple(sorted(rng.choice(bodies + 1, 2, replace=False))) for _ in range(m)]
    J = np.zeros((3 * m, 6 * bodies))
    for a, pair in enumerate(pairs):
        for body in pair:
            if body > 0:
                J[3 * a:3 * a + 3, 6 * (body - 1):6 * body] = rng.normal(size=(3, 6))
    K = np.zeros((6 * bodies, 6 * bodies))
    for b in range(bodies):
        A = rng.normal(size=(6, 6))
        K[6 * b:6 * b + 6, 6 * b:6 * b + 6] = A @ A.T + np.eye(6)
    G = J @ K @ J.T
    angle = rng.uniform(0, 2 * np.pi, m)[:, None] + 2 * np.pi * np.arange(d) / d
    return (G, rng.normal(size=3 * m), rng.uniform(0, 1, m), rng.normal(size=m),
            np.cos(angle), np.sin(angle), pairs)


def _bits(x):
    return np.ascontiguousarray(x).view(np.int64)


@pytest.mark.parametrize("d", [4, 8])
def test_the_coupled_blocks_pass_gives_the_full_passs_bits(d):
    rng = np.random.default_rng(d)
    apart = balanced = 0
    for trial in range(150):
        m, bodies = int(rng.integers(2, 9)), int(rng.integers(2, 6))
        G, u, mu, bias, cos, sin, pairs = _stack(rng, m, bodies, d)
        if trial % 10 == 0:  # a NaN in G: its block counts as coupled, and passes as max does
            G[rng.integers(3 * m), rng.integers(3 * m)] = np.nan
        M, q = _assemble(G, u, mu, bias, m, 0, d, cos, sin)
        coupled, sparse = _coupling(G, m, d)
        for a in range(m):
            for b in range(m):
                if not set(pairs[a]) & set(pairs[b]) - {0} and np.isfinite(G).all():
                    assert not coupled[a, b]  # contacts that share no body
        apart += not coupled.all()
        n = M.shape[0]
        if trial % 2:  # factors that balance M (a step whose last factors still fit)
            d1, d2, _, _ = _ruiz(M, q, np.int64(MAX_SWEEPS))
        else:
            d1, d2 = 2.0 ** rng.integers(-6, 6, n), 2.0 ** rng.integers(-6, 6, n)
        big, rows, ok = _pattern_row_scales(M, d1, d2, m, d, coupled)
        want_big, want_rows, want_ok = balanced_row_scales(M, d1, d2)
        assert np.array_equal(_bits(big), _bits(want_big))
        assert np.array_equal(_bits(rows), _bits(want_rows))
        assert ok == want_ok
        balanced += ok
    # (both verdicts, and problems with contacts apart, were exercised)
    assert apart > 50 and 0 < balanced < 150


def test_the_assembly_of_contacts_apart_keeps_their_blocks_zero_and_the_rest_exact():
    rng = np.random.default_rng(1)
    d = 8
    for _ in range(50):
        m = int(rng.integers(2, 8))
        G, u, mu, bias, cos, sin, pairs = _stack(rng, m, int(rng.integers(2, 5)), d)
        M, q = _assemble(G, u, mu, bias, m, 0, d, cos, sin)
        # the same LCP from its definition, w = [N C]' (G [N C] x + u) plus the pyramid rows
        B = np.zeros((3 * m, m + m * d))
        for a in range(m):
            B[3 * a, a] = 1.0
            B[3 * a + 1, m + a * d:m + (a + 1) * d] = cos[a]
            B[3 * a + 2, m + a * d:m + (a + 1) * d] = sin[a]
        want = B.T @ G @ B
        top = M[:m + m * d, :m + m * d]
        assert np.allclose(top, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        for a in range(m):
            for b in range(m):
                if not set(pairs[a]) & set(pairs[b]) - {0}:
                    edges_a = slice(m + a * d, m + (a + 1) * d)
                    edges_b = slice(m + b * d, m + (b + 1) * d)
                    assert not M[edges_a, edges_b].any() and M[a, b] == 0.0
