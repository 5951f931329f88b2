"""The ROS 2 node ``contact_lcp`` (the only part of the package that imports rclpy).

Run ``contact_lcp_node`` or ``python -m contact_lcp.ros`` (``--duration S``, then
``--ros-args ...``). Parameters are listed in :data:`contact_lcp.ros.config.PARAMETERS`
(sample: ``config/contact_lcp.params.yaml``); every topic, service and parameter with its
type is on the documentation's ROS page (docs/ros.md).

Namespaces: one robot publishes at the root, several robots each in ``/<robot name>``
with TF frames prefixed ``<robot name>/`` and URDF joint names (``scene_info.py``).

Published (stamps are sim time, monotonic across resets)
    ``/clock``; per robot ``<ns>/joint_states`` sensor_msgs/JointState (effort = applied
    actuator torque), and per floating base ``<ns>/odom`` nav_msgs/Odometry and
    ``<ns>/imu`` sensor_msgs/Imu; ``/tf`` world -> bases and free bodies (only where
    tf2_msgs is importable); ``~/contact_wrenches/<link>`` geometry_msgs/WrenchStamped
    (net contact wrench over the last step in the link frame); joint states at
    ``publish_rate``, ``/clock`` at ``clock_rate``, the rest at ``sensor_rate`` Hz of
    sim time (wall time while paused), each only while it has a subscriber (with
    ``publisher_process``, all but TF, markers, diagnostics and descriptions come from
    the helper node ``contact_lcp_relay``); ``~/contact_markers``
    visualization_msgs/MarkerArray at ``marker_rate`` Hz and ``/diagnostics`` at 1 Hz of
    wall time (ERROR after a failed step); ``<ns>/robot_description`` std_msgs/String
    (transient local).
Subscribed
    ``<ns>/joint_commands`` sensor_msgs/JointState (topic_based_ros2_control: each joint
    by the first finite field of position, velocity, effort), ``~/commands``
    std_msgs/Float64MultiArray (one value per entry of ``joints``, read according to
    ``command_mode``), ``~/joint_trajectory`` trajectory_msgs/JointTrajectory
    (interpolated in sim time; header stamp 0 = start now), and the topic named by
    ``robot_description_topic`` (transient local) when set. A bad message is dropped
    with a throttled warning giving the reason; the simulation goes on.
Services
    ``~/reset`` std_srvs/Trigger (after a failed step: also running again),
    ``~/set_paused`` std_srvs/SetBool, ``~/step`` std_srvs/Trigger (one time step, only
    while paused).
"""
