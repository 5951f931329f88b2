"""Per-robot publishers: joint states, odometry, IMU, description, TF of a scene.

A :class:`SceneIO` is made (in the executor thread) for each simulator the node runs,
and handed to the physics thread together with it; its :meth:`SceneIO.publish` runs
there. Publishers come from the node's cache (one per topic for the node's life), so a
rebuilt scene reuses them and a publisher is never destroyed while the physics thread
may use it. Topics and frames follow :mod:`contact_lcp.ros.scene_info`.
"""

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from contact_lcp.ros import messages, packed

#: Keep-last depth of the state streams.
DEPTH = 10
#: A transient-local, depth-1 profile (the robot descriptions).
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class RobotIO:
    """Publishers of one robot (see :class:`contact_lcp.ros.scene_info.RobotEntry`).

    ``publisher(kind, topic, qos)`` returns the node's (cached) publisher; the robot's
    description is not published on ``skip_description`` (the topic the node reads a
    description from); ``stream(kind, topic, depth, packer)``, if given, makes the
    streams of pre-serialized messages (through the node's relay process,
    :mod:`contact_lcp.ros.relay`, when it has one). Joint states go out at the publish rate, odometry and the IMU at the
    sensor rate, all as pre-serialized messages (:mod:`contact_lcp.ros.packed`).
    """

    def __init__(self, robot, gravity, publisher, skip_description="", stream=None,
                 joint_states="joint_states"):
        self.robot = robot
        self._gravity = np.asarray(gravity, dtype=float)
        stream = stream or _stream(publisher)
        self._joints = stream(JointState, robot.topic(joint_states), DEPTH,
                              packed.joint_state(robot.local_names))
        self._span = slice(robot.first, robot.first + len(robot.local_names))
        self._odom = self._imu = None
        if robot.floating:
            self._odom = stream(Odometry, robot.topic("odom"), DEPTH,
                                packed.odometry(messages.WORLD, robot.base_frame))
            self._imu = stream(Imu, robot.topic("imu"), DEPTH, packed.imu(robot.base_frame))
        self._description = None  # (an MJCF robot has no URDF for rviz: none published)
        if robot.topic("robot_description") != skip_description and robot.urdf:
            self._description = publisher(String, robot.topic("robot_description"), LATCHED)
        self._last = None  # (sim t, v_W of the base origin) of the previous sample

    def publish_description(self):
        """Latch the robot's URDF on ``<ns>/robot_description``."""
        if self._description is not None:
            self._description.publish(String(data=self.robot.published_urdf
                                              or self.robot.urdf))

    def listened(self):
        """True while the robot's joint states have a subscriber."""
        return self._joints.listened()

    def publish_joints(self, stamp, js):
        """Send the robot's joints of the simulator JointState ``js``."""
        s = self._span
        self._joints.send(np.concatenate((js.position[s], js.velocity[s], js.effort[s])), stamp)

    def publish_sensors(self, stamp, t, sim, transforms):
        """Publish odometry and IMU at ROS time ``t`` [s] (``stamp`` the same as
        ``(sec, nanosec)``); append the base transform to ``transforms`` (unless None)."""
        if not self.robot.floating:
            return
        base = sim.base_state(self.robot.index)
        a_W = self._acceleration(sim.t, base)  # every sample, listened to or not
        self._odom.publish(np.concatenate((base.pose, base.twist)), stamp)
        if self._imu.listened():
            self._imu.send(messages.imu_values(base, a_W, self._gravity), stamp)
        if transforms is not None:  # None: nobody publishes /tf
            transforms.append(messages.transform(t, base, self.robot.base_frame))

    def _acceleration(self, sim_t, base):
        """Mean acceleration [m/s^2] of the base origin in W since the last sample."""
        a, self._last = finite_difference(self._last, sim_t, base)
        return a


def _stream(publisher):
    """``stream(kind, topic, depth, packer)`` -> a :class:`packed.Stream` of the node's
    publisher (the default; the node passes one that goes through its relay when it has
    one)."""
    return lambda kind, topic, depth, packer: packed.Stream(publisher(kind, topic, depth),
                                                            packer)


def finite_difference(last, sim_t, state):
    """``(a_W, new last)``: the mean acceleration [m/s^2] of a frame origin in W since the
    ``last`` sample ``(t, v_W)``; zero for the first sample and after a reset (the sim
    time went back)."""
    v = np.asarray(state.twist[:3], dtype=float).copy()
    if last is None or not sim_t > last[0]:
        return np.zeros(3), (sim_t, v)
    return (v - last[1]) / (sim_t - last[0]), (sim_t, v)


class LinkIMU:
    """An ideal IMU at a link's origin named in the scene's ``output.imu_links``,
    published on ``~/imu/<link>`` in the link's frame."""

    def __init__(self, link, gravity, publisher, stream=None):
        self.link = link
        self._gravity = np.asarray(gravity, dtype=float)
        self._stream = (stream or _stream(publisher))(
            Imu, f"~/imu/{link.replace('/', '_')}", DEPTH, packed.imu(link))
        self._last = None

    def publish(self, stamp, sim):
        """Publish the IMU's reading at ``stamp`` ``(sec, nanosec)``."""
        state = sim.link_state(self.link)
        a, self._last = finite_difference(self._last, sim.t, state)
        self._stream.publish(messages.imu_values(state, a, self._gravity), stamp)


class SceneIO:
    """The publishers of one scene: every robot, and the free bodies' transforms."""

    def __init__(self, scene, publisher, skip_description="", stream=None,
                 joint_states="joint_states"):
        self.scene = scene
        self.robots = [RobotIO(r, scene.gravity, publisher, skip_description, stream,
                               joint_states)
                       for r in scene.robots]
        self.imus = [LinkIMU(link, scene.gravity, publisher, stream)
                     for link in scene.imu_links]

    def publish_descriptions(self):
        """Latch every robot's URDF."""
        for r in self.robots:
            r.publish_description()

    def publish_joints(self, stamp, sim):
        """Every robot's joint states (the publish-rate stream); the simulator's joint
        state is read only if some robot's topic has a subscriber."""
        js = None
        for r in self.robots:
            if r.listened():
                js = js or sim.joint_state()
                r.publish_joints(stamp, js)

    def publish_sensors(self, stamp, t, sim, with_tf=True):
        """Every robot's odometry and IMU and the link IMUs (the sensor-rate streams);
        return the transforms (robots' bases, bodies), or None without ``with_tf`` (no
        /tf publisher: none are made)."""
        transforms = [] if with_tf else None
        for r in self.robots:
            r.publish_sensors(stamp, t, sim, transforms)
        for imu in self.imus:
            imu.publish(stamp, sim)
        if with_tf:
            for name in self.scene.bodies:
                transforms.append(messages.transform(t, sim.body_state(name), name))
        return transforms
