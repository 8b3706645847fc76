"""ROS topics from inside someone else's process, for the LeRobot plugins: a private rclpy context and executor
thread (never the global `rclpy.shutdown()`, so another rclpy user in the same process keeps running), the
newest message of each subscribed topic with the time it arrived, and publishers.

What a plugin needs and a node does not: `open()` checks the graph first and fails in one line naming each
topic that has no publisher (or one of another type) and each published topic nobody subscribes to; `newest()`
refuses a value older than the age limit, naming the topic and its age, instead of passing it off as new.

`TopicCache` is the generic part (the camera and teleoperator plugins use it for one topic each);
`ContractTopics` reads a contract's observation topics and publishes its action (the robot plugin).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from lerobot_ros.contract import Contract, message_class
from lerobot_ros.contract.model import Feature
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.ros.qos import qos_by_name
from lerobot_ros.ros.runtime import RosRuntime, wait_until


class TopicError(UserError, ConnectionError):
    """A topic is missing, of the wrong type, silent or stale (the message says which)."""


class StaleTopicError(TopicError, TimeoutError):
    """The newest message is older than the age limit, or no new one came in time (a TimeoutError too, as
    LeRobot's cameras raise from `read_latest` / `async_read`)."""


@dataclass(frozen=True)
class Stream:
    """One topic to subscribe (`key` names it to the caller) or publish."""

    key: str
    topic: str
    msg_type: str  # pkg/msg/Name
    qos: str = "sensor"  # a lerobot_ros.ros.qos profile name
    label: str = ""  # what errors call it before its topic ("the action topic")

    @property
    def described(self) -> str:
        return f"{self.label} {self.topic}" if self.label else self.topic


@dataclass
class _Latest:
    msg: object = None
    received_s: float = 0.0  # time.monotonic() when it arrived
    count: int = 0


class TopicCache:
    """`subscribe` streams kept as their newest message, `publish` streams with a publisher each, in a private
    context; `open()` waits for the graph (publishers of the right type and a first message; a subscriber for
    each published stream) and names what is missing."""

    def __init__(
        self,
        subscribe: list[Stream],
        publish: list[Stream] = (),  # type: ignore[assignment]
        node_name: str = "lerobot_plugin",
        domain_id: int | None = None,
        what: str = "",  # says whose topics these are in errors ("contract so101", "camera front" ...)
        hint: str = "start the publishing nodes first, or check the topic names",
    ):
        self.subscribe, self.publish_streams = list(subscribe), list(publish)
        self.node_name, self.domain_id = node_name, domain_id
        self.what, self.hint = what, hint
        self._runtime: RosRuntime | None = None
        self._latest: dict[str, _Latest] = {}
        self._by_key = {s.key: s for s in self.subscribe}
        self._publishers: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)

    @property
    def is_open(self) -> bool:
        return self._runtime is not None

    def open(self, timeout_s: float = 10.0) -> None:
        """Subscribe, advertise, then wait for the graph; TopicError listing what is missing."""
        if self._runtime is not None:
            return
        runtime = RosRuntime(domain_id=self.domain_id)
        try:
            node = runtime.create_node(self.node_name)
            for stream in self.subscribe:
                self._latest[stream.key] = _Latest()
                try:
                    node.create_subscription(
                        message_class(stream.msg_type),
                        stream.topic,
                        lambda msg, k=stream.key: self._store(k, msg),
                        qos_by_name(stream.qos),
                    )
                except RuntimeError as exc:  # rclpy's RCLError: e.g. one topic named with two types
                    first = str(exc).splitlines()[0].split(", at ")[0]
                    raise TopicError(f"{stream.topic}: cannot subscribe as {stream.msg_type} ({first})") from None
            for stream in self.publish_streams:
                self._publishers[stream.key] = node.create_publisher(
                    message_class(stream.msg_type), stream.topic, qos_by_name(stream.qos)
                )
            runtime.start()
            self._runtime = runtime
            self._wait_for_graph(node, timeout_s)
        except BaseException:
            self._runtime = None
            self._publishers.clear()
            runtime.close()
            raise

    def _store(self, key: str, msg) -> None:
        now = time.monotonic()
        with self._arrived:
            latest = self._latest[key]
            latest.msg, latest.received_s, latest.count = msg, now, latest.count + 1
            self._arrived.notify_all()

    def _problems(self, node) -> list[str]:
        problems = []
        for stream in self.subscribe:
            infos = node.get_publishers_info_by_topic(stream.topic)
            types = sorted({i.topic_type for i in infos})
            if not infos:
                problems.append(f"{stream.topic} has no publisher")
            elif stream.msg_type not in types:
                problems.append(f"{stream.topic} is {', '.join(types)}, the {self._reader()} reads {stream.msg_type}")
            elif self._latest[stream.key].count == 0:
                problems.append(f"{stream.topic} has a publisher but sent nothing")
        for stream in self.publish_streams:
            if not node.get_subscriptions_info_by_topic(stream.topic):
                problems.append(f"nothing subscribes to {stream.described}")
        return problems

    def _reader(self) -> str:
        return self.what.split(" ")[0] if self.what else "plugin"

    def _wait_for_graph(self, node, timeout_s: float) -> None:
        try:
            wait_until(lambda: not self._problems(node), timeout_s, interval=0.05, what="the topics")
        except TimeoutError:
            problems = self._problems(node)
            if not problems:  # everything came up just at the deadline
                return
            prefix = f"{self.what}: " if self.what else ""
            raise TopicError(f"{prefix}{'; '.join(problems)} (after {timeout_s:g} s); {self.hint}") from None

    def newest(self, key: str, max_age_s: float) -> tuple[object, float]:
        """(newest message of stream `key`, its age in s); TopicError when it is older than `max_age_s` (the
        publisher stopped or stalled)."""
        with self._lock:
            latest = self._latest.get(key)
            msg, received = (latest.msg, latest.received_s) if latest is not None else (None, 0.0)
        topic = self._by_key[key].topic
        if not self.is_open:
            raise TopicError(f"{topic}: not connected; call connect() first")
        if msg is None:
            raise TopicError(f"{topic}: no message yet")
        age = time.monotonic() - received
        if age > max_age_s:
            raise StaleTopicError(
                f"{topic} is stale: its newest message is {age:.2f} s old (limit {max_age_s:g} s); "
                "is its publisher still running?"
            )
        return msg, age

    def next_message(self, key: str, after: int, timeout_s: float) -> tuple[object, int]:
        """The first message of stream `key` whose count is above `after` (a new one), waiting up to `timeout_s`;
        (message, its count). TopicError naming the topic when none came."""
        deadline = time.monotonic() + timeout_s
        with self._arrived:
            while True:
                latest = self._latest.get(key)
                if latest is not None and latest.count > after:
                    return latest.msg, latest.count
                left = deadline - time.monotonic()
                if left <= 0 or not self.is_open:
                    break
                self._arrived.wait(left)
        raise StaleTopicError(
            f"{self._by_key[key].topic}: no new message within {timeout_s:g} s; is its publisher running?"
        )

    def count(self, key: str) -> int:
        with self._lock:
            latest = self._latest.get(key)
            return latest.count if latest is not None else 0

    def publish(self, key: str, msg) -> None:
        publisher = self._publishers.get(key)
        if publisher is None:
            raise TopicError("not connected: call connect() first")
        publisher.publish(msg)

    def close(self) -> None:
        """Destroy the node and shut down this object's own context only (idempotent)."""
        runtime, self._runtime = self._runtime, None
        self._publishers.clear()
        with self._arrived:
            self._arrived.notify_all()
        if runtime is not None:
            runtime.close()


