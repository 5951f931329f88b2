"""``contact.model: auto`` (contact_lcp.contact.auto): the pyramid model per island up to
``max_pyramid_contacts`` contacts, the relaxed model above, each island's report naming
the model that solved it."""

import numpy as np
import pytest

from contact_lcp.contact.auto import MAX_PYRAMID_CONTACTS, AutoModel
from contact_lcp.contact.base import ModelSettings
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict

R = 0.05


def stacks(heights, limit=None):
    """Stacks of spheres (r = 5 cm, 1 kg) on the ground, 1 m apart, ``heights[i]``
    spheres high (a stack of n spheres has n contacts)."""
    bodies = []
    for s, n in enumerate(heights):
        for j in range(n):
            bodies.append({"name": f"s{s}_{j}", "shape": "sphere", "size": [R], "mass": 1.0,
                           "pose": [float(s), 0, R + 2 * R * j, 0, 0, 0, 1]})
    contact = {"model": "auto"}
    if limit is not None:
        contact["options"] = {"max_pyramid_contacts": limit}
    return Simulator(scene_from_dict({"time_step": 0.01, "bodies": bodies,
                                      "contact": contact}))


def test_each_island_takes_the_model_of_its_size():
    # a stack of one sphere (1 contact) and one of three (3 contacts); with the limit at 2
    # the first is solved by pyramid, the second by relaxed, and the report says so
    sim = stacks([1, 3], limit=2)
    info = sim.step()
    r = info.report
    assert r.info["islands"] == 2
    by_size = dict(zip(r.info["island_sizes"], r.info["island_models"]))
    assert by_size == {1: "pyramid", 3: "relaxed"}
    assert r.certified and sim.stats.lcp_failures == 0


def test_the_default_limit_keeps_small_islands_on_the_pyramid():
    # two stacks of 2 and, over the default limit in all, one of 44 contacts: the small
    # islands are the pyramid's, the large one the relaxation's
    assert 2 <= MAX_PYRAMID_CONTACTS < 44
    sim = stacks([2, 2, 44])
    for _ in range(3):
        r = sim.step().report
    by_size = dict(zip(r.info["island_sizes"], r.info["island_models"]))
    assert by_size == {2: "pyramid", 44: "relaxed"}
    # within the limit in all, the whole problem is the pyramid's (no island labelling)
    r = stacks([2, 2]).step().report
    assert "island_models" not in r.info and r.applied == "pyramid"


def test_auto_matches_its_models_island_by_island():
    # the same scene under auto (limit 2) and under each model alone: the pyramid
    # island moves as under pyramid, the relaxed one as under relaxed (islands share no
    # body, so each one's motion is its own model's)
    def run(model, limit=None):
        contact = {"model": model}
        if limit is not None:
            contact["options"] = {"max_pyramid_contacts": limit}
        bodies = [{"name": "a", "shape": "sphere", "size": [R], "mass": 1.0,
                   "pose": [0, 0, R, 0, 0, 0, 1], "velocity": [0.5, 0, 0, 0, 0, 0]}]
        bodies += [{"name": f"b{j}", "shape": "sphere", "size": [R], "mass": 1.0,
                    "pose": [1.0, 0, R + 2 * R * j, 0, 0, 0, 1],
                    "velocity": [0.3 * j, 0, 0, 0, 0, 0]} for j in range(3)]
        sim = Simulator(scene_from_dict({"time_step": 0.01, "bodies": bodies,
                                         "contact": contact}))
        for _ in range(20):
            sim.step()
        return sim.v

    auto, pyr, rel = run("auto", 2), run("pyramid"), run("relaxed")
    np.testing.assert_allclose(auto[:6], pyr[:6], rtol=0, atol=1e-9)
    np.testing.assert_allclose(auto[6:], rel[6:], rtol=0, atol=1e-9)
    assert np.abs(pyr[6:] - rel[6:]).max() > 1e-6  # (the two models do differ here)


@pytest.mark.parametrize("value", [-1, 2.5, "many", True])
def test_a_bad_limit_is_a_scene_error(value):
    with pytest.raises(SceneError, match="max_pyramid_contacts"):
        AutoModel(ModelSettings(options={"max_pyramid_contacts": value}))
