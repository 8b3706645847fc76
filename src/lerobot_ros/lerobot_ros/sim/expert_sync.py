"""A scripted expert acting once per simulator step, on inputs that arrive on separate topics in any order.

A bridge publishes a step's episode status, joint state and environment state as three messages, and
topics are not ordered with respect to each other. `ExpertSync` collects one step's inputs and acts once
all of them are there, so the expert never mixes the previous step's cube with this step's joints, never
keeps a finished episode's phase for the first step of the next one (a new episode index resets it), and
sends exactly one action per step; it sends nothing while the episode is done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

STATUS, ENV_STATE, JOINTS = "status", "env_state", "joints"


@dataclass(frozen=True)
class StepStatus:
    """What the sync needs from an EpisodeStatus message."""

    episode_index: int
    done: bool


class ExpertSync:
    """Feeds an expert (has `reset()`) one step's inputs at a time; `act(inputs)` maps them to an action."""

    def __init__(self, expert, needs: tuple[str, ...], act: Callable[[dict], np.ndarray]):
        self.expert, self.needs, self._act = expert, needs, act
        self.episode_index = -1
        self.done = False
        self._inputs: dict = {}

    def offer(self, key: str, value) -> np.ndarray | None:
        """One input of the current step (STATUS: a StepStatus); the action once the step is complete, else None.
        ValueError from the expert propagates (the step's inputs are consumed either way)."""
        self._inputs[key] = value
        if any(k not in self._inputs for k in self.needs):
            return None
        inputs, self._inputs = self._inputs, {}
        status: StepStatus = inputs[STATUS]
        if status.episode_index != self.episode_index:
            self.episode_index = status.episode_index
            self.expert.reset()
        self.done = bool(status.done)
        if self.done:
            return None
        return self._act(inputs)
