"""policy_node: a LeRobot policy on ROS topics (wiring; the logic is in lerobot_ros.policy).

Subscribes to the contract's observation features the policy reads (and its task topic), decodes them into
LeRobot units and feeds the streaming resampler; on each tick of the ROS clock (`use_sim_time` works), or
on a triggering feature, `policy.tick_loop` takes the frame, runs the policy (inline, or in an inference
thread with chunk blending) and this node publishes the safe action on the contract's action topic.
Parameters: `PolicyNodeConfig` in policy/config.py (`ros2 param describe` shows description, unit, range, read-only or not).
Topics out: action topic, ~/predicted_chunk (JointTrajectory, for rviz), ~/latency_ms (observation stamp ->
action publish), ~/tick_info (JSON per tick: status, dry, depth, reason, new_chunk, timings incl. wall-clock receive/publish
stamps), /diagnostics. Services: ~/start, ~/stop, ~/reset (std_srvs/Trigger).
GOMP_SPINCOUNT=1000 unless set (or OMP_WAIT_POLICY is): idle OpenMP workers stop spinning after inference
(lerobot_ros.policy.openmp). Any LeRobot policy type loads the same way (tested: ACT, Diffusion, SmolVLA; pi0 /
pi0.5 up to their processors offline); VLAs need their extra, a GPU in practice and a task: the parameter, the
contract's default or its (latched) task topic, applied from the next chunk (lerobot_ros.policy.language). Async
inference suits them; it needs n_obs_steps == 1, as LeRobot's policy server does; `chunking:=rtc`
runs LeRobot's real-time chunking in the inference thread (policy.rtc), its measured delay on /diagnostics.
"""

from __future__ import annotations

import json
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType, JumpThreshold
from rclpy.duration import Duration
from rclpy.node import Node
from std_msgs.msg import Float64, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import CodecError, chunk_to_joint_trajectory, ns_to_time
from lerobot_ros.codecs.action import ACTION_MESSAGES, ActionEncoder
from lerobot_ros.contract import ContractError, message_class
from lerobot_ros.policy.build import build_tick_loop, load_checked
from lerobot_ros.policy.config import PolicyNodeConfig
from lerobot_ros.policy.openmp import limit_openmp_spin
from lerobot_ros.policy.output import action_topic, output_mode
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import LATCHED_QOS, RELIABLE_QOS, qos_by_name


