"""camera_node: a LeRobot camera (OpenCV index or device path) or a video file on ROS image topics.

Publishes `<camera_name>/image_raw` (sensor_msgs/Image, rgb8), `<camera_name>/image_raw/compressed`
(jpeg, image_transport's format string; optional) and `<camera_name>/camera_info` (pinhole guess from
`hfov_deg`, zero distortion), all with the capture time as stamp and `frame_id`, at `fps`.
No frame: counted in /diagnostics and the log; after `max_missed` in a row the source is reopened
with backoff (lerobot_ros.hardware.camera_driver). Image topics are lazy, as image_transport's are: a frame is converted and compressed
only for topics that have subscribers (camera_info is always published; lerobot_ros.ros.camera_topics).

Parameters: `CameraNodeConfig` (hardware/config.py); fps, jpeg_quality, hfov_deg, max_missed and diagnostics_period_s
can be changed while running (`ros2 param set`), the others are read-only.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node

from lerobot_ros.hardware.camera import CameraSourceError
from lerobot_ros.hardware.camera_driver import CameraDriver
from lerobot_ros.hardware.config import CameraNodeConfig
from lerobot_ros.ros.camera_topics import CameraTopics
from lerobot_ros.ros.dds import use_large_data_profile
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, qos_by_name


class CameraNode(Node):
    params_class = CameraNodeConfig

    def __init__(self, **kwargs):
        super().__init__("camera_node", **kwargs)
        self.params = declare_params(self, CameraNodeConfig, on_change=self._on_params)
        p = self.params.values
        self.source_spec, self.fps = p.source, p.fps
        self.req_width, self.req_height = p.width, p.height
        try:
            qos = qos_by_name(p.qos)
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self.driver = CameraDriver(
            p.source, p.fps, p.width, p.height, p.loop, clock=self._now, max_missed=p.max_missed, log=self.get_logger()
        )
        self.published = 0
        try:
            self.driver.connect()
        except CameraSourceError as exc:
            raise NodeStartupError(str(exc)) from None
        self.topics = CameraTopics(
            self,
            p.camera_name,
            qos,
            frame_id=p.frame_id,
            compressed=p.publish_compressed,
            jpeg_quality=p.jpeg_quality,
            hfov_deg=p.hfov_deg,
        )
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.tick_timer = self.create_timer(1.0 / p.fps, self.on_tick)
        self.diag_timer = self.create_timer(p.diagnostics_period_s, self.on_diagnostics)

    @property
    def health(self):
        return self.driver.health

    def _on_params(self, new: CameraNodeConfig, changed: dict) -> None:
        if "fps" in changed:
            self.fps = new.fps
            self.tick_timer.timer_period_ns = int(1e9 / new.fps)
        if "diagnostics_period_s" in changed:
            self.diag_timer.timer_period_ns = int(new.diagnostics_period_s * 1e9)
        if "max_missed" in changed:
            self.driver.max_missed = new.max_missed
        if "hfov_deg" in changed:
            self.topics.set_hfov(new.hfov_deg)  # camera_info rebuilt on the next frame
        if "jpeg_quality" in changed:
            self.topics.jpeg_quality = new.jpeg_quality

    def _now(self) -> int:
        return self.get_clock().now().nanoseconds

    def on_tick(self) -> None:
        item = self.driver.poll()
        if item is None:
            return
        frame, stamp = item
        self.topics.publish(frame, stamp)  # like image_transport: encodes only what someone subscribes to
        self.published += 1

    def on_diagnostics(self) -> None:
        extra = {
            "source": self.source_spec,
            "frames_published": str(self.published),
            "target_fps": f"{self.fps:g}",
            **self.topics.values(),
        }
        status = health_status(f"{self.get_fully_qualified_name()}: camera", self.source_spec, self.health, extra)
        self.diag_pub.publish(diagnostic_array(self._now(), status))

    def close(self) -> None:
        self.driver.close()


def main(args=None) -> None:
    # 640x480 rgb8 frames exceed Fast DDS's default shared-memory segment: see lerobot_ros.ros.dds
    use_large_data_profile()
    run_node(CameraNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
