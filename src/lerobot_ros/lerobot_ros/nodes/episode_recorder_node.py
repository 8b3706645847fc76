"""episode_recorder: records the topics of a contract (or a topic list) into one rosbag2 (MCAP) per episode.

Wiring only; the logic lives in lerobot_ros.record (session, bag writer, episode loop, QA).

Parameters: contract (path or shipped name), topics (["/a", "/b:pkg/msg/Type"], instead of or on top of
a contract), all_topics, output_dir, task, compression (none|zstd), flush_interval_s, episode_time_s
(0 = manual), reset_time_s, num_episodes (0 = no limit), exit_when_done, stall_timeout_s, min_free_mb,
progress_period_s, discovery_period_s, drain_s (on Ctrl-C / SIGTERM, keep taking already delivered
messages for up to this long before closing the bag), wait_for_topics_s (automatic mode: how long the first episode waits
for publishers of every wanted topic).
Services: start_episode (lerobot_ros_msgs/StartEpisode), stop_episode (lerobot_ros_msgs/StopEpisode).
Topics: episode_status (EpisodeStatus, out), episode_control (std_msgs/String: next|rerecord|stop, in),
/diagnostics (DiagnosticArray, out, live QA per recorded topic).
Messages are subscribed raw (CDR bytes, any type) with QoS matched to the publishers (reliable when
all publishers are, transient-local likewise), depth 1000, and stamped with the node clock (sim time too).
"""

from __future__ import annotations

import signal
import sys
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode
from rclpy.clock import Clock, ClockType
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from std_msgs.msg import String

from lerobot_ros.codecs import ns_to_time
from lerobot_ros.contract import message_class
from lerobot_ros.record.episode_bag_writer import BagWriteError, WriterSettings
from lerobot_ros.record.control import DONE, IDLE, RECORDING, RESETTING, ActionKind, ControlAction, EpisodeControl
from lerobot_ros.record.session import EpisodeError, EpisodeSession, TopicSpec
from lerobot_ros.record.streams import RecordingPlan, WantedTopic, plan_from_contract, plan_from_topics
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.qos import RELIABLE_QOS, subscription_qos, to_bag_qos

IGNORED_TOPICS = {"/rosout", "/parameter_events", "/diagnostics"}
WRITER_DEFAULTS = WriterSettings()  # compression, flush_interval_s, min_free_mb defaults
BACKLOG_WARN = 500  # queued messages (~5 s of 3 cameras) before /diagnostics warns


