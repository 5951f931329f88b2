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


def _world():
    """A stand-in world for the Sleep record: free bodies 'a' and 'b' (6 coordinates
    each, after a robot 'arm' with 2 joints), a robot 'walls' without coordinates, the
    ground; one geometry each."""
    from types import SimpleNamespace as NS

    from contact_lcp.dynamics.world import GROUND

    bodies = [NS(name="a", v_slice=slice(2, 8), size=(R,)),
              NS(name="b", v_slice=slice(8, 14), size=(R,))]
    robots = [NS(name="arm", v_slice=slice(0, 2)), NS(name="walls", v_slice=slice(14, 14))]
    return NS(bodies=bodies, robots=robots, geometry_owner=["arm", "walls", "a", "b", GROUND])


def _contacts(pairs):
    from types import SimpleNamespace as NS

    return NS(body_a=np.array([p[0] for p in pairs], dtype=int),
              body_b=np.array([p[1] for p in pairs], dtype=int))


@pytest.mark.parametrize("touching, sleeps", [((1, 2), True), ((0, 2), False)])
def test_an_island_touching_a_robot_that_can_move_never_sleeps(touching, sleeps):
    # 'a' rests on the ground (geometry 4) and on the fixed walls or on the commanded
    # arm; 'b' rests on 'a'. Still for long enough, the pile sleeps beside the walls
    # but never while the arm touches it.
    from contact_lcp.sim.sleep import Sleep

    sleep = Sleep(_world(), speed=5e-3, time=0.05, h=0.01)
    contacts = _contacts([(4, 2), touching, (2, 3)])
    for _ in range(10):
        sleep.update(np.zeros(14), contacts)
    assert sleep.asleep.tolist() == [sleeps, sleeps]
    if sleeps:  # held still as prescribed coordinates, beside the robot's own
        idx, v = sleep.prescribe(np.array([0]), np.array([0.3]))
        assert idx.tolist() == [0] + list(range(2, 14)) and v[0] == 0.3 and not v[1:].any()
