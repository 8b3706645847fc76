"""policy_node: a LeRobot policy on ROS topics.

Subscribes to every observation feature of a contract (and its task topic), decodes each message with the
contract into LeRobot units, feeds the shared streaming resampler, and on each tick of the ROS clock
(`use_sim_time` works) takes the frame at that time, runs the policy (inline, or in an inference thread
with chunk blending) and publishes the safe action on the contract's action topic.

Parameters
  pretrained_path   folder written by lerobot-train / save_pretrained (or a hub id where a network exists)
  contract          contract file or shipped name (so101, so101_sim, koch, metaworld, libero)
  device            auto | cpu | cuda | mps
  output_mode       "" (from the contract's action type) | commands | joint_state | trajectory
  action_topic      "" = the contract's action topic (or a sibling joint_trajectory / commands topic)
  tick_on           timer (the contract's fps on the ROS clock) | <feature name> (tick when it arrives)
  async_inference   run inference in its own thread; chunk_threshold, aggregate_fn, actions_per_chunk
  max_age_ms        oldest acceptable observation (all streams); max_age_overrides ["feature=ms", ...]
  on_stale          hold (repeat the last command) | nothing
  action_lower, action_upper, max_delta   safety in the action's LeRobot units ([] = off, one value = all)
  task              task string for VLAs (SmolVLA, pi0 ...), replaced by messages on the contract's task topic
  seed              torch seed (-1: none) applied at start-up and on ~/reset
  autostart         act from start-up, or wait for ~/start
Topics out: action topic, ~/predicted_chunk (JointTrajectory, for rviz), ~/latency_ms (observation stamp ->
action publish), ~/tick_info (JSON per tick: status, dry, depth, reason, timings incl. wall-clock receive/publish stamps), /diagnostics.
Services: ~/start, ~/stop, ~/reset (std_srvs/Trigger).
Environment: GOMP_SPINCOUNT=10000 unless set (or OMP_WAIT_POLICY is): idle OpenMP workers stop spinning
after inference instead of holding a core while the action goes out (lerobot_ros.policy.openmp).

Any policy type LeRobot registers loads the same way (tested: ACT, Diffusion). VLAs (SmolVLA, pi0, pi05 ...)
need their extra installed (`lerobot[smolvla]`, `lerobot[pi]`), a GPU in practice (device:=cuda) and a task
string: `-p task:="pick up the cube"` or a std_msgs/String on the contract's task topic; their language
tokenizer runs in the pre-processor they were saved with. Async inference suits them (slow, long chunks);
it needs n_obs_steps == 1, as LeRobot's policy server does (Diffusion with n_obs_steps=2 runs in sync mode).
"""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType, JumpThreshold
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import (
    chunk_to_joint_trajectory,
    float64_array,
    numpy_to_float64_multi_array,
    numpy_to_joint_state,
    set_stamp,
)
from lerobot_ros.contract import ContractError, load_contract, message_class
from lerobot_ros.policy import (
    ON_STALE,
    AsyncInferenceConfig,
    PolicyController,
    PolicyLoadError,
    PolicyRunner,
    RollingStats,
    SafetyFilter,
    feature_mismatches,
    load_policy,
)
from lerobot_ros.policy.openmp import limit_openmp_spin
from lerobot_ros.resample import StreamingResampler, StreamSpec
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.qos import RELIABLE_QOS, qos_by_name

OUTPUT_MODES = ("commands", "joint_state", "trajectory")
ASYNC_DEFAULTS = AsyncInferenceConfig()  # chunk_threshold / aggregate_fn defaults
_MODE_OF_TYPE = {
    "std_msgs/msg/Float64MultiArray": "commands",
    "sensor_msgs/msg/JointState": "joint_state",
    "trajectory_msgs/msg/JointTrajectory": "trajectory",
}
_SIBLING = {"commands": "commands", "joint_state": "joint_command", "trajectory": "joint_trajectory"}


