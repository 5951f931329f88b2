"""The node never dies and never lies about its state (issue 14, "Why", items 1, 2, 4, 5).

In-process nodes (test/ros_harness.py) checked through an independent client node over
DDS, with ``Simulator.step`` wrapped to fail or stall on demand; and node processes for
the signals and the death of the parent.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from contact_lcp.sim import Simulator  # noqa: E402
from contact_lcp.sim.simulator import SimulationError  # noqa: E402
from ros_harness import DOMAIN_ID, Harness, clock_of  # noqa: E402

pytestmark = [pytest.mark.ros]

ROOT = Path(__file__).resolve().parents[1]
NS = "/contact_lcp"


class StepSwitch:
    """Wraps Simulator.step: ``fail`` raises SimulationError, ``stall`` sleeps first."""

    def __init__(self, monkeypatch):
        self.fail = False
        self.stall = 0.0
        original = Simulator.step

        def step(sim):
            if self.stall:
                time.sleep(self.stall)
            if self.fail:
                raise SimulationError("the state after this step would not be finite "
                                      "(injected by the test)")
            return original(sim)
        monkeypatch.setattr(Simulator, "step", step)


@pytest.fixture
def ball(monkeypatch):
    """A node on the ball_drop scene (cheap steps), a step switch and a client."""
    switch = StepSwitch(monkeypatch)
    h = Harness({"scene": "ball_drop.yaml", "publish_rate": 50.0, "marker_rate": 0.0})
    h.switch = switch
    h.record(Clock, "/clock")
    h.record(DiagnosticArray, "/diagnostics", 10)
    try:
        h.wait_for(lambda: h.latest("/clock"), 30, "/clock")
        yield h
    finally:
        h.close()


def sim_time_advances(h, dt=0.02, timeout=20):
    t0 = clock_of(h.latest("/clock"))
    h.wait_for(lambda: clock_of(h.latest("/clock")) >= t0 + dt, timeout, f"{dt} s of sim time")


def test_a_failed_step_pauses_with_paused_true_and_an_error_and_reset_resumes(ball):
    """Before: the sim stopped while `paused` read False; reset/set_paused did nothing."""
    h = ball
    sim_time_advances(h)
    assert h.get_parameter("paused") is False
    since = time.monotonic()
    h.switch.fail = True
    h.wait_for(lambda: h.get_parameter("paused") is True, 10, "paused to read True")
    diag = h.wait_for(lambda: [m for m in h.messages("/diagnostics", since)
                               if m.status[0].level == DiagnosticStatus.ERROR], 10,
                      "an ERROR diagnostic")[-1].status[0]
    assert "SimulationError" in diag.message and "injected" in diag.message
    t_stopped = clock_of(h.latest("/clock"))
    time.sleep(0.3)
    assert clock_of(h.latest("/clock")) == t_stopped  # really stopped
    # resuming while the cause is still there: it fails again, and says so
    assert h.call(SetBool, f"{NS}/set_paused", SetBool.Request(data=False)).success
    h.wait_for(lambda: h.get_parameter("paused") is True, 10, "paused again")
    step = h.call(Trigger, f"{NS}/step", Trigger.Request())
    assert not step.success and "SimulationError" in step.message
    # the cause gone, ~/reset brings it back to running
    h.switch.fail = False
    reset = h.call(Trigger, f"{NS}/reset", Trigger.Request())
    assert reset.success and "running again" in reset.message, reset.message
    assert h.get_parameter("paused") is False
    sim_time_advances(h)
    since = time.monotonic()
    h.wait_for(lambda: [m for m in h.messages("/diagnostics", since)
                        if m.status[0].level == DiagnosticStatus.OK], 10, "an OK diagnostic")
    assert not h.errors


@pytest.mark.slow
def test_parameter_changes_during_a_long_step_are_answered_and_never_kill_the_node(ball):
    """Before: a rebuild while the physics thread was busy raised TimeoutError and the
    process exited. Now a stalled step (3 s, longer than any wait of the node) delays
    nothing in the executor: every change succeeds or is rejected with a reason."""
    h = ball
    h.switch.stall = 3.0
    time.sleep(0.2)  # the physics thread is inside a stalled step
    results = [h.set_parameter("solver_method", "lemke"),
               h.set_parameter("time_step", 0.002),
               h.set_parameter("wrench_links", ["ball"]),
               h.set_parameter("real_time_factor", 0.0),
               h.set_parameter("time_step", -1.0)]
    assert [r.successful for r in results] == [True, True, True, True, False]
    assert "time_step must be in" in results[-1].reason
    reset = h.call(Trigger, f"{NS}/reset", Trigger.Request())  # still stalled: says so
    assert not reset.success and "did not answer" in reset.message
    h.switch.stall = 0.0
    h.wait_for(lambda: h.node.scene.h == 0.002, 20, "the rebuilt simulator in use")
    sim_time_advances(h)
    assert not h.errors


def test_a_new_lcp_method_is_compiled_before_it_is_used(ball):
    """Before: switching to lemke stalled the physics thread 8.7 s on first use. The
    node compiles every method before it reports ready, so a step with the new method
    answers within the service's 2 s."""
    h = ball
    assert h.set_parameter("paused", True).successful
    assert h.set_parameter("solver_method", "lemke").successful
    for _ in range(3):
        step = h.call(Trigger, f"{NS}/step", Trigger.Request())
        assert step.success, step.message
    assert not h.errors