class EpisodeRecorder(Node):
    def __init__(self, on_saved=None, **kwargs):
        """`on_saved(result)` is called with every kept episode's BagResult (lerobot-ros record converts)."""
        super().__init__("episode_recorder", **kwargs)
        self.on_saved = on_saved
        p = self.declare_parameter
        contract = p("contract", "").value
        topics = list(p("topics", [""]).value or [])
        self.all_topics = p("all_topics", False).value
        output_dir = p("output_dir", "recordings").value
        task = p("task", "").value
        compression = p("compression", WRITER_DEFAULTS.compression).value
        flush_interval_s = self._number("flush_interval_s", WRITER_DEFAULTS.flush_interval_s)
        episode_time_s = self._number("episode_time_s", 0.0)
        reset_time_s = self._number("reset_time_s", 0.0)
        num_episodes = int(self._number("num_episodes", 0))
        self.exit_when_done = p("exit_when_done", True).value
        stall_timeout_s = self._number("stall_timeout_s", 1.0)
        min_free_mb = self._number("min_free_mb", WRITER_DEFAULTS.min_free_bytes / 2**20)
        self.progress_period_s = self._number("progress_period_s", 1.0)
        discovery_period_s = self._number("discovery_period_s", 0.5)
        self.wait_for_topics_s = self._number("wait_for_topics_s", 10.0)

        try:
            plan = plan_from_contract(contract) if contract else RecordingPlan([])
            extra = plan_from_topics([t for t in topics if t], plan.fps)
            self.control = EpisodeControl(episode_time_s, reset_time_s, num_episodes)
            writer = WriterSettings(compression, flush_interval_s, int(min_free_mb * 2**20))
        except Exception as exc:  # ContractError, bad topic or loop settings: one line, no traceback
            raise NodeStartupError(str(exc)) from None
        known = {w.topic for w in plan.topics}
        self.wanted = {w.topic: w for w in plan.topics + [w for w in extra.topics if w.topic not in known]}
        if not self.wanted and not self.all_topics:
            raise NodeStartupError("nothing to record: set `contract`, `topics` or `all_topics:=true`")
        self.fps = plan.fps
        self.session = EpisodeSession(
            output_dir, writer=writer, stall_timeout_s=stall_timeout_s,
            contract_text=plan.contract_text, contract_path=plan.contract_path, task_key=plan.task_key,
            clock_ns=lambda: self.get_clock().now().nanoseconds,
        )
        self.session.task = task or plan.default_task
        self._subs: dict[str, object] = {}
        self._exit_code: int | None = None
        self._last_progress = 0.0
        self._born = time.monotonic()
        self._last_message = 0.0
        self._stop_requested: float | None = None
        self.drain_s = self._number("drain_s", 2.0)
        if threading.current_thread() is threading.main_thread():
            # our own Ctrl-C / SIGTERM handling: first drain what DDS already delivered, then close the bag
            signal.signal(signal.SIGINT, self._on_signal)
            signal.signal(signal.SIGTERM, self._on_signal)

        self.status_pub = self.create_publisher(EpisodeStatus, "episode_status", RELIABLE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_service(StartEpisode, "start_episode", self.on_start)
        self.create_service(StopEpisode, "stop_episode", self.on_stop)
        self.create_subscription(String, "episode_control", self.on_control, RELIABLE_QOS)
        self.discover()
        # Wall-clock timers: under use_sim_time a ROS-clock timer never fires before the first /clock (a
        # lockstep simulator publishes none until an episode starts), so discovery and control would stall.
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(discovery_period_s, self.discover, clock=steady)
        self.create_timer(0.05, self.on_tick, clock=steady)
        mode = (f"automatic: {episode_time_s:g} s episodes, {reset_time_s:g} s resets, "
                f"{num_episodes or 'unlimited'} episodes" if self.control.automatic else "manual (services / keyboard)")
        self.get_logger().info(f"recording {len(self.wanted) or 'all'} topic(s) into {output_dir}; {mode}; "
                               f"next episode index {self.session.index}")

    def _number(self, name: str, default: float) -> float:
        """A numeric parameter that takes `5` as well as `5.0` (launch files and `-p` spell them both ways)."""
        value = self.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True)).value
        try:
            return float(value)
        except (TypeError, ValueError):
            raise NodeStartupError(f"parameter {name} must be a number, not {value!r}") from None

    # ---- subscriptions --------------------------------------------------------------------------
    def discover(self) -> None:
        """Subscribe to wanted topics once a publisher shows up (so QoS and type can be matched)."""
        if self.all_topics:
            for name, types in self.get_topic_names_and_types():
                if name not in self.wanted and name not in IGNORED_TOPICS and not name.endswith("episode_status"):
                    self.wanted[name] = WantedTopic(name, None, None)
        for topic, want in self.wanted.items():
            if topic in self._subs:
                continue
            infos = self.get_publishers_info_by_topic(topic)
            if not infos:
                continue
            msgtype = want.msgtype or infos[0].topic_type
            offered = [i.qos_profile for i in infos]
            try:
                cls = message_class(msgtype)
                self.session.add_topic(TopicSpec(topic, msgtype, [to_bag_qos(q) for q in offered], want.expected_hz,
                                                 want.policy, want.tolerance_ns))
            except Exception as exc:
                self.get_logger().error(f"cannot record {topic} ({msgtype}): {exc}")
                self._subs[topic] = None
                continue
            self._subs[topic] = self.create_subscription(
                cls, topic, lambda data, t=topic: self._on_message(t, data),
                subscription_qos(offered), raw=True,
            )
            self.get_logger().info(f"subscribed {topic} [{msgtype}]")

    def _on_message(self, topic: str, data: bytes) -> None:
        self._last_message = time.monotonic()
        self.session.write(topic, self.get_clock().now().nanoseconds, data)

    def _on_signal(self, signum, frame) -> None:
        if self._stop_requested is not None:
            raise KeyboardInterrupt  # a second Ctrl-C: stop now (the bag is still closed by close())
        self._stop_requested = time.monotonic()

    # ---- episode control ------------------------------------------------------------------------
    def _do(self, actions: list[ControlAction]) -> str:
        message = ""
        for action in actions:
            if action.kind is ActionKind.START:
                message = self._start()
            elif action.kind is ActionKind.STOP:
                message = self._stop(action.outcome)
            elif action.kind is ActionKind.FINISH:
                self._finish(0)
        return message

    def _start(self, task: str | None = None) -> str:
        try:
            index, path = self.session.start(task)
        except (EpisodeError, BagWriteError) as exc:
            self.get_logger().error(f"cannot start an episode: {exc}")
            if isinstance(exc, BagWriteError):
                self._finish(1)
            raise
        total = f"/{self.control.num_episodes}" if self.control.num_episodes else ""
        self.get_logger().info(f"episode {index} ({self.control.kept + 1}{total}) recording -> {path}")
        self.publish_status()
        return f"recording episode {index} into {path}"

    def _stop(self, outcome: str) -> str:
        index = self.session.index
        result = self.session.stop(outcome)
        self.publish_status(done=True, success=outcome == "success")
        if result is None:
            self.get_logger().info(f"episode {index} discarded (deleted)")
            return f"episode {index} discarded"
        counts = ", ".join(f"{t} {n}" for t, n in result.counts.items())
        text = f"episode {index} saved ({outcome}) -> {result.path}: {counts}"
        if result.error:
            self.get_logger().error(f"episode {index} stopped early: {result.error}")
        self.get_logger().info(text)
        if self.on_saved is not None:
            self.on_saved(result)
        return text

    def _topics_ready(self, now: float) -> bool:
        """The automatic loop's first episode waits for every wanted topic (up to wait_for_topics_s)."""
        missing = [t for t in self.wanted if self._subs.get(t) is None]
        if not missing:
            return True
        if now - self._born < self.wait_for_topics_s:
            return False
        if not getattr(self, "_warned_missing", False):
            self._warned_missing = True
            self.get_logger().warning(f"no publisher after {self.wait_for_topics_s:g} s for: {', '.join(missing)}; "
                                      "recording without them (they join the bag when they appear)")
        return True

    def _finish(self, code: int) -> None:
        if self.exit_when_done and self._exit_code is None:
            self._exit_code = code

    def on_start(self, request, response):
        try:
            response.message = self._start(request.task or None)
            self.control.started(time.monotonic())
            response.success = True
        except (EpisodeError, BagWriteError) as exc:
            response.success, response.message = False, str(exc)
        response.episode_index = self.session.index
        return response

    def on_stop(self, request, response):
        outcome = request.outcome or "success"
        try:
            response.message = self._stop(outcome)
            result = self.session.last_result if outcome != "discard" else None
            response.bag_path = str(result.path) if result is not None else ""
            response.success = True
            self._do(self.control.stopped(outcome, time.monotonic()))
        except (EpisodeError, BagWriteError) as exc:
            response.success, response.message = False, str(exc)
        return response

    def on_control(self, msg: String) -> None:
        command = msg.data.strip().lower()
        try:
            self._do(self.control.command(command, time.monotonic()))
        except ValueError as exc:
            self.get_logger().warning(str(exc))
        except (EpisodeError, BagWriteError):
            pass  # already logged

    def on_tick(self) -> None:
        now = time.monotonic()
        if self._stop_requested is not None:
            # take what DDS already delivered (until the streams go quiet, at most drain_s), then close
            if now - self._last_message > 0.25 or now - self._stop_requested > self.drain_s:
                self.close()
                raise SystemExit(0)
            return
        if self.session.recording and self.session.last_error:
            # disk full / I/O error: the writer stopped; close what it wrote (readable) and end the loop
            self._stop("failure")
            self.control.state = DONE
            self._finish(1)
        if self.control.state != IDLE or self._topics_ready(now):
            try:
                self._do(self.control.tick(now))
            except (EpisodeError, BagWriteError):
                self.control.state = DONE
        if now - self._last_progress >= self.progress_period_s:
            self._last_progress = now
            self.publish_status()
            self.publish_diagnostics()
            self.print_progress()
        if self._exit_code is not None:
            raise SystemExit(self._exit_code)

    # ---- status ---------------------------------------------------------------------------------
    def publish_status(self, done: bool = False, success: bool = False) -> None:
        msg = EpisodeStatus()
        msg.header.stamp = ns_to_time(self.get_clock().now().nanoseconds)
        msg.episode_index = self.session.index
        elapsed = self.session.elapsed_s()
        msg.step = int(elapsed * self.fps) if self.fps else sum(self.session.counts().values())
        msg.done = done or not self.session.recording
        msg.success = success
        msg.task = self.session.task
        self.status_pub.publish(msg)

    def publish_diagnostics(self) -> None:
        snapshot = self.session.qa_snapshot()
        if not snapshot:
            return
        array = DiagnosticArray()
        array.header.stamp = ns_to_time(self.get_clock().now().nanoseconds)
        for topic, s in snapshot.items():
            status = DiagnosticStatus(level=bytes([s.level]), name=f"episode_recorder: {topic}",
                                      message=s.message, hardware_id=self.get_fully_qualified_name())
            status.values = [KeyValue(key=k, value=str(v)) for k, v in s.values().items()]
            array.status.append(status)
        writer = self.session.writer
        if writer is not None:
            backlog = writer.backlog
            level, message = 0, "ok"
            if self.session.last_error:
                level, message = 2, self.session.last_error
            elif backlog > BACKLOG_WARN:  # the disk (or zstd) is slower than the streams: memory grows
                level, message = 1, f"writer falling behind: {backlog} messages queued in memory"
            array.status.append(DiagnosticStatus(
                level=bytes([level]), name="episode_recorder: writer",
                message=message, hardware_id=self.get_fully_qualified_name(),
                values=[KeyValue(key="backlog", value=str(writer.backlog)),
                        KeyValue(key="path", value=str(writer.path))]))
        self.diag_pub.publish(array)

    def print_progress(self) -> None:
        state = self.control.state
        total = f"/{self.control.num_episodes}" if self.control.num_episodes else ""
        if state == RECORDING or self.session.recording:
            limit = f"/{self.control.episode_time_s:g}" if self.control.automatic else ""
            counts = " ".join(f"{t}={n}" for t, n in self.session.counts().items())
            line = (f"episode {self.session.index} ({self.control.kept + 1}{total}) "
                    f"{self.session.elapsed_s():.1f}{limit} s | {counts}")
        elif state == RESETTING:
            line = f"reset {time.monotonic() - self.control.since:.1f}/{self.control.reset_time_s:g} s " \
                   f"({self.control.kept}{total} episodes kept)"
        else:
            line = f"{state}: {self.control.kept}{total} episodes kept"
        print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        """SIGTERM / Ctrl-C / exit: a running episode is closed properly (outcome 'interrupted')."""
        result = self.session.close("interrupted")
        if result is not None:
            print(f"episode closed on shutdown -> {result.path} ({result.message_count} messages)",
                  file=sys.stderr, flush=True)


def main(args=None) -> None:
    run_node(EpisodeRecorder, args=args)


if __name__ == "__main__":
    main()
