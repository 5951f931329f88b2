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


def test_monotone_chain_agrees_with_qhull():
    from scipy.spatial import ConvexHull

    from contact_lcp.collision.reduction import hull_vertices

    rng = np.random.default_rng(3)
    for _ in range(20):
        xy = rng.uniform(-1, 1, (rng.integers(4, 40), 2))
        assert hull_vertices(xy) == sorted(ConvexHull(xy).vertices.tolist())
    line = np.array([[0, 0], [1, 1], [2, 2], [3, 3]], dtype=float)  # qhull refuses this
    assert hull_vertices(line) == [0, 3]
    assert hull_vertices(np.array([[0.0, 0.0], [1.0, 0.0]])) == [0, 1]


def test_spread_subset_keeps_the_deepest_and_the_extent():
    from contact_lcp.collision.reduction import spread_subset

    xy = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.02], [0.98, 0.5]], dtype=float)
    d = np.array([0, 0, 0, 0, -1e-5, 0])
    keep = spread_subset(xy, d, 4)
    assert 4 in keep and len(keep) == 4  # the deepest point is always kept
    assert {2, 3} <= set(keep)  # the far corners come next


def _tipped_sole():
    """A sole tipped onto its toe edge (x = 0.08 m), as a turning foot's hull is seen
    through a 40 mm search distance: the edge's 4 vertices 0.2-0.4 mm deep and 40 others
    rising away from it at 0.3 m/m (up to 36 mm)."""
    rng = np.random.default_rng(7)
    edge = np.column_stack([np.full(4, 0.08), [-0.149, -0.069, -0.057, -0.043]])
    rest = np.column_stack([rng.uniform(-0.12, 0.06, 40), rng.uniform(-0.15, -0.03, 40)])
    xy = np.vstack([edge, rest])
    d = np.concatenate([[-4.0e-4, -2.6e-4, -4.4e-4, -1.8e-4], 0.3 * (0.08 - rest[:, 0])])
    return xy, d


def test_the_cap_keeps_the_points_in_contact_before_far_ones():
    # Farthest-point sampling alone kept 1 of the edge's points and 7 far ones 6-36 mm up
    # (a limp Talos's foot: the dropped end of its toe edge sank 1.6 mm in the next 1 ms
    # step). Points in contact are sampled first: the edge's two ends stay.
    from contact_lcp.collision.ground import reduce_patch
    from contact_lcp.collision.reduction import spread_subset

    xy, d = _tipped_sole()
    flat = np.where(d <= d.min() + 5e-4, d.min(), d)  # the default flat tolerance, 0.5 mm
    keep = spread_subset(xy, flat, 8)
    assert len(keep) == 8 and sum(i < 4 for i in keep) == 4  # every point in contact
    P = np.column_stack([xy, 0.5 * d])
    kept = reduce_patch(P, d.copy(), 0.005 ** 2, 5e-4, True, 8)  # the compiled ground pass
    assert {0, 3} <= set(kept.tolist())  # the ends of the edge (its middle is on the hull)
    assert len(kept) <= 8


def assert_lower_hull_agrees_with_qhull(xy, d):
    """The points kept by the direct test (not above the lower hull of the others) plus the
    2-D hull are the vertices of qhull's lower facets plus the 2-D hull."""
    from scipy.spatial import ConvexHull

    from contact_lcp.collision.reduction import _above_lower_hull, hull_vertices

    hull = ConvexHull(np.column_stack([xy, d]))
    lower = set(np.unique(hull.simplices[hull.equations[:, 2] < -1e-12]).tolist())
    lower.update(hull_vertices(xy))
    direct = set(np.flatnonzero(~_above_lower_hull(xy, d, 1e-12, np.zeros(len(d), bool))).tolist())
    direct.update(hull_vertices(xy))
    assert direct == lower


def test_direct_lower_hull_test_agrees_with_qhull():
    rng = np.random.default_rng(11)
    for _ in range(40):
        k = int(rng.integers(5, 16))
        assert_lower_hull_agrees_with_qhull(rng.uniform(-0.1, 0.1, (k, 2)),
                                            rng.uniform(0.0, 1e-3, k))


def test_lower_hull_test_on_flattened_soles_agrees_with_qhull():
    """A sole flattened to a few depth levels (most points at the deepest): the shortcuts
    for the deepest level and the highest points give qhull's answer."""
    rng = np.random.default_rng(12)
    for _ in range(60):
        k = int(rng.integers(6, 20))
        d = rng.choice([0.0, 0.0, 0.0, 4e-4, 9e-4], size=k)
        d[0], d[1] = 0.0, 9e-4  # not all on one level (qhull needs a 3-D hull)
        assert_lower_hull_agrees_with_qhull(rng.uniform(-0.1, 0.1, (k, 2)), d)
