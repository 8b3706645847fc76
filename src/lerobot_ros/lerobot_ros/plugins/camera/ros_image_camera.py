"""`RosImageCamera`: LeRobot's Camera interface over one ROS image topic.

`read()` and `read_latest(max_age_ms)` return the newest frame when it is young enough, else raise naming the
topic and its age (never an old frame passed off as new); `async_read(timeout_ms)` waits for a frame that came
after the one it returned last, as LeRobot's own cameras do. Frames are decoded with the project's codecs
(every encoding they know, raw or compressed), resized to the configured size, RGB or BGR.
"""

from __future__ import annotations

import re
import time
from typing import Any

import cv2
import numpy as np
from lerobot.cameras.camera import Camera
from lerobot.cameras.configs import ColorMode

from lerobot_ros.codecs import CodecError, compressed_to_numpy, image_to_rgb
from lerobot_ros.plugins.camera.config_ros_image_camera import CAMERA_TYPE, RosImageCameraConfig
from lerobot_ros.plugins.topics import Stream, TopicCache, TopicError

FRAME = "frame"


class RosImageCamera(Camera):
    """One ROS image topic, read like a LeRobot camera."""

    config_class = RosImageCameraConfig
    name = CAMERA_TYPE

    def __init__(self, config: RosImageCameraConfig):
        super().__init__(config)
        self.config = config
        self.width: int | None = config.width  # set from the first frame at connect() when not configured
        self.height: int | None = config.height
        node = "lerobot_camera_" + re.sub(r"[^A-Za-z0-9_]", "_", config.topic.strip("/"))
        self._cache = TopicCache(
            [Stream(FRAME, config.topic, config.msg_type, config.qos)],
            node_name=node,
            domain_id=config.domain_id,
            what=f"camera {config.topic}",
            hint="start the camera node (or the sim bridge) first, or check the topic",
        )
        self._returned = 0  # count of the frame async_read returned last

    def __str__(self) -> str:
        return f"RosImageCamera({self.config.topic})"

    @property
    def is_connected(self) -> bool:
        return self._cache.is_open

    @staticmethod
    def find_cameras(timeout_s: float = 3.0, domain_id: int | None = None) -> list[dict[str, Any]]:
        """The image topics on the graph (raw and compressed), as `lerobot-find-cameras` lists devices."""
        from lerobot_ros.ros.runtime import RosRuntime

        kinds = {"sensor_msgs/msg/Image": False, "sensor_msgs/msg/CompressedImage": True}
        with RosRuntime(domain_id=domain_id) as ros:
            node = ros.create_node("lerobot_find_cameras")
            time.sleep(timeout_s)  # discovery: the graph fills in over one announcement period
            found = [
                {"type": CAMERA_TYPE, "id": topic, "name": topic, "topic": topic, "compressed": kinds[t]}
                for topic, types in sorted(node.get_topic_names_and_types())
                for t in types
                if t in kinds
            ]
        return found

    def connect(self, warmup: bool = True) -> None:
        """Wait for the topic's publisher and a first frame (`connect_timeout_s`); the size is taken from it when
        width/height are unset."""
        self._cache.open(self.config.connect_timeout_s)
        if self.width is None or self.height is None:
            msg, _ = self._cache.newest(FRAME, float("inf"))
            h, w = self._decode_raw(msg).shape[:2]
            self.width = self.width or w
            self.height = self.height or h

    def _decode_raw(self, msg) -> np.ndarray:
        try:
            if self.config.is_compressed:
                return compressed_to_numpy(msg, "rgb8")
            return image_to_rgb(msg)
        except CodecError as exc:
            raise TopicError(f"{self.config.topic}: {exc}") from None

    def frame_from(self, msg) -> np.ndarray:
        """One image message as the camera's frame: decoded, resized to width x height, RGB or BGR, owning its
        memory."""
        img = self._decode_raw(msg)
        if self.width is not None and self.height is not None and img.shape[:2] != (self.height, self.width):
            img = cv2.resize(img, (self.width, self.height), interpolation=cv2.INTER_AREA)
        if self.config.color_mode is ColorMode.BGR:
            img = img[..., ::-1]
        return np.ascontiguousarray(img)

    def read(self) -> np.ndarray:
        msg, _age = self._cache.newest(FRAME, self.config.max_age_s)
        return self.frame_from(msg)

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        msg, self._returned = self._cache.next_message(FRAME, self._returned, timeout_ms / 1000.0)
        return self.frame_from(msg)

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        msg, _age = self._cache.newest(FRAME, max_age_ms / 1000.0)
        return self.frame_from(msg)

    def disconnect(self) -> None:
        self._cache.close()