class PolicyNode(Node):
    params_class = PolicyNodeConfig

    def __init__(self, **kwargs):
        super().__init__("policy_node", **kwargs)
        self.params = declare_params(self, PolicyNodeConfig, self._reconfigure)
        p = self.params.values
        try:
            self.contract, loaded = load_checked(p)
            feature = self.action_feature = self.contract.action_feature
            self.mode = output_mode(p.output_mode, feature.msg_type)
            self.action_topic = action_topic(self.mode, p.action_topic, feature.msg_type, feature.topic)
            self.loop = build_tick_loop(
                loaded,
                self.contract,
                p,
                self.mode,
                on_time_jump=self.get_logger().warning,
                log=self.get_logger().warning,
                on_warning=self.get_logger().warning,
            )
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self.joint_names = feature.joints or [n.removesuffix(".pos") for n in feature.names]
        self.tick_on, self.streams, self.controller = p.tick_on, self.loop.features, self.loop.controller
        self.resampler = self.loop.resampler
        self.encoder = ActionEncoder(self.mode, self.joint_names) if self.mode in ACTION_MESSAGES else None
        msg_type = ACTION_MESSAGES.get(self.mode, JointTrajectory)
        self.action_pub = self.create_publisher(msg_type, self.action_topic, qos_by_name(feature.qos))
        self.plan_pub = self.create_publisher(JointTrajectory, "~/predicted_chunk", RELIABLE_QOS)
        self.latency_pub = self.create_publisher(Float64, "~/latency_ms", RELIABLE_QOS)
        self.tick_pub = self.create_publisher(String, "~/tick_info", RELIABLE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        # joint states and camera frames arrive as CDR bytes, read without message objects (Feature.reads_raw)
        self._subs = [
            self.create_subscription(
                message_class(f.msg_type),
                f.topic,
                lambda msg, n=name: self.on_observation(n, msg),
                qos_by_name(f.qos),
                raw=f.reads_raw,
            )
            for name, f in self.streams.items()
        ]
        if self.contract.task.topic:  # latched, as the bridges publish it: a late start still gets the task
            self._subs.append(self.create_subscription(String, self.contract.task.topic, self.on_task, LATCHED_QOS))
        self.create_service(Trigger, "~/start", self.on_start)
        self.create_service(Trigger, "~/stop", self.on_stop)
        self.create_service(Trigger, "~/reset", self.on_reset)
        self.timer = None
        if self.tick_on == "timer":
            self.timer = self.create_timer(1.0 / self.contract.fps, self.on_timer)
            # a simulator restarting its clock: without this the timer would wait for the old time to come back
            self._jump = self.get_clock().create_jump_callback(
                JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1), on_clock_change=True),
                post_callback=lambda _jump: self.timer.reset(),
            )
        # diagnostics on the steady clock: a paused simulation still reports why nothing moves
        self.diag_timer = self.create_timer(
            p.diagnostics_period_s, self.publish_diagnostics, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )
        self.get_logger().info(
            f"{loaded.type} policy from {loaded.path} on {loaded.device}; {len(self.streams)} observation stream(s); "
            f"{self.mode} on {self.action_topic} at {self.contract.fps} Hz (chunking {self.controller.chunking}, "
            f"{self.controller.backend_name})"
        )

    def _reconfigure(self, new: PolicyNodeConfig, changed: dict) -> None:
        """A reconfigurable parameter set at run time; a ValueError refuses it with the reason."""
        self.loop.reconfigure(new, {k: v for k, v in changed.items() if k != "diagnostics_period_s"})
        if "diagnostics_period_s" in changed:
            self.diag_timer.timer_period_ns = int(new.diagnostics_period_s * 1e9)

    # ---- inputs and ticks -----------------------------------------------------------------------
    def on_observation(self, name: str, msg) -> None:
        received_wall_ns = time.time_ns()
        feature = self.streams[name]
        t0 = time.perf_counter()
        try:
            msg = feature.read(msg)
            value = feature.decode(msg)  # CompressedImage: one cv2.imdecode straight to RGB (no per-pixel Python)
        except (ContractError, CodecError) as exc:
            self.loop.reject(name, str(exc))
            self.get_logger().warning(f"rejected {name}: {exc}", throttle_duration_sec=5.0)
            return
        decode_ms = (time.perf_counter() - t0) * 1e3
        stamp = feature.stamp_ns(msg, 0 if feature.timeline == "header" else self.get_clock().now().nanoseconds)
        self.loop.observe(name, stamp, value, decode_ms)
        if self.tick_on == name:
            self.loop.run(stamp, self._publish, received_wall_ns)

    def on_task(self, msg: String) -> None:
        self.loop.set_task(msg.data, f"topic {self.contract.task.topic}")

    def on_timer(self) -> None:
        self.loop.run(self.get_clock().now().nanoseconds, self._publish)

    def _trajectory(self, lerobot_chunk: np.ndarray, t_ns: int, offset_ticks: int) -> JointTrajectory:
        fps = self.contract.fps
        return chunk_to_joint_trajectory(
            self.joint_names,
            self.action_feature.to_ros(lerobot_chunk),
            fps,
            stamp_ns=t_ns,
            start_offset_s=offset_ticks / fps,
        )

    def _publish(self, t_ns: int, result, ages, start: float, received_wall_ns: int | None) -> None:
        """The loop's `emit`: the tick's action (or trajectory), plan, latency and tick_info."""
        published_wall_ns = None
        if result.action is not None and self.encoder is not None:
            self.action_pub.publish(self.encoder.encode(self.action_feature.to_ros_values(result.action), t_ns))
            published_wall_ns = time.time_ns()
        elif result.trajectory is not None and self.encoder is None:
            self.action_pub.publish(self._trajectory(result.trajectory, t_ns, result.trajectory_offset_ticks))
            published_wall_ns = time.time_ns()
        if result.plan is not None and np.all(np.isfinite(result.plan)):
            self.plan_pub.publish(self._trajectory(result.plan, t_ns, 0))
        if published_wall_ns is not None:
            stamp = self.loop.observation_stamp(t_ns, ages)
            if stamp is not None:
                latency = self.loop.add_latency(self.get_clock().now().nanoseconds - stamp)
                self.latency_pub.publish(Float64(data=latency))
        info = self.loop.tick_info(t_ns, result, start, received_wall_ns, published_wall_ns)
        self.tick_pub.publish(String(data=json.dumps(info)))

    # ---- services -------------------------------------------------------------------------------
    def on_start(self, request, response):
        self.loop.running = True
        response.success, response.message = True, "started"
        return response

    def on_stop(self, request, response):
        self.loop.running = False
        response.success, response.message = (
            True,
            (
                "stopped: no actions are published until ~/start"
                + (" (one hold trajectory ends the running one)" if self.controller.trajectory_mode else "")
            ),
        )
        return response

    def on_reset(self, request, response):
        self.loop.reset()  # a new episode may restart simulated time
        response.success, response.message = True, "policy state, action queue and observation buffers cleared"
        return response

    # ---- diagnostics ----------------------------------------------------------------------------
    def diagnostic_values(self) -> dict[str, str]:
        """What /diagnostics reports now (reading it changes nothing)."""
        return self.loop.diagnostic_values(self.get_clock().now().nanoseconds, time.monotonic())

    def publish_diagnostics(self) -> None:
        level, message = self.loop.status()
        status = DiagnosticStatus(
            level=bytes([level]),
            message=message,
            name=f"{self.get_name()}: policy",
            hardware_id=self.get_fully_qualified_name(),
        )
        status.values = [KeyValue(key=k, value=v) for k, v in self.diagnostic_values().items()]
        self.loop.next_window(time.monotonic())  # the next report's rate_hz counts from here
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = ns_to_time(self.get_clock().now().nanoseconds)
        self.diag_pub.publish(msg)

    def close(self) -> None:
        """Stop publishing and end the inference thread (called on shutdown)."""
        self.loop.running = False
        if self.timer is not None:
            self.timer.cancel()
        self.controller.close()


def main(args=None) -> None:
    limit_openmp_spin()  # before torch loads (load_policy imports it)
    run_node(PolicyNode, args)


if __name__ == "__main__":
    main()
