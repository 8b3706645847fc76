"""camera_node: a LeRobot camera (OpenCV index or device path) or a video file on ROS image topics.

Publishes `<camera_name>/image_raw` (sensor_msgs/Image, rgb8), `<camera_name>/image_raw/compressed`
(jpeg, image_transport's format string; optional) and `<camera_name>/camera_info` (pinhole guess from
`hfov_deg`, zero distortion), all with the capture time as stamp and `frame_id`, at `fps`.
No frame: counted in /diagnostics and the log; after `max_missed` in a row the source is reopened
with backoff. Image topics are lazy, as image_transport's are: a frame is converted and compressed
only for topics that have subscribers (camera_info is always published).

Parameters: source, camera_name, fps, width, height (0 = source's own), frame_id, publish_compressed,
jpeg_quality, qos (sensor | reliable), loop (video files), hfov_deg, max_missed.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from lerobot_ros.codecs import make_camera_info, ns_to_time, numpy_to_compressed, numpy_to_image
from lerobot_ros.hardware.camera import CameraSourceError, open_camera_source
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status
from lerobot_ros.hardware.health import Backoff, Health
from lerobot_ros.ros.param_getter import param_getter
from lerobot_ros.ros.dds import use_large_data_profile
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.qos import RELIABLE_QOS, qos_by_name


class CameraNode(Node):
    def __init__(self, **kwargs):
        super().__init__("camera_node", **kwargs)
        p = param_getter(self)
        self.source_spec = str(p("source", "0"))
        name = p("camera_name", "camera")
        self.fps = float(p("fps", 30.0))
        self.req_width, self.req_height = int(p("width", 0)), int(p("height", 0))
        self.frame_id = p("frame_id", "") or f"{name}_optical_frame"
        self.compress = bool(p("publish_compressed", True))
        self.quality = int(p("jpeg_quality", 90))
        self.loop = bool(p("loop", False))
        self.hfov = float(p("hfov_deg", 60.0))
        self.max_missed = int(p("max_missed", 3))
        if self.fps <= 0:
            raise NodeStartupError(f"fps must be positive, got {self.fps}")
        try:
            qos = qos_by_name(p("qos", "sensor"))
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self.health = Health()
        self.backoff = Backoff()
        self.source = None
        self.info: CameraInfo | None = None
        self.published = 0
        try:
            self._open()
        except CameraSourceError as exc:
            raise NodeStartupError(str(exc)) from None
        self.image_pub = self.create_publisher(Image, f"{name}/image_raw", qos)
        self.compressed_pub = self.create_publisher(CompressedImage, f"{name}/image_raw/compressed", qos) if self.compress else None
        self.info_pub = self.create_publisher(CameraInfo, f"{name}/camera_info", qos)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_timer(1.0 / self.fps, self.on_tick)
        self.create_timer(float(p("diagnostics_period_s", 1.0)), self.on_diagnostics)

    def _now(self) -> int:
        return self.get_clock().now().nanoseconds

    def _open(self) -> bool:
        """Open the source; CameraSourceError (bad parameter) propagates, device errors are retried."""
        try:
            self.source = open_camera_source(
                self.source_spec, self.fps, self.req_width, self.req_height, self.loop, clock=self._now
            )
        except CameraSourceError:
            raise
        except Exception as exc:  # noqa: BLE001 - a device that is not there (yet): retry with backoff
            delay = self.backoff.failed()
            self.get_logger().warning(f"cannot open camera {self.source_spec}: {self.health.error(exc)}; retry in {delay:.1f} s")
            return False
        self.backoff.succeeded()
        if self.health.errors:
            self.health.reconnects += 1
        self.health.connected = True
        self.info = make_camera_info(self.source.width, self.source.height, frame_id=self.frame_id, hfov_deg=self.hfov)
        return True

    def on_tick(self) -> None:
        if self.source is None:
            if not self.backoff.due():
                return
            try:
                if not self._open():
                    return
            except CameraSourceError as exc:  # e.g. the video file was deleted
                self.health.error(exc)
                self.backoff.failed()
                return
        try:
            item = self.source.read()
        except Exception as exc:  # noqa: BLE001
            item, error = None, exc
        else:
            error = "no frame from the camera"
        if item is None:
            text = self.health.error(error)
            self.get_logger().warning(f"{text}", throttle_duration_sec=1.0)
            if self.health.consecutive_errors >= self.max_missed:
                self.get_logger().error(f"{self.health.consecutive_errors} frames missed: reopening {self.source_spec}")
                self.source.close()
                self.source = None
                self.health.connected = False
                self.backoff.failed()
            return
        frame, stamp = item
        self.health.ok()
        self.health.tick()
        # Like image_transport, encode only what someone subscribes to (jpeg costs more than the capture).
        if self.image_pub.get_subscription_count() > 0:
            self.image_pub.publish(numpy_to_image(frame, "rgb8", stamp_ns=stamp, frame_id=self.frame_id))
        if self.compressed_pub is not None and self.compressed_pub.get_subscription_count() > 0:
            self.compressed_pub.publish(
                numpy_to_compressed(frame, "rgb8", "jpeg", self.quality, stamp_ns=stamp, frame_id=self.frame_id)
            )
        self.info.header.stamp = ns_to_time(stamp)
        self.info_pub.publish(self.info)
        self.published += 1

    def on_diagnostics(self) -> None:
        extra = {"source": self.source_spec, "frames_published": str(self.published), "target_fps": f"{self.fps:g}"}
        status = health_status(f"{self.get_fully_qualified_name()}: camera", self.source_spec, self.health, extra)
        self.diag_pub.publish(diagnostic_array(self._now(), status))

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None


def main(args=None) -> None:
    # 640x480 rgb8 frames exceed Fast DDS's default shared-memory segment: see lerobot_ros.ros.dds
    use_large_data_profile()
    run_node(CameraNode, args)


if __name__ == "__main__":
    main()
