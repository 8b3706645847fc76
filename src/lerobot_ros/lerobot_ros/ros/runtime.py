"""Run rclpy nodes in a private context with an executor thread, and shut them down safely.

Order matters on shutdown: stop the spinning thread, join it, then shut the executor down, destroy the
nodes and shut the context down, all from one thread. rclpy's `Executor.shutdown()` destroys its guard
condition at once, even while another thread waits on it inside `spin()`; under load that aborted the whole
process (a flake hunt pass died with "Fatal Python error: Aborted" in this teardown). So the thread spins in
short steps and checks a flag, and nothing is destroyed until it has returned.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node


class RosRuntime:
    """A private rclpy context whose nodes spin in one background thread.

    Use as a context manager::

        with RosRuntime() as ros:
            node = ros.create_node("probe")
            ...
    """

    def __init__(self, domain_id: int | None = None, multi_threaded: bool = False, args: list[str] | None = None):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id, args=args)
        executor_cls = MultiThreadedExecutor if multi_threaded else SingleThreadedExecutor
        self.executor = executor_cls(context=self.context)
        self._nodes: list[Node] = []
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def create_node(self, name: str, **kwargs) -> Node:
        """A plain Node in this context, already added to the executor."""
        return self.add_node(Node(name, context=self.context, **kwargs))

    def add_node(self, node: Node) -> Node:
        """Spin an existing node (created with context=runtime.context) in this runtime."""
        self.executor.add_node(node)
        self._nodes.append(node)
        return node

    def start(self) -> RosRuntime:
        if self._thread is None:
            self._thread = threading.Thread(target=self._spin, name="ros-executor", daemon=True)
            self._thread.start()
        return self

    def _spin(self) -> None:
        try:
            while not self._stopping.is_set() and self.context.ok():
                self.executor.spin_once(timeout_sec=0.1)
        except Exception:  # the context was shut down under us: nothing left to spin
            if self.context.ok() and not self._stopping.is_set():
                raise

    def close(self) -> None:
        """Stop spinning, join the thread, then (from here only) shut the executor down, destroy the nodes and
        shut the context down (idempotent)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
            if self._thread.is_alive():  # a callback that never returns: destroying anything now could abort
                warnings.warn(
                    "the ROS executor thread did not stop within 10 s; its context is left as it is", stacklevel=2
                )
                return
            self._thread = None
        self.executor.shutdown(timeout_sec=5.0)
        for node in self._nodes:
            node.destroy_node()
        self._nodes.clear()
        self.context.try_shutdown()

    def __enter__(self) -> RosRuntime:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.01, what: str = "condition") -> None:
    """Poll `predicate` until it is true; TimeoutError naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.1f} s waiting for {what}")
        time.sleep(interval)


def call_until_answered(call: Callable[[], Any], timeout: float, resend_s: float = 2.0, what: str = "a reply"):
    """`call()` sends an idempotent request and returns its future; the reply, sending again every `resend_s`.

    A service is "ready" once its request reader matched the client, but the reply is lost while the
    server's reply writer has not yet discovered the client's reader: one request can go unanswered on a
    loaded machine. TimeoutError naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        future = call()
        try:
            wait_until(future.done, min(resend_s, max(0.01, deadline - time.monotonic())), what=what)
            return future.result()
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {timeout:.1f} s waiting for {what}") from None


def call_service(node: Node, srv_type, name: str, request, timeout: float = 30.0):
    """One call of service `name` from `node` (spinning in another thread, e.g. a RosRuntime's): waits for the
    server, then for the response; TimeoutError naming the service otherwise. For a request that must not be
    sent twice (use `call_until_answered` for idempotent ones)."""
    client: Any = node.create_client(srv_type, name)
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f"service {name} not available after {timeout:g} s")
        future = client.call_async(request)
        wait_until(future.done, timeout, what=f"{name} response")
        return future.result()
    finally:
        node.destroy_client(client)


class MessageCollector:
    """Subscribes to a topic and keeps (receive_time_ns, message) pairs, with blocking waits."""

    def __init__(self, node: Node, msg_type, topic: str, qos=10, raw: bool = False):
        self.topic = topic
        self.items: list[tuple[int, object]] = []
        self._cond = threading.Condition()
        self.subscription = node.create_subscription(msg_type, topic, self._on_message, qos, raw=raw)

    def _on_message(self, msg) -> None:
        with self._cond:
            self.items.append((time.monotonic_ns(), msg))
            self._cond.notify_all()

    @property
    def messages(self) -> list:
        with self._cond:
            return [m for _, m in self.items]

    def wait_for(self, count: int = 1, timeout: float = 10.0) -> list:
        """Block until `count` messages arrived; TimeoutError saying how many did otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.items) >= count, timeout=timeout):
                raise TimeoutError(
                    f"got {len(self.items)} of {count} message(s) on {self.topic} within {timeout:.1f} s"
                )
            return [m for _, m in self.items[:count]]

    def wait_quiet(self, quiet_s: float, timeout: float = 10.0) -> int:
        """Block until nothing arrived for `quiet_s` (a stopped publisher's last samples are in); the count then."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                last_ns = self.items[-1][0] if self.items else 0
                quiet_for = (time.monotonic_ns() - last_ns) / 1e9
                if quiet_for >= quiet_s:
                    return len(self.items)
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{self.topic} kept publishing for {timeout:.1f} s (waited for {quiet_s:.1f} s quiet)"
                    )
                self._cond.wait(timeout=quiet_s - quiet_for)
