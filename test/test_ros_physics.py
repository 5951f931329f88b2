"""The physics thread (contact_lcp/ros/physics.py) on a stand-in simulator; no ROS needed.

The stand-in only counts steps: the loop's pacing, pausing, single steps, resets and
clock offsets are what is tested here (the real simulator runs in test_ros_node.py).
"""

import time
from types import SimpleNamespace

import pytest

from contact_lcp.ros.physics import PhysicsLoop


class CountingSim:
    """h, t, step(), reset() and the snapshot queries, with no physics."""

    def __init__(self, h=0.001, fail_at=None):
        self.h, self.t, self.steps, self.fail_at = h, 0.0, 0, fail_at
        self.stats = SimpleNamespace(steps=0, lcp_failures=0, fallbacks=0, pivots_total=0)

    def step(self):
        if self.fail_at is not None and self.steps >= self.fail_at:
            raise RuntimeError("not finite")
        self.steps += 1
        self.t = self.steps * self.h
        return SimpleNamespace(t=self.t)

    def reset(self):
        self.steps, self.t = 0, 0.0

    def joint_state(self):
        return SimpleNamespace(names=[], position=[], velocity=[], effort=[])

    def base_state(self):
        return None

    def link_wrench(self, link, frame):
        return [0.0] * 6

    def link_wrenches(self, links, frame):
        return {link: self.link_wrench(link, frame) for link in links}

    def contacts(self):
        return []

    def collision_shapes(self):
        return []


@pytest.fixture
def make_loop():
    loops = []

    def make(sim=None, **kw):
        loop = PhysicsLoop(sim or CountingSim(), **kw)
        loops.append(loop)
        loop.start()
        return loop
    yield make
    for loop in loops:
        loop.stop()


def test_keeps_the_target_real_time_factor(make_loop):
    loop = make_loop(real_time_factor=0.5)
    time.sleep(0.1)
    t0, w0 = loop.time, time.monotonic()
    time.sleep(0.8)
    rate = (loop.time - t0) / (time.monotonic() - w0)
    assert rate == pytest.approx(0.5, rel=0.1)
    assert loop.real_time_factor == pytest.approx(0.5, rel=0.15)


def test_paused_holds_the_clock_and_step_advances_exactly_one_h(make_loop):
    sim = CountingSim(h=0.002)
    loop = make_loop(sim, paused=True)
    time.sleep(0.05)
    assert loop.time == 0.0 and sim.steps == 0
    loop.step_once().result(1.0)
    assert sim.steps == 1 and loop.time == pytest.approx(0.002)
    loop.set_paused(False).result(1.0)
    with pytest.raises(RuntimeError, match="only while paused"):
        loop.step_once().result(1.0)


def test_reset_keeps_the_clock_moving_forward(make_loop):
    sim = CountingSim()
    loop = make_loop(sim, paused=True)
    for _ in range(5):
        loop.step_once().result(1.0)
    before = loop.time
    loop.reset().result(1.0)
    assert sim.steps == 0 and loop.time == pytest.approx(before + sim.h)
    loop.replace_simulator(CountingSim(h=0.01)).result(1.0)
    assert loop.time == pytest.approx(before + 2 * sim.h)


def test_a_failing_step_pauses_and_reports(make_loop):
    errors = []
    loop = make_loop(CountingSim(fail_at=3), real_time_factor=0.0, on_error=errors.append)
    deadline = time.monotonic() + 2.0
    while not loop.paused and time.monotonic() < deadline:
        time.sleep(0.01)
    assert loop.paused and len(errors) == 1
    snap = loop.snapshot(["foot"]).result(1.0)
    assert "not finite" in snap.error and snap.wrenches == {"foot": [0.0] * 6}
    assert loop.time == pytest.approx(0.003)


def test_duration_stops_stepping(make_loop):
    sim = CountingSim(h=0.01)
    loop = make_loop(sim, real_time_factor=0.0, duration=0.2)
    assert loop.finished.wait(2.0)
    time.sleep(0.05)
    assert sim.steps == 20


def test_sim_clock_tasks_run_at_multiples_of_their_period(make_loop):
    sim = CountingSim(h=0.001)
    calls, wall_calls = [], []
    loop = PhysicsLoop(sim, real_time_factor=0.0, duration=0.1)
    loop.every(0.01, lambda s: calls.append(round(s.t, 9)), clock="sim")
    loop.every(10.0, lambda s: wall_calls.append(s.t))
    loop.start()
    try:
        assert loop.finished.wait(2.0)
        time.sleep(0.05)
    finally:
        loop.stop()
    steps = [round(0.01 * k, 9) for k in range(11)]
    assert calls[:11] == steps  # then on the wall clock, once finished
    assert wall_calls == [0.0]


def test_sim_clock_tasks_follow_the_wall_clock_while_paused_and_run_after_a_step(make_loop):
    sim = CountingSim(h=0.001)
    calls = []
    loop = make_loop(sim, paused=True)
    loop.every(0.05, lambda s: calls.append(s.t), clock="sim")
    time.sleep(0.3)
    assert 3 <= len(calls) <= 9 and set(calls) == {0.0}  # ~0.3 / 0.05 + 1, loaded machine
    loop.step_once().result(1.0)
    loop.submit(lambda s: None).result(1.0)  # the loop has gone round once since
    assert calls[-1] == pytest.approx(0.001)  # run at once, not 0.05 s later
