"""A simulation step's LCP solves share one time budget: none unless the scene sets
``solver.options.time_limit``, so a run's outcome does not depend on the machine's speed
(issue 35: bounded solves must not make simulations machine-dependent)."""

import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.lcp import budget
from contact_lcp.sim import Simulator, scene_from_dict


def box_scene(**options):
    return {"time_step": 1e-3, "gravity": [0, 0, -9.81], "ground": {"friction": 0.6},
            "bodies": [{"name": "box", "shape": "box", "size": [0.2, 0.2, 0.1], "mass": 2.0,
                        "pose": [0, 0, 0.05, 0, 0, 0, 1], "friction": 0.6}],
            "solver": {"method": "robust", "options": options}}


def run(sim, steps):
    for _ in range(steps):
        sim.step()
    return sim.stats


def test_a_scene_s_time_limit_is_the_step_s_budget(monkeypatch):
    """The scene's limit is the budget every solve of the step runs under (the limit only
    binds where a solve checks it: compiled loops of >= 200 rows and the Python-level
    stages; test_bad_lcp.py shows TIME_LIMIT reached)."""
    seen = []  # the limit of the budget each step and each solve in it runs under

    class spy(budget.opened):  # (reusable, as the simulator keeps the step's one)
        __slots__ = ()

        def __enter__(self):
            b = super().__enter__()
            seen.append(b.time_limit)
            return b

    monkeypatch.setattr(budget, "opened", spy)
    run(Simulator(scene_from_dict(box_scene(time_limit=0.25), base_dir=".")), 3)
    assert len(seen) > 3 and set(seen) == {0.25}
    seen.clear()
    run(Simulator(scene_from_dict(box_scene(), base_dir=".")), 3)
    assert len(seen) > 3 and set(seen) == {float("inf")}


@pytest.mark.parametrize("value", [0, -1.0])
def test_a_time_limit_that_is_not_positive_is_refused_at_load(value):
    with pytest.raises(SceneError, match=r"solver\.options\.time_limit.*> 0"):
        Simulator(scene_from_dict(box_scene(time_limit=value), base_dir="."))
