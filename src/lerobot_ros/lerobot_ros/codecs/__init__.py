"""Layer 1: ROS messages <-> numpy / LeRobot values, without per-element Python on large payloads.

Decoders are duck-typed: they read attributes, so they accept rclpy messages and the message objects
that `rosbags` deserializes alike. Encoders build rclpy messages.
"""

from lerobot_ros.codecs.arrays import float64_array, float64_multi_array_to_numpy, numpy_to_float64_multi_array
from lerobot_ros.codecs.camera_info import camera_info_to_dict, make_camera_info
from lerobot_ros.codecs.compressed import (
    compressed_from_cdr,
    compressed_to_numpy,
    image_to_compressed,
    numpy_to_compressed,
)
from lerobot_ros.codecs.episode import episode_to_status
from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.image import (
    IMAGE_ENCODINGS,
    image_from_cdr,
    image_to_numpy,
    image_to_rgb,
    numpy_to_image,
)
from lerobot_ros.codecs.joint_state import (
    joint_state_from_cdr,
    joint_state_to_numpy,
    joint_state_values,
    numpy_to_joint_state,
)
from lerobot_ros.codecs.time import (
    duration_to_ns,
    ns_to_duration,
    ns_to_time,
    seconds_to_ns,
    set_stamp,
    split_ns,
    time_to_ns,
)
from lerobot_ros.codecs.trajectory import chunk_to_joint_trajectory, joint_trajectory_to_chunk

__all__ = [
    "CodecError",
    "IMAGE_ENCODINGS",
    "camera_info_to_dict",
    "chunk_to_joint_trajectory",
    "compressed_from_cdr",
    "compressed_to_numpy",
    "duration_to_ns",
    "episode_to_status",
    "float64_array",
    "float64_multi_array_to_numpy",
    "image_from_cdr",
    "image_to_compressed",
    "image_to_numpy",
    "image_to_rgb",
    "joint_state_from_cdr",
    "joint_state_to_numpy",
    "joint_state_values",
    "joint_trajectory_to_chunk",
    "make_camera_info",
    "ns_to_duration",
    "ns_to_time",
    "numpy_to_compressed",
    "numpy_to_float64_multi_array",
    "numpy_to_image",
    "numpy_to_joint_state",
    "seconds_to_ns",
    "set_stamp",
    "split_ns",
    "time_to_ns",
]
