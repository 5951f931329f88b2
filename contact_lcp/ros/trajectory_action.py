"""FollowJointTrajectory action servers, one per robot, as ros2_control's
joint_trajectory_controller serves them (MoveIt and every trajectory tool call these).

Each robot's server is ``<robot ns>/joint_trajectory_controller/follow_joint_trajectory``
(the name a MoveIt ``moveit_controllers.yaml`` written for ros2_control expects). A goal:

- is rejected when its structure is wrong (no joints, no points, a point with the wrong
  number of values, times that do not increase) or it names a joint the robot does not
  have (robot-relative or simulator names);
- starts at its header stamp (zero: now), from where the joints are, and is tracked by the
  robot's position servos (``Simulator.set_trajectory``);
- aborts with ``PATH_TOLERANCE_VIOLATED`` when a joint leaves a given path tolerance, and
  with ``GOAL_TOLERANCE_VIOLATED`` when the joints are not within the goal tolerance
  (given, else :data:`DEFAULT_GOAL_TOLERANCE`) by the trajectory's end plus
  ``goal_time_tolerance`` (given, else :data:`DEFAULT_GOAL_TIME`); the joints then hold
  where they are;
- is preempted by a newer goal for the same robot (reported ABORTED with
  ``error_string`` saying so: ROS 2 actions cannot go to CANCELED without a cancel
  request), and a cancel request stops it where the joints are (CANCELED).

Tolerance values follow control_msgs: 0 takes the default, a negative value checks
nothing. Feedback (desired, actual, error and the point index) is sent at
:data:`FEEDBACK_RATE` of sim time. The checks run in the physics thread on sim time (the
same outcome at any speed, paused or stepped); rclpy calls stay in the executor thread.
"""

import functools
import math
import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectoryPoint

from contact_lcp.ros.inbound import trajectory_arrays
from contact_lcp.ros.messages import to_time
from contact_lcp.sim.references import SampledReference

#: goal position tolerance [rad or m] where the goal gives none (0)
DEFAULT_GOAL_TOLERANCE = 0.05
#: time [s] after the trajectory's end allowed to come within the goal tolerance
DEFAULT_GOAL_TIME = 1.0
#: feedback and checks per second of sim time
FEEDBACK_RATE = 50.0
ACTION = "joint_trajectory_controller/follow_joint_trajectory"
Result = FollowJointTrajectory.Result


@dataclass
class _Goal:
    """An accepted goal, as the physics thread tracks it."""

    handle: object
    robot: object
    joints: list  # simulator joint names
    local: list  # the goal's own names, for feedback
    ref: SampledReference = None
    t_end: float = 0.0
    path_tol: np.ndarray = None  # (n,) position tolerances, inf = unchecked
    goal_tol: np.ndarray = None
    goal_time: float = DEFAULT_GOAL_TIME
    done: Future = field(default_factory=Future)
    finished: bool = False


def _tolerances(entries, names, default):
    """(n,) position tolerances for the joints ``names`` from JointTolerance
    ``entries`` (0: ``default``; negative: unchecked (inf))."""
    tol = np.full(len(names), default, dtype=float)
    given = {e.name: float(e.position) for e in entries}
    for i, name in enumerate(names):
        value = given.get(name, 0.0)
        if value < 0:
            tol[i] = math.inf
        elif value > 0:
            tol[i] = value
    return tol


