"""sim_bridge_node: a simulator (Meta-World, SO-101 twin, LIBERO) on the topics a real robot would use.

Publishes (relative to the node's namespace): `joint_states` (JointState), `environment_state`
(Float64MultiArray: the env's full state, e.g. Meta-World's 39-D observation), `<camera>/image_raw`,
`<camera>/image_raw/compressed` (jpeg; both lazy: encoded only while subscribed) + `<camera>/camera_info`,
`task` (latched String), `episode_status` (lerobot_ros_msgs/EpisodeStatus),
`/clock` and `/diagnostics` (once a second: the real-time factor; realtime mode warns once below 0.95). Subscribes `commands` (Float64MultiArray) and `joint_trajectory` (JointTrajectory).
Service `reset_episode` (lerobot_ros_msgs/ResetEpisode, seeded).

A twin made of parts (the bimanual twin's `left` and `right` arms) also looks like one driver per part:
`<part>/joint_states` with the part's own joint names and `<part>/commands` (realtime mode), and a part's camera
on `<part>/<camera>/image_raw`. A twin with a mobile base (LeKiwi) takes `cmd_vel` (geometry_msgs/Twist, body
frame) and publishes `odom` (nav_msgs/Odometry, odom -> base_link, REP 105) with every step.

Parameters: `BridgeConfig` (sim/config.py) (`ros2 param describe` shows each one's description and range).
All logic (mode routing, reset options, ticks, diagnostics) lives in lerobot_ros.sim.bridge; this module
only wires it to ROS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diagnostic_msgs.msg import DiagnosticArray
from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import (
    CodecError,
    episode_to_status,
    float64_multi_array_to_numpy,
    joint_trajectory_to_chunk,
    ns_to_time,
    numpy_to_float64_multi_array,
    numpy_to_joint_state,
)
from lerobot_ros.ros.camera_topics import CameraTopics
from lerobot_ros.ros.dds import use_large_data_profile
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import EPISODE_STATUS_QOS, LATCHED_QOS, RELIABLE_QOS
from lerobot_ros.ros.twin_topics import TwinTopics
from lerobot_ros.sim import ActionRejected, Frame, RenderSettings, SimStartupError
from lerobot_ros.sim.bridge import SimBridge, describe_rejection, open_sim, parse_reset_options
from lerobot_ros.sim.config import BridgeConfig
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import ResetEpisode

if TYPE_CHECKING:
    from rclpy.timer import Timer

#: reliable keep-last publishers: a lockstep consumer gets every step, a slow best-effort one never stalls us
OBS_QOS = RELIABLE_QOS


class SimBridgeNode(Node):
    params_class = BridgeConfig

    def __init__(self, node_name: str = "sim_bridge", **kwargs):
        super().__init__(node_name, **kwargs)
        p = declare_params(self, BridgeConfig).values
        try:
            render = RenderSettings(p.observation_width, p.observation_height, p.shadows, p.antialias)
            sim = open_sim(
                p.env_type,
                p.env_task,
                render,
                fps=p.fps,
                cameras=p.cameras,
                task_id=p.env_task_id,
                max_episode_steps=p.episode_length,
                camera_fps=p.camera_fps,
                meshes=p.meshes,
            )
        except (SimStartupError, ValueError) as exc:
            raise NodeStartupError(str(exc)) from None
        try:
            self.bridge = SimBridge(
                sim, p.mode, publish=self.publish_frame, rejected=self._rejected, episode_limit=p.episode_limit
            )
        except ValueError as exc:
            sim.close()
            raise NodeStartupError(str(exc)) from None

        self.joint_pub = self.create_publisher(JointState, "joint_states", OBS_QOS)
        self.env_state_pub = self.create_publisher(Float64MultiArray, "environment_state", OBS_QOS)
        self.status_pub = self.create_publisher(EpisodeStatus, "episode_status", EPISODE_STATUS_QOS)
        self.task_pub = self.create_publisher(String, "task", LATCHED_QOS)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if p.publish_clock else None
        self.cameras = {
            cam: CameraTopics(
                self, sim.camera_topic(cam), OBS_QOS, jpeg_quality=p.jpeg_quality, frame_id=f"{cam}_optical_frame"
            )
            for cam in sim.cameras
        }
        self.twin_topics = TwinTopics(self, self.bridge, OBS_QOS)  # a pair's arms, a mobile base (if any)
        self.create_subscription(Float64MultiArray, "commands", self.on_commands, RELIABLE_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self.on_trajectory, RELIABLE_QOS)
        self.create_service(ResetEpisode, "reset_episode", self.on_reset)
        # on the steady clock: a bridge whose sim time stands still still reports
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_timer(1.0, self.on_diagnostics, clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._startup_timer: Timer | None = None
        if p.reset_on_start:
            seed = p.seed
            self._startup_timer = self.create_timer(0.0, lambda: self._reset_on_start(seed))
        self._tick_timer: Timer | None = None
        if self.bridge.mode == "realtime":
            self._tick_timer = self.create_timer(self.bridge.runner.period_ns / 1e9, self.on_tick)
        self.get_logger().info(self.bridge.describe(render))

    # -- publishing --------------------------------------------------------------------------------
    def publish_frame(self, frame: Frame) -> None:
        try:
            self._publish_frame(frame)
        except RCLError:
            if self.context.ok():
                raise  # a real failure; otherwise we are shutting down (Ctrl-C / SIGTERM) mid-step

    def _publish_frame(self, frame: Frame) -> None:
        stamp = frame.stamp_ns
        if self.clock_pub is not None:
            self.clock_pub.publish(Clock(clock=ns_to_time(stamp)))
        # The status goes out before the observations: a source that acts on observations (the scripted
        # expert) already knows the episode's done flag and index when they arrive, so it neither misses
        # the first observation of a new episode nor answers the final one of a finished episode.
        self.status_pub.publish(episode_to_status(frame.episode, stamp))
        obs = frame.observation
        self.joint_pub.publish(numpy_to_joint_state(self.bridge.sim.state_names, obs.state, stamp_ns=stamp))
        if obs.env_state is not None:
            self.env_state_pub.publish(numpy_to_float64_multi_array(obs.env_state, ["environment_state"]))
        self.twin_topics.publish(frame)
        for cam, pixels in obs.images.items():
            self.cameras[cam].publish(pixels, stamp)

    # -- episodes ----------------------------------------------------------------------------------
    def _reset_on_start(self, seed: int) -> None:
        assert self._startup_timer is not None  # this is its callback
        self.destroy_timer(self._startup_timer)
        if not self.bridge.started:
            try:
                self.reset(seed)
            except SimStartupError as exc:  # e.g. assets that only the simulator's build finds missing
                self.get_logger().error(f"first reset failed: {exc}")

    def reset(self, seed: int | None, options: dict | None = None) -> Frame:
        """A new episode (seed None or < 0: unseeded): the task, then the first observation."""
        frame = self.bridge.reset(seed, options)
        self.task_pub.publish(String(data=frame.episode.task))
        self.publish_frame(frame)
        ep = frame.episode
        self.get_logger().info(f"episode {ep.episode_index} (seed {ep.seed}) ready in {self.bridge.last_reset_s:.1f} s")
        return frame

    def on_reset(self, request, response):
        try:
            options = parse_reset_options(request.options)
            frame = self.reset(int(request.seed), options)
        except Exception as exc:  # noqa: BLE001 - a failed reset is answered, the bridge keeps serving
            response.success, response.message = False, f"reset failed: {type(exc).__name__}: {exc}"
            self.get_logger().error(response.message)
            return response
        response.success = True
        response.message = f"episode {frame.episode.episode_index} started"
        response.task = frame.episode.task
        response.episode_index = frame.episode.episode_index
        return response

    # -- actions -----------------------------------------------------------------------------------
    def _rejected(self, exc: ActionRejected) -> None:
        text, expected = describe_rejection(exc, self.bridge.runner)
        if expected:  # one call site per severity: rclpy refuses to mix them
            self.get_logger().info(text, throttle_duration_sec=1.0)
        else:
            self.get_logger().warning(text, throttle_duration_sec=1.0)

    def on_commands(self, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg).reshape(-1)
        except CodecError as exc:
            self.bridge.malformed(str(exc))
            return
        self.bridge.command(values)

    def on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            times, positions = joint_trajectory_to_chunk(msg)
        except CodecError as exc:
            self.bridge.malformed(str(exc))
            return
        self.bridge.trajectory(msg.joint_names, times, positions)

    def on_tick(self) -> None:
        slow = self.bridge.tick()
        if slow:
            self.get_logger().warning(slow)

    def on_diagnostics(self) -> None:
        report = self.bridge.report()
        status = values_status(
            f"{self.get_name()}: simulator",
            self.get_fully_qualified_name(),
            report.message,
            report.values,
            warn=report.slow,
        )
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))

    @property
    def counters(self) -> dict:
        return self.bridge.counters

    def close(self) -> None:
        """Stop ticking and free the simulator (after any step in progress)."""
        if self.bridge.closed:
            return
        if self._tick_timer is not None:
            self._tick_timer.cancel()
        if self.context.ok():  # after Ctrl-C / SIGTERM the context is gone and rosout cannot publish
            self.get_logger().info(f"closing: {self.counters}")
        self.bridge.close()


def main(args=None) -> None:
    # camera frames exceed Fast DDS's default shared-memory segment: see lerobot_ros.ros.dds
    use_large_data_profile()
    run_node(SimBridgeNode, args)


if __name__ == "__main__":
    main()
