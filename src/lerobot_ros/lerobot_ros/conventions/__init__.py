"""The project's ROS conventions as plain data, imported by every layer (so it imports nothing of ours).

`qos`: the QoS profiles by purpose, ROS-free, so the bag writer, the contract loader and the rclpy
profiles of `lerobot_ros.ros.qos` read the same numbers. `joints`: joint names per robot.
"""

from lerobot_ros.conventions.joints import ARM_JOINTS, JOINT_NAMES, SO101_JOINTS, joint_names
from lerobot_ros.conventions.qos import PROFILE_NAMES, QOS_SPECS, QosSpec

__all__ = ["ARM_JOINTS", "JOINT_NAMES", "PROFILE_NAMES", "QOS_SPECS", "SO101_JOINTS", "QosSpec", "joint_names"]
