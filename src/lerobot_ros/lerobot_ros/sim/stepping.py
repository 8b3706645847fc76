"""Episode bookkeeping and the two stepping modes of the bridge, as library code the tests reach without ROS.

lockstep: one env step per accepted action; sim time advances by exactly 1/fps per step (and per reset,
so stamps never repeat), which makes a seeded episode reproducible message for message.
realtime: the caller ticks at fps on the wall clock; each tick steps with the newest due action
(held when none is new; ticks without a fresh action are counted as late).

A lock serialises steps and resets: a reset that arrives during a step is served after that step.
The runner meters its real-time factor (`rtf`: sim seconds per wall second while stepping).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from lerobot_ros.codecs.time import NS_PER_S
from lerobot_ros.sim.actions import ActionRejected, ActionValidator
from lerobot_ros.sim.base import Observation, SimEnv
from lerobot_ros.sim.profiling import SimProfile
from lerobot_ros.sim.rtf import RealTimeFactor


@dataclass
class EpisodeState:
    episode_index: int = -1
    step: int = 0
    reward: float = 0.0
    sum_reward: float = 0.0
    max_reward: float = float("-inf")
    done: bool = False
    success: bool = False
    seed: int | None = None
    task: str = ""


@dataclass
class Frame:
    """What to publish after a reset or step: the observation, its sim-time stamp, and the episode state."""

    observation: Observation
    stamp_ns: int
    episode: EpisodeState
    terminated: bool = False
    truncated: bool = False


class SimRunner:
    """Owns one env: resets, validated steps, episode state and sim time."""

    def __init__(self, env: SimEnv, start_time_ns: int = 0, marked: bool = False):
        self.env = env
        #: episodes marked, not enforced: past its limit an episode is `done` but steps go on (like a real arm)
        self.marked = marked
        self.validator = ActionValidator(env.action_names)
        self.period_ns = int(round(NS_PER_S / env.fps))
        self.sim_time_ns = int(start_time_ns)
        self.episode = EpisodeState()
        self.last_frame: Frame | None = None
        self._start_frame: Frame | None = None  # the current episode's first frame (what idle_action holds)
        self.total_steps = 0
        self.rtf = RealTimeFactor(1.0 / env.fps, window=max(2, int(round(2 * env.fps))))  # a 2 s window
        self._lock = threading.Lock()
        self.profile = SimProfile()

    def _snapshot(self) -> EpisodeState:
        return EpisodeState(**vars(self.episode))

    def reset(self, seed: int | None = None, options: dict | None = None) -> Frame:
        """New episode (env built on the first call). Sim time moves one period so stamps stay unique."""
        with self._lock:
            t0 = time.perf_counter()
            obs = self.env.reset(seed=seed, options=options)
            self.rtf.restart()
            if self.profile.enabled:
                self.profile.reset_done(time.perf_counter() - t0)
            self.sim_time_ns += self.period_ns
            self.episode = EpisodeState(episode_index=self.episode.episode_index + 1, seed=seed, task=self.env.task)
            self.last_frame = Frame(obs, self.sim_time_ns, self._snapshot())
            self._start_frame = self.last_frame
            return self.last_frame

    def check_episode(self) -> None:
        """ActionRejected (counted) when no episode is running or it is done; counts nothing otherwise."""
        if self.episode.episode_index < 0:
            raise self.validator.reject("no_episode", "no episode running: call the reset_episode service first")
        if self.episode.done and not self.marked:
            raise self.validator.reject(
                "episode_done", f"episode {self.episode.episode_index} is done: call reset_episode to start another"
            )

    def check(self, values) -> np.ndarray:
        """Validate an action without stepping (ActionRejected, counted, if bad or no episode is running)."""
        self.check_episode()
        return self.validator.check(values)

    def step(self, values, prechecked: bool = False) -> Frame:
        """One env step with `values` (validated here unless `prechecked`)."""
        with self._lock:
            self.check_episode()  # under the lock: the episode may have ended while this action waited
            action = values if prechecked else self.validator.check(values)
            t0 = time.perf_counter()
            result = self.env.step(action)
            t1 = time.perf_counter()
            self.rtf.step(time.monotonic(), t1 - t0)
            if self.profile.enabled:
                self.profile.step_done(t1 - t0, getattr(self.env, "last_physics_s", None))
            self.sim_time_ns += self.period_ns
            self.total_steps += 1
            ep = self.episode
            ep.step += 1
            ep.reward = result.reward
            ep.sum_reward += result.reward
            ep.max_reward = max(ep.max_reward, result.reward)
            ep.success = ep.success or result.success
            truncated = result.truncated or ep.step >= self.env.max_episode_steps
            ep.done = bool(result.terminated or truncated)
            self.last_frame = Frame(
                result.observation, self.sim_time_ns, self._snapshot(), result.terminated, truncated
            )
            return self.last_frame

    def close(self) -> None:
        """Free the env once the step or reset in progress (if any) is over."""
        with self._lock:
            self.env.close()

    def idle_action(self) -> np.ndarray:
        """What realtime mode steps before any action arrived: hold the joints where the episode began (joint-space
        envs) or stay put. One target for the whole wait: re-taken from the measured joints each tick, the position
        actuators settle a little lower each step under gravity and the arm sags."""
        if self.env.state_names == self.env.action_names and self._start_frame is not None:
            return self._start_frame.observation.state.copy()
        return np.zeros(self.env.action_dim)


class ActionSchedule:
    """Realtime mode's pending actions, each with the wall time (ns) from which it applies.

    `commands` replace everything with one action due now; a trajectory replaces everything with its
    points, point i due at receipt + time_from_start_i - period (the first point is for the next tick).
    A tick at which no new action became due steps with the held one and counts as late.
    """

    def __init__(self, period_ns: int):
        self.period_ns = period_ns
        self._pending: deque[tuple[int, np.ndarray]] = deque()
        self._held: np.ndarray | None = None
        self.late_ticks = 0

    def clear(self) -> None:
        self._pending.clear()
        self._held = None

    def command(self, action: np.ndarray, now_ns: int) -> None:
        self._pending = deque([(now_ns, action)])

    def trajectory(self, times_from_start_ns, actions, now_ns: int) -> None:
        self._pending = deque((now_ns + int(t) - self.period_ns, a) for t, a in zip(times_from_start_ns, actions))

    def latest(self) -> np.ndarray | None:
        """The newest action given (pending or held), None before any: what a part's command edits."""
        return self._pending[-1][1] if self._pending else self._held

    def take(self, now_ns: int) -> np.ndarray | None:
        """The action for the tick at `now_ns`: the newest due one, else the held one (None before any)."""
        fresh = False
        while self._pending and self._pending[0][0] <= now_ns:
            self._held = self._pending.popleft()[1]
            fresh = True
        if not fresh and self._held is not None:
            self.late_ticks += 1
        return self._held


def rejected_summary(validator: ActionValidator) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(validator.rejected.items())) or "none"


__all__ = ["ActionRejected", "ActionSchedule", "EpisodeState", "Frame", "SimRunner", "rejected_summary"]
