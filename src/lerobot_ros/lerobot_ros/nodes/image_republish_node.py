"""image_republish_node: a raw camera topic (sensor_msgs/Image) republished as `.../compressed` (JPEG or PNG).

For drivers that publish only `image_raw` (many do without image_transport's plugins), so a policy on another
host can take the compressed topic: like `ros2 run image_transport republish raw compressed`. The header is kept
(capture stamp, frame_id); the format string is image_transport's ("rgb8; jpeg compressed bgr8"). Lazy as
image_transport is: the input is subscribed only while the output has a subscriber, so an idle republisher
neither receives nor encodes frames (`lazy:=false` subscribes always).
/diagnostics (steady clock): frames in/out, mean bytes per frame, mean encode time, whether it subscribes now.
Parameters: `RepublishConfig` (hardware/config.py) (jpeg_quality and diagnostics_period_s can be set while running).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from sensor_msgs.msg import CompressedImage, Image

from lerobot_ros.codecs import CodecError, image_to_compressed
from lerobot_ros.hardware.config import RepublishConfig
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, qos_by_name

if TYPE_CHECKING:
    from rclpy.subscription import Subscription


class ImageRepublishNode(Node):
    params_class = RepublishConfig

    def __init__(self, node_name: str = "image_republish", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = declare_params(self, RepublishConfig, on_change=self._on_params)
        p = self.params.values
        try:
            self.qos = qos_by_name(p.qos)
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self.in_topic = p.in_topic
        self.out_topic = p.out_topic or f"{p.in_topic.rstrip('/')}/compressed"
        if self.out_topic == self.in_topic:
            raise NodeStartupError(f"out_topic and in_topic are both {self.in_topic!r}; give out_topic another name")
        self.sub: Subscription | None = None
        self.counts = {"received": 0, "published": 0, "rejected": 0}
        self.bytes_out = 0
        self.encode_s = 0.0
        events = PublisherEventCallbacks(matched=lambda _info: self._follow_subscribers())
        self.pub = self.create_publisher(CompressedImage, self.out_topic, self.qos, event_callbacks=events)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.diag_timer = self.create_timer(
            p.diagnostics_period_s, self.on_diagnostics, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )
        self._follow_subscribers()
        self.get_logger().info(
            f"{self.resolve_topic_name(self.in_topic)} -> {self.pub.topic_name} "
            f"({p.format}{f', quality {p.jpeg_quality}' if p.format == 'jpeg' else ''}"
            f"{', lazy' if p.lazy else ''})"
        )

    def _on_params(self, new: RepublishConfig, changed: dict) -> None:
        if "diagnostics_period_s" in changed:
            self.diag_timer.timer_period_ns = int(new.diagnostics_period_s * 1e9)

    @property
    def subscribed(self) -> bool:
        return self.sub is not None

    def _follow_subscribers(self) -> None:
        """Subscribe to the input while someone reads the output (always when not lazy); unsubscribe otherwise."""
        wanted = not self.params.values.lazy or self.pub.get_subscription_count() > 0
        if wanted and self.sub is None:
            self.sub = self.create_subscription(Image, self.in_topic, self.on_image, self.qos)
        elif not wanted and self.sub is not None:
            self.destroy_subscription(self.sub)
            self.sub = None

    def on_image(self, msg: Image) -> None:
        self.counts["received"] += 1
        p = self.params.values
        t0 = time.perf_counter()
        try:
            out = image_to_compressed(msg, p.format, p.jpeg_quality)
        except CodecError as exc:
            self.counts["rejected"] += 1
            self.get_logger().warning(f"{self.in_topic}: {exc}", throttle_duration_sec=5.0)
            return
        self.encode_s += time.perf_counter() - t0
        self.pub.publish(out)
        self.counts["published"] += 1
        self.bytes_out += len(out.data)

    def values(self) -> dict[str, str]:
        n = self.counts["published"]
        return {
            **{k: str(v) for k, v in self.counts.items()},
            "subscribed": str(self.subscribed),
            "bytes_per_frame": f"{self.bytes_out / n:.0f}" if n else "",
            "encode_ms_mean": f"{self.encode_s * 1e3 / n:.2f}" if n else "",
        }

    def on_diagnostics(self) -> None:
        self._follow_subscribers()  # also catches a matched event missed while the subscription was changing
        rejected = self.counts["rejected"]
        message = (
            f"{rejected} frames could not be encoded"
            if rejected
            else f"{self.counts['published']} frames to {self.pub.topic_name}"
        )
        status = values_status(
            f"{self.get_name()}: republish",
            self.get_fully_qualified_name(),
            message,
            self.values(),
            warn=bool(rejected),
        )
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))


def main(args=None) -> None:
    run_node(ImageRepublishNode, args)


if __name__ == "__main__":
    main()