def non_finite(names: list[str], values: np.ndarray) -> list[str]:
    """The names whose values are NaN or infinite."""
    return [n for n, v in zip(names, values, strict=False) if not np.isfinite(v)]


class ContractTopics(TopicCache):
    """The observation topics of `contract` subscribed and its action topic published, in a private context."""

    def __init__(self, contract: Contract, node_name: str = "lerobot_plugin", domain_id: int | None = None):
        self.contract = contract
        action = contract.action_feature
        super().__init__(
            [Stream(name, f.topic, f.msg_type, f.qos) for name, f in contract.observation_features.items()],
            [Stream("action", action.topic, action.msg_type, action.qos, label="the action topic")],
            node_name=node_name,
            domain_id=domain_id,
            what=f"contract {contract.source or contract.robot_type}",
            hint="start the robot's nodes (or its sim bridge) first, or check the contract's topics",
        )

    def decode(self, name: str, max_age_s: float) -> np.ndarray:
        """The newest value of observation feature `name` in LeRobot units (float32 vector or uint8 image)."""
        msg, _age = self.newest(name, max_age_s)
        return self.contract.features[name].decode(msg)

    def publish_action(self, values: np.ndarray) -> np.ndarray:
        """Publish one action (LeRobot units); returns what the message carries, back in LeRobot units."""
        feature: Feature = self.contract.action_feature
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        bad = non_finite(feature.names, values)
        if bad:
            raise ValueError(f"action has non-finite values for {', '.join(bad)}; nothing was sent")
        msg = feature.encode(values, stamp_ns=time.time_ns())
        self.publish("action", msg)
        return feature.to_lerobot(feature.to_ros(values))
