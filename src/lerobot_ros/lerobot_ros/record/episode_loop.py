"""The lerobot-record episode loop as a small state machine (no ROS, no clocks of its own).

Automatic mode (episode_time_s > 0): record for episode_time_s, reset for reset_time_s, repeat until
num_episodes are kept (0: no limit). Manual mode (episode_time_s == 0): episodes start and stop on
command. In both, keyboard commands work as in lerobot-record: `next` ends the episode early (kept) or
skips the rest of a reset, `rerecord` discards the current episode and records it again, `stop` keeps the
current episode and ends the session.

Every method returns the actions the caller must carry out, in order: `Start()`, `Stop(outcome)`,
`Finish()` (typed, so a caller dispatches with `match` and a typo is an error, not a silent no-op).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class State(StrEnum):
    IDLE = "idle"
    RECORDING = "recording"
    RESETTING = "resetting"
    DONE = "done"


IDLE, RECORDING, RESETTING, DONE = State.IDLE, State.RECORDING, State.RESETTING, State.DONE


class Command(StrEnum):
    """The keyboard commands (episode_keyboard sends their names on `episode_control`)."""

    NEXT = "next"
    RERECORD = "rerecord"
    STOP = "stop"

    @classmethod
    def parse(cls, name: str | Command) -> Command:
        try:
            return cls(name)
        except ValueError:
            raise ValueError(f"unknown command {name!r}; use one of {', '.join(COMMANDS)}") from None


COMMANDS = tuple(c.value for c in Command)


@dataclass(frozen=True)
class Start:
    """Open the next episode."""


@dataclass(frozen=True)
class Stop:
    """Close the current episode with `outcome` (success | failure | discard)."""

    outcome: str


@dataclass(frozen=True)
class Finish:
    """The session is over (num_episodes kept, or the stop key)."""


Action = Start | Stop | Finish


class EpisodeControl:
    def __init__(self, episode_time_s: float = 0.0, reset_time_s: float = 0.0, num_episodes: int = 0):
        if episode_time_s < 0 or reset_time_s < 0 or num_episodes < 0:
            raise ValueError("episode_time_s, reset_time_s and num_episodes must be >= 0")
        self.episode_time_s = float(episode_time_s)
        self.reset_time_s = float(reset_time_s)
        self.num_episodes = int(num_episodes)
        self.state = IDLE
        self.kept = 0  # episodes closed as success or failure
        self.since = 0.0  # when the current state began (caller's clock, seconds)

    @property
    def automatic(self) -> bool:
        return self.episode_time_s > 0

    def _enter(self, state: State, now: float) -> None:
        self.state, self.since = state, now

    def _start(self, now: float) -> list[Action]:
        self._enter(RECORDING, now)
        return [Start()]

    def _keep(self, now: float, outcome: str = "success") -> list[Action]:
        self.kept += 1
        actions: list[Action] = [Stop(outcome)]
        if self.num_episodes and self.kept >= self.num_episodes:
            self._enter(DONE, now)
            return actions + [Finish()]
        if self.automatic and self.reset_time_s > 0:
            self._enter(RESETTING, now)
        elif self.automatic:
            return actions + self._start(now)
        else:
            self._enter(IDLE, now)
        return actions

    def tick(self, now: float) -> list[Action]:
        """Advance the automatic loop; call periodically."""
        if not self.automatic:
            return []
        if self.state == IDLE:
            return self._start(now)
        if self.state == RECORDING and now - self.since >= self.episode_time_s:
            return self._keep(now)
        if self.state == RESETTING and now - self.since >= self.reset_time_s:
            return self._start(now)
        return []

    def command(self, name: str | Command, now: float) -> list[Action]:
        """A keyboard command: next, rerecord or stop (ValueError for anything else)."""
        command = Command.parse(name)
        if self.state == DONE:
            return []
        if command is Command.STOP:
            actions: list[Action] = [Stop("success")] if self.state == RECORDING else []
            if self.state == RECORDING:
                self.kept += 1
            self._enter(DONE, now)
            return actions + [Finish()]
        if command is Command.NEXT:
            if self.state == RECORDING:
                return self._keep(now)
            return self._start(now)  # idle, or skipping the rest of a reset
        # rerecord
        if self.state == RECORDING:
            actions = [Stop("discard")]
            if self.automatic and self.reset_time_s > 0:
                self._enter(RESETTING, now)
                return actions
            return actions + self._start(now)
        return []

    # Episodes started/stopped through the services (or ended by a writer error) keep the loop's bookkeeping right.
    def started(self, now: float) -> None:
        self._enter(RECORDING, now)

    def end(self, now: float) -> None:
        """The session cannot go on (the disk is full, an episode cannot start): no more episodes."""
        self._enter(DONE, now)

    def stopped(self, outcome: str, now: float) -> list[Action]:
        if outcome == "discard":
            self._enter(RESETTING if self.automatic and self.reset_time_s > 0 else IDLE, now)
            return []
        return self._keep(now, outcome)[1:]
