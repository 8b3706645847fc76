"""A context shut down without the executor being woken (what a signal landing between two waits amounts to)
still ends the spin when a ShutdownWatch is running, and leaves it waiting forever when none is."""

from __future__ import annotations

import threading

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from std_msgs.msg import String

from lerobot_ros.ros.shutdown_watch import ShutdownWatch


def _spinning(watch: bool):
    """A node with a subscription and no timer, spun in a thread; returns what the test needs to stop it."""
    context = Context()
    rclpy.init(context=context, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("watched", context=context)
    node.create_subscription(String, "unused", lambda _: None, 1)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    outcome: list[str] = []

    def spin() -> None:
        try:
            executor.spin()
            outcome.append("returned")
        except ExternalShutdownException:
            outcome.append("external shutdown")

    watcher = ShutdownWatch(executor, period_s=0.05).start() if watch else None
    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    return context, executor, node, thread, outcome, watcher


@pytest.mark.parametrize("watch", [True, False], ids=["watched", "unwatched"])
def test_a_silent_context_shutdown_ends_the_spin_only_when_watched(watch):
    context, executor, node, thread, outcome, watcher = _spinning(watch)
    try:
        threading.Event().wait(0.2)  # the executor is in its wait
        assert thread.is_alive() and outcome == []
        context.handle.shutdown()  # rcl's shutdown alone: nothing wakes the executor
        thread.join(timeout=2.0)
        if watch:
            assert not thread.is_alive(), "the watched spin should end within a few watch periods"
            assert outcome == ["external shutdown"]
            assert watcher.wakes >= 1
        else:
            assert thread.is_alive(), "without the watch the executor keeps waiting (the hang this guards against)"
    finally:
        if watcher is not None:
            watcher.stop()
        executor.wake()  # let an unwatched spin see the shut-down context and end
        thread.join(timeout=5.0)
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        context.destroy()
    assert not thread.is_alive()
