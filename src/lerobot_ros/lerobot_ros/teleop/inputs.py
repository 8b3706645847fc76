"""Teleop inputs as tip velocities: a gamepad's axes (sensor_msgs/Joy, whatever driver publishes it) and
terminal keys (no X display: a terminal sends bytes on press and auto-repeat, no key-up, so a key holds its
direction for `hold_s` after its last repeat). `InputWatch` says when an input went silent, so the arm holds
instead of running on a stale command."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np


@dataclass(frozen=True)
class TeleopCommand:
    """Tip velocity (m/s, URDF root frame: REP 103 x forward, y left, z up) and gripper speed (rad/s)."""

    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    gripper: float = 0.0

    @property
    def idle(self) -> bool:
        return not any(self.velocity) and not self.gripper


IDLE = TeleopCommand()


@dataclass(frozen=True)
class JoyMapping:
    """Which Joy axes/buttons mean what. Defaults fit an Xbox-layout pad under ROS's joy / game_controller
    drivers: left stick x/y, right stick vertical z, bumpers close/open the gripper; `deadman` (a button index,
    -1 for none) must be held for any motion."""

    axis_x: int = 1
    axis_y: int = 0
    axis_z: int = 4
    sign: tuple[float, float, float] = (1.0, 1.0, 1.0)
    button_open: int = 5
    button_close: int = 4
    deadman: int = -1
    deadzone: float = 0.1
    speed: float = 0.05  # m/s at full stick
    gripper_speed: float = 1.0  # rad/s

    def command(self, axes: Sequence[float], buttons: Sequence[int]) -> TeleopCommand:
        def axis(i: int) -> float:
            v = float(axes[i]) if 0 <= i < len(axes) else 0.0
            if not np.isfinite(v) or abs(v) < self.deadzone:
                return 0.0
            return float(np.clip(v, -1.0, 1.0))

        def pressed(i: int) -> bool:
            return 0 <= i < len(buttons) and bool(buttons[i])

        if self.deadman >= 0 and not pressed(self.deadman):
            return IDLE
        v = cast(
            "tuple[float, float, float]",  # three signs, three axes
            tuple(self.speed * s * axis(i) for s, i in zip(self.sign, (self.axis_x, self.axis_y, self.axis_z))),
        )
        grip = self.gripper_speed * (float(pressed(self.button_open)) - float(pressed(self.button_close)))
        return TeleopCommand(v, grip)


#: terminal key -> (x, y, z, gripper) direction
KEY_DIRECTIONS: dict[bytes, tuple[int, int, int, int]] = {
    b"w": (1, 0, 0, 0),
    b"\x1b[A": (1, 0, 0, 0),
    b"s": (-1, 0, 0, 0),
    b"\x1b[B": (-1, 0, 0, 0),
    b"a": (0, 1, 0, 0),
    b"\x1b[D": (0, 1, 0, 0),
    b"d": (0, -1, 0, 0),
    b"\x1b[C": (0, -1, 0, 0),
    b"r": (0, 0, 1, 0),
    b"f": (0, 0, -1, 0),
    b"o": (0, 0, 0, 1),
    b"c": (0, 0, 0, -1),
}
KEY_HELP = (
    "keys: w/s or up/down = forward/back, a/d or left/right = left/right, r/f = up/down, o/c = open/close, space = stop"
)


@dataclass
class KeyJog:
    """Terminal keys -> a command that lasts `hold_s` after the key's last (auto-repeated) press."""

    speed: float = 0.05
    gripper_speed: float = 1.0
    hold_s: float = 0.25
    _direction: tuple[int, int, int, int] = (0, 0, 0, 0)
    _until: float = field(default=-1.0)

    def press(self, key: bytes, now: float) -> bool:
        """A key arrived; False when it means nothing (space stops at once)."""
        if key == b" ":
            self._until = -1.0
            return True
        direction = KEY_DIRECTIONS.get(key.lower() if len(key) == 1 else key)
        if direction is None:
            return False
        self._direction, self._until = direction, now + self.hold_s
        return True

    def command(self, now: float) -> TeleopCommand:
        if now > self._until:
            return IDLE
        x, y, z, g = self._direction
        return TeleopCommand((self.speed * x, self.speed * y, self.speed * z), self.gripper_speed * g)


@dataclass
class InputWatch:
    """When the input last spoke; `stale(now)` once it has been silent for `timeout_s` (then: hold)."""

    timeout_s: float = 0.5
    last: float | None = None

    def seen(self, now: float) -> None:
        self.last = now

    def stale(self, now: float) -> bool:
        return self.last is None or now - self.last > self.timeout_s
