"""talker: publishes a moving SO-101 joint state and a synthetic camera image (a smoke-test source).

Topics: `joint_states` (sensor_msgs/JointState, radians), `camera/image_raw` (rgb8),
`camera/camera_info`. Parameters: `TalkerConfig` (ros/smoke.py) (fps can be changed while running).
"""

from __future__ import annotations

import math

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image, JointState

from lerobot_ros.codecs import make_camera_info, ns_to_time, numpy_to_image, numpy_to_joint_state
from lerobot_ros.conventions.joints import SO101_JOINTS
from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import SENSOR_QOS
from lerobot_ros.ros.smoke import TalkerConfig


def synthetic_frame(width: int, height: int, tick: int) -> np.ndarray:
    """An rgb8 test pattern: a gradient with a bright bar that moves one column per tick."""
    frame = np.empty((height, width, 3), dtype=np.uint8)
    frame[..., 0] = np.linspace(0, 255, width, dtype=np.uint8)[None, :]
    frame[..., 1] = np.linspace(0, 255, height, dtype=np.uint8)[:, None]
    frame[..., 2] = 64
    x = tick % width
    frame[:, x : x + 8] = 255
    return frame


def joint_positions(t: float) -> np.ndarray:
    """A slow sinusoid per joint, in radians, phase-shifted so joints differ."""
    return np.array([0.5 * math.sin(0.5 * t + i) for i in range(len(SO101_JOINTS))])


class Talker(Node):
    params_class = TalkerConfig

    def __init__(self, **kwargs):
        super().__init__("talker", **kwargs)
        p = declare_params(self, TalkerConfig, on_change=self._on_params).values
        self.fps, self.width, self.height, self.frame_id = p.fps, p.width, p.height, p.frame_id
        self.joint_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.image_pub = self.create_publisher(Image, "camera/image_raw", SENSOR_QOS)
        self.info_pub = self.create_publisher(CameraInfo, "camera/camera_info", SENSOR_QOS)
        self.info = make_camera_info(self.width, self.height, frame_id=self.frame_id)
        self.tick = 0
        self.timer = self.create_timer(1.0 / self.fps, self.on_timer)

    def _on_params(self, new: TalkerConfig, changed: dict) -> None:
        self.fps = new.fps
        self.timer.timer_period_ns = int(1e9 / new.fps)

    def on_timer(self) -> None:
        now = self.get_clock().now().nanoseconds
        self.joint_pub.publish(numpy_to_joint_state(SO101_JOINTS, joint_positions(now * 1e-9), stamp_ns=now))
        self.image_pub.publish(
            numpy_to_image(synthetic_frame(self.width, self.height, self.tick), "rgb8", now, self.frame_id)
        )
        self.info.header.stamp = ns_to_time(now)
        self.info_pub.publish(self.info)
        self.tick += 1


def main(args=None) -> None:
    run_node(Talker, args)


if __name__ == "__main__":
    main()
