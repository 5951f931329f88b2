"""Convex pieces as arrays (contact_lcp.collision.polytope): facets, edges, distances."""

import coal
import numpy as np
import pytest

from contact_lcp.collision.polytope import (
    polytope_of,
    segment_closest,
    triangle_distances,
)


def cube_hull(h=0.5):
    pts = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)], dtype=float)
    m = coal.BVHModelOBBRSS()
    m.beginModel(0, 0)
    m.addVertices(pts)
    m.endModel()
    m.buildConvexHull(True, "Qt")
    return m.convex


@pytest.mark.parametrize("shape", [coal.Box(1.0, 2.0, 3.0), cube_hull()],
                         ids=["box", "convex_hull"])
def test_a_box_has_six_facets_and_twelve_edges(shape):
    P = polytope_of(shape)
    # qhull triangulates each face: coplanar triangles are merged back into one facet.
    assert P.num_facets == 6 and len(P.edges) == 12
    assert np.allclose(np.linalg.norm(P.normals, axis=1), 1.0)
    # Every vertex on or inside every facet plane, and on exactly three of them.
    psi = P.vertices @ P.normals.T - P.offsets
    assert np.all(psi <= 1e-12)
    assert np.all(np.sum(np.abs(psi) <= 1e-12, axis=1) == 3)
    # Each edge joins two vertices that share both of its facets.
    for (a, b), (f, g) in zip(P.edges, P.edge_facets):
        for v in (a, b):
            assert abs(psi[v, f]) <= 1e-12 and abs(psi[v, g]) <= 1e-12


def test_point_to_facet_distances_of_a_box():
    P = polytope_of(coal.Box(2.0, 2.0, 2.0))  # [-1, 1]^3
    d = P.facet_distances(np.array([1.5, 0.0, 1.2]))
    top = int(np.argmax(P.normals[:, 2]))
    side = int(np.argmax(P.normals[:, 0]))
    assert d[top] == pytest.approx(np.hypot(0.5, 0.2))   # beside the top: to its edge
    assert d[side] == pytest.approx(np.hypot(0.5, 0.2))  # and symmetric for the side
    bottom = int(np.argmin(P.normals[:, 2]))
    assert d[bottom] == pytest.approx(np.hypot(0.5, 2.2))


def test_triangle_distance_inside_and_outside():
    tri = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    assert triangle_distances(np.array([0.2, 0.2, 0.3]), tri)[0] == pytest.approx(0.3)
    assert triangle_distances(np.array([-1.0, 0.5, 0.0]), tri)[0] == pytest.approx(1.0)


def test_segment_closest_crossing_and_parallel():
    p0, p1 = np.array([[-1.0, 0.0, 0.0]]), np.array([[1.0, 0.0, 0.0]])
    q0 = np.array([[0.5, -1.0, 0.2], [-1.0, 0.0, 1.0]])
    q1 = np.array([[0.5, 1.0, 0.2], [1.0, 0.0, 1.0]])
    s, t, x, y = segment_closest(p0, p1, q0, q1)
    assert s[0, 0] == pytest.approx(0.75) and t[0, 0] == pytest.approx(0.5)
    assert np.allclose(x[0, 0], [0.5, 0.0, 0.0]) and np.allclose(y[0, 0], [0.5, 0.0, 0.2])
    assert np.isnan(s[0, 1]) and np.isnan(t[0, 1])  # parallel: left to the vertex sets
