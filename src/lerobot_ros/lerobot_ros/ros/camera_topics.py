"""The topics of one camera as image_transport offers them: `image_raw`, `image_raw/compressed`, `camera_info`.

camera_node and the sim bridges publish through this one class, so every camera source offers the same
three topics with the same stamps and frame_id. Image topics are lazy, as image_transport's are: a frame is
converted (raw) or JPEG-encoded (compressed) only while that topic has a subscriber, so offering the
compressed topic costs nothing until a remote policy asks for it; camera_info is always published.
"""

from __future__ import annotations

import numpy as np
from rclpy.qos import QoSProfile
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from lerobot_ros.codecs import make_camera_info, ns_to_time, numpy_to_compressed, numpy_to_image
from lerobot_ros.conventions.images import DEFAULT_JPEG_QUALITY


class CameraTopics:
    """Publishers of one camera under `name`; `publish(pixels, stamp_ns)` sends one RGB frame on all of them."""

    def __init__(
        self,
        node,
        name: str,
        qos: QoSProfile,
        *,
        frame_id: str = "",
        compressed: bool = True,
        jpeg_quality: int = DEFAULT_JPEG_QUALITY,
        hfov_deg: float = 60.0,
    ):
        self.frame_id = frame_id or f"{name}_optical_frame"
        self.jpeg_quality = int(jpeg_quality)
        self.hfov_deg = float(hfov_deg)
        self.image_pub = node.create_publisher(Image, f"{name}/image_raw", qos)
        self.compressed_pub = (
            node.create_publisher(CompressedImage, f"{name}/image_raw/compressed", qos) if compressed else None
        )
        self.info_pub = node.create_publisher(CameraInfo, f"{name}/camera_info", qos)
        self.info: CameraInfo | None = None
        self.sent = {"raw": 0, "compressed": 0}
        self.compressed_bytes = 0  # total JPEG payload sent (bytes per frame = this / sent["compressed"])

    def set_hfov(self, hfov_deg: float) -> None:
        """A new field of view: camera_info is rebuilt on the next frame."""
        self.hfov_deg, self.info = float(hfov_deg), None

    def camera_info(self, width: int, height: int) -> CameraInfo:
        """The pinhole guess for this size (rebuilt when the size changes)."""
        if self.info is None or (self.info.width, self.info.height) != (width, height):
            self.info = make_camera_info(width, height, frame_id=self.frame_id, hfov_deg=self.hfov_deg)
        return self.info

    def publish(self, pixels: np.ndarray, stamp_ns: int) -> None:
        """One (H, W, 3) uint8 RGB frame, stamped `stamp_ns` (the capture or simulation time)."""
        if self.image_pub.get_subscription_count() > 0:
            self.image_pub.publish(numpy_to_image(pixels, "rgb8", stamp_ns=stamp_ns, frame_id=self.frame_id))
            self.sent["raw"] += 1
        if self.compressed_pub is not None and self.compressed_pub.get_subscription_count() > 0:
            msg = numpy_to_compressed(
                pixels, "rgb8", "jpeg", self.jpeg_quality, stamp_ns=stamp_ns, frame_id=self.frame_id
            )
            self.compressed_pub.publish(msg)
            self.sent["compressed"] += 1
            self.compressed_bytes += len(msg.data)
        info = self.camera_info(pixels.shape[1], pixels.shape[0])
        info.header.stamp = ns_to_time(stamp_ns)
        self.info_pub.publish(info)

    def values(self) -> dict[str, str]:
        """Counters for /diagnostics: frames sent per topic and the mean JPEG size."""
        n = self.sent["compressed"]
        return {
            "frames_raw": str(self.sent["raw"]),
            "frames_compressed": str(n),
            "jpeg_bytes_per_frame": f"{self.compressed_bytes / n:.0f}" if n else "",
        }
