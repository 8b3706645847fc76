"""The follower arm's control loop without ROS: one step (goal, bus exchange, watchdog hold) and a steady-rate thread.

`FollowerControl.step` is what robot_node and motor_bus_node run every tick: the goal comes from the
command buffer (only while torque is on), is written right after the read, and when the command
watchdog expires the arm is told to hold the position just read, once, instead of keeping the last goal.
`SteadyLoop` calls a function at a fixed rate on its own thread (no executor overhead per tick, no burst
to catch up after an overrun) and survives anything the function raises.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np

from lerobot_ros.hardware.commands import TIMEOUT, CommandBuffer

_log = logging.getLogger(__name__)


class FollowerControl:
    """Decides what a follower driver (an `ArmDriver`) sends each tick; `holding` says the watchdog hold is active."""

    def __init__(self, driver, buffer: CommandBuffer, log=None):
        self.driver, self.buffer = driver, buffer
        self.log = log or _log
        self.holding = False

    def step(self, now_ns: int) -> np.ndarray | None:
        """One tick at `now_ns`: the positions read (radians), or None when nothing was read (nothing sent)."""
        torque = self.driver.torque_enabled
        state = self.buffer.state(now_ns)
        goal = self.buffer.goal(now_ns) if torque else None
        # Read and write back to back (the goal is computed before the read).
        positions = self.driver.exchange(goal)
        if positions is None:
            return None
        if goal is not None:
            self.holding = False
        elif torque and state == TIMEOUT and not self.holding:
            self.log.warning("command watchdog expired: holding the present position")
            self.driver.write(positions, report_sent=False)
            self.holding = True
        return positions


class SteadyLoop:
    """Calls `step()` every `period_s` on a daemon thread until `stop()`; `period_s` may change while running."""

    def __init__(
        self,
        step: Callable[[], None],
        period_s: float,
        name: str = "control-loop",
        on_error: Callable[[Exception], None] | None = None,
    ):
        if period_s <= 0:
            raise ValueError(f"period must be positive, got {period_s}")
        self.step, self.period_s, self.on_error = step, period_s, on_error
        self.iterations = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> SteadyLoop:
        self._thread.start()
        return self

    def _run(self) -> None:
        next_tick = time.monotonic()
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as exc:  # noqa: BLE001 - the loop must survive anything a tick throws
                if self.on_error is not None:
                    self.on_error(exc)
            self.iterations += 1
            next_tick += self.period_s
            delay = next_tick - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            else:
                next_tick = time.monotonic()  # overran: do not try to catch up with a burst

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop and join (unless called from the loop itself). Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=timeout)
