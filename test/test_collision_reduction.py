"""Contact reduction keeps the points that can carry load."""

import numpy as np

from contact_lcp.collision.reduction import remove_close, support_vertices


def test_close_points_merge_into_the_deepest():
    P = np.array([[0, 0, 0], [0.0005, 0, 0], [0.1, 0, 0]], dtype=float)
    d = np.array([0.001, -0.0003, 0.0])
    # The second point is deeper than the first: it must be the one kept.
    assert remove_close(P, 1e-3, d) == [1, 2]
    assert remove_close(P, 1e-3) == [0, 2]  # without distances: detection order


def test_flat_patch_keeps_the_polygon_corners():
    xy = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.5, 0]], dtype=float)
    assert support_vertices(xy, np.zeros(6)) == [0, 1, 2, 3]
    # A tilted flat patch (d affine in x, y) is the same polygon.
    assert support_vertices(xy, 0.01 * xy[:, 0] - 0.02 * xy[:, 1]) == [0, 1, 2, 3]


def test_deeper_interior_point_is_kept_and_higher_one_dropped():
    xy = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], dtype=float)
    deep = np.array([0, 0, 0, 0, -1e-4])
    high = np.array([0, 0, 0, 0, 1e-4])
    assert 4 in support_vertices(xy, deep)
    assert 4 not in support_vertices(xy, high)
