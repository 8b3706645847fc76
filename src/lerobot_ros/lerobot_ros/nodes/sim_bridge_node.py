"""sim_bridge_node: a simulator (Meta-World, SO-101 twin, LIBERO) on the topics a real robot would use.

Publishes (relative to the node's namespace): `joint_states` (JointState), `environment_state`
(Float64MultiArray: the env's full state, e.g. Meta-World's 39-D observation), `<camera>/image_raw`,
`<camera>/image_raw/compressed` (jpeg; both lazy: encoded only while subscribed) + `<camera>/camera_info`,
`task` (latched String), `episode_status` (lerobot_ros_msgs/EpisodeStatus),
`/clock` and `/diagnostics` (once a second: the real-time factor; realtime mode warns once below 0.95). Subscribes `commands` (Float64MultiArray) and `joint_trajectory` (JointTrajectory).
Service `reset_episode` (lerobot_ros_msgs/ResetEpisode, seeded).

Parameters: `SimBridgeParams` below (`ros2 param describe` shows each one's description and range).
All stepping logic lives in lerobot_ros.sim; this module only wires it to ROS.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import ResetEpisode
from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import (
    CodecError,
    float64_multi_array_to_numpy,
    joint_trajectory_to_chunk,
    ns_to_time,
    numpy_to_float64_multi_array,
    numpy_to_joint_state,
)
from lerobot_ros.ros.camera_topics import DEFAULT_JPEG_QUALITY, JPEG_QUALITY_RANGE, CameraTopics
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params, param
from lerobot_ros.ros.qos import EPISODE_STATUS_QOS, LATCHED_QOS, RELIABLE_QOS
from lerobot_ros.sim import ActionRejected, ActionSchedule, RenderSettings, SimRunner, SimStartupError, make_sim
from lerobot_ros.ros.dds import use_large_data_profile
from lerobot_ros.sim.gl import ensure_offscreen_gl
from lerobot_ros.sim.factory import ENV_KINDS
from lerobot_ros.sim.stepping import Frame, rejected_summary

#: reliable keep-last publishers: a lockstep consumer gets every step, a slow best-effort one never stalls us
OBS_QOS = RELIABLE_QOS
MODES = ("lockstep", "realtime")


@dataclass(frozen=True)
class SimBridgeParams:
    """sim_bridge_node's parameters. All read-only: each one shapes the simulator built at start-up."""

    env: str = param("metaworld", "simulator kind", choices=ENV_KINDS)
    task: str = param("", "Meta-World task (-v3 name), SO-101 scene (pick, arm or an MJCF path) or LIBERO suite; "
                          "'' = the env's default")
    task_id: int = param(0, "task index within a LIBERO suite", min=0)
    mode: str = param("lockstep", "lockstep: one env step per action (evaluation); realtime: steps at fps on a timer",
                      choices=MODES)
    render_width: int = param(480, "camera image width", unit="px", min=1)
    render_height: int = param(480, "camera image height", unit="px", min=1)
    shadows: bool = param(False, "render shadows (costly on CPU rendering)")
    antialias: bool = param(True, "multisample anti-aliasing of camera images")
    fps: float = param(0.0, "control rate; 0 = the env's own (Meta-World's is fixed at 80)", unit="Hz", min=0.0)
    cameras: list[str] = param(["front"], "SO-101 MJCF cameras to render (front, wrist); [none] for none")
    camera_fps: float = param(0.0, "SO-101: render cameras at this rate when lower than fps; 0 = every step",
                              unit="Hz", min=0.0)
    meshes: str = param("simplified", "SO-101: draw simplified copies of the visual meshes (collision untouched) "
                                      "or the package's full meshes", choices=("simplified", "full"))
    max_episode_steps: int = param(0, "episode length limit; 0 = the env's own", unit="steps", min=0)
    reset_on_start: bool = param(True, "start episode 0 as soon as the bridge is up")
    seed: int = param(0, "seed of the first episode when reset_on_start; < 0 = unseeded")
    publish_clock: bool = param(True, "publish /clock with simulated time (for use_sim_time nodes)")
    jpeg_quality: int = param(DEFAULT_JPEG_QUALITY, "jpeg quality of <camera>/image_raw/compressed (encoded only while subscribed)",
                              min=JPEG_QUALITY_RANGE[0], max=JPEG_QUALITY_RANGE[1])


