"""Sleep (contact_lcp.sim.sleep): a pile at rest falls asleep, and a body dropped on it
wakes it and moves as it would on a pile that never slept."""

import numpy as np
import pytest

from contact_lcp.exceptions import SceneError
from contact_lcp.sim import Simulator, scene_from_dict

R = 0.05


def pile_and_ball(sleep, ball_height=0.6, sleep_time=0.1):
    """Three spheres (r = 5 cm, 1 kg) side by side on the ground, touching, and a ball
    (r = 5 cm, 0.5 kg) above the middle one, a little off its axis so that it rolls off
    it sideways after landing."""
    bodies = [{"name": f"p{i}", "shape": "sphere", "size": [R], "mass": 1.0,
               "pose": [2 * R * (i - 1), 0, R, 0, 0, 0, 1]} for i in range(3)]
    bodies.append({"name": "ball", "shape": "sphere", "size": [R], "mass": 0.5,
                   "pose": [0.01, 0.0, ball_height, 0, 0, 0, 1]})
    return Simulator(scene_from_dict({
        "time_step": 0.01, "gravity": [0, 0, -9.81], "ground": {"friction": 0.5},
        "bodies": bodies,
        "contact": {"sleep": sleep, "sleep_time": sleep_time, "sleep_speed": 5e-3}}))


def test_a_pile_at_rest_falls_asleep_and_the_ball_does_not():
    sim = pile_and_ball(True, ball_height=5.0)  # the ball falls for ~1 s
    for _ in range(20):
        sim.step()
    assert sim.sleep.count == 3 and sim.sleeping_bodies == 3
    assert not sim.sleep.asleep[3]  # the falling ball is not still
    q = sim.q
    for _ in range(10):  # asleep: held exactly where they are
        sim.step()
    np.testing.assert_array_equal(sim.q[:21], q[:21])
    assert np.all(sim.v[:18] == 0.0)


def test_sleep_is_off_by_default_and_when_turned_off():
    sim = pile_and_ball(False, ball_height=5.0)
    for _ in range(20):
        sim.step()
    assert sim.sleep is None and sim.sleeping_bodies == 0
    default = Simulator(scene_from_dict({"bodies": [
        {"name": "b", "shape": "sphere", "size": [R], "mass": 1.0,
         "pose": [0, 0, R, 0, 0, 0, 1]}]}))
    assert default.sleep is None


def test_a_ball_dropped_on_a_sleeping_pile_wakes_it_and_moves_as_on_an_awake_one():
    asleep, awake = pile_and_ball(True), pile_and_ball(False)
    woke = False
    for n in range(60):  # 0.6 s: the ball lands at ~0.3 s and rolls off the middle sphere
        asleep.step()
        awake.step()
        if n == 15:
            assert asleep.sleep.count == 3  # the pile slept before the ball came
        if n > 15 and asleep.sleep.count == 0:
            woke = True
        # Asleep, the pile holds exactly still; awake, it rests with whatever velocity
        # its contacts leave (exactly 0 on this symmetric pile, where the runs agree bit
        # for bit; a pile with residual creep below the sleep speed would differ by that
        # creep over the sleep, hence 1e-6 m and 1e-4 m/s, far below the ball's 2.7 m/s).
        np.testing.assert_allclose(asleep.q, awake.q, rtol=0, atol=1e-6)
        np.testing.assert_allclose(asleep.v, awake.v, rtol=0, atol=1e-4)
    assert woke
    # the ball did land on the pile and push it: the middle sphere moved
    assert np.abs(awake.v[6:9]).max() > 1e-3 or np.abs(awake.q[7:9] - 0.0).max() > 1e-4


@pytest.mark.parametrize("key, value", [("sleep", "yes"), ("sleep_speed", -1.0),
                                        ("sleep_time", 0), ("sleep_speed", "fast")])
def test_sleep_keys_are_validated(key, value):
    with pytest.raises(SceneError, match=f"contact.{key}"):
        scene_from_dict({"bodies": [{"name": "b", "shape": "sphere", "size": [R],
                                     "mass": 1.0, "pose": [0, 0, R, 0, 0, 0, 1]}],
                         "contact": {key: value}})
