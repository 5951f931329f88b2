"""FIND-INDICES (S4, Alg. 2): independent tangential rows of redundant contacts."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from contact_lcp.contact.find_indices import find_indices
from contact_lcp.lcp.cholesky import IncrementalCholesky


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(1, 40))
def test_selected_rows_are_independent_and_span_all(seed, nv, rows):
    """The kept rows have a non-singular Gram block, and every row lies in their span
    (so an equality on the kept rows enforces all of them)."""
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((rows, nv))
    if rows > 2:
        J[rows // 2] = 0.5 * J[0] - 2.0 * J[1]  # a planted dependent row
    B = rng.standard_normal((nv, nv))
    K = np.linalg.inv(B @ B.T + np.eye(nv))
    G = J @ K @ J.T
    sel, chol = find_indices(G, np.arange(rows), max_rank=nv)
    assert len(sel) == np.linalg.matrix_rank(J)
    assert np.linalg.matrix_rank(J[sel]) == len(sel)
    # every row is a combination of the kept ones
    coef, *_ = np.linalg.lstsq(J[sel].T, J.T, rcond=None)
    np.testing.assert_allclose(J[sel].T @ coef, J.T, atol=1e-8 * max(1.0, np.abs(J).max()))
    np.testing.assert_allclose(chol.factor() @ chol.factor().T, G[np.ix_(sel, sel)],
                               atol=1e-10 * np.abs(G).max())
    # the same choice as S4's Alg. 2 literally: append each row, keep it if non-singular
    one_by_one, kept = IncrementalCholesky(1), []
    for i in range(rows):
        if len(kept) < nv and one_by_one.try_append(G[kept, i], G[i, i]):
            kept.append(i)
    assert list(sel) == kept


def test_box_on_plane_keeps_three_tangent_rows_of_eight():
    """Four coplanar corners of a box on z = 0 give 8 tangent rows (x, y at each corner),
    but tangential motions of a rigid body in the plane are 3-dimensional (vx, vy, wz)."""
    corners = [(sx * 0.1, sy * 0.1, -0.05) for sx in (-1, 1) for sy in (-1, 1)]
    J = np.zeros((8, 6))
    for c, r in enumerate(corners):
        for a, t in enumerate(np.eye(3)[:2]):
            J[2 * c + a, :3] = t
            J[2 * c + a, 3:] = np.cross(r, t)
    sel, _ = find_indices(J @ J.T, np.arange(8))
    assert len(sel) == 3
    assert list(sel[:2]) == [0, 1]  # the first contact's two rows come first (S4's order)


def test_bad_candidates_are_an_error():
    with pytest.raises(ValueError, match="candidates"):
        find_indices(np.eye(3), [0, 3])