class SimBridgeNode(Node):
    params_class = SimBridgeParams

    def __init__(self, node_name: str = "sim_bridge", **kwargs):
        super().__init__(node_name, **kwargs)
        p = declare_params(self, SimBridgeParams).values
        # no cameras: [none] (an empty list from the command line carries no type and is dropped by rcl)
        cameras = [c for c in p.cameras if c and c.lower() != "none"]
        self.mode = p.mode
        try:
            render = RenderSettings(p.render_width, p.render_height, p.shadows, p.antialias)
            sim = make_sim(
                p.env, p.task, render, fps=p.fps, cameras=cameras,
                task_id=p.task_id, max_episode_steps=p.max_episode_steps, camera_fps=p.camera_fps, meshes=p.meshes,
            )
            sim.preflight()
            sim.prefetch()  # imports for the first reset's build, in the background (nothing is built yet)
            ensure_offscreen_gl()
        except (SimStartupError, ValueError) as exc:
            raise NodeStartupError(str(exc)) from None
        self.sim = sim
        self.runner = SimRunner(sim)
        self.schedule = ActionSchedule(self.runner.period_ns)

        self.joint_pub = self.create_publisher(JointState, "joint_states", OBS_QOS)
        self.env_state_pub = self.create_publisher(Float64MultiArray, "environment_state", OBS_QOS)
        self.status_pub = self.create_publisher(EpisodeStatus, "episode_status", EPISODE_STATUS_QOS)
        self.task_pub = self.create_publisher(String, "task", LATCHED_QOS)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if p.publish_clock else None
        self.cameras = {cam: CameraTopics(self, cam, OBS_QOS, jpeg_quality=p.jpeg_quality) for cam in sim.cameras}
        self.create_subscription(Float64MultiArray, "commands", self.on_commands, RELIABLE_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self.on_trajectory, RELIABLE_QOS)
        self.create_service(ResetEpisode, "reset_episode", self.on_reset)
        # on the steady clock: a bridge whose sim time stands still still reports
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_timer(1.0, self.on_diagnostics, clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._startup_timer = None
        if p.reset_on_start:
            seed = p.seed
            self._startup_timer = self.create_timer(0.0, lambda: self._reset_on_start(seed))
        self._closed = False
        self._tick_timer = None
        if self.mode == "realtime":
            self._tick_timer = self.create_timer(self.runner.period_ns / 1e9, self.on_tick)
        self.get_logger().info(
            f"{sim.kind} bridge ({self.mode}): task {sim.task!r}, {sim.fps:g} fps, action {list(sim.action_names)}, "
            f"cameras {sorted(sim.cameras)} at {render.width}x{render.height}, shadows {'on' if render.shadows else 'off'}"
        )

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
        ep = frame.episode
        status = EpisodeStatus(
            episode_index=ep.episode_index, step=ep.step, reward=float(ep.reward), sum_reward=float(ep.sum_reward),
            done=ep.done, success=ep.success, task=ep.task,
        )
        status.header.stamp = ns_to_time(stamp)
        self.status_pub.publish(status)
        obs = frame.observation
        self.joint_pub.publish(numpy_to_joint_state(self.sim.state_names, obs.state, stamp_ns=stamp))
        if obs.env_state is not None:
            self.env_state_pub.publish(numpy_to_float64_multi_array(obs.env_state, ["environment_state"]))
        for cam, pixels in obs.images.items():
            self.cameras[cam].publish(pixels, stamp)

    # -- episodes ----------------------------------------------------------------------------------
    def _reset_on_start(self, seed: int) -> None:
        self.destroy_timer(self._startup_timer)
        if self.runner.episode.episode_index < 0:
            try:
                self.reset(seed if seed >= 0 else None)
            except SimStartupError as exc:  # e.g. assets that only the simulator's build finds missing
                self.get_logger().error(f"first reset failed: {exc}")

    def reset(self, seed: int | None, options: dict | None = None) -> Frame:
        t0 = time.monotonic()
        frame = self.runner.reset(seed, options)
        self.schedule.clear()
        self.task_pub.publish(String(data=frame.episode.task))
        self.publish_frame(frame)
        self.get_logger().info(
            f"episode {frame.episode.episode_index} (seed {seed}) ready in {time.monotonic() - t0:.1f} s"
        )
        return frame

    def on_reset(self, request, response):
        try:
            options = json.loads(request.options) if request.options.strip() else None
            if options is not None and not isinstance(options, dict):
                raise ValueError("options must be a JSON object")
            frame = self.reset(int(request.seed) if request.seed >= 0 else None, options)
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
        # an action racing the end of an episode is expected in closed loop (the policy acted on the
        # last observation before it saw episode_status.done): counted, logged quietly
        text = f"rejected action: {exc} (rejected so far: {rejected_summary(self.runner.validator)})"
        if exc.reason == "episode_done":  # one call site per severity: rclpy refuses to mix them
            self.get_logger().info(text, throttle_duration_sec=1.0)
        else:
            self.get_logger().warning(text, throttle_duration_sec=1.0)

    def _apply(self, action) -> None:
        try:
            if self.mode == "lockstep":
                self.publish_frame(self.runner.step(action))
            else:
                self.schedule.command(self.runner.check(action), time.monotonic_ns())
        except ActionRejected as exc:
            self._rejected(exc)

    def on_commands(self, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg).reshape(-1)
        except CodecError as exc:
            self._rejected(self.runner.validator.reject("malformed", str(exc)))
            return
        self._apply(values)

    def on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            times, positions = joint_trajectory_to_chunk(msg)
            actions = [self.runner.validator.check_named(msg.joint_names, row) for row in positions]
        except CodecError as exc:
            self._rejected(self.runner.validator.reject("malformed", str(exc)))
            return
        except ActionRejected as exc:
            self._rejected(exc)
            return
        if not actions:
            return
        if self.mode == "lockstep":
            for action in actions:  # one env step per point, observations after each
                try:
                    self.publish_frame(self.runner.step(action, prechecked=True))
                except ActionRejected as exc:
                    self._rejected(exc)
                    break
        else:
            try:
                self.runner.check(actions[0])
            except ActionRejected as exc:
                self._rejected(exc)
                return
            self.schedule.trajectory(times, actions, time.monotonic_ns())

    def on_tick(self) -> None:
        ep = self.runner.episode
        if self._closed or ep.episode_index < 0 or ep.done:
            return
        action = self.schedule.take(time.monotonic_ns())
        if action is None:
            action = self.runner.idle_action()
        self.publish_frame(self.runner.step(action, prechecked=True))
        slow = self.runner.rtf.slow_warning()
        if slow:
            self.get_logger().warning(slow)

    def on_diagnostics(self) -> None:
        rtf = self.runner.rtf
        status = DiagnosticStatus(name=f"{self.get_name()}: simulator", hardware_id=self.get_fully_qualified_name())
        slow = self.mode == "realtime" and rtf.samples >= 30 and rtf.current < 0.95
        status.level = DiagnosticStatus.WARN if slow else DiagnosticStatus.OK
        status.message = f"real-time factor {rtf.values()['real_time_factor']} ({self.mode})"
        values = {**rtf.values(), "mode": self.mode, **{k: str(v) for k, v in self.counters.items()},
                  **{k: str(v) for k, v in getattr(self.sim, "render_info", {}).items()}}
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(msg)

    @property
    def counters(self) -> dict:
        return {
            "accepted": self.runner.validator.accepted,
            "rejected": dict(self.runner.validator.rejected),
            "steps": self.runner.total_steps,
            "late_ticks": self.schedule.late_ticks,
        }

    def close(self) -> None:
        """Stop ticking and free the simulator (after any step in progress)."""
        if self._closed:
            return
        self._closed = True
        if self._tick_timer is not None:
            self._tick_timer.cancel()
        if self.context.ok():  # after Ctrl-C / SIGTERM the context is gone and rosout cannot publish
            self.get_logger().info(f"closing: {self.counters}")
        self.runner.close()


def main(args=None) -> None:
    # camera frames exceed Fast DDS's default shared-memory segment: see lerobot_ros.ros.dds
    use_large_data_profile()
    run_node(SimBridgeNode, args)


if __name__ == "__main__":
    main()
