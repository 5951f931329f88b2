"""Islands (contact_lcp.contact.islands): a step's contacts split into problems that share
no moving body, each solved alone, must give what the monolithic solve gives."""

import dataclasses

import numpy as np
import pytest

from contact_lcp.contact.islands import island_labels, solve_islands
from contact_lcp.contact.models import make_model
from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict
from contact_lcp.sim.scene import model_settings

R = 0.05


def two_stacks(model, islands=True, slide=0.0, options=None):
    """Two stacks of two spheres (r = 5 cm, 1 kg) on the ground, 1 m apart; the upper
    sphere of the second stack is pushed sideways at ``slide`` [m/s] so that it rolls off
    and the stacks' contacts are not mirror images of each other. ``auto`` splits them
    (limit 2 contacts per pyramid island: the whole, 3-4 contacts, is above it)."""
    if options is None:
        options = {"max_pyramid_contacts": 2} if model == "auto" else {}
    bodies = []
    for s, x in enumerate((0.0, 1.0)):
        for j in range(2):
            bodies.append({"name": f"s{s}{j}", "shape": "sphere", "size": [R], "mass": 1.0,
                           "pose": [x + 0.002 * j * s, 0, R + 2 * R * j, 0, 0, 0, 1],
                           "velocity": [slide * s * j, 0, 0, 0, 0, 0]})
    return Simulator(scene_from_dict({
        "time_step": 0.01, "gravity": [0, 0, -9.81], "ground": {"friction": 0.5},
        "bodies": bodies, "contact": {"model": model, "islands": islands,
                                      "options": options}}))


@pytest.mark.parametrize("model, whole_model", [("auto", "pyramid"), ("relaxed", "relaxed")])
def test_two_stacks_give_the_same_forces_split_or_not(model, whole_model):
    # The stacks share no moving body: two islands (auto: the pyramid model on each,
    # against the pyramid on the whole). Each island's LCP is the monolithic LCP's
    # diagonal block, and a sphere stack's impulses and velocities are unique, so the
    # split and the monolithic solve must agree to the certification's tolerance (both answers are
    # certified to ~1e-12 of the impulses here; 1e-9 N.s leaves room for round-off
    # differences between a small and a large factorisation, far below m g h = 0.098 N.s).
    split, whole = two_stacks(model, True, 0.3), two_stacks(whole_model, False, 0.3)
    for _ in range(30):
        a, b = split.step(), whole.step()
        assert a.report.info["islands"] == 2 and split.islands == 2 and whole.islands == 1
        assert "islands" not in b.report.info
        np.testing.assert_allclose(split._last.impulse_C, whole._last.impulse_C, rtol=0,
                                   atol=1e-9)
        np.testing.assert_allclose(split.v, whole.v, rtol=0, atol=1e-9)
    assert split.stats.lcp_failures == whole.stats.lcp_failures == 0
    # the bottom spheres carry both spheres' weight while the stacks stand
    k = split._last.impulse_C
    assert k[:, 0].sum() > 0.0


def test_labels_follow_bodies_and_ignore_the_ground():
    sim = two_stacks("auto")
    sim.step()
    p = sim._last.problem
    count, labels, dofs = island_labels(p.J, p.K, p.num_contacts, p.num_limits)
    assert count == 2
    c = sim._last.contacts
    stack = []
    for a, b in zip(c.body_a, c.body_b):
        touched = {n[1] for n in (c.names[a], c.names[b]) if n.startswith("s")}
        assert len(touched) == 1  # a contact touches one stack (and maybe the ground)
        stack.append(touched.pop())
    stack = np.array(stack)
    for x in ("0", "1"):
        assert np.unique(labels[stack == x]).size == 1
    assert labels[stack == "0"][0] != labels[stack == "1"][0]
    # each island moves only its own stack's coordinates (a sphere's diagonal mass
    # matrix leaves a coordinate no contact row reads, e.g. the spin about a vertical
    # normal, in no island: -1)
    first, second = labels[stack == "0"][0], labels[stack == "1"][0]
    assert set(dofs[:12]) <= {first, -1} and set(dofs[12:]) <= {second, -1}
    assert np.count_nonzero(dofs[:12] == first) >= 6


def test_a_model_without_islands_is_solved_whole():
    sim = two_stacks("auto", options={})
    sim.step()
    problem = sim._last.problem
    model = make_model("viscous", model_settings(sim.scene))
    assert not model.islands and not make_model("pyramid").islands
    sol = solve_islands(model, problem)
    assert "islands" not in sol.report.info


def test_auto_solves_a_problem_within_its_pyramid_size_whole_as_the_pyramid_does():
    # below max_pyramid_contacts every island would take the pyramid: auto solves the
    # whole problem as the pyramid model does (no labelling: a robot's step costs the
    # same), bit for bit
    auto, pyramid = two_stacks("auto", options={}), two_stacks("pyramid")
    for _ in range(20):
        a, b = auto.step(), pyramid.step()
        assert "islands" not in a.report.info and auto.islands == 1
        np.testing.assert_array_equal(auto._last.impulse_C, pyramid._last.impulse_C)
    np.testing.assert_array_equal(auto.v, pyramid.v)


def test_islands_key_is_validated():
    with pytest.raises(SceneError, match="islands"):
        scene_from_dict({"bodies": [{"name": "b", "shape": "sphere", "size": [0.1],
                                     "mass": 1.0, "pose": [0, 0, 1, 0, 0, 0, 1]}],
                         "contact": {"islands": "sometimes"}})


def test_the_last_basis_solves_each_island_of_a_resting_scene():
    # Two resting stacks: once settled, each island's last basis solves it alone, and
    # the step counts as solved by the last basis (one rung per island).
    sim = two_stacks("auto")
    for _ in range(20):
        r = sim.step().report
    assert r.info["islands"] == 2 and r.rungs == ("last_basis:solved",) * 2
    assert r.last_basis_only
