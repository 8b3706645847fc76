"""A mobile base's operator inputs as a body twist (x, y m/s; yaw rad/s; REP 103), the way ROS users drive one.

Keys: teleop_twist_keyboard's layout (the centre of the keyboard: i forward, `,` back, j / l turn, u o m `.`
forward or back while turning, k or space stop; with Shift the same keys strafe instead of turning, for a
holonomic base; q/z all speeds up/down by 10 %, w/x the linear speed only, e/c the turn rate only). A terminal
sends a key on press and auto-repeat, with no release: a key holds its motion for `hold_s` after its last
repeat, then the base stops. Gamepad: teleop_twist_joy's idea (sensor_msgs/Joy axes scaled to speeds, a button to
hold for any motion); the inputs' silence is watched by teleop.inputs.InputWatch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: key -> (x, y, yaw) direction
TWIST_KEYS: dict[bytes, tuple[int, int, int]] = {
    b"i": (1, 0, 0),
    b"o": (1, 0, -1),
    b"j": (0, 0, 1),
    b"l": (0, 0, -1),
    b"u": (1, 0, 1),
    b",": (-1, 0, 0),
    b".": (-1, 0, 1),
    b"m": (-1, 0, -1),
    # Shift: holonomic, strafing instead of turning
    b"I": (1, 0, 0),
    b"O": (1, -1, 0),
    b"J": (0, 1, 0),
    b"L": (0, -1, 0),
    b"U": (1, 1, 0),
    b"<": (-1, 0, 0),
    b">": (-1, -1, 0),
    b"M": (-1, 1, 0),
}
#: key -> (factor on the linear speed, factor on the turn rate)
SPEED_KEYS: dict[bytes, tuple[float, float]] = {
    b"q": (1.1, 1.1),
    b"z": (0.9, 0.9),
    b"w": (1.1, 1.0),
    b"x": (0.9, 1.0),
    b"e": (1.0, 1.1),
    b"c": (1.0, 0.9),
}
STOP_KEYS = (b"k", b"K", b" ")
KEY_HELP = (
    "keys: i/, forward/back, j/l turn, u o m . forward/back turning, Shift+key strafes (J/L left/right), "
    "k or space stop; q/z all speeds +-10 %, w/x linear, e/c turn"
)

Twist3 = tuple[float, float, float]
STILL: Twist3 = (0.0, 0.0, 0.0)


@dataclass
class KeyTwist:
    """Terminal keys -> the twist to publish now."""

    speed: float = 0.2  # m/s
    turn: float = 1.0  # rad/s
    hold_s: float = 0.6  # longer than a terminal's first auto-repeat delay (about 0.5 s)
    _direction: tuple[int, int, int] = (0, 0, 0)
    _until: float = field(default=-1.0)

    def press(self, key: bytes, now: float) -> bool:
        """A key arrived; False when it means nothing."""
        if key in STOP_KEYS:
            self._until = -1.0
            return True
        if key in SPEED_KEYS:
            linear, angular = SPEED_KEYS[key]
            self.speed, self.turn = self.speed * linear, self.turn * angular
            return True
        direction = TWIST_KEYS.get(key)
        if direction is None:
            return False
        self._direction, self._until = direction, now + self.hold_s
        return True

    def twist(self, now: float) -> Twist3:
        if now > self._until:
            return STILL
        x, y, yaw = self._direction
        return (self.speed * x, self.speed * y, self.turn * yaw)


@dataclass(frozen=True)
class JoyTwist:
    """Which Joy axes mean what (Xbox-layout pad under ROS's joy driver: left stick forward/left, right stick
    turns), their full-stick speeds, and the button to hold (`deadman`, -1 for none)."""

    axis_x: int = 1
    axis_y: int = 0
    axis_yaw: int = 3
    deadman: int = 4
    deadzone: float = 0.1
    speed: float = 0.2
    turn: float = 1.0

    def twist(self, axes: Sequence[float], buttons: Sequence[int]) -> Twist3:
        def axis(i: int) -> float:
            v = float(axes[i]) if 0 <= i < len(axes) else 0.0
            if not np.isfinite(v) or abs(v) < self.deadzone:
                return 0.0
            return float(np.clip(v, -1.0, 1.0))

        if self.deadman >= 0 and not (0 <= self.deadman < len(buttons) and buttons[self.deadman]):
            return STILL
        return (self.speed * axis(self.axis_x), self.speed * axis(self.axis_y), self.turn * axis(self.axis_yaw))
