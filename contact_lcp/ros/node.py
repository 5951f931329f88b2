"""The ``contact_lcp`` node: parameters, publishers, subscriptions, services.

All physics is in :mod:`contact_lcp.sim`; the stepping thread is
:class:`contact_lcp.ros.physics.PhysicsLoop`, which also runs the publishers as periodic
tasks (state streams on sim time, markers and diagnostics on wall time; none on the
node's ROS clock, so ``use_sim_time`` changes nothing: the node is the clock);
message packing is in :mod:`contact_lcp.ros.messages`. The executor (single-threaded)
serves subscriptions, services and parameters. Interfaces are listed in
:mod:`contact_lcp.ros`.
"""

from concurrent.futures import TimeoutError as FutureTimeout

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.exceptions import InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from contact_lcp.ros import config, messages
from contact_lcp.ros.inbound import Throttle, trajectory_arrays
from contact_lcp.ros.physics import PhysicsLoop
from contact_lcp.ros.scene_info import SceneInfo, build_simulator

try:  # tf2_msgs has no PyPI wheel: /tf only where a ROS 2 installation provides it
    from tf2_msgs.msg import TFMessage
except ImportError:
    TFMessage = None

#: How long [s] a ROS callback waits for the physics thread.
WAIT = 2.0


class ContactLCPNode(Node):
    """Simulate a scene and publish it; see :mod:`contact_lcp.ros` for the interfaces.

    Parameters
    ----------
    duration : float, optional
        Stop stepping after this much sim time [s] (``finished`` becomes true).
    status : callable, optional
        Called with one status line (str) per wall second.
    """

    def __init__(self, *, duration=None, status=None, **node_kwargs):
        super().__init__("contact_lcp", **node_kwargs)
        self._config = config.NodeConfig()
        self._loop = None
        self._pending_sim = None
        self._status = status
        self._throttle = Throttle(self.get_logger())
        self.add_on_set_parameters_callback(self._validate)
        self.add_post_set_parameters_callback(self._apply)
        self._rejected = ""
        for spec in config.PARAMETERS:
            try:
                self.declare_parameter(spec.name, spec.default, ParameterDescriptor(
                    description=spec.description, dynamic_typing=True))
            except InvalidParameterValueException as e:
                raise ValueError(f"parameter {spec.name}: {self._rejected}") from e

        sim = build_simulator(self._config)
        self._scene = SceneInfo.of(sim, self._config)
        reason = self._check_names(self._config, self._scene, sim)
        if reason:
            raise ValueError(reason)
        self._loop = PhysicsLoop(
            sim, real_time_factor=self._config.real_time_factor, paused=self._config.paused,
            duration=duration, on_error=self._on_physics_error,
            on_task_error=self._on_task_error)

        qos = QoSProfile(depth=10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._pub_clock = self.create_publisher(ClockMsg, "/clock", qos)
        self._pub_joints = self.create_publisher(JointState, "/joint_states", qos)
        self._pub_odom = self.create_publisher(Odometry, "/odom", qos)
        self._pub_markers = self.create_publisher(MarkerArray, "~/contact_markers", 2)
        self._pub_diag = self.create_publisher(DiagnosticArray, "/diagnostics", qos)
        self._pub_description = self.create_publisher(String, "/robot_description", latched)
        self._pub_tf = None
        if TFMessage is not None:
            self._pub_tf = self.create_publisher(TFMessage, "/tf", QoSProfile(depth=100))
        else:
            self.get_logger().info("tf2_msgs is not importable: /tf (world -> base) is not "
                                   "published; ~/contact_markers still shows the scene")
        self._pub_wrench = {}
        self._arrows = 0
        self._shapes = []  # shape markers, refilled each time
        self._failures = 0
        self.publish_cycles = 0  # completed /joint_states cycles (for benchmarks)
        # messages refilled every cycle by the physics thread (publish() serializes them)
        self._out = {"clock": ClockMsg(), "joints": JointState(), "odom": Odometry()}
        self._out_wrench = {}
        self._make_wrench_publishers()
        self._pub_description.publish(String(data=self._scene.robot_description))

        self.create_subscription(Float64MultiArray, "~/commands", self._on_commands, 10)
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        self.create_service(Trigger, "~/reset", self._srv_reset)
        self.create_service(SetBool, "~/set_paused", self._srv_set_paused)
        self.create_service(Trigger, "~/step", self._srv_step)

        self._tasks = []
        self._make_tasks()
        self._loop.every(1.0, self._report)
        self._loop.start()
        self.get_logger().info(
            f"scene {self._scene.path}: {len(self._scene.joint_names)} joints, "
            f"h = {self._scene.h:g} s, real-time factor {self._config.real_time_factor:g}, "
            f"publishing at {self._config.publish_rate:g} Hz")

    @property
    def finished(self):
        """True once the requested ``duration`` has been simulated."""
        return self._loop.finished.is_set()

    @property
    def loop(self):
        """The :class:`PhysicsLoop` stepping the simulator."""
        return self._loop

    def shutdown(self):
        """Stop the physics thread (call before ``destroy_node``)."""
        if self._loop is not None:
            self._loop.stop()

    # -- parameters -------------------------------------------------------------------
    def _validate(self, params):
        """On-set-parameters callback: every rule of config.check, then the scene's."""
        result = self._check(params)
        if not result.successful:
            self._rejected = result.reason  # for the start-up error message
        return result

    def _check(self, params):
        for p in params:
            reason = config.check(p.name, p.value)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        if self._loop is None:  # declaring: names are checked once the scene is built
            return SetParametersResult(successful=True)
        mine = {p.name: p.value for p in params if p.name in config.SPECS}
        new = self._config.with_values(mine)
        scene, sim = self._scene, None
        if any(config.SPECS[n].rebuild and getattr(new, n) != getattr(self._config, n)
               for n in mine):
            try:
                sim = build_simulator(new)
                scene = SceneInfo.of(sim, new)
            except Exception as e:  # SceneError says why; anything else must not kill us
                reason = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
                return SetParametersResult(successful=False, reason=reason)
        reason = self._check_names(new, scene, sim)
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        self._pending_sim = (sim, scene) if sim is not None else None
        return SetParametersResult(successful=True)

    def _check_names(self, cfg, scene, sim=None):
        """Reason why cfg.joints / cfg.wrench_links do not fit the scene, or None."""
        reason = config.check_names("joints", cfg.joints, scene.joint_names)
        if reason or not cfg.wrench_links:
            return reason

        def probe(s):
            for link in cfg.wrench_links:
                s.link_wrench(link, "local")
        try:
            if sim is not None:
                probe(sim)  # not yet handed to the physics thread
            else:
                self._loop.submit(probe).result(WAIT)
        except (KeyError, ValueError) as e:  # FrameNotFound names the valid links
            return f"wrench_links: {e}"
        except FutureTimeout:
            return "wrench_links: the physics thread did not answer"
        return None

    def _apply(self, params):
        old = self._config
        new = old.with_values({p.name: p.value for p in params if p.name in config.SPECS})
        if self._loop is None or self._pending_sim is None:
            self._config = new
        else:  # the publishers (physics thread) see the new scene with the new simulator
            sim, scene = self._pending_sim
            self._pending_sim = None

            def adopt():
                self._config, self._scene = new, scene
            self._loop.replace_simulator(sim, then=adopt).result(WAIT)
            self._pub_description.publish(String(data=scene.robot_description))
            self.get_logger().info(f"rebuilt the simulator: scene {scene.path}, "
                                   f"h = {scene.h:g} s")
        if self._loop is None:
            return
        if new.paused != old.paused:
            self._loop.set_paused(new.paused)
        if new.real_time_factor != old.real_time_factor:
            self._loop.set_real_time_factor(new.real_time_factor)
        if (new.publish_rate, new.marker_rate) != (old.publish_rate, old.marker_rate):
            self._make_tasks()
        self._make_wrench_publishers()

    def _wrench_links(self):
        return self._config.wrench_links or self._scene.wrench_links

    def _make_wrench_publishers(self):
        links = self._wrench_links()
        if set(links) == set(self._pub_wrench):
            return
        old = self._pub_wrench
        self._pub_wrench = {link: old.get(link) or self.create_publisher(
            WrenchStamped, f"~/contact_wrenches/{link}", 10) for link in links}
        if old and self._loop.running:  # the physics thread publishes: let it drop old
            self._loop.submit(lambda sim: None).result(WAIT)
        for link in set(old) - set(links):
            self.destroy_publisher(old[link])

    def _make_tasks(self):
        for task in self._tasks:
            task.cancel()
        self._tasks = [self._loop.every(1.0 / self._config.publish_rate, self._publish, "sim")]
        if self._config.marker_rate > 0:
            self._tasks.append(
                self._loop.every(1.0 / self._config.marker_rate, self._publish_markers))

    # -- publishing: periodic tasks run by the physics thread -------------------------
    def _publish(self, sim):
        snap = self._loop.take_snapshot(sim, self._wrench_links())
        t, base_link, out = snap.time, self._scene.base_link, self._out
        self._pub_clock.publish(messages.clock(t, out.get("clock")))
        self._pub_joints.publish(messages.joint_state(t, snap.joints, out.get("joints")))
        if snap.base is not None:
            self._pub_odom.publish(messages.odometry(t, snap.base, base_link, out.get("odom")))
            if self._pub_tf is not None:
                self._pub_tf.publish(
                    TFMessage(transforms=[messages.transform(t, snap.base, base_link)]))
        for link, w in snap.wrenches.items():
            pub = self._pub_wrench.get(link)
            if pub is not None:
                msg = messages.wrench(t, link, w, self._out_wrench.get(link))
                self._out_wrench[link] = msg
                pub.publish(msg)
        self.publish_cycles += 1

    def _publish_markers(self, sim):
        snap = self._loop.take_snapshot(sim, contacts=True, shapes=True)
        msg, self._arrows = messages.contact_markers(
            snap.time, snap.contacts, snap.shapes, self._arrows, shape_cache=self._shapes)
        self._pub_markers.publish(msg)

    def _report(self, sim):
        snap = self._loop.take_snapshot(sim)
        new_failures = snap.stats.lcp_failures - self._failures
        self._failures = snap.stats.lcp_failures
        self._pub_diag.publish(messages.diagnostics(
            snap.time, snap, target_rtf=self._config.real_time_factor,
            scene=self._scene.path, new_failures=new_failures))
        if self._status is not None and not snap.finished:  # the caller prints the last
            self._status(status_line(snap))

    def _on_task_error(self, exc):
        self._throttle.warn("publishing", f"publishing failed: {type(exc).__name__}: {exc}")

    def _on_physics_error(self, exc):
        self.get_logger().error(f"simulation stopped and paused: {type(exc).__name__}: {exc}; "
                                "call ~/reset to start again")

    # -- commands ---------------------------------------------------------------------
    def _on_commands(self, msg):
        cfg = self._config
        kp, kd = cfg.gains()
        joints = list(cfg.joints) or None
        values = list(msg.data)
        self._submit("~/commands", lambda sim: sim.set_command(
            cfg.command_mode, values, joints=joints, kp=kp, kd=kd))

    def _on_trajectory(self, msg):
        try:
            joints, start, t_rel, q, v = trajectory_arrays(msg)
        except ValueError as e:
            self._throttle.warn("~/joint_trajectory", f"~/joint_trajectory rejected: {e}")
            return
        loop = self._loop

        def op(sim):
            # start None = now; else the header stamp, a ROS time: back to sim time
            t0 = sim.t if start is None else start - (loop.time - sim.t)
            times, points, rates = [t0 + dt for dt in t_rel], q, v
            now = sim.joint_state()
            index = {name: i for i, name in enumerate(now.names)}
            if times[0] > sim.t and all(j in index for j in joints):
                # as ros2_control's trajectory controller: start from where the joints are
                times = [sim.t] + times
                points = [[float(now.position[index[j]]) for j in joints]] + points
                if rates is not None:
                    rates = [[float(now.velocity[index[j]]) for j in joints]] + rates
            sim.set_trajectory(joints, times, points, velocities=rates)
        self._submit("~/joint_trajectory", op)

    def _submit(self, topic, op):
        def done(fut):
            exc = fut.exception()
            if exc is not None:
                self._throttle.warn(topic, f"{topic} rejected: {exc}")
        self._loop.submit(op).add_done_callback(done)

    # -- services ---------------------------------------------------------------------
    def _srv_reset(self, request, response):
        response.success, response.message = self._wait(self._loop.reset(), "reset")
        return response

    def _srv_step(self, request, response):
        response.success, response.message = self._wait(self._loop.step_once(), "stepped")
        return response

    def _srv_set_paused(self, request, response):
        result = self.set_parameters([Parameter("paused", value=bool(request.data))])[0]
        response.success = result.successful
        response.message = result.reason or ("paused" if request.data else "running")
        if result.successful:  # the parameter callback queued it: wait until it is in force
            self._wait(self._loop.submit(lambda sim: None), "")
        return response

    def _wait(self, fut, verb):
        try:
            fut.result(WAIT)
        except FutureTimeout:
            return False, "the physics thread did not answer in time"
        except Exception as e:
            return False, str(e)
        return True, f"{verb}; sim time {self._loop.time:.6f} s"


def status_line(snap):
    """One line for the terminal: sim time, real-time factor, contacts, pivots, failures."""
    info, stats = snap.info, snap.stats
    contacts = info.num_contacts if info is not None else 0
    pivots = info.pivots if info is not None else 0
    state = " paused" if snap.paused else (" done" if snap.finished else "")
    error = f"  ERROR {snap.error}" if snap.error else ""
    return (f"t {snap.time:8.3f} s  rtf {snap.real_time_factor:5.2f}  contacts {contacts:3d}  "
            f"pivots {pivots:4d}  lcp failures {stats.lcp_failures}  "
            f"fallbacks {stats.fallbacks}{state}{error}")


def main(argv=None):
    """Entry point ``contact_lcp_node [--duration S] [--ros-args ...]``."""
    from contact_lcp.ros.cli import run

    return run(argv)
