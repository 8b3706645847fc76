"""The camera plugin's config, registered with LeRobot as `ros_image` (a ROS image topic as a LeRobot camera).

Used inside any LeRobot robot's cameras, e.g. `--robot.cameras='{front: {type: ros_image, topic:
/front/image_raw/compressed, width: 640, height: 480, fps: 30}}'`. LeRobot finds the device class from this
class's name and module (`RosImageCameraConfig` -> `RosImageCamera` in `lerobot_ros.plugins.camera`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot.cameras.configs import CameraConfig, ColorMode

CAMERA_TYPE = "ros_image"


@CameraConfig.register_subclass(CAMERA_TYPE)
@dataclass(kw_only=True)
class RosImageCameraConfig(CameraConfig):
    """A sensor_msgs/Image or CompressedImage topic as a LeRobot camera.

    `topic`: the image topic; one ending in `/compressed` is read as CompressedImage (or set `compressed`).
    `width` / `height`: what the robot declares (LeRobot robots size their features from them); a frame of
    another size is resized to them; unset, they are taken from the first frame at `connect()`.
    `color_mode`: rgb (LeRobot's default) or bgr. `max_age_s`: the oldest frame `read()` returns; an older
    one raises, naming the topic and its age. `qos`: sensor (best effort, keep last 5) or reliable.
    """

    topic: str
    compressed: bool | None = None
    color_mode: ColorMode = ColorMode.RGB
    max_age_s: float = 0.5
    connect_timeout_s: float = 10.0
    domain_id: int | None = None
    qos: str = "sensor"

    def __post_init__(self) -> None:
        self.color_mode = ColorMode(self.color_mode)
        if not self.topic:
            raise ValueError("a ros_image camera needs `topic` (e.g. /front/image_raw)")
        if self.max_age_s <= 0:
            raise ValueError(f"max_age_s must be > 0, got {self.max_age_s}")

    @property
    def is_compressed(self) -> bool:
        return self.topic.rstrip("/").endswith("/compressed") if self.compressed is None else self.compressed

    @property
    def msg_type(self) -> str:
        return "sensor_msgs/msg/CompressedImage" if self.is_compressed else "sensor_msgs/msg/Image"
