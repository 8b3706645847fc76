"""The ROS message types a contract feature may use, and how their values are read and built.

Decoding is duck-typed (rclpy messages and `rosbags` message objects alike, via the codecs);
encoding builds rclpy messages. Classes are imported lazily from the type string.
"""

from __future__ import annotations

import importlib

from lerobot_ros.contract.errors import ContractError

JOINT_STATE = "sensor_msgs/msg/JointState"
FLOAT64_ARRAY = "std_msgs/msg/Float64MultiArray"
TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
IMAGE = "sensor_msgs/msg/Image"
COMPRESSED = "sensor_msgs/msg/CompressedImage"
STRING = "std_msgs/msg/String"
BOOL = "std_msgs/msg/Bool"
EPISODE_STATUS = "lerobot_ros_msgs/msg/EpisodeStatus"

#: feature message type -> (kind, has a header)
FEATURE_TYPES: dict[str, tuple[str, bool]] = {
    JOINT_STATE: ("vector", True),
    FLOAT64_ARRAY: ("vector", False),
    TRAJECTORY: ("vector", True),
    IMAGE: ("image", True),
    COMPRESSED: ("image", True),
    BOOL: ("flag", False),  # a per-frame bool, e.g. LeRobot's DAgger `intervention` (takeover_node publishes it)
}


KNOWN_TYPES = (*FEATURE_TYPES, STRING, EPISODE_STATUS)


def normalize_type(name: str) -> str:
    """`sensor_msgs/JointState` -> `sensor_msgs/msg/JointState` (ROS 1 spelling); a bare `JointState` ->
    the one known type of that name. An unknown bare name is returned as is (the caller lists the choices)."""
    parts = name.strip().split("/")
    if len(parts) == 2:
        return f"{parts[0]}/msg/{parts[1]}"
    if len(parts) == 1:
        matches = [t for t in KNOWN_TYPES if t.rsplit("/", 1)[1] == parts[0]]
        if len(matches) == 1:
            return matches[0]
    return name.strip()


def message_class(type_name: str):
    """The rclpy class of `pkg/msg/Name` (importlib; no rosidl_runtime_py needed)."""
    pkg, kind, name = normalize_type(type_name).split("/")
    try:
        return getattr(importlib.import_module(f"{pkg}.{kind}"), name)
    except (ImportError, AttributeError):
        raise ContractError(
            f"message type {type_name!r} is not installed; install the package's Python messages "
            f"(e.g. the ros-{pkg.replace('_', '-')} wheel)"
        ) from None
