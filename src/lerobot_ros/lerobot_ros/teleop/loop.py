"""The end-effector teleop loop without ROS: inputs in, one joint target per tick out, and why it holds.

Targets integrate from the measured pose when teleop starts and from the last target afterwards (a servo that
sags under gravity would otherwise drift down). A Joy input silent for the watch's timeout holds the last target
(a terminal sends nothing between key presses, so keys never count as silent: their commands just expire).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from lerobot_ros.teleop.ee_jog import EndEffectorJog
from lerobot_ros.teleop.inputs import IDLE, InputWatch, JoyMapping, KeyJog, TeleopCommand


class Tick(NamedTuple):
    target: np.ndarray | None  # None: no pose measured yet, nothing to send
    holding: str | None  # why the arm holds, or None


class EeTeleopLoop:
    """Thread-safe: inputs may come from executor callbacks and a key thread while `tick` runs on a timer."""

    def __init__(
        self, jog: EndEffectorJog, period_s: float, mode: str, joy: JoyMapping, keys: KeyJog, watch: InputWatch
    ):
        if mode not in ("joy", "keyboard"):
            raise ValueError(f"input must be joy or keyboard, got {mode!r}")
        self.jog, self.period_s, self.mode = jog, float(period_s), mode
        self.joy, self.keys, self.watch = joy, keys, watch
        self.measured: np.ndarray | None = None
        self.target: np.ndarray | None = None
        self._joy_command: TeleopCommand = IDLE
        self._lock = threading.Lock()

    def configure(self, joy: JoyMapping, keys: KeyJog, timeout_s: float) -> None:
        with self._lock:
            self.joy, self.keys, self.watch.timeout_s = joy, keys, timeout_s

    def on_pose(self, q) -> None:
        self.measured = np.asarray(q, dtype=np.float64)

    def on_joy(self, axes, buttons, now: float) -> None:
        with self._lock:
            self._joy_command = self.joy.command(axes, buttons)
            self.watch.seen(now)

    def on_key(self, key: bytes, now: float) -> None:
        with self._lock:
            if self.keys.press(key, now):
                self.watch.seen(now)

    def command(self, now: float) -> tuple[TeleopCommand, str | None]:
        """The command to act on now, and why the arm holds (None when it does not)."""
        with self._lock:
            if self.mode == "keyboard":
                return self.keys.command(now), None
            if self.watch.stale(now):
                why = (
                    "no Joy message yet"
                    if self.watch.last is None
                    else f"no Joy message for {self.watch.timeout_s:g} s (pad unplugged or driver stopped)"
                )
                return IDLE, why
            return self._joy_command, None

    def tick(self, now: float) -> Tick:
        if self.measured is None:
            return Tick(None, "no joint_states yet")
        if self.target is None:
            self.target = self.measured.copy()
        command, why = self.command(now)
        if not command.idle:
            delta = np.asarray(command.velocity) * self.period_s
            self.target = self.jog.step(self.target, delta, command.gripper * self.period_s)
        return Tick(self.target.copy(), why)
