"""Human corrections over a running policy, the way LeRobot's DAgger rollout strategy does them.

Three phases and two events, with LeRobot's transition table (`lerobot.rollout.strategies.dagger`):
AUTONOMOUS --pause_resume--> PAUSED --correction--> CORRECTING --correction--> PAUSED --pause_resume--> AUTONOMOUS.
The arbiter sits between the policy's and the teleoperator's joint targets and the driver's `commands`:

- AUTONOMOUS: the policy's targets pass through (intervention False); on resume the arm slides from the held
  target to the policy's, `max_delta` per tick, so a policy whose chunk starts elsewhere does not jerk it;
- PAUSED: the last target sent is held (the robot holds its pose, the policy's output is dropped);
- CORRECTING: the teleoperator's targets drive the arm (intervention True). A leader arm here is not
  actuated (LeRobot's actuated-leader path needs servo feedback on the leader), so the handover slides the
  follower from its held target to the teleop's pose, no joint moving more than `max_delta` per tick, before
  the teleop's targets pass through; going back to PAUSED holds the last target, so neither handover jumps.

A correction asked for with no teleop target heard within `teleop_timeout_s` is refused with the reason and
the arm stays PAUSED (the policy was already paused by the first event).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


class Phase(enum.Enum):
    AUTONOMOUS = "autonomous"
    PAUSED = "paused"
    CORRECTING = "correcting"


class Event(enum.Enum):
    PAUSE_RESUME = "pause_resume"
    CORRECTION = "correction"


TRANSITIONS: dict[tuple[Phase, Event], Phase] = {
    (Phase.AUTONOMOUS, Event.PAUSE_RESUME): Phase.PAUSED,
    (Phase.PAUSED, Event.PAUSE_RESUME): Phase.AUTONOMOUS,
    (Phase.PAUSED, Event.CORRECTION): Phase.CORRECTING,
    (Phase.CORRECTING, Event.CORRECTION): Phase.PAUSED,
}


@dataclass(frozen=True)
class Transition:
    accepted: bool
    phase: Phase
    reason: str = ""


@dataclass(frozen=True)
class Output:
    """What the arbiter sends this tick: the target (None: nothing to send yet) and whether a person drives."""

    target: np.ndarray | None
    intervention: bool
    phase: Phase
    sliding: bool = False


class Takeover:
    """Policy / person arbitration with jump-free handovers; pure state, fed with timestamps (seconds)."""

    def __init__(self, max_delta: float | np.ndarray = 0.05, teleop_timeout_s: float = 0.5):
        self.max_delta = np.asarray(max_delta, dtype=np.float64)
        if np.any(self.max_delta <= 0):
            raise ValueError("max_delta must be > 0 (radians per tick)")
        self.teleop_timeout_s = float(teleop_timeout_s)
        self.phase = Phase.AUTONOMOUS
        self.policy: np.ndarray | None = None
        self.teleop: np.ndarray | None = None
        self.teleop_at: float | None = None
        self.last: np.ndarray | None = None  # the last target sent
        self.size: int | None = None  # joints, from the first target heard
        self._sliding = False

    # ---- inputs -------------------------------------------------------------------------------
    def on_policy(self, target) -> None:
        """ValueError (nothing changed) for a target of another size than the first one heard."""
        self.policy = self._vector(target, "the policy's target")

    def on_teleop(self, target, now: float) -> None:
        self.teleop = self._vector(target, "the teleop's target")
        self.teleop_at = now

    def _vector(self, target, what: str) -> np.ndarray:
        v = np.asarray(target, dtype=np.float64).reshape(-1)
        if v.size == 0 or (self.size is not None and v.size != self.size):
            raise ValueError(
                f"{what} has {v.size} values, the arm {self.size or 'more'}: dropped "
                "(are the policy and the teleop for the same arm?)"
            )
        self.size = v.size
        return v

    def teleop_connected(self, now: float) -> bool:
        return self.teleop_at is not None and now - self.teleop_at <= self.teleop_timeout_s

    def request(self, event: Event | str, now: float) -> Transition:
        """Apply an event; refused (with why) when the phase has no such transition or no teleop is heard."""
        event = Event(event) if isinstance(event, str) else event
        nxt = TRANSITIONS.get((self.phase, event))
        if nxt is None:
            hint = {Phase.AUTONOMOUS: "pause first (pause_resume)", Phase.CORRECTING: "end the correction first"}
            return Transition(
                False,
                self.phase,
                f"{event.value} is not possible while {self.phase.value}"
                + (f": {hint[self.phase]}" if self.phase in hint else ""),
            )
        if nxt is Phase.CORRECTING and not self.teleop_connected(now):
            heard = (
                "no teleop target yet"
                if self.teleop_at is None
                else f"no teleop target for {now - self.teleop_at:.1f} s (limit {self.teleop_timeout_s:g} s)"
            )
            return Transition(
                False,
                self.phase,
                f"correction refused: {heard}; start a teleop node publishing the "
                "teleop commands topic. The policy stays paused",
            )
        self.phase = nxt
        self._sliding = nxt in (Phase.CORRECTING, Phase.AUTONOMOUS) and self.last is not None
        if nxt is Phase.AUTONOMOUS:
            self.policy = None  # a target from before the pause is stale: wait for the policy's next one
        return Transition(True, nxt)

    # ---- output -------------------------------------------------------------------------------
    def tick(self, now: float) -> Output:
        if self.phase is Phase.AUTONOMOUS:
            target = self._slide(self.policy) if self.policy is not None else self.last
        elif self.phase is Phase.PAUSED:
            target = self.last
        else:
            target = self._correcting(now)
        if target is not None:
            self.last = np.array(target, dtype=np.float64)
        return Output(
            None if self.last is None else self.last.copy(),
            self.phase is Phase.CORRECTING,
            self.phase,
            self._sliding and self.phase is not Phase.PAUSED,
        )

    def _correcting(self, now: float) -> np.ndarray | None:
        if self.teleop is None or not self.teleop_connected(now):
            return self.last  # the teleop went silent mid-correction: hold
        return self._slide(self.teleop)

    def _slide(self, goal: np.ndarray) -> np.ndarray:
        """`goal` itself once the handover slide has reached it; until then one max_delta step towards it."""
        if not self._sliding or self.last is None:
            return goal
        target = self.last + np.clip(goal - self.last, -self.max_delta, self.max_delta)
        if np.allclose(target, goal):
            self._sliding = False
        return target
