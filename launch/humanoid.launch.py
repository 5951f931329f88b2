"""The humanoid standing: contact_lcp node, robot_state_publisher and rviz2.

    ros2 launch contact_lcp humanoid.launch.py [scene:=...] [use_rviz:=false]
        [use_sim_time:=true]

robot_state_publisher gets the scene robot's URDF read by the simulator's own scene
loader, i.e. the same XML the node publishes on /robot_description.
"""

import os

# contact_lcp pins numpy's BLAS to one thread when it is imported first; launch has
# usually loaded numpy already, so say it here (before contact_lcp is imported): no
# "imported after numpy" warning, and the node inherits the setting.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from launch import LaunchDescription  # noqa: E402
from launch.actions import DeclareLaunchArgument, OpaqueFunction  # noqa: E402
from launch.conditions import IfCondition  # noqa: E402
from launch.substitutions import LaunchConfiguration  # noqa: E402
from launch_ros.actions import Node  # noqa: E402

from contact_lcp.ros.config import package_config_dir  # noqa: E402

DEFAULT_SCENE = "humanoid_stand.yaml"


def describe(default_scene):
    """LaunchDescription for a scene file of the package's config/ folder."""
    share = str(package_config_dir().parent)  # ament index, else the source tree
    scene = LaunchConfiguration("scene")
    use_sim_time = LaunchConfiguration("use_sim_time")
    params = os.path.join(share, "config", "contact_lcp.params.yaml")
    return LaunchDescription([
        DeclareLaunchArgument(
            "scene", default_value=os.path.join(share, "config", default_scene),
            description="Scene YAML file"),
        DeclareLaunchArgument("use_rviz", default_value="true", description="Start rviz2"),
        DeclareLaunchArgument(
            "use_sim_time", default_value="true",
            description="robot_state_publisher and rviz2 follow /clock from the simulator"),
        Node(
            package="contact_lcp", executable="contact_lcp_node", name="contact_lcp",
            output="screen", parameters=[params, {"scene": scene}]),
        OpaqueFunction(function=_robot_state_publisher),
        Node(
            package="rviz2", executable="rviz2", output="screen",
            arguments=["-d", os.path.join(share, "rviz", "contact_lcp.rviz")],
            parameters=[{"use_sim_time": use_sim_time}],
            condition=IfCondition(LaunchConfiguration("use_rviz"))),
    ])


def _robot_state_publisher(context):
    """One robot_state_publisher per robot of the scene, in the robot's namespace.

    A scene with several robots puts robot ``name`` in namespace ``/<name>`` with TF
    frames ``<name>/...`` (``frame_prefix``), as the node names its base frame.
    """
    from contact_lcp.ros.scene_info import scene_robot_urdfs

    scene = LaunchConfiguration("scene").perform(context)
    use_sim_time = LaunchConfiguration("use_sim_time").perform(context).lower() == "true"
    nodes = []
    for _name, namespace, urdf in scene_robot_urdfs(scene):
        nodes.append(Node(
            package="robot_state_publisher", executable="robot_state_publisher",
            namespace=namespace or None, output="screen",
            parameters=[{"robot_description": urdf, "use_sim_time": use_sim_time,
                         "frame_prefix": f"{namespace}/" if namespace else ""}],
            # the contact_lcp node already publishes the same XML on robot_description
            remappings=[("robot_description", "robot_state_publisher/robot_description")]))
    return nodes


def generate_launch_description():
    return describe(DEFAULT_SCENE)
