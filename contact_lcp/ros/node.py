"""The ``contact_lcp`` node: parameters, publishers, subscriptions, services.

All physics is in :mod:`contact_lcp.sim`; the stepping thread is
:class:`contact_lcp.ros.physics.PhysicsLoop`, which also runs the publishers as periodic
tasks (state streams on sim time, markers and diagnostics on wall time; none on the
node's ROS clock, so ``use_sim_time`` changes nothing: the node is the clock);
per-robot publishing is in :mod:`contact_lcp.ros.robots`, message packing in
:mod:`contact_lcp.ros.messages`. The executor (single-threaded) serves subscriptions,
services and parameters; no callback of it ever waits on the physics thread without a
bound, and none lets an exception out (a failure becomes a rejected parameter, a failed
service call or a throttled warning). Interfaces are listed in :mod:`contact_lcp.ros`.
"""

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.exceptions import InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from contact_lcp.ros import config, messages, packed, urdf_guard
from contact_lcp.ros.inbound import (Rejections, Throttle, joint_command_groups,
                                      trajectory_arrays)
from contact_lcp.ros.physics import PhysicsLoop
from contact_lcp.ros.relay import Relay, RelayStream, type_name
from contact_lcp.ros.robots import LATCHED, SceneIO
from contact_lcp.ros.scene_info import SceneInfo, build_simulator
from contact_lcp.ros.services import NodeServices
from contact_lcp.ros.standard_interfaces import StandardInterfaces, TFMessage
from contact_lcp.ros.viewer_page import ViewerPage



def load(cfg):
    """``(sim, SceneInfo)`` for NodeConfig ``cfg``: built and warmed up (compiled)."""
    from contact_lcp.ros.scene_info import warm_up

    sim = build_simulator(cfg, warm=False)
    warm_error = warm_up(sim)
    return sim, SceneInfo.of(sim, cfg, warm_error)


