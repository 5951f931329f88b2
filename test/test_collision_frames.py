"""Contact frames, the reduction helpers and the friction combination rule."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contact_lcp.collision import ContactPoint, combine_friction, tangent_basis
from contact_lcp.collision.reduction import hull_vertices, remove_close

unit_vectors = st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3).filter(
    lambda v: np.linalg.norm(v) > 1e-3).map(lambda v: np.array(v) / np.linalg.norm(v))


@settings(max_examples=200, deadline=None)
@given(unit_vectors)
def test_frame_is_right_handed_orthonormal_with_n_first(n):
    R = tangent_basis(n)
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0)
    assert np.array_equal(R[:, 0], n)


@settings(max_examples=100, deadline=None)
@given(unit_vectors, st.tuples(*[st.floats(-1e-4, 1e-4)] * 3))
def test_frame_is_continuous_away_from_the_switch(n, dn):
    if abs(abs(n[0]) - 0.9) < 1e-2:
        return
    m = n + np.array(dn)
    m /= np.linalg.norm(m)
    assert np.abs(tangent_basis(n) - tangent_basis(m)).max() < 1e-2


def test_ground_frame_is_z_x_y_and_tilted_normals_keep_it_close():
    assert np.array_equal(tangent_basis([0.0, 0.0, 1.0]), np.eye(3)[:, [2, 0, 1]])
    tilt = np.array([0.01, -0.02, 1.0]) / np.linalg.norm([0.01, -0.02, 1.0])
    assert np.abs(tangent_basis(tilt) - np.eye(3)[:, [2, 0, 1]]).max() < 0.03
    c = ContactPoint("ground", "b", 0, 1, np.zeros(3), np.array([0.0, 0.0, 1.0]), 0.0, 0.5)
    assert np.array_equal(c.frame(), tangent_basis(c.n_W))


def test_remove_close_keeps_the_first_of_each_cluster():
    P = np.array([[0, 0, 0], [5e-4, 0, 0], [2e-3, 0, 0], [2.6e-3, 0, 0], [0, 0, 9e-4]])
    assert remove_close(P, 1e-3) == [0, 2]
    assert remove_close(P, 1e-4) == [0, 1, 2, 3, 4]


def test_hull_vertices_drop_interior_and_edge_points():
    square = [(0, 0), (1, 0), (1, 1), (0, 1)]
    extra = [(0.5, 0.5), (0.5, 0.0), (0.2, 0.7)]
    assert hull_vertices(np.array(extra[:1] + square + extra[1:])) == [1, 2, 3, 4]
    assert hull_vertices(np.array([(0, 0), (1, 1), (2, 2)])) == [0, 2]  # a segment
    assert hull_vertices(np.array([(0, 0), (1, 1)])) == [0, 1]


@pytest.mark.parametrize("a, b, expected", [(0.5, 0.5, 0.5), (1.0, 0.5, 2 / 3), (0.0, 0.7, 0.0),
                                            (0.0, 0.0, 0.0)])
def test_combine_friction(a, b, expected):
    assert combine_friction(a, b) == pytest.approx(expected)
    assert combine_friction(b, a) == combine_friction(a, b)
    assert min(a, b) <= combine_friction(a, b) <= max(a, b)
