"""The ROS 2 node ``contact_lcp`` (the only part of the package that imports rclpy).

Run ``contact_lcp_node`` or ``python -m contact_lcp.ros`` (``--duration S``, then
``--ros-args ...``). Parameters are listed in :data:`contact_lcp.ros.config.PARAMETERS`
(sample: ``config/contact_lcp.params.yaml``).

Published (stamps are sim time, monotonic across resets)
    ``/clock`` rosgraph_msgs/Clock, ``/joint_states`` sensor_msgs/JointState (reliable,
    depth 10; effort = applied actuator torque), ``/odom`` nav_msgs/Odometry (floating
    base pose and twist, both in ``world``), ``/tf`` world -> base link (only where
    tf2_msgs is importable), ``~/contact_wrenches/<link>`` geometry_msgs/WrenchStamped
    (net contact wrench over the last step in the link frame about its origin,
    frame_id = link; zeros out of contact), all at ``publish_rate`` Hz of sim time
    (wall time while paused);
    ``~/contact_markers`` visualization_msgs/MarkerArray (contact points, force arrows,
    collision shapes; frame ``world``) at ``marker_rate`` Hz and ``/diagnostics`` at
    1 Hz, both of wall time;
    ``/robot_description`` std_msgs/String (transient local, depth 1).
Subscribed
    ``~/commands`` std_msgs/Float64MultiArray (one value per entry of ``joints``, read
    according to ``command_mode``), ``~/joint_trajectory`` trajectory_msgs/JointTrajectory
    (interpolated in sim time; header stamp 0 = start now). A bad message is dropped with
    a throttled warning giving the reason; the simulation goes on.
Services
    ``~/reset`` std_srvs/Trigger, ``~/set_paused`` std_srvs/SetBool, ``~/step``
    std_srvs/Trigger (one time step, only while paused).
"""