def parse_overrides(items, what: str) -> dict[str, float]:
    """["name=value", ...] -> {name: value}; a malformed entry is a start-up error naming it."""
    out = {}
    for item in items or []:
        name, sep, value = str(item).partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise NodeStartupError(f"{what}: expected 'feature=milliseconds', got {item!r}") from None
    return out


class PolicyNode(Node):
    def __init__(self, **kwargs):
        super().__init__("policy_node", **kwargs)
        p = self._declare_parameters()
        try:
            self.contract = load_contract(p["contract"])
        except ContractError as exc:
            raise NodeStartupError(f"contract: {exc}") from None
        if not p["pretrained_path"]:
            raise NodeStartupError("parameter pretrained_path is required (a LeRobot pretrained_model folder)")
        try:
            loaded = load_policy(p["pretrained_path"], p["device"])
        except PolicyLoadError as exc:
            raise NodeStartupError(str(exc)) from None
        problems = feature_mismatches(loaded.config, self.contract.lerobot_features())
        if problems:
            raise NodeStartupError(
                f"policy {p['pretrained_path']} does not match contract {self.contract.source or p['contract']}: "
                + "; ".join(problems)
            )
        self.action_feature = self.contract.action_feature
        self.joint_names = self.action_feature.joints or [n.removesuffix(".pos") for n in self.action_feature.names]
        self.mode = p["output_mode"] or _MODE_OF_TYPE.get(self.action_feature.msg_type, "commands")
        self._action_msg = None  # reused per tick (see _action_message)
        if self.mode not in OUTPUT_MODES:
            raise NodeStartupError(f"output_mode must be one of {OUTPUT_MODES}, got {self.mode!r}")
        if p["on_stale"] not in ON_STALE:
            raise NodeStartupError(f"on_stale must be one of {ON_STALE}, got {p['on_stale']!r}")
        # observation streams the policy reads (extra contract features are not subscribed)
        inputs = set((loaded.config.input_features or {}).keys())
        self.streams = {n: f for n, f in self.contract.observation_features.items() if n in inputs}
        overrides = parse_overrides(p["max_age_overrides"], "max_age_overrides")
        unknown = sorted(set(overrides) - set(self.streams))
        if unknown:
            raise NodeStartupError(f"max_age_overrides names unknown stream(s) {unknown}; streams: {sorted(self.streams)}")
        max_age_ns = {n: int(overrides.get(n, p["max_age_ms"]) * 1e6) for n in self.streams}
        self.tick_on = p["tick_on"]
        if self.tick_on != "timer" and self.tick_on not in self.streams:
            raise NodeStartupError(f"tick_on must be 'timer' or one of {sorted(self.streams)}, got {self.tick_on!r}")
        try:
            safety = SafetyFilter.from_lists(
                int(loaded.config.output_features["action"].shape[0]), p["action_lower"], p["action_upper"], p["max_delta"]
            )
            runner = PolicyRunner(loaded, robot_type=self.contract.robot_type, seed=None if p["seed"] < 0 else p["seed"])
            self.controller = PolicyController(
                runner,
                safety,
                max_age_ns,
                p["on_stale"],
                async_inference=AsyncInferenceConfig(
                    p["chunk_threshold"], p["aggregate_fn"], p["actions_per_chunk"] or None
                ) if p["async_inference"] else None,
                trajectory_mode=self.mode == "trajectory",
            )
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self.resampler = StreamingResampler(
            {n: StreamSpec(f.alignment.policy, f.alignment.tolerance_ns, not f.is_image) for n, f in self.streams.items()}
        )
        self.task = p["task"] or (self.contract.task.default or "")
        self.running = bool(p["autostart"])
        self.tick_index = 0
        self.last_tick_ns: int | None = None
        self.rejected = {n: 0 for n in self.streams}
        self.last_reject: str | None = None
        self.latency_ms = RollingStats()
        self._tick_lock = threading.Lock()
        self._rate_mark: tuple[float, int] | None = None  # (monotonic s, ticks) at the last diagnostics
        self._make_interfaces(p)
        self.get_logger().info(
            f"{loaded.type} policy from {loaded.path} on {loaded.device}; {len(self.streams)} observation stream(s); "
            f"{self.mode} on {self.action_topic} at {self.contract.fps} Hz ({'async' if p['async_inference'] else 'sync'})"
        )

    # ---- set-up ---------------------------------------------------------------------------------
    def _declare_parameters(self) -> dict:
        defaults = {
            "pretrained_path": "",
            "contract": "so101",
            "device": "auto",
            "output_mode": "",
            "action_topic": "",
            "tick_on": "timer",
            "async_inference": False,
            "chunk_threshold": ASYNC_DEFAULTS.threshold,
            "aggregate_fn": ASYNC_DEFAULTS.aggregate,
            "actions_per_chunk": 0,
            "max_age_ms": 500.0,
            "max_age_overrides": Parameter.Type.STRING_ARRAY,
            "on_stale": "hold",
            "action_lower": Parameter.Type.DOUBLE_ARRAY,
            "action_upper": Parameter.Type.DOUBLE_ARRAY,
            "max_delta": Parameter.Type.DOUBLE_ARRAY,
            "task": "",
            "seed": -1,
            "autostart": True,
            "diagnostics_period_s": 1.0,
        }
        out = {}
        for name, default in defaults.items():
            if isinstance(default, Parameter.Type):
                value = self.declare_parameter(name, default).value
                out[name] = list(value) if value is not None else []
            else:
                out[name] = self.declare_parameter(name, default).value
        return out

    def _make_interfaces(self, p: dict) -> None:
        feature = self.action_feature
        if p["action_topic"]:
            self.action_topic = p["action_topic"]
        elif _MODE_OF_TYPE.get(feature.msg_type) == self.mode:
            self.action_topic = feature.topic
        else:
            self.action_topic = f"{os.path.dirname(feature.topic).rstrip('/')}/{_SIBLING[self.mode]}"
        msg_type = {"commands": Float64MultiArray, "joint_state": JointState, "trajectory": JointTrajectory}[self.mode]
        self.action_pub = self.create_publisher(msg_type, self.action_topic, qos_by_name(feature.qos))
        self.plan_pub = self.create_publisher(JointTrajectory, "~/predicted_chunk", RELIABLE_QOS)
        self.latency_pub = self.create_publisher(Float64, "~/latency_ms", RELIABLE_QOS)
        self.tick_pub = self.create_publisher(String, "~/tick_info", RELIABLE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self._subs = []
        for name, f in self.streams.items():
            cls = message_class(f.msg_type)
            self._subs.append(
                self.create_subscription(cls, f.topic, lambda msg, n=name: self.on_observation(n, msg), qos_by_name(f.qos))
            )
        if self.contract.task.topic:
            self._subs.append(self.create_subscription(String, self.contract.task.topic, self.on_task, RELIABLE_QOS))
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
        self.diag_timer = self.create_timer(p["diagnostics_period_s"], self.publish_diagnostics, clock=Clock(clock_type=ClockType.STEADY_TIME))

    # ---- inputs ---------------------------------------------------------------------------------
    def on_observation(self, name: str, msg) -> None:
        received_wall_ns = time.time_ns()
        feature = self.streams[name]
        now_ns = self.get_clock().now().nanoseconds
        try:
            value = feature.decode(msg)
        except ContractError as exc:
            self.rejected[name] += 1
            self.last_reject = str(exc)
            self.get_logger().warning(f"rejected {name}: {exc}", throttle_duration_sec=5.0)
            return
        stamp = feature.stamp_ns(msg, now_ns)
        self.resampler.push(name, stamp, value)
        if self.tick_on == name:
            self.run_tick(stamp, received_wall_ns)

    def on_task(self, msg: String) -> None:
        self.task = msg.data

    def on_timer(self) -> None:
        self.run_tick(self.get_clock().now().nanoseconds)

    # ---- the tick -------------------------------------------------------------------------------
    def run_tick(self, t_ns: int, received_wall_ns: int | None = None) -> None:
        """One control tick at ROS time `t_ns`; `received_wall_ns`: when the observation that triggered it arrived."""
        start = time.perf_counter()
        with self._tick_lock:
            if self.last_tick_ns is not None and t_ns == self.last_tick_ns:
                return  # the clock did not advance (paused simulation): nothing new to do
            if self.last_tick_ns is not None and t_ns < self.last_tick_ns:  # time jumped back (simulator restarted)
                self.get_logger().warning("ROS time jumped back; observation buffers cleared")
                self.resampler.clear()
            self.last_tick_ns = t_ns
            if not self.running:
                result = self.controller.stopped()
            else:
                frame = self.resampler.frame_at(t_ns)
                ages = {n: (None if frame.values.get(n) is None else frame.staleness_ns[n]) for n in self.streams}
                result = self.controller.step(self.tick_index, frame.values, ages, self.task, frame.reasons)
            self._publish(t_ns, result, None if not self.running else ages, start, received_wall_ns)
            self.tick_index += 1

    def _action_message(self, ros: np.ndarray, t_ns: int):
        """The per-tick action message. One message is reused and only its values (and stamp) change:
        publish() serializes at once, and right after inference (caches full of image tensors) building
        a fresh message with its layout costs about a tenth of a millisecond of the tick's latency."""
        msg = self._action_msg
        if msg is None or len(msg.data if self.mode == "commands" else msg.position) != ros.size:
            if self.mode == "commands":
                msg = numpy_to_float64_multi_array(ros)
            else:
                msg = numpy_to_joint_state(self.joint_names, position=ros, stamp_ns=t_ns)
            self._action_msg = msg
            return msg
        if self.mode == "commands":
            msg.data = float64_array(ros)
        else:
            msg.position = float64_array(ros)
            set_stamp(msg.header.stamp, t_ns)
        return msg

    def _publish(self, t_ns: int, result, frame_ages, start: float, received_wall_ns: int | None = None) -> None:
        fps = self.contract.fps
        published = False
        published_wall_ns = None
        if result.action is not None and self.mode != "trajectory":
            self.action_pub.publish(self._action_message(self.action_feature.to_ros(result.action), t_ns))
            published, published_wall_ns = True, time.time_ns()
        elif result.trajectory is not None and self.mode == "trajectory":
            ros = self.action_feature.to_ros(result.trajectory)
            offset = result.trajectory_offset_ticks / fps
            self.action_pub.publish(chunk_to_joint_trajectory(self.joint_names, ros, fps, stamp_ns=t_ns, start_offset_s=offset))
            published, published_wall_ns = True, time.time_ns()
        if result.plan is not None and np.all(np.isfinite(result.plan)):
            ros = self.action_feature.to_ros(result.plan)
            self.plan_pub.publish(chunk_to_joint_trajectory(self.joint_names, ros, fps, stamp_ns=t_ns, start_offset_s=0.0))
        if published and frame_ages:
            known = [a for a in frame_ages.values() if a is not None]
            if known:
                obs_stamp = t_ns - min(known)
                latency = (self.get_clock().now().nanoseconds - obs_stamp) / 1e6
                self.latency_ms.add(latency)
                self.latency_pub.publish(Float64(data=latency))
        info = {"tick": self.tick_index, "t_ns": t_ns, "status": result.status, "dry": result.dry, "depth": result.depth,
                "reason": result.reason, "published": published,
                "inference_ms": None if result.inference_ms is None else round(result.inference_ms, 3),
                "tick_ms": round((time.perf_counter() - start) * 1e3, 3),
                # wall clock (time.time_ns) when the triggering observation reached its callback and when the
                # action was published: with the sender's own wall stamps they split latency into DDS in/node/out
                "received_wall_ns": received_wall_ns, "published_wall_ns": published_wall_ns}
        self.tick_pub.publish(String(data=json.dumps(info)))

    # ---- services -------------------------------------------------------------------------------
    def on_start(self, request, response):
        self.running = True
        response.success, response.message = True, "started"
        return response

    def on_stop(self, request, response):
        self.running = False
        response.success, response.message = True, "stopped: no actions are published until ~/start"
        return response

    def on_reset(self, request, response):
        with self._tick_lock:
            self.controller.reset()
            self.resampler.clear()
            self.last_tick_ns = None  # a new episode may restart simulated time
        response.success, response.message = True, "policy state, action queue and observation buffers cleared"
        return response

    # ---- diagnostics ----------------------------------------------------------------------------
    def diagnostic_values(self) -> dict[str, str]:
        c = self.controller
        inf = c.inference_stats.summary()
        lat = self.latency_ms.summary()
        now_wall = time.monotonic()
        ticks = c.counts["ticks"]
        rate = None
        if self._rate_mark is not None and now_wall > self._rate_mark[0]:
            rate = (ticks - self._rate_mark[1]) / (now_wall - self._rate_mark[0])
        self._rate_mark = (now_wall, ticks)
        values = {
            "running": str(self.running),
            "rate_hz": _fmt(rate),
            "target_rate_hz": str(self.contract.fps) if self.tick_on == "timer" else f"on {self.tick_on}",
            "mode": f"{self.mode} ({'async' if c.is_async else 'sync'})",
            "ticks": str(c.counts["ticks"]),
            "published": str(c.counts["ok"] + c.counts["held"]),
            "dropped_ticks": str(sum(c.counts[k] for k in ("gated", "dry", "error", "dropped"))),
            "queue_dry_ticks": str(c.counts["dry"]),
            "policy_errors": str(c.counts["error"] + (c.worker.errors if c.worker else 0)),
            "last_error": c.last_error or "",
            "last_reason": c.last_reason or "",
            "inference_ms_p50": _fmt(inf["p50"]),
            "inference_ms_p99": _fmt(inf["p99"]),
            "latency_ms_p50": _fmt(lat["p50"]),
            "latency_ms_p99": _fmt(lat["p99"]),
            "queue_depth": str(c.worker.queue.depth() if c.worker else ""),
        }
        now = self.get_clock().now().nanoseconds
        for name in self.streams:
            latest = self.resampler.latest_time(name)
            values[f"staleness_ms.{name}"] = "never" if latest is None else _fmt((now - latest) / 1e6)
            values[f"rejected.{name}"] = str(self.rejected[name])
        return values

    def publish_diagnostics(self) -> None:
        c = self.controller
        status = DiagnosticStatus(name=f"{self.get_name()}: policy", hardware_id=self.get_fully_qualified_name())
        if not self.running:
            status.level, status.message = DiagnosticStatus.WARN, "stopped"
        elif c.counts["ticks"] and c.last_reason and c.counts["ok"] == 0:
            status.level, status.message = DiagnosticStatus.WARN, c.last_reason
        elif c.counts["error"]:
            status.level, status.message = DiagnosticStatus.ERROR, f"policy raised: {c.last_error}"
        else:
            status.level, status.message = DiagnosticStatus.OK, "ok"
        status.values = [KeyValue(key=k, value=v) for k, v in self.diagnostic_values().items()]
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(msg)

    def close(self) -> None:
        """Stop publishing and end the inference thread (called on shutdown)."""
        self.running = False
        if self.timer is not None:
            self.timer.cancel()
        self.controller.close()


def _fmt(value) -> str:
    return "" if value is None else f"{value:.2f}"


def main(args=None) -> None:
    limit_openmp_spin()  # before torch loads (load_policy imports it)
    run_node(PolicyNode, args)


if __name__ == "__main__":
    main()
