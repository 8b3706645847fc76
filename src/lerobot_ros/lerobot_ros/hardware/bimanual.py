"""A pair of arms as one robot, the way LeRobot's `bi_so_follower` names it: each arm keeps its own namespace and
driver (`/left`, `/right`: robot_node, its watchdog and limits), and the pair is one joint vector with the
joints prefixed `left_` / `right_`, left first.

`ArmPair` is the logic of bimanual_node without ROS: the latest joint state of each arm (with its arrival time),
the pair's state (both arms, prefixed), a 2n command split into the two arms' commands, two teleop halves
joined into one pair command. A command goes out only when both arms are alive: one arm whose joint states
stopped for `stale_s` (an unplugged bus, a dead driver) stops the pair, since a bimanual task half done is
not safe; both arms then hold where they are (robot_node's watchdog). Non-finite values are refused whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lerobot_ros.conventions.joints import PAIR_SIDES

SIDES = PAIR_SIDES


class CommandRefused(ValueError):
    """A command not passed on to the drivers (an arm pair, LeKiwi); the message says why (one line)."""


@dataclass
class ArmSlot:
    names: tuple[str, ...] = ()
    position: np.ndarray | None = None
    stamp_ns: int = 0
    received_at: float | None = None
    teleop: np.ndarray | None = None
    teleop_at: float | None = None


@dataclass
class ArmPair:
    stale_s: float = 0.5
    arms: dict[str, ArmSlot] = field(default_factory=lambda: {s: ArmSlot() for s in SIDES})
    refused: int = 0
    last_refusal: str = ""

    # ----- state ---------------------------------------------------------------------------------------
    def on_state(self, side: str, names: Sequence[str], position, stamp_ns: int, now: float) -> None:
        slot = self.arms[side]
        slot.names, slot.position = tuple(names), np.asarray(position, dtype=np.float64)
        slot.stamp_ns, slot.received_at = int(stamp_ns), now

    def stale_arms(self, now: float) -> list[str]:
        """Arms with no joint state yet, or none for `stale_s`."""
        return [s for s, a in self.arms.items() if a.received_at is None or now - a.received_at > self.stale_s]

    def pair_state(self) -> tuple[list[str], np.ndarray, int] | None:
        """(prefixed names, positions, newest stamp) once both arms have reported; None before."""
        left, right = self.arms["left"], self.arms["right"]
        if left.position is None or right.position is None:
            return None
        names = [f"left_{n}" for n in left.names] + [f"right_{n}" for n in right.names]
        return names, np.concatenate([left.position, right.position]), max(left.stamp_ns, right.stamp_ns)

    # ----- commands ------------------------------------------------------------------------------------
    def split(self, values, now: float) -> tuple[np.ndarray, np.ndarray]:
        """A pair command (left joints, then right) as the two arms' commands; CommandRefused when it cannot go."""
        try:
            return self._split(np.asarray(values, dtype=np.float64), now)
        except CommandRefused as exc:
            self.refused += 1
            self.last_refusal = str(exc)
            raise

    def _split(self, values: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        stale = self.stale_arms(now)
        if stale:
            raise CommandRefused(
                f"no joint_states from the {' and '.join(stale)} arm for {self.stale_s:g} s: both arms hold"
            )
        n_left, n_right = len(self.arms["left"].names), len(self.arms["right"].names)
        if values.shape != (n_left + n_right,):
            raise CommandRefused(
                f"a pair command has {n_left + n_right} values (left {n_left}, then right {n_right}); got {values.size}"
            )
        if not np.all(np.isfinite(values)):
            bad = int(np.flatnonzero(~np.isfinite(values))[0])
            raise CommandRefused(f"value {bad} is {values[bad]}: not a number; command refused")
        return values[:n_left].copy(), values[n_left:].copy()

    def on_teleop(self, side: str, values, now: float) -> np.ndarray | None:
        """A leader's half; the pair command once both leaders have spoken within `stale_s`, else None."""
        slot = self.arms[side]
        slot.teleop, slot.teleop_at = np.asarray(values, dtype=np.float64), now
        halves = [self.arms[s] for s in SIDES]
        if any(h.teleop is None or h.teleop_at is None or now - h.teleop_at > self.stale_s for h in halves):
            return None
        return np.concatenate([h.teleop for h in halves if h.teleop is not None])
