"""A contract's topics from inside someone else's process: a private rclpy context and executor thread (never
the global `rclpy.shutdown()`, so another rclpy user in the same process keeps running), the newest message of
each observation topic with the time it arrived, and a publisher for the action.

What a plugin needs and a node does not: `open()` checks the graph first and fails in one line naming each
topic that has no publisher (or one of another type) and an action topic nobody subscribes to; `newest()`
refuses a value older than the age limit, naming the topic and its age, instead of passing it off as new.
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
    """A topic the contract names is missing, of the wrong type, silent or stale (the message says which)."""


@dataclass
class _Latest:
    msg: object = None
    received_s: float = 0.0  # time.monotonic() when it arrived
    count: int = 0


class ContractTopics:
    """The observation topics of `contract` subscribed and the action topic published, in a private context."""

    def __init__(self, contract: Contract, node_name: str = "lerobot_plugin", domain_id: int | None = None):
        self.contract = contract
        self.node_name = node_name
        self.domain_id = domain_id
        self._runtime: RosRuntime | None = None
        self._latest: dict[str, _Latest] = {}
        self._lock = threading.Lock()
        self._publisher: Any = None

    @property
    def is_open(self) -> bool:
        return self._runtime is not None

    def open(self, timeout_s: float = 10.0) -> None:
        """Subscribe, advertise, then wait until every observation topic has a publisher of the contract's type
        and a first message, and the action topic a subscriber; TopicError listing what is missing otherwise."""
        if self._runtime is not None:
            return
        runtime = RosRuntime(domain_id=self.domain_id)
        try:
            node = runtime.create_node(self.node_name)
            for name, feature in self.contract.observation_features.items():
                self._latest[name] = _Latest()
                try:
                    node.create_subscription(
                        message_class(feature.msg_type),
                        feature.topic,
                        lambda msg, n=name: self._store(n, msg),
                        qos_by_name(feature.qos),
                    )
                except RuntimeError as exc:  # rclpy's RCLError: e.g. one topic named with two types
                    first = str(exc).splitlines()[0].split(", at ")[0]
                    raise TopicError(f"{feature.topic}: cannot subscribe as {feature.msg_type} ({first})") from None
            action = self.contract.action_feature
            self._publisher = node.create_publisher(
                message_class(action.msg_type), action.topic, qos_by_name(action.qos)
            )
            runtime.start()
            self._runtime = runtime
            self._wait_for_graph(node, timeout_s)
        except BaseException:
            self._runtime = None
            runtime.close()
            raise

    def _store(self, name: str, msg) -> None:
        now = time.monotonic()
        with self._lock:
            latest = self._latest[name]
            latest.msg, latest.received_s, latest.count = msg, now, latest.count + 1

    def _problems(self, node) -> list[str]:
        problems = []
        for name, feature in self.contract.observation_features.items():
            infos = node.get_publishers_info_by_topic(feature.topic)
            types = sorted({i.topic_type for i in infos})
            if not infos:
                problems.append(f"{feature.topic} has no publisher")
            elif feature.msg_type not in types:
                problems.append(f"{feature.topic} is {', '.join(types)}, the contract reads {feature.msg_type}")
            elif self._latest[name].count == 0:
                problems.append(f"{feature.topic} has a publisher but sent nothing")
        action = self.contract.action_feature
        if not node.get_subscriptions_info_by_topic(action.topic):
            problems.append(f"nothing subscribes to the action topic {action.topic}")
        return problems

    def _wait_for_graph(self, node, timeout_s: float) -> None:
        try:
            wait_until(lambda: not self._problems(node), timeout_s, interval=0.05, what="the contract's topics")
        except TimeoutError:
            problems = self._problems(node)
            if not problems:  # everything came up just at the deadline
                return
            source = self.contract.source or self.contract.robot_type
            raise TopicError(
                f"contract {source}: {'; '.join(problems)} (after {timeout_s:g} s); start the robot's "
                f"nodes (or its sim bridge) first, or check the contract's topics"
            ) from None

    def newest(self, name: str, max_age_s: float) -> tuple[object, float]:
        """(newest message of observation feature `name`, its age in s); TopicError when it is older than
        `max_age_s` (the publisher stopped or stalled)."""
        with self._lock:
            latest = self._latest[name]
            msg, received = latest.msg, latest.received_s
        feature = self.contract.features[name]
        if msg is None:
            raise TopicError(f"{feature.topic}: no message yet")
        age = time.monotonic() - received
        if age > max_age_s:
            raise TopicError(
                f"{feature.topic} is stale: its newest message is {age:.2f} s old (limit {max_age_s:g} s); "
                "is its publisher still running?"
            )
        return msg, age

    def decode(self, name: str, max_age_s: float) -> np.ndarray:
        """The newest value of observation feature `name` in LeRobot units (float32 vector or uint8 image)."""
        msg, _age = self.newest(name, max_age_s)
        return self.contract.features[name].decode(msg)

    def publish_action(self, values: np.ndarray) -> np.ndarray:
        """Publish one action (LeRobot units); returns what the message carries, back in LeRobot units."""
        if self._publisher is None:
            raise TopicError("not connected: call connect() first")
        feature: Feature = self.contract.action_feature
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(values)):
            bad = [n for n, v in zip(feature.names, values, strict=False) if not np.isfinite(v)]
            raise ValueError(f"action has non-finite values for {', '.join(bad)}; nothing was sent")
        msg = feature.encode(values, stamp_ns=time.time_ns())
        self._publisher.publish(msg)
        return feature.to_lerobot(feature.to_ros(values))

    def close(self) -> None:
        """Destroy the node and shut down this object's own context only (idempotent)."""
        runtime, self._runtime, self._publisher = self._runtime, None, None
        if runtime is not None:
            runtime.close()
