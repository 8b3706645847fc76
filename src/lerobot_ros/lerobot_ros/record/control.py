"""The lerobot-record episode loop as a small state machine (no ROS, no clocks of its own).

Automatic mode (episode_time_s > 0): record for episode_time_s, reset for reset_time_s, repeat until
num_episodes are kept (0: no limit). Manual mode (episode_time_s == 0): episodes start and stop on
command. In both, keyboard commands work as in lerobot-record: `next` ends the episode early (kept) or
skips the rest of a reset, `rerecord` discards the current episode and records it again, `stop` keeps the
current episode and ends the session.

Every method returns the actions the caller must carry out, in order: `START`, `stop(outcome)`, `FINISH`
(`ControlAction` records; the caller dispatches on `.kind`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class ControlState(StrEnum):
    IDLE = "idle"
    RECORDING = "recording"
    RESETTING = "resetting"
    DONE = "done"


IDLE, RECORDING, RESETTING, DONE = ControlState
COMMANDS = ("next", "rerecord", "stop")


class ActionKind(StrEnum):
    START = "start"  # start an episode
    STOP = "stop"  # stop the current episode with `outcome`
    FINISH = "finish"  # the session is over (num_episodes kept, or `stop`)


class ControlAction(NamedTuple):
    kind: ActionKind
    outcome: str = ""  # STOP only: success | failure | discard


START = ControlAction(ActionKind.START)
FINISH = ControlAction(ActionKind.FINISH)


def stop(outcome: str) -> ControlAction:
    return ControlAction(ActionKind.STOP, outcome)


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

    def _enter(self, state: ControlState, now: float) -> None:
        self.state, self.since = state, now

    def _start(self, now: float) -> list[ControlAction]:
        self._enter(RECORDING, now)
        return [START]

    def _keep(self, now: float, outcome: str = "success") -> list[ControlAction]:
        self.kept += 1
        actions: list[ControlAction] = [stop(outcome)]
        if self.num_episodes and self.kept >= self.num_episodes:
            self._enter(DONE, now)
            return actions + [FINISH]
        if self.automatic and self.reset_time_s > 0:
            self._enter(RESETTING, now)
        elif self.automatic:
            return actions + self._start(now)
        else:
            self._enter(IDLE, now)
        return actions

    def tick(self, now: float) -> list[ControlAction]:
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

    def command(self, name: str, now: float) -> list[ControlAction]:
        """A keyboard command: next, rerecord or stop."""
        if name not in COMMANDS:
            raise ValueError(f"unknown command {name!r}; use one of {', '.join(COMMANDS)}")
        if self.state == DONE:
            return []
        if name == "stop":
            actions = [stop("success")] if self.state == RECORDING else []
            if self.state == RECORDING:
                self.kept += 1
            self._enter(DONE, now)
            return actions + [FINISH]
        if name == "next":
            if self.state == RECORDING:
                return self._keep(now)
            return self._start(now)  # idle, or skipping the rest of a reset
        # rerecord
        if self.state == RECORDING:
            actions: list[ControlAction] = [stop("discard")]
            if self.automatic and self.reset_time_s > 0:
                self._enter(RESETTING, now)
                return actions
            return actions + self._start(now)
        return []

    # Episodes started/stopped through the services keep the loop's bookkeeping right.
    def started(self, now: float) -> None:
        self._enter(RECORDING, now)

    def stopped(self, outcome: str, now: float) -> list[ControlAction]:
        if outcome == "discard":
            self._enter(RESETTING if self.automatic and self.reset_time_s > 0 else IDLE, now)
            return []
        return self._keep(now, outcome)[1:]
