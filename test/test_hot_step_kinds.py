"""Which closed forms the compiled hot step compiles for a scene
(:func:`contact_lcp.sim.hot_step.closed_form_kinds`): only the kinds of the scene's pairs,
sorted as ``_narrow`` sorts them (a polytope on the ground first, then spheres, then
box-box pairs, then curved shapes on the ground with a cap on points)."""

import os

import numpy as np
import pytest

from contact_lcp.sim.hot_step import closed_form_kinds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _compiled_pass(on_ground, sphere_kind, box_pair, ground_pair, curved_second, cap=4):
    """A detector's compiled_pass with the per-pair fields given (geometry 0 the ground,
    geometry p + 1 the second of pair p) and placeholders elsewhere."""
    n = len(on_ground)
    second = np.arange(1, n + 1)
    curved_kind = np.concatenate(([0], np.asarray(curved_second, dtype=np.int64)))
    return (np.zeros((0, 3)), np.zeros(1, dtype=np.int64), 0.0, 1e-3, 1e-6, 1e-6, True, cap,
            np.zeros(n, dtype=np.int64), second, np.asarray(on_ground, dtype=bool),
            np.asarray(sphere_kind, dtype=np.int64), np.asarray(box_pair, dtype=bool),
            np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1), np.zeros((n + 1, 3)), np.zeros(n),
            np.asarray(ground_pair, dtype=bool), curved_kind, np.zeros((n + 1, 2)), 8)


def test_polytopes_on_the_ground_need_no_other_closed_form():
    # a foot on the ground whose sphere kind and box flag the ground's closed form takes first
    cp = _compiled_pass([True, True], [2, 0], [False, True], [True, True], [1, 1])
    assert closed_form_kinds(cp) == (None, None, None)


@pytest.mark.parametrize("pair, kinds", [
    (dict(sphere_kind=[1], box_pair=[True]), (True, None, None)),  # spheres first
    (dict(sphere_kind=[0], box_pair=[True]), (None, True, None)),
    (dict(sphere_kind=[0], box_pair=[False], ground_pair=[True], curved_second=[2]),
     (None, None, True)),
])
def test_each_kind_of_pair_compiles_its_closed_form(pair, kinds):
    args = {**dict(on_ground=[False], ground_pair=[False], curved_second=[0]), **pair}
    assert closed_form_kinds(_compiled_pass(**args)) == kinds


def test_curved_shapes_need_a_ground_pair_and_a_cap():
    off_ground = _compiled_pass([False], [0], [False], [False], [3])
    assert closed_form_kinds(off_ground) == (None, None, None)
    no_cap = _compiled_pass([False], [0], [False], [True], [3], cap=0)
    assert closed_form_kinds(no_cap) == (None, None, None)


@pytest.mark.parametrize("scene, kinds", [("tower_5.yaml", (None, True, None)),
                                          ("humanoid_stand.yaml", (True, None, True))])
def test_bundled_scenes(scene, kinds):
    from contact_lcp.sim import Simulator

    sim = Simulator.from_file(os.path.join(ROOT, "config", scene))
    assert closed_form_kinds(sim.detector.compiled_pass) == kinds