def test_bad_parameter_values_come_back_with_reasons(ball):
    h = ball
    for name, value, words in [("scene", "no_such_scene.yaml", "not a contact_lcp scene file"),
                               ("wrench_links", ["no_such_link"], "unknown no_such_link"),
                               ("robot_description", "<robot/>", "no robot"),
                               ("robot_description_topic", "/x", "start-up only"),
                               ("marker_rate", 1e6, "marker_rate must be in")]:
        result = h.set_parameter(name, value)
        assert not result.successful and words in result.reason, (name, result.reason)
    sim_time_advances(h)
    assert not h.errors


# -- processes: signals and orphans ------------------------------------------------------
def _node_command(*ros_args):
    return [sys.executable, "-m", "contact_lcp.ros", "--quiet", "--ros-args",
            "-p", "scene:=ball_drop.yaml", "-p", "marker_rate:=0.0", *ros_args]


def _env():
    return dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN_ID), PYTHONUNBUFFERED="1",
                ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")


def _wait_ready(log_path, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "ready:" in log_path.read_text():
            return
        time.sleep(0.1)
    raise AssertionError("the node did not report ready:\n" + log_path.read_text())


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its new parent) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_node_exits_cleanly_on_sigterm_and_sigint(sig, tmp_path):
    log_path = tmp_path / "node.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(_node_command(), cwd=ROOT, env=_env(), stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        _wait_ready(log_path)
        proc.send_signal(sig)
        assert proc.wait(15) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    text = log_path.read_text()
    assert "Traceback" not in text, text
    # the package imports itself before numpy: no spurious BLAS warning
    assert "imported after numpy" not in text, text


@pytest.mark.slow
def test_the_node_exits_when_its_parent_dies(tmp_path):
    """Before: the node kept running with parent 1 after the launcher was killed."""
    log_path = tmp_path / "node.log"
    script = ("import subprocess, sys, time\n"
              f"p = subprocess.Popen({_node_command()!r}, stdout=open({str(log_path)!r}, 'w'),"
              " stderr=subprocess.STDOUT)\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=_env(),
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        _wait_ready(log_path)
        assert _alive(child)
        parent.kill()  # SIGKILL: the parent cannot tell its child anything
        parent.wait(5)
        deadline = time.monotonic() + 15
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the node outlived its parent:\n" + log_path.read_text()
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()


def test_the_warm_up_leaves_the_initial_state():
    """warm_up steps once and resets: the simulator is back at t = 0, at q0."""
    import numpy as np

    from contact_lcp.ros.scene_info import warm_up

    sim = Simulator.from_file(str(ROOT / "config" / "ball_drop.yaml"))
    q0 = sim.q
    assert warm_up(sim) == ""
    assert sim.t == 0.0 and np.array_equal(sim.q, q0) and sim.stats.steps == 0


def test_threads_are_released_when_the_node_closes():
    before = {t.name for t in threading.enumerate()}
    h = Harness({"scene": "ball_drop.yaml", "marker_rate": 0.0})
    h.close()
    left = {t.name for t in threading.enumerate() if t.is_alive()} - before
    assert "contact_lcp_physics" not in left, left


#: rclpy handles an executor waits on or DDS holds (a Clock's is plain memory)
ENTITY_HANDLES = {"Context", "Node", "Publisher", "Subscription", "Service", "Client",
                  "Timer", "GuardCondition", "EventHandle", "ActionServer", "ActionClient"}


def test_a_closed_node_leaves_no_live_rclpy_handle_to_the_garbage_collector():
    """After ``close`` every rclpy entity still reachable from the harness (the nodes,
    what they publish, serve and subscribe, the FollowJointTrajectory server, the
    executors' guard conditions, the context) has its handle destroyed: a garbage
    collection in whichever thread then finalizes nothing that DDS or an executor holds
    (CI once died of a segfault in such a collection, in an executor thread)."""
    import gc
    import types

    import numpy as np
    from rclpy._rclpy_pybind11 import InvalidHandle

    h = Harness({"scene": "humanoid_stand.yaml", "real_time_factor": 0.0,
                 "marker_rate": 0.0})
    assert h.node._actions is not None and h.node._actions.names  # (a server to destroy)
    h.close()
    live, destroyed, seen, stack = [], [], set(), [h]
    while stack:  # what the harness reaches, not through modules or functions' globals
        o = stack.pop()
        if id(o) in seen or isinstance(o, (types.ModuleType, type, np.ndarray)):
            continue
        seen.add(id(o))
        name = type(o).__name__
        if type(o).__module__ == "rclpy._rclpy_pybind11":
            if name in ENTITY_HANDLES:
                try:
                    with o:
                        live.append(name)
                except InvalidHandle:
                    destroyed.append(name)
        elif isinstance(o, types.FunctionType):
            stack.extend(c.cell_contents for c in o.__closure__ or ())
        else:
            stack.extend(gc.get_referents(o))
    assert not live, live
    assert {"Context", "Node", "Publisher"} <= set(destroyed)  # (the walk reached them)
