"""G = J K J' summed block by block over the diagonal blocks of K (contact/problem.py)."""

import numpy as np
import pytest

from contact_lcp.contact.problem import (_blockwise_products, _rows_and_bias,
                                         build_problem, diagonal_blocks)


def _spd(rng, n):
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n)


def _block_diagonal(rng, sizes, zero=()):
    """K with a dense SPD block per entry of ``sizes`` (zero for the indices in ``zero``:
    prescribed coordinates) and the block starts."""
    n = sum(sizes)
    K = np.zeros((n, n))
    starts = np.cumsum([0] + list(sizes))
    for b, (a, e) in enumerate(zip(starts[:-1], starts[1:])):
        if b not in zero:
            K[a:e, a:e] = _spd(rng, e - a)
    return K, starts


def _rows(rng, starts, m, zero_rows=()):
    """Contact-like rows: each touches one or two blocks (a body on the ground, two
    bodies), a few columns of each; the rows in ``zero_rows`` touch nothing."""
    nv = starts[-1]
    J = np.zeros((m, nv))
    nb = len(starts) - 1
    for r in range(m):
        if r in zero_rows:
            continue
        for b in rng.choice(nb, size=min(nb, int(rng.integers(1, 3))), replace=False):
            a, e = starts[b], starts[b + 1]
            cols = rng.choice(np.arange(a, e), size=rng.integers(1, e - a + 1), replace=False)
            J[r, cols] = rng.standard_normal(cols.size)
    return J


def test_diagonal_blocks_are_the_finest_split_with_zeros_between():
    rng = np.random.default_rng(1)
    for _ in range(50):
        sizes = rng.integers(1, 9, size=rng.integers(1, 12))
        K, starts = _block_diagonal(rng, sizes)
        np.testing.assert_array_equal(diagonal_blocks(K), starts)
    # one entry between two blocks joins them (and those in between); a NaN counts
    K, starts = _block_diagonal(rng, [6, 6, 6, 6])
    K[2, 13] = K[13, 2] = np.nan
    np.testing.assert_array_equal(diagonal_blocks(K), [0, 18, 24])
    # a robot's M^-1 is one block; a diagonal matrix (a sphere) is blocks of one
    np.testing.assert_array_equal(diagonal_blocks(_spd(rng, 7)), [0, 7])
    np.testing.assert_array_equal(diagonal_blocks(np.diag([1.0, 2.0, 3.0])), [0, 1, 2, 3])
    # an entry only below the diagonal joins as well (K read as given)
    K = np.eye(4)
    K[3, 0] = 1e-300
    np.testing.assert_array_equal(diagonal_blocks(K), [0, 4])


@pytest.mark.parametrize("seed", range(20))
def test_blockwise_delassus_is_the_dense_product(seed):
    """A stack-like world: free bodies (6 x 6 blocks), a robot (one 12 x 12 block), two
    prescribed coordinates (zero blocks) and rows touching one or two of them, some
    touching none: G is J K J' to round-off and exactly symmetric, u is J v_free."""
    rng = np.random.default_rng(seed)
    sizes = [6] * int(rng.integers(3, 9)) + [12, 1, 1]
    zero = {len(sizes) - 2, len(sizes) - 1}
    K, starts = _block_diagonal(rng, sizes, zero)
    m = int(rng.integers(40, 120))
    J = _rows(rng, starts, m, zero_rows={0, m // 2})
    v_free = rng.standard_normal(K.shape[0])
    done, G, u, _ = _blockwise_products(J, K, v_free, diagonal_blocks(K),
                                          np.zeros(K.shape[0], dtype=bool))
    assert done  # (the world this test is about takes the block path)
    dense = J @ K @ J.T
    scale = np.abs(dense).max()
    np.testing.assert_allclose(G, dense, rtol=0, atol=1e-13 * scale)
    assert np.array_equal(G, G.T)
    np.testing.assert_allclose(u, J @ v_free, rtol=0, atol=1e-13 * np.abs(J).sum(axis=1).max())
    np.testing.assert_array_equal(G[0], 0.0)  # a row that touches nothing
    # and through the problem's own pass, with its bias
    phi = rng.uniform(-1e-3, 1e-3, m)
    finite, G2, u2, bias = _rows_and_bias(J, K, v_free, phi, 1e-3, 0.5, 0.1)
    assert finite
    np.testing.assert_array_equal(G2, G)
    np.testing.assert_array_equal(u2, u)


def test_spheres_diagonal_inverse_is_summed_six_columns_at_a_time():
    # a sphere's M^-1 is diagonal: six blocks of one each; taken together per sphere
    rng = np.random.default_rng(5)
    n_bodies = 12
    K = np.diag(rng.uniform(0.5, 2.0, 6 * n_bodies))
    starts = np.arange(0, 6 * n_bodies + 1, 6)
    J = _rows(rng, starts, 60)
    v_free = rng.standard_normal(K.shape[0])
    done, G, u, _ = _blockwise_products(J, K, v_free, diagonal_blocks(K),
                                          np.zeros(K.shape[0], dtype=bool))
    assert done
    np.testing.assert_allclose(G, J @ K @ J.T, rtol=0, atol=1e-13 * np.abs(J @ K @ J.T).max())


def test_one_block_and_small_worlds_keep_the_one_product():
    """A robot (one block), a robot whose prescribed joints are blocks of their own, and
    a stack too small for the blocks to pay take the one-product path; their G is still
    J K J'."""
    rng = np.random.default_rng(3)
    robot = _spd(rng, 12)
    prescribed = robot.copy()
    prescribed[[3, 7], :] = 0.0
    prescribed[:, [3, 7]] = 0.0
    small, starts = _block_diagonal(rng, [6, 6])
    for K in (robot, prescribed, small):
        J = _rows(rng, np.array([0, K.shape[0]]), 8)
        v_free = rng.standard_normal(K.shape[0])
        used = np.zeros(K.shape[0], dtype=bool)
        done, _, _, nnz = _blockwise_products(J, K, v_free, diagonal_blocks(K), used)
        assert not done
        if nnz >= 0:  # (the blocks' pass read J: its count and columns, for the fallback)
            assert nnz == np.count_nonzero(J)
            np.testing.assert_array_equal(used, (J != 0).any(axis=0))
        problem = build_problem(1e-3, np.tile(np.eye(3), (2, 1, 1)), np.zeros((2, 3)),
                                np.zeros(2), np.full(2, 0.5), J, K, v_free, v_free,
                                limit_gap=np.zeros(2))
        dense = J @ K @ J.T
        np.testing.assert_allclose(problem.G, dense, rtol=0, atol=1e-12 * np.abs(dense).max())
