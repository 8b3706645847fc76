"""viewer_node: the robot's streams in rerun, live, in a process of its own (`lerobot-ros view`, viewer:=true).

Subscribes a contract's topics: every camera, observation.state and action (one plot per joint), the task and
episode status; plus the policy's predicted chunk (drawn through the URDF as the gripper's path and a ghost
of the final pose) and /diagnostics levels. The web viewer is served from this process (its URL is printed),
or the native `rerun` viewer spawned when there is a display. The logic is lerobot_ros.viewer.

It never slows the robot: every subscription is best effort (sensor QoS; the latched task excepted), camera
frames arrive as raw bytes and only the ones shown are deserialized, at most `max_image_hz` per camera, and a
frame the worker has not reached yet is replaced by the next one.

Parameters
  contract          contract file or shipped name (so101, so101_sim, metaworld ...)
  viewer            auto (native with a display, else web) | web | native | none
  web_port, grpc_port   ports of the web viewer and of the gRPC server that feeds it
  memory_limit      what the server keeps for late viewers ("25%" of RAM, or "2GB"); oldest data go first
  max_image_hz      frames shown per camera and second (0: all)
  jpeg_quality      frames are sent as JPEG of this quality (0: raw RGB)
  urdf              "" (SO-101 URDF for so100/so101 contracts), none, or a URDF file
  tip_link, joint_zero   as chunk_markers_node
  predicted_chunk, diagnostics   topics (default /policy/predicted_chunk, /diagnostics)
  save              write an .rrd file instead of serving
  window_s          seconds of history in the live plots
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lerobot_ros.conventions.extras import exit_for_missing_extra
from lerobot_ros.processes.memory import purge_mimalloc_promptly

try:
    purge_mimalloc_promptly()  # before rerun (and its allocator) loads: a capped buffer then stays flat for hours
    import rerun as rr
except ModuleNotFoundError as exc:  # the viewer extra is not installed: one line, exit 1 (no traceback)
    exit_for_missing_extra(exc, "viewer_node")
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import CodecError, joint_trajectory_to_chunk
from lerobot_ros.contract import ContractError, load_contract, message_class
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import LATCHED_QOS, SENSOR_QOS
from lerobot_ros.viewer import EpisodeInfo, LiveFeed, ViewerLayout, ViewerLog, load_robot, open_viewer, state_joints
from lerobot_ros.viewer.config import ViewerConfig
from lerobot_ros.viewer.layout import camera_label
from lerobot_ros.viz import UrdfError

if TYPE_CHECKING:
    import numpy as np

STATS_PERIOD_S = 10.0


class ViewerNode(Node):
    params_class = ViewerConfig

    def __init__(self, node_name: str = "viewer", **kwargs):
        super().__init__(node_name, **kwargs)
        v = declare_params(self, ViewerConfig).values
        try:
            self.contract = load_contract(v.contract)
        except ContractError as exc:
            raise NodeStartupError(str(exc)) from None
        try:
            robot = load_robot(v.urdf, self.contract.robot_type, v.tip_link, v.joint_zero)
        except (UrdfError, ValueError) as exc:
            raise NodeStartupError(str(exc)) from None
        layout = ViewerLayout.from_contract(self.contract, robot_3d=robot is not None)
        self.recording = rr.RecordingStream("lerobot_ros", recording_id=f"live-{self.contract.robot_type}")
        log = ViewerLog(self.recording, layout, jpeg_quality=v.jpeg_quality)
        self.joints = state_joints(self.contract)
        self.feed = LiveFeed(log, self._decode_image, robot, self.joints, max_image_hz=v.max_image_hz)
        try:
            self.endpoint = open_viewer(
                self.recording,
                layout.blueprint(live=True, window_s=v.window_s),
                v.viewer,
                v.web_port,
                v.grpc_port,
                v.memory_limit,
                v.save or None,
            )
        except (ValueError, RuntimeError) as exc:  # a bad mode, a port in use
            raise NodeStartupError(f"cannot open the viewer: {exc}") from None
        self._image_classes = {}
        for name, feature in self.contract.features.items():
            if feature.is_image:
                self._image_classes[name] = message_class(feature.msg_type)
                self.create_subscription(
                    self._image_classes[name],
                    feature.topic,
                    lambda raw, n=name: self.feed.offer_image(n, self._now(), raw),
                    SENSOR_QOS,
                    raw=True,
                )
            elif name in ("observation.state", "action"):
                self.create_subscription(
                    message_class(feature.msg_type),
                    feature.topic,
                    lambda msg, f=feature: self._on_vector(f, msg),
                    SENSOR_QOS,
                )
        task = self.contract.task
        if task.topic and task.msg_type == "std_msgs/msg/String":
            self.create_subscription(
                String, task.topic, lambda m: self.feed.offer_task(self._now(), m.data), LATCHED_QOS
            )
        if self.contract.episode_boundary:
            b = self.contract.episode_boundary
            self.create_subscription(message_class(b.msg_type), b.topic, self._on_status, SENSOR_QOS)
        if robot is not None:
            self.create_subscription(JointTrajectory, v.predicted_chunk, self._on_chunk, SENSOR_QOS)
        self.create_subscription(DiagnosticArray, v.diagnostics, self._on_diagnostics, SENSOR_QOS)
        self.feed.start()
        self._said_error = False
        self.create_timer(STATS_PERIOD_S, self._report)
        where = {"web": "open", "native": "native viewer on", "file": "writing", "none": "not shown:"}[
            self.endpoint.mode
        ]
        print(f"[viewer] {where} {self.endpoint.url}", flush=True)
        self.get_logger().info(
            f"{self.contract.robot_type}: {len(layout.cameras)} camera(s), "
            f"{len(layout.joint_plots)} joint plot(s){', 3D chunk' if robot else ''}"
        )

    def _now(self) -> int:
        return self.get_clock().now().nanoseconds

    def _decode_image(self, feature: str, raw) -> np.ndarray:
        msg = deserialize_message(raw, self._image_classes[feature])
        return self.contract.features[feature].raw_image(msg)

    def _on_vector(self, feature, msg) -> None:
        try:
            ros = feature.ros_values(msg)
        except ContractError as exc:
            self.get_logger().warning(str(exc), throttle_duration_sec=10.0)
            return
        kind = "state" if feature.name == "observation.state" else "action"
        self.feed.offer_vector(kind, self._now(), feature.to_lerobot(ros), ros if kind == "state" else None)

    def _on_status(self, msg) -> None:
        self.feed.offer_status(self._now(), EpisodeInfo.from_msg(msg))

    def _on_chunk(self, msg: JointTrajectory) -> None:
        try:
            times_ns, positions = joint_trajectory_to_chunk(msg)
        except CodecError as exc:
            self.get_logger().warning(f"predicted chunk not drawn: {exc}", throttle_duration_sec=10.0)
            return
        self.feed.offer_chunk(self._now(), msg.joint_names, times_ns, positions)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        entries = [(s.name, s.level[0] if isinstance(s.level, bytes) else int(s.level), s.message) for s in msg.status]
        self.feed.offer_diagnostics(self._now(), entries)

    def _report(self) -> None:
        s = self.feed.stats
        if self.feed.error and not self._said_error:
            self.get_logger().warning(self.feed.error)
            self._said_error = True
        shown = ", ".join(f"{camera_label(k)} {v}/{s.images_offered.get(k, 0)}" for k, v in s.images_shown.items())
        self.get_logger().debug(
            f"frames shown/received: {shown or 'none yet'}; {s.vectors} vector samples; {s.chunks} chunks"
        )

    def close(self) -> None:
        """Log what is pending and flush; an .rrd file is complete after this."""
        self.feed.stop()
        self.recording.flush()
        if self.endpoint.mode == "file":
            self.recording.disconnect()


def main(args=None) -> None:
    run_node(ViewerNode, args)


if __name__ == "__main__":
    main()
