"""episode_recorder: records the topics of a contract (or a topic list) into one rosbag2 (MCAP) per episode.

Wiring only; the logic lives in lerobot_ros.record (recorder: episode control, draining and reports;
session, bag writer, episode loop, QA).

Parameters: `RecorderConfig` (record/config.py) (`ros2 param describe` shows each one's description, unit and range;
the episode loop, outcome default, task, rates and writer settings can be changed while it runs).
Services: start_episode (lerobot_ros_msgs/StartEpisode), stop_episode (lerobot_ros_msgs/StopEpisode).
Topics: episode_status (EpisodeStatus, out), episode_control (std_msgs/String: next|rerecord|stop, in),
/diagnostics (DiagnosticArray, out, live QA per recorded topic).
Messages are subscribed raw (CDR bytes, any type) with QoS matched to the publishers (reliable when
all publishers are, transient-local likewise), depth 1000, and stamped with the node clock (sim time too).
On Ctrl-C / SIGTERM it keeps taking already delivered messages for up to drain_s, then closes the bag.
"""

from __future__ import annotations

import signal
import sys
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import String

from lerobot_ros.codecs import ns_to_time
from lerobot_ros.contract import message_class
from lerobot_ros.record.config import RecorderConfig
from lerobot_ros.record.episode_bag_writer import BagWriteError
from lerobot_ros.record.recorder import Status, build_recorder
from lerobot_ros.record.session import EpisodeError, TopicSpec
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, subscription_qos, to_bag_qos
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode


class EpisodeRecorder(Node):
    params_class = RecorderConfig

    def __init__(self, on_saved=None, **kwargs):
        """`on_saved(result)` is called with every kept episode's BagResult (lerobot-ros record converts)."""
        super().__init__("episode_recorder", **kwargs)
        self.params = declare_params(self, RecorderConfig, self._reconfigure)
        p = self.params.values
        self.exit_future = Future()  # its result ends run_node's spin: the exit status
        try:
            self.recorder = build_recorder(
                p,
                self.get_logger(),
                clock_ns=lambda: self.get_clock().now().nanoseconds,
                now=time.monotonic(),
                on_status=self.publish_status,
                on_saved=on_saved,
            )
        except Exception as exc:  # ContractError, bad topic or loop settings: one line, no traceback
            raise NodeStartupError(str(exc)) from None
        self._subs: dict[str, object] = {}
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
        self.discovery_timer = self.create_timer(p.discovery_period_s, self.discover, clock=steady)
        self.create_timer(0.05, self.on_tick, clock=steady)
        self.get_logger().info(self.recorder.describe(p.output_dir))

    def _reconfigure(self, new: RecorderConfig, changed: dict) -> None:
        """A reconfigurable parameter set at run time (read-only ones were refused before this)."""
        self.recorder.reconfigure(changed)  # ValueError refuses the change with its reason
        if "discovery_period_s" in changed:
            self.discovery_timer.timer_period_ns = int(new.discovery_period_s * 1e9)

    # ---- subscriptions --------------------------------------------------------------------------
    def discover(self) -> None:
        """Subscribe to wanted topics once a publisher shows up (so QoS and type can be matched)."""
        rec = self.recorder
        if rec.all_topics:
            rec.offer(name for name, _types in self.get_topic_names_and_types())
        for topic, want in list(rec.wanted.items()):
            if topic in self._subs:
                continue
            infos = self.get_publishers_info_by_topic(topic)
            if not infos:
                continue
            msgtype = want.msgtype or infos[0].topic_type
            offered = [i.qos_profile for i in infos]
            try:
                cls = message_class(msgtype)
                rec.session.add_topic(
                    TopicSpec(
                        topic,
                        msgtype,
                        [to_bag_qos(q) for q in offered],
                        want.expected_hz,
                        want.policy,
                        want.tolerance_ns,
                    )
                )
            except Exception as exc:
                self.get_logger().error(f"cannot record {topic} ({msgtype}): {exc}")
                self._subs[topic] = None
                continue
            self._subs[topic] = self.create_subscription(
                cls,
                topic,
                lambda data, t=topic: rec.message(t, self.get_clock().now().nanoseconds, data, time.monotonic()),
                subscription_qos(offered),
                raw=True,
            )
            rec.subscribed.add(topic)
            self.get_logger().info(f"subscribed {topic} [{msgtype}]")

    def _on_signal(self, signum, frame) -> None:
        if not self.recorder.request_stop(time.monotonic()):
            raise KeyboardInterrupt  # a second Ctrl-C: stop now (the bag is still closed by close())

    # ---- episode control ------------------------------------------------------------------------
    def on_start(self, request, response):
        try:
            response.message = self.recorder.start(request.task or None, time.monotonic())
            response.success = True
        except (EpisodeError, BagWriteError) as exc:
            response.success, response.message = False, str(exc)
        response.episode_index = self.recorder.session.index
        return response

    def on_stop(self, request, response):
        try:
            response.message, response.bag_path = self.recorder.stop(request.outcome or None, time.monotonic())
            response.success = True
        except (EpisodeError, BagWriteError) as exc:
            response.success, response.message = False, str(exc)
        return response

    def on_control(self, msg: String) -> None:
        self.recorder.command(msg.data, time.monotonic())

    def on_tick(self) -> None:
        now = time.monotonic()
        if self.recorder.tick(now):
            self.publish_status(self.recorder.status())
            self.publish_diagnostics()
            print(self.recorder.progress_line(now), file=sys.stderr, flush=True)
        if self.recorder.exit_code is not None and not self.exit_future.done():
            self.exit_future.set_result(self.recorder.exit_code)  # run_node stops spinning, then close()

    # ---- status ---------------------------------------------------------------------------------
    def publish_status(self, status: Status) -> None:
        msg = EpisodeStatus(
            episode_index=status.episode_index,
            step=status.step,
            done=status.done,
            success=status.success,
            task=status.task,
        )
        msg.header.stamp = ns_to_time(self.get_clock().now().nanoseconds)
        self.status_pub.publish(msg)

    def publish_diagnostics(self) -> None:
        entries = self.recorder.diagnostics()
        if not entries:
            return
        array = DiagnosticArray()
        array.header.stamp = ns_to_time(self.get_clock().now().nanoseconds)
        hardware_id = self.get_fully_qualified_name()
        array.status = [
            DiagnosticStatus(
                level=bytes([d.level]),
                name=d.name,
                message=d.message,
                hardware_id=hardware_id,
                values=[KeyValue(key=k, value=v) for k, v in d.values.items()],
            )
            for d in entries
        ]
        self.diag_pub.publish(array)

    def close(self) -> None:
        """SIGTERM / Ctrl-C / exit: a running episode is closed properly (outcome 'interrupted')."""
        result = self.recorder.close()
        if result is not None:
            print(
                f"episode closed on shutdown -> {result.path} ({result.message_count} messages)",
                file=sys.stderr,
                flush=True,
            )


def main(args=None) -> None:
    run_node(EpisodeRecorder, args=args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
