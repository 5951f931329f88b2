"""The node's standard ROS interfaces from packages that PyPI has no wheel of: ``/tf``
and ``/tf_static`` (tf2_msgs), FollowJointTrajectory (control_msgs), the
simulation_interfaces services, and its own ``~/contacts`` (contact_lcp_msgs) (a mixin
of the node).

Each package is built into a pip-only environment at install
(:mod:`contact_lcp.ros.interfaces`); a ROS installation brings its own. Where one is
missing, the node runs without its interfaces and logs which and why, once.
"""

from rclpy.qos import DurabilityPolicy, QoSProfile

from contact_lcp.ros import messages
from contact_lcp.ros.interfaces import missing
from contact_lcp.ros.scene_info import SceneInfo
from contact_lcp.sim import entities
from contact_lcp.sim.views import BaseState

try:
    from tf2_msgs.msg import TFMessage
except ImportError:
    TFMessage = None
try:
    from contact_lcp_msgs.msg import Contact, Contacts
except ImportError:
    Contacts = None
try:
    from contact_lcp.ros.trajectory_action import TrajectoryActions
except ImportError:
    TrajectoryActions = None
try:
    from contact_lcp.ros.sim_interfaces import SimulationInterfaces
except ImportError:
    SimulationInterfaces = None

#: /tf_static as tf2's static broadcaster publishes it: the last message kept for late joiners
STATIC = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class StandardInterfaces:
    """Mixin of :class:`contact_lcp.ros.node.ContactLCPNode` (uses ``_loop``, ``_scene``,
    ``_config``)."""

    def _make_tf(self):
        """The /tf and /tf_static publishers (None without tf2_msgs)."""
        self._pub_tf = self._pub_tf_static = None
        if TFMessage is None:
            self.get_logger().warning(f"no /tf: {missing('tf2_msgs')}")
            return
        self._pub_tf = self.create_publisher(TFMessage, "tf", QoSProfile(depth=100))
        self._pub_tf_static = self.create_publisher(TFMessage, "tf_static", STATIC)

    def _make_contacts(self):
        """``~/contacts`` (contact_lcp_msgs/Contacts), or a logged reason without it."""
        self._pub_contacts = None
        if Contacts is None:
            self.get_logger().warning(f"no ~/contacts: {missing('contact_lcp_msgs')}")
            return
        self._pub_contacts = self.create_publisher(Contacts, "~/contacts", 10)

    def _publish_contacts(self, sim, t):
        """Every contact of the last step on ``~/contacts``, stamped ``t`` [s] (sensor
        rate, when listened); nothing before a first step (whose forces are not known:
        an empty list would say that a robot standing on the ground touches nothing)."""
        pub = self._pub_contacts
        if pub is None or not sim.stepped or pub.get_subscription_count() == 0:
            return
        msg = Contacts()
        msg.header.stamp = messages.to_time(t)
        msg.header.frame_id = messages.WORLD
        for c in sim.contacts():
            m = Contact(body_a=c.body_a, body_b=c.body_b, distance=float(c.distance))
            m.position.x, m.position.y, m.position.z = (float(x) for x in c.p_W)
            m.normal.x, m.normal.y, m.normal.z = (float(x) for x in c.n_W)
            m.force.x, m.force.y, m.force.z = (float(x) for x in c.force_W)
            msg.contacts.append(m)
        pub.publish(msg)

    def _make_standard_interfaces(self):
        """FollowJointTrajectory servers and the simulation_interfaces services."""
        self._actions = self._sim_interfaces = None
        if TrajectoryActions is None:
            self.get_logger().warning(f"no FollowJointTrajectory: {missing('control_msgs')}")
        else:
            self._actions = TrajectoryActions(self, self._loop, self._scene)
        if SimulationInterfaces is None:
            self.get_logger().warning(
                f"no simulation_interfaces services: {missing('simulation_interfaces')}")
        else:
            self._sim_interfaces = SimulationInterfaces(self)

    def _publish_static_tf(self, sim, scene):
        """world -> base of every fixed-base robot (its placement never changes)."""
        if self._pub_tf_static is None:
            return
        transforms = []
        for robot in scene.robots:
            if not robot.floating:
                state = BaseState(*entities.pose_and_twist(sim, robot.name))
                transforms.append(messages.transform(self._loop.time, state,
                                                     robot.base_frame))
        self._pub_tf_static.publish(TFMessage(transforms=transforms))

    def adopt_simulator(self, sim):
        """Physics thread, in the op that swaps in ``sim`` (an entity added or removed):
        the scene the publishers read, and their streams, follow it."""
        scene = SceneInfo.of(sim, self._config)
        io = self._scene_io(scene)
        self._scene, self._io = scene, io
        io.publish_descriptions()
        self._publish_static_tf(sim, scene)

    def after_adopt(self):
        """Executor thread, after :meth:`adopt_simulator`: subscriptions and servers for
        the new scene's robots."""
        self._make_wrench_publishers(self._config, self._scene)
        self._make_command_subscriptions(self._scene)
        if self._actions is not None:
            self._actions.follow(self._scene)