class ContactLCPNode(NodeServices, StandardInterfaces, Node):
    """Simulate a scene and publish it; see :mod:`contact_lcp.ros` for the interfaces.

    The simulator is built and its first step compiled before anything is published
    (so ``/clock`` and ``joint_states`` mean "ready").

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
        self._pending = None
        self._status = status
        self._throttle = Throttle(self.get_logger())
        self._rejections = Rejections()  # rejected commands, on /diagnostics
        self._pubs = {}  # (type, topic) -> publisher, kept for the node's life
        self._subs = {}  # topic -> subscription
        self.add_on_set_parameters_callback(self._validate)
        self.add_post_set_parameters_callback(self._apply)
        self._rejected = ""
        for spec in config.PARAMETERS:
            try:
                self.declare_parameter(spec.name, spec.default, ParameterDescriptor(
                    description=spec.description, dynamic_typing=True))
            except InvalidParameterValueException as e:
                raise ValueError(f"parameter {spec.name}: {self._rejected}") from e

        reason = self._config.robot_description and urdf_guard.check(self._config)
        if reason:  # a launch-given URDF that would crash us: exit with the reason
            raise ValueError(reason)
        sim, self._scene = load(self._config)
        reason = self._check_names(self._config, self._scene)
        if reason:
            raise ValueError(reason)
        self._loop = PhysicsLoop(
            sim, real_time_factor=self._config.real_time_factor, paused=self._config.paused,
            duration=duration, on_error=self._on_physics_error,
            on_task_error=self._on_task_error)

        qos = QoSProfile(depth=10)
        self._relay = self._start_relay()
        self._pub_markers = self.create_publisher(MarkerArray, "~/contact_markers", 2)
        self._pub_diag = self.create_publisher(DiagnosticArray, "diagnostics", qos)
        self._make_tf()
        self._make_contacts()
        self._io = self._scene_io(self._scene)
        self._arrows = 0
        self._shapes = []  # shape markers, refilled each time
        self._failures = 0
        self.publish_cycles = 0  # completed publishing cycles (for benchmarks)
        self._clock_out = self._stream(ClockMsg, "clock", 10, packed.clock())
        self._wrench_streams = {}  # link -> packed.Stream, kept for the node's life
        self._no_values = np.zeros(0)
        self._make_wrench_publishers(self._config, self._scene)
        self._io.publish_descriptions()

        self.create_subscription(Float64MultiArray, "~/commands", self._on_commands, 10)
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, 10)
        self._make_command_subscriptions(self._scene)
        if self._config.robot_description_topic:
            self.create_subscription(String, self._config.robot_description_topic,
                                     self._on_robot_description, LATCHED)
        self._make_services()
        self._make_standard_interfaces()
        # a failed step is seen in the physics thread; the `paused` parameter is set
        # from the executor, woken by this guard condition
        self._error_guard = self.create_guard_condition(self._sync_paused)

        self._tasks = []
        self._make_tasks()
        self._loop.every(1.0, self._report)
        self._publish_static_tf(sim, self._scene)
        self._viewer = ViewerPage.start(self._config.viewer_port, sim, self._loop,
                                        self.get_logger())
        # Said before the physics thread starts: rclpy's logger finds its caller with
        # inspect, whose first call stats the file of every imported module; each stat
        # gives up the GIL, and a loop stepping flat out (real_time_factor 0) holds it
        # for a step before the logger gets it back: thousands of steps for one line.
        if self._scene.warm_error:
            self.get_logger().warning(f"the first step fails: {self._scene.warm_error}")
        self.get_logger().info(
            f"ready: scene {self._scene.path}: {len(self._scene.robots)} robot(s), "
            f"{len(self._scene.bodies)} free bod(y/ies), {len(self._scene.joint_names)} "
            f"joints, h = {self._scene.h:g} s, real-time factor "
            f"{self._config.real_time_factor:g}, publishing at "
            f"{self._config.publish_rate:g} Hz")
        self._loop.start()

    @property
    def finished(self):
        """True once the requested ``duration`` has been simulated."""
        return self._loop.finished.is_set()

    @property
    def loop(self):
        """The :class:`PhysicsLoop` stepping the simulator."""
        return self._loop

    @property
    def scene(self):
        """The :class:`SceneInfo` of the simulator being stepped."""
        return self._scene

    def shutdown(self):
        """Stop the physics thread, then the publisher process (call before
        ``destroy_node``)."""
        if self._loop is not None:
            self._loop.stop()
        if getattr(self, "_viewer", None) is not None:
            self._viewer.close()
            self._viewer = None
        if getattr(self, "_relay", None) is not None:
            self._relay.close()
            self._relay = None

    def destroy_node(self):
        """Destroy the node's entities, the action servers included (rclpy's own
        ``destroy_node`` leaves waitables to the garbage collector); call ``shutdown``
        first and only once no executor spins the node."""
        if getattr(self, "_actions", None) is not None:
            self._actions.destroy()
        super().destroy_node()

    def _publisher(self, kind, topic, qos):
        key = (kind, topic)
        if key not in self._pubs:
            self._pubs[key] = self.create_publisher(kind, topic, qos)
        return self._pubs[key]

    def _scene_io(self, scene):
        # the robot topic (relative to the node's namespace) that resolves to the one the
        # node reads descriptions from: that robot's description is not published there
        wanted = self._config.robot_description_topic
        skip = next((t for t in (r.topic("robot_description") for r in scene.robots)
                     if wanted and self.resolve_topic_name(t) == wanted), "")
        return SceneIO(scene, self._publisher, skip_description=skip, stream=self._stream,
                       joint_states=self._config.joint_states_topic)

    def _stream(self, kind, topic, depth, packer):
        """A stream of pre-serialized messages: through the relay when there is one."""
        relay = self._relay  # read once: the physics thread may drop a dead one
        if relay is not None:
            return RelayStream(relay, relay.topic(
                type_name(kind), self.resolve_topic_name(topic), depth), packer)
        return packed.Stream(self._publisher(kind, topic, depth), packer)

    def _start_relay(self):
        """The relay process if ``publisher_process`` asks for it (None if it fails)."""
        if not self._config.publisher_process:
            return None
        try:
            return Relay(self.context.get_domain_id())
        except OSError as e:
            self.get_logger().warning(f"no publisher process ({e}): publishing in-process")
            return None

    def _check_relay(self):
        """Physics thread, 1 Hz: after the relay's death, publish in-process again."""
        if self._relay is None or self._relay.alive():
            return
        code = self._relay.proc.returncode
        self.get_logger().error(f"the publisher process exited (code {code}); "
                                "publishing in-process from now on")
        self._relay.release()  # the shared memory goes once nothing maps it
        self._relay = None
        self._clock_out = self._stream(ClockMsg, "clock", 10, packed.clock())
        self._wrench_streams = {}
        self._make_wrench_publishers(self._config, self._scene)
        self._io = self._scene_io(self._scene)

    # -- parameters -------------------------------------------------------------------
    def _validate(self, params):
        """On-set-parameters callback: every rule of config.check, then the scene's."""
        try:
            result = self._check(params)
        except Exception as e:  # never out of a callback: a reason instead
            result = SetParametersResult(successful=False,
                                         reason=f"{type(e).__name__}: {e}")
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
        for name in config.STARTUP_ONLY:
            if name in mine and mine[name] != getattr(self._config, name):
                return SetParametersResult(
                    successful=False, reason=f"{name} is read at start-up only")
        new = self._config.with_values(mine)
        scene, pending = self._scene, None
        if any(config.SPECS[n].rebuild and getattr(new, n) != getattr(self._config, n)
               for n in mine):
            try:  # built and compiled here: the physics thread only swaps it in
                with self._loop.yielding():  # (a flat-out loop would starve the build)
                    reason = urdf_guard.check(new)  # a native crash ends a child, not us
                    if reason:
                        return SetParametersResult(successful=False, reason=reason)
                    sim, scene = load(new)
            except Exception as e:  # SceneError says why; anything else must not kill us
                reason = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
                return SetParametersResult(successful=False, reason=reason)
            pending = (sim, scene)
        reason = self._check_names(new, scene)
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        self._pending = pending
        return SetParametersResult(successful=True)

    @staticmethod
    def _check_names(cfg, scene):
        """Reason why cfg.joints / cfg.wrench_links do not fit the scene, or None."""
        return (config.check_names("joints", cfg.joints, scene.joint_names)
                or config.check_names("wrench_links", cfg.wrench_links, scene.links))

    def _apply(self, params):
        """Post-set callback: hand the accepted values to the physics thread (no waiting)."""
        try:
            self._apply_values(params)
        except Exception as e:  # accepted but not in force: say so, stay alive
            self.get_logger().error(f"applying parameters failed: {type(e).__name__}: {e}")

    def _apply_values(self, params):
        old = self._config
        new = old.with_values({p.name: p.value for p in params if p.name in config.SPECS})
        self._config = new
        if self._loop is None:
            return
        pending, self._pending = self._pending, None
        if pending is not None:
            sim, scene = pending
            io = self._scene_io(scene)
            self._make_wrench_publishers(new, scene)
            self._make_command_subscriptions(scene)
            if self._actions is not None:
                self._actions.follow(scene)

            def adopt():  # in the physics thread, before any task sees the new simulator
                self._scene, self._io = scene, io
                io.publish_descriptions()
                self._publish_static_tf(sim, scene)

            def done(fut):
                if fut.exception() is None:
                    self.get_logger().info(f"rebuilt the simulator: scene {scene.path}, "
                                           f"h = {scene.h:g} s")
            self._loop.replace_simulator(sim, then=adopt).add_done_callback(done)
        else:
            self._make_wrench_publishers(new, self._scene)
        if new.paused != old.paused:
            self._loop.set_paused(new.paused)
        if new.real_time_factor != old.real_time_factor:
            self._loop.set_real_time_factor(new.real_time_factor)
        rates = ("publish_rate", "clock_rate", "sensor_rate", "marker_rate")
        if any(getattr(new, r) != getattr(old, r) for r in rates):
            self._make_tasks()

    def _sync_paused(self):
        """Guard-condition callback: after a failed step, ``paused`` reads True."""
        if self._loop.paused and self._loop.error and not self._config.paused:
            result = self.set_parameters([Parameter("paused", value=True)])[0]
            if not result.successful:
                self.get_logger().error(f"could not set paused: {result.reason}")

    def _wrench_links(self):
        return self._config.wrench_links or self._scene.wrench_links

    def _make_wrench_publishers(self, cfg, scene):
        for link in cfg.wrench_links or scene.wrench_links:
            if link not in self._wrench_streams:
                self._wrench_streams[link] = self._stream(
                    WrenchStamped, f"~/contact_wrenches/{link}", 10, packed.wrench(link))

    def _make_tasks(self):
        for task in self._tasks:
            task.cancel()
        cfg = self._config
        self._tasks = [self._loop.every(1.0 / cfg.publish_rate, self._publish, "sim"),
                       self._loop.every(1.0 / cfg.clock_rate, self._publish_clock, "sim"),
                       self._loop.every(1.0 / cfg.sensor_rate, self._publish_sensors, "sim")]
        if self._config.marker_rate > 0:
            self._tasks.append(
                self._loop.every(1.0 / self._config.marker_rate, self._publish_markers))

    # -- publishing: periodic tasks run by the physics thread -------------------------
    def _publish(self, sim):
        """The publish-rate stream: every robot's joint states. Like every task, it runs
        in the physics thread between two steps: all of one step."""
        self._io.publish_joints(packed.to_stamp(self._loop.time), sim)
        self.publish_cycles += 1

    def _publish_clock(self, sim):
        self._clock_out.publish(self._no_values, packed.to_stamp(self._loop.time))

    def _publish_sensors(self, sim):
        """The sensor-rate streams: odometry, IMUs, /tf, ~/contacts and the contact
        wrenches (the last two only after a step, whose forces they are: before it, or
        after a reset, a zero wrench would say that a standing foot carries nothing)."""
        t = self._loop.time
        stamp = packed.to_stamp(t)
        transforms = self._io.publish_sensors(stamp, t, sim, self._pub_tf is not None)
        if self._pub_tf is not None and transforms:
            self._pub_tf.publish(TFMessage(transforms=transforms))
        self._publish_contacts(sim, t)
        streams = [(link, self._wrench_streams.get(link)) for link in self._wrench_links()]
        links = [link for link, s in streams if s is not None and s.listened()]
        if links and sim.stepped:
            for link, w in sim.link_wrenches(links, "local").items():
                self._wrench_streams[link].send(w, stamp)

    def _publish_markers(self, sim):
        snap = self._loop.take_snapshot(sim, contacts=True, shapes=True)
        msg, self._arrows = messages.contact_markers(
            snap.time, snap.contacts, snap.shapes, self._arrows, shape_cache=self._shapes)
        self._pub_markers.publish(msg)

    def _report(self, sim):
        self._check_relay()
        snap = self._loop.take_snapshot(sim)
        new_failures = snap.stats.lcp_failures - self._failures
        self._failures = snap.stats.lcp_failures
        extra = self._rejections.values()
        if self._relay is not None:
            extra["relay_dropped"] = self._relay.dropped
        self._pub_diag.publish(messages.diagnostics(
            snap.time, snap, target_rtf=self._config.real_time_factor,
            scene=self._scene.path, new_failures=new_failures, extra=extra))
        if self._status is not None and not snap.finished:  # the caller prints the last
            self._status(status_line(snap))

    def _on_task_error(self, exc):
        self._throttle.warn("publishing", f"publishing failed: {type(exc).__name__}: {exc}")

    def _on_physics_error(self, exc):
        self.get_logger().error(f"simulation stopped and paused: {type(exc).__name__}: {exc}; "
                                "call ~/reset to start again")
        self._error_guard.trigger()

    # -- commands ---------------------------------------------------------------------
    def _on_commands(self, msg):
        cfg = self._config
        kp, kd = cfg.gains()
        joints = list(cfg.joints) or None
        values = list(msg.data)
        self._submit("~/commands", lambda sim: sim.set_command(
            cfg.command_mode, values, joints=joints, kp=kp, kd=kd))

    def _make_command_subscriptions(self, scene):
        for robot in scene.robots:
            # (resolved: the name a user sees, in logs and /diagnostics)
            topic = self.resolve_topic_name(robot.topic(self._config.joint_commands_topic))
            if topic not in self._subs:
                self._subs[topic] = self.create_subscription(
                    JointState, topic,
                    lambda msg, ns=robot.namespace, t=topic: self._on_joint_commands(
                        msg, ns, t), 10)

    def _on_joint_commands(self, msg, namespace, topic):
        """``<ns>/joint_commands``: as topic_based_ros2_control's hardware plugin sends."""
        robot = self._scene.robot_in(namespace)
        try:
            if robot is None:
                raise ValueError(f"the scene has no robot in namespace {namespace!r}")
            groups = joint_command_groups(msg.name, msg.position, msg.velocity, msg.effort)
            groups = {mode: ([robot.sim_joint(j) for j in joints], values)
                      for mode, (joints, values) in groups.items()}
        except (ValueError, KeyError) as e:
            self._reject(topic, str(e).strip(chr(39)))
            return
        kp, kd = self._config.gains()

        def op(sim):
            for mode, (joints, values) in groups.items():
                sim.set_command(mode, values, joints=joints, kp=kp, kd=kd)
        self._submit(topic, op)

    def _on_robot_description(self, msg):
        if msg.data == self._scene.robot_description:
            return
        result = self.set_parameters([Parameter("robot_description", value=msg.data)])[0]
        topic = self._config.robot_description_topic
        if result.successful:
            self.get_logger().info(f"new robot description from {topic}")
        else:
            self._reject(topic, result.reason)

    def _on_trajectory(self, msg):
        try:
            joints, start, t_rel, q, v = trajectory_arrays(msg)
            joints = [self._scene.sim_joint(j) for j in joints]  # robot-relative names too
        except (ValueError, KeyError) as e:
            self._reject("~/joint_trajectory", str(e).strip(chr(39)))
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
                points = [sim.trajectory_start(joints, points[0])] + points
                if rates is not None:
                    rates = [[float(now.velocity[index[j]]) for j in joints]] + rates
            sim.set_trajectory(joints, times, points, velocities=rates)
        self._submit("~/joint_trajectory", op)

    def _submit(self, topic, op):
        def done(fut):
            exc = fut.exception()
            if exc is not None:
                self._reject(topic, str(exc))
        self._loop.submit(op).add_done_callback(done)

    def _reject(self, topic, reason):
        """A command from ``topic`` not applied: counted for /diagnostics, logged
        (throttled)."""
        self._rejections.count(topic, reason)
        self._throttle.warn(topic, f"{topic} rejected: {reason}")


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

