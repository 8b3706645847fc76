"""Make sure Ctrl-C / SIGTERM always ends a node's spin.

rclpy's signal handler shuts the context down from its own thread and wakes the executors it knows of. When the
signal lands while the executor is between two waits, the wake-up can be spent before the context is down, and
the executor then waits again on a context that is already shut down: with no timer of its own in the wait set
it never wakes (a robot_node hung 30 s after Ctrl-C in 2 of 60 starts interrupted 1-3 s in, its control
thread logging "publisher's context is invalid" every second). `ShutdownWatch` looks at the context a few times
a second and wakes the executor while it is down, so the spin ends on its next check."""

from __future__ import annotations

from rclpy.executors import Executor

from lerobot_ros.processes.periodic import PeriodicThread


class ShutdownWatch(PeriodicThread):
    """A daemon thread that wakes `executor` every `period_s` once its context is shut down."""

    def __init__(self, executor: Executor, period_s: float = 0.2):
        super().__init__(self._wake_if_down, period_s, name="shutdown-watch")
        self.executor, self.wakes = executor, 0

    def _wake_if_down(self) -> None:
        if not self.executor.context.ok():
            self.executor.wake()
            self.wakes += 1


__all__ = ["ShutdownWatch"]
