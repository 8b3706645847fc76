"""LeKiwi as one robot vector, the way LeRobot's `lekiwi` robot names it: the arm's six joints, then the base's
body velocity (`x.vel`, `y.vel`, `theta.vel`).

`RobotJoin` is the logic of lekiwi_node's `robot` node without ROS. State: the arm's latest joint positions
(rad) and the base's latest measured twist (m/s, m/s, rad/s), one 9-vector in ROS units (the lekiwi contract
converts: degrees, 0..100 gripper, deg/s). Commands: a 9-vector split into the arm's goals and a Twist for the
base; an operator's halves (a leader arm's goals, a teleop Twist) joined into one 9-vector so a recorder sees
one action whoever drives. A part of the robot whose state stopped for `stale_s` stops the whole command
(the arm holds by its watchdog, the base stops by its command timeout); NaN is refused whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lerobot_ros.hardware.bimanual import CommandRefused
from lerobot_ros.mobile.omni import BaseVelocity

ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
#: LeRobot's lekiwi state/action names, in its order
LEKIWI_NAMES = tuple(f"arm_{j}.pos" for j in ARM_JOINTS) + ("x.vel", "y.vel", "theta.vel")
PARTS = ("arm", "base")


@dataclass
class _Part:
    values: np.ndarray | None = None
    received_at: float | None = None
    operator: np.ndarray | None = None
    operator_at: float | None = None


@dataclass
class RobotJoin:
    stale_s: float = 0.5
    parts: dict[str, _Part] = field(default_factory=lambda: {p: _Part() for p in PARTS})
    refused: int = 0
    last_refusal: str = ""

    def on_arm(self, names: Sequence[str], positions, now: float) -> None:
        """The arm's joint_states (by name: any order, extra joints ignored)."""
        by_name = dict(zip(names, positions))
        missing = [j for j in ARM_JOINTS if j not in by_name]
        if missing:
            return  # not this arm's message
        self._set("arm", np.array([by_name[j] for j in ARM_JOINTS], dtype=np.float64), now)

    def on_base(self, v: BaseVelocity, now: float) -> None:
        """The base's measured twist (odom)."""
        self._set("base", np.array([v.x, v.y, v.wz_radps]), now)

    def _set(self, part: str, values: np.ndarray, now: float) -> None:
        self.parts[part].values, self.parts[part].received_at = values, now

    def stale(self, now: float) -> list[str]:
        return [p for p, s in self.parts.items() if s.received_at is None or now - s.received_at > self.stale_s]

    def state(self) -> np.ndarray | None:
        """The 9-vector in ROS units once both parts have reported; None before."""
        arm, base = self.parts["arm"].values, self.parts["base"].values
        return None if arm is None or base is None else np.concatenate([arm, base])

    def split(self, values, now: float) -> tuple[np.ndarray, BaseVelocity]:
        """A robot command (arm rad x6, x m/s, y m/s, yaw rad/s) as the arm's goals and the base's velocity."""
        try:
            v = np.asarray(values, dtype=np.float64)
            stale = self.stale(now)
            if stale:
                raise CommandRefused(f"no state from the {' and '.join(stale)} for {self.stale_s:g} s: the robot holds")
            if v.shape != (len(LEKIWI_NAMES),):
                raise CommandRefused(
                    f"a LeKiwi command has {len(LEKIWI_NAMES)} values (arm 6, then x, y, yaw); got {v.size}"
                )
            if not np.all(np.isfinite(v)):
                bad = int(np.flatnonzero(~np.isfinite(v))[0])
                raise CommandRefused(f"value {bad} ({LEKIWI_NAMES[bad]}) is {v[bad]}: not a number; command refused")
        except CommandRefused as exc:
            self.refused += 1
            self.last_refusal = str(exc)
            raise
        return v[:6].copy(), BaseVelocity.from_twist(v[6], v[7], v[8])

    def on_operator(self, part: str, values, now: float) -> np.ndarray | None:
        """An operator's half (arm goals x6, or a twist x, y, yaw); the joined command once both are fresh."""
        slot = self.parts[part]
        slot.operator, slot.operator_at = np.asarray(values, dtype=np.float64), now
        halves = [self.parts[p] for p in PARTS]
        if any(h.operator is None or h.operator_at is None or now - h.operator_at > self.stale_s for h in halves):
            return None
        return np.concatenate([h.operator for h in halves if h.operator is not None])