class TrajectoryActions:
    """The FollowJointTrajectory servers of ``node`` (a ContactLCPNode) for its robots."""

    def __init__(self, node, loop, scene):
        self._node, self._loop, self._scene = node, loop, scene
        self._active = {}  # robot name -> _Goal (physics thread)
        self._outbox = deque()  # (goal, kind, payload) for the executor thread
        self._lock = threading.Lock()
        self._guard = node.create_guard_condition(self._drain)
        self._servers = {}  # action name -> ActionServer
        self.follow(scene)
        self._task = loop.every(1.0 / FEEDBACK_RATE, self._monitor, clock="sim")

    def follow(self, scene):
        """Serve the robots of ``scene`` (a new one after a spawn gets its server; a
        removed one's server stays, and rejects goals naming its joints)."""
        self._scene = scene
        for robot in scene.robots:
            name = robot.topic(ACTION)
            if not robot.joint_names or name in self._servers:
                continue
            self._servers[name] = ActionServer(
                self._node, FollowJointTrajectory, name,
                # (a partial of the coroutine function: rclpy awaits it only when it
                # sees a coroutine function, and a lambda hides that)
                execute_callback=functools.partial(self._execute, name=robot.name),
                goal_callback=functools.partial(self._on_goal, name=robot.name),
                cancel_callback=self._on_cancel)

    def destroy(self):
        """Destroy the servers (the node's ``destroy_node`` leaves rclpy's waitables to
        the garbage collector, whose collection may run in any thread: here, one
        spinning another node)."""
        for server in self._servers.values():
            server.destroy()
        self._servers.clear()

    @property
    def names(self):
        """The action names served."""
        return sorted(self._servers)

    def _robot(self, name):
        robot = next((r for r in self._scene.robots if r.name == name), None)
        if robot is None:
            raise ValueError(f"robot {name!r} is no longer in the scene")
        return robot

    # -- executor thread --------------------------------------------------------------
    def _on_goal(self, request, name):
        try:
            self._parse(request, self._robot(name))
        except (ValueError, KeyError) as e:
            self._node._reject(f"{name} {ACTION}", str(e).strip(chr(39)))
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    @staticmethod
    def _parse(request, robot):
        if len(request.multi_dof_trajectory.points) or len(request.multi_dof_trajectory.joint_names):
            raise ValueError("multi_dof_trajectory is not supported (joints only)")
        joints, start, t_rel, q, v = trajectory_arrays(request.trajectory)
        sim_joints = [robot.sim_joint(j) for j in joints]
        if len(set(sim_joints)) != len(sim_joints):
            raise ValueError(f"joint names repeat: {joints}")
        if not all(math.isfinite(x) for row in q for x in row):
            raise ValueError("trajectory positions must be finite")
        return joints, sim_joints, start, t_rel, q, v

    def _on_cancel(self, handle):
        return CancelResponse.ACCEPT

    async def _execute(self, handle, name):
        request = handle.request
        try:
            robot = self._robot(name)
            joints, sim_joints, start, t_rel, q, v = self._parse(request, robot)
        except (ValueError, KeyError) as e:  # (the robot went between accept and execute)
            handle.abort()
            return Result(error_code=Result.INVALID_GOAL, error_string=str(e))
        goal = _Goal(handle, robot, sim_joints, joints)
        goal.path_tol = _tolerances(request.path_tolerance, joints, math.inf)
        goal.goal_tol = _tolerances(request.goal_tolerance, joints, DEFAULT_GOAL_TOLERANCE)
        gt = request.goal_time_tolerance
        goal.goal_time = (gt.sec + gt.nanosec * 1e-9) or DEFAULT_GOAL_TIME
        loop = self._loop

        def begin(sim):
            t0 = sim.t if start is None else start - (loop.time - sim.t)
            times, points, rates = [t0 + dt for dt in t_rel], list(q), v
            if times[0] > sim.t:  # from where the joints are, as the controller does
                now = sim.joint_state()
                index = {name: i for i, name in enumerate(now.names)}
                times = [sim.t] + times
                points = [sim.trajectory_start(sim_joints, points[0])] + points
                if rates is not None:
                    rates = [[float(now.velocity[index[j]]) for j in sim_joints]] + rates
            sim.set_trajectory(sim_joints, times, points, velocities=rates)
            goal.ref = SampledReference(times, points, rates)
            goal.t_end = times[-1]
            old = self._active.get(robot.name)
            if old is not None:
                self._finish(old, "aborted", Result.INVALID_GOAL,
                             "preempted by a newer goal for the same robot")
            self._active[robot.name] = goal

        started = loop.submit(begin)
        try:
            started.result(5.0)
        except Exception as e:  # the simulator refused it, or the physics thread is gone
            handle.abort()
            return Result(error_code=Result.INVALID_GOAL, error_string=str(e))
        kind, code, text = await goal.done
        if kind == "succeeded":
            handle.succeed()
        elif kind == "canceled":
            handle.canceled()
        else:
            handle.abort()
        return Result(error_code=code, error_string=text)

    def _drain(self):
        """Executor side of the outbox: feedback and outcomes from the physics thread."""
        while True:
            with self._lock:
                if not self._outbox:
                    return
                goal, kind, payload = self._outbox.popleft()
            if kind == "feedback":
                if goal.handle.is_active and not goal.done.done():
                    goal.handle.publish_feedback(payload)
            elif not goal.done.done():
                goal.done.set_result(payload)

    # -- physics thread ---------------------------------------------------------------
    def _post(self, goal, kind, payload):
        with self._lock:
            self._outbox.append((goal, kind, payload))
        self._guard.trigger()

    def _finish(self, goal, kind, code, text, sim=None):
        goal.finished = True
        if self._active.get(goal.robot.name) is goal:
            del self._active[goal.robot.name]
        self._post(goal, "outcome", (kind, code, text))
        if sim is not None and kind != "succeeded":  # stop where the joints are
            now, _ = self._positions(sim, goal.joints)
            sim.set_trajectory(goal.joints, [sim.t], [now])

    @staticmethod
    def _positions(sim, joints):
        js = sim.joint_state()
        index = {n: i for i, n in enumerate(js.names)}
        idx = [index[j] for j in joints]
        return js.position[idx], js.velocity[idx]

    def _monitor(self, sim):
        for goal in list(self._active.values()):
            if goal.handle.is_cancel_requested:
                self._finish(goal, "canceled", Result.SUCCESSFUL, "canceled on request", sim)
                continue
            try:
                (q, qd), t = self._positions(sim, goal.joints), sim.t
            except KeyError:  # its robot was deleted (simulation_interfaces)
                self._finish(goal, "aborted", Result.INVALID_JOINTS,
                             f"the robot of {goal.local} is no longer in the scene")
                continue
            q_ref, v_ref, _ = goal.ref(t)
            err = q_ref - q
            self._post(goal, "feedback", self._feedback(goal, t, q_ref, v_ref, q, qd))
            bad = np.flatnonzero(np.abs(err) > goal.path_tol)
            if t < goal.t_end and bad.size:
                j = bad[0]
                self._finish(goal, "aborted", Result.PATH_TOLERANCE_VIOLATED,
                             f"{goal.local[j]} is {abs(err[j]):.4g} from its path at "
                             f"t = {t:.3f} s (tolerance {goal.path_tol[j]:g})", sim)
                continue
            if t < goal.t_end:
                continue
            off = np.abs(goal.ref(goal.t_end)[0] - q)
            if np.all(off <= goal.goal_tol):
                self._finish(goal, "succeeded", Result.SUCCESSFUL, "")
            elif t > goal.t_end + goal.goal_time:
                j = int(np.argmax(off - goal.goal_tol))
                self._finish(goal, "aborted", Result.GOAL_TOLERANCE_VIOLATED,
                             f"{goal.local[j]} is {off[j]:.4g} from its goal "
                             f"{goal.goal_time:g} s after the trajectory's end "
                             f"(tolerance {goal.goal_tol[j]:g})", sim)

    def _feedback(self, goal, t, q_ref, v_ref, q, qd):
        fb = FollowJointTrajectory.Feedback()
        fb.header.stamp = to_time(self._loop.time)
        fb.joint_names = list(goal.local)
        fb.desired = JointTrajectoryPoint(positions=q_ref.tolist(), velocities=v_ref.tolist())
        fb.actual = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist())
        fb.error = JointTrajectoryPoint(positions=(q_ref - q).tolist(),
                                        velocities=(v_ref - qd).tolist())
        fb.index = int(np.searchsorted(goal.ref.t, t, side="right")) - 1
        return fb
