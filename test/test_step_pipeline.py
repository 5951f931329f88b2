"""The step pipeline (sim/stepper.py over sim/step_data.py): one path for every step.

What each stage writes into the step data must be what the next one read and what the
step applied; the common case (same contacts, the last basis certifies) must stay the
contact model's first rung, one compiled solve; and the warm start is a value the step
hands from one solve to the next, so a step from a given state and guess is determined.
"""

import numpy as np
import pytest

from contact_lcp.sim import Simulator

# (scene, steps, least share of the second half's steps that the contact model's first
# rung solves alone): a standing humanoid, a box resting on the ground and a tower of 5
# boxes keep their contacts and basis (measured: 1.0 each); a box sliding down an
# incline (its pyramids turned to the slip each step: the basis misses on every other
# step, and the search on the loaded contacts solves it) and 21 spheres settling in a
# walled box (whose contacts change) only need to be consistent
SCENES = [("config/humanoid_stand.yaml", 200, 0.9), ("config/box_on_plane.yaml", 150, 0.9),
          ("config/tower_5.yaml", 200, 0.9), ("config/incline.yaml", 150, 0.0),
          ("config/spheres_21.yaml", 100, 0.0)]


@pytest.mark.parametrize("path,steps,share", SCENES)
def test_each_stage_writes_what_the_next_read_and_the_step_applied(path, steps, share):
    sim = Simulator.from_file(path)
    data = sim.stepper.data
    first = []
    for n in range(steps):
        v0 = sim.v
        info = sim.step()
        problem, sol = data.problem, data.solution
        if problem is None:  # no contact or limit row this step
            assert len(data.contacts) == 0 and data.solution is None
            continue
        k = problem.num_contacts
        # the problem's contacts are the active ones, a subset of those found, in order
        assert len(data.contacts) == k <= len(data.found)
        keys = data.found.body_a * 10 ** 6 + data.found.body_b
        assert np.all(np.isin(data.contacts.body_a * 10 ** 6 + data.contacts.body_b, keys))
        np.testing.assert_array_equal(problem.p_W, data.contacts.p_W)
        # the problem was built from this step's free motion and state
        np.testing.assert_array_equal(problem.v_free, data.v_free)
        np.testing.assert_array_equal(problem.v, v0)
        np.testing.assert_allclose(problem.u, problem.J @ data.v_free, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(problem.u).max()))
        # the velocity over the step is the free motion plus the applied impulse (the
        # solver's answer: min_norm forces, read later, have its velocities to round-off)
        if not sol.safe_stop:
            g = problem.J.T @ sol.solved if sol.generalized is None else sol.generalized
            np.testing.assert_allclose(data.v_step, data.v_free + data.K @ g, rtol=0,
                                       atol=1e-12 * max(1.0, np.abs(data.v_step).max()))
        # the record the simulator kept is this step's
        np.testing.assert_array_equal(sim._last.impulse_C.ravel(), sol.f[:3 * k])
        assert info.report is sim._last.report
        # the guess for the next step is the one the applied solve returned
        assert data.guess is sol.guess
        if n >= steps // 2:
            first.append(info.report.last_basis_only)
    assert np.mean(first) >= share, f"{np.mean(first):.2f} of the settled steps"


def test_the_guess_is_the_only_memory_of_the_step():
    # Two runs of the tower, step for step the same; clearing one's guess (its only
    # memory between steps) makes its next contact solve start cold (the ladder's first
    # rungs instead of the last step's basis: more solves), yet the certified velocities
    # agree (the impulses need not: four coplanar corners per interface share the load
    # in many ways), and from then on the runs stay together. At rest (200 steps: the
    # first ~100 still settle, their warm solves adding contacts).
    a = Simulator.from_file("config/tower_5.yaml")
    b = Simulator.from_file("config/tower_5.yaml")
    for _ in range(200):
        ia, ib = a.step(), b.step()
        assert np.array_equal(a.q, b.q) and ia.report.pivots == ib.report.pivots
    assert b.stepper.data.guess is not None
    b.stepper.data.guess = None
    ia, ib = a.step(), b.step()
    assert ia.report.rungs == ("last_basis:solved",) and ia.report.solves == 1
    assert "last_basis:solved" not in ib.report.rungs and ib.report.solves > 1
    np.testing.assert_allclose(b.v, a.v, rtol=0, atol=1e-9)
    for _ in range(20):
        a.step(), b.step()
    np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls_path", ["contact_lcp.contact.problem.ContactProblem",
                                      "contact_lcp.contact.guess.PyramidGuess",
                                      "contact_lcp.sim.stepper.StepRecord",
                                      "contact_lcp.collision.contact_set.ContactSet",
                                      "contact_lcp.sim.stats.StepInfo"])
def test_a_step_record_s_own_init_takes_and_stores_every_field(cls_path):
    """The step's frozen records have an ``__init__`` of their own (one dict update, not
    one object.__setattr__ per field): it must take every dataclass field, in order, with
    the fields' defaults, store each one, and leave the record frozen."""
    import dataclasses
    import importlib
    import inspect

    module, name = cls_path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    fields = dataclasses.fields(cls)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    required = [f.name for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    assert [p.name for p in params if p.default is inspect.Parameter.empty] == required
    # a distinct empty array per field (a contact set reads its size from its distances)
    values = {f.name: np.zeros(0) for f in fields}
    record = cls(**values)
    for f in fields:
        assert getattr(record, f.name) is values[f.name], f.name
    defaults = cls(*(values[n] for n in required))
    for f in fields:
        if f.name in required:
            continue
        want = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        got = getattr(defaults, f.name)
        if isinstance(want, np.ndarray):
            assert isinstance(got, np.ndarray) and got.shape == want.shape and \
                got.dtype == want.dtype, f.name
        else:
            assert got == want and type(got) is type(want), f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, fields[0].name, 1)


def test_a_step_that_meets_more_contacts_than_the_scene_allows_stops_and_says_so():
    # A box dropped 2 mm lands on its four corners; with contact.max_contacts = 2 the step
    # that finds them stops with a SimulationError that names the limit (not "would not be
    # finite": the state is fine), and the simulator keeps the last state.
    from contact_lcp.sim import SimulationError, scene_from_dict

    sim = Simulator(scene_from_dict({
        "time_step": 1e-3, "ground": {"height": 0.0},
        "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 2.0,
                    "pose": [0, 0, 0.052, 0, 0, 0, 1]}],
        "contact": {"max_contacts": 2}}, base_dir="."))
    for _ in range(100):
        q, v, t = sim.q, sim.v, sim.t
        try:
            sim.step()
        except SimulationError as e:
            message = str(e)
            break
    else:
        pytest.fail("the box never met the ground")
    assert f"the step from t = {t:.4f} s stopped: 4 contact points, more than " \
           "contact.max_contacts = 2" in message and "finite" not in message
    np.testing.assert_array_equal(sim.q, q)
    np.testing.assert_array_equal(sim.v, v)
    assert sim.t == t
