"""Where URDF-consuming nodes get the robot model: a parameter, else the latched topic robot_state_publisher fills."""

from __future__ import annotations

from collections.abc import Callable

from rclpy.node import Node
from std_msgs.msg import String

from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.qos import LATCHED_QOS


def follow_robot_description(node: Node, text: str, use: Callable[[str], None]) -> None:
    """Hand the URDF to `use`: the `robot_description` parameter's `text` now (a bad one, i.e. `use` raising
    ValueError, stops start-up with NodeStartupError), else every text on the latched `robot_description`
    topic (a bad one is logged and ignored, the previous model kept)."""
    if text:
        try:
            use(text)
        except ValueError as exc:
            raise NodeStartupError(f"robot_description parameter: {exc}") from None
        return

    def on_description(msg: String) -> None:
        try:
            use(msg.data)
        except ValueError as exc:
            node.get_logger().error(f"ignoring robot_description: {exc}")

    node.create_subscription(String, "robot_description", on_description, LATCHED_QOS)
    node.get_logger().info("waiting for the URDF on the latched robot_description topic (robot_state_publisher)")
