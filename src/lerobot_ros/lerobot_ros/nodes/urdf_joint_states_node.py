"""urdf_joint_states_node: joint_states (0 = mid-range) -> URDF joint values, for robot_state_publisher / rviz.

The project's joint_states put each joint's 0 at the middle of its calibrated range; robot_state_publisher
reads URDF joint values, whose zero differs on the SO-101 for wrist_roll and gripper (the jaw drew ~45 degrees
off). This node subscribes `joint_states` (sensor QoS) and publishes `~/joint_states` (sensor QoS, as
robot_state_publisher subscribes) with each position + (lower + upper) / 2 of that joint's URDF limits: same
header, names, velocities and efforts. Joints the URDF lacks pass through unchanged. The conversion is
lerobot_ros.viz.joint_states (the same offsets chunk_markers_node applies).

Parameters
  robot_description  URDF text; "" = take it from the latched `robot_description` topic (std_msgs/String,
                     transient local), as robot_state_publisher publishes it; states before it arrive are dropped
  joint_zero         mid_range (the project's convention: real SO-101 and MuJoCo twin) | urdf (pass-through;
                     no URDF needed)
"""

from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import JointState

from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import SENSOR_QOS
from lerobot_ros.ros.robot_description import follow_robot_description
from lerobot_ros.viz import joint_zero_offsets, parse_urdf, urdf_joint_state
from lerobot_ros.viz.config import UrdfJointStatesConfig


class UrdfJointStatesNode(Node):
    params_class = UrdfJointStatesConfig

    def __init__(self, node_name: str = "urdf_joint_states", **kwargs):
        super().__init__(node_name, **kwargs)
        p = declare_params(self, UrdfJointStatesConfig).values
        description, self.joint_zero = p.robot_description, p.joint_zero
        self.offsets: dict[str, float] | None = {} if self.joint_zero == "urdf" else None
        self.published = 0
        if description or self.offsets is None:  # joint_zero urdf: a pass-through needs no model
            follow_robot_description(self, description, self._set_model)
        self.pub = self.create_publisher(JointState, "~/joint_states", SENSOR_QOS)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, SENSOR_QOS)

    def _set_model(self, text: str) -> None:
        model = parse_urdf(text)
        self.offsets = joint_zero_offsets(model, self.joint_zero)
        shifted = ", ".join(f"{n} {v:+.3f}" for n, v in self.offsets.items() if abs(v) > 1e-9) or "none"
        self.get_logger().info(
            f"robot {model.name!r} ({self.joint_zero}): URDF = ROS + offset; offsets (rad/m): {shifted}"
        )

    def on_joint_states(self, msg: JointState) -> None:
        if self.offsets is None:
            self.get_logger().warning(
                "joint_states before any robot_description: not republished", throttle_duration_sec=5.0
            )
            return
        try:
            out = urdf_joint_state(msg, self.offsets)
        except ValueError as exc:
            self.get_logger().warning(str(exc), throttle_duration_sec=5.0)
            return
        self.pub.publish(out)
        self.published += 1


def main(args=None) -> None:
    run_node(UrdfJointStatesNode, args)


if __name__ == "__main__":
    main()
