"""The sim bridge's logic without ROS: open the simulator, route actions by mode, reset, tick, report.

sim_bridge_node turns messages into calls on `SimBridge` and the `Frame`s it hands to `publish` back into
messages; everything that decides something (lockstep or realtime, which action a tick steps, when a
trajectory point is due, what a rejection says, what the diagnostics report) lives here, so tests reach it
without DDS.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lerobot_ros.sim.actions import ActionRejected
from lerobot_ros.sim.base import RenderSettings, SimEnv
from lerobot_ros.sim.factory import make_sim
from lerobot_ros.sim.gl import ensure_offscreen_gl
from lerobot_ros.sim.stepping import ActionSchedule, Frame, SimRunner, rejected_summary

MODES = ("lockstep", "realtime")


def open_sim(env: str, task: str, render: RenderSettings, *, cameras=(), **options) -> SimEnv:
    """make_sim, then everything that can fail fast before the first reset (SimStartupError / ValueError).

    `cameras` may hold "none" entries (an empty list from the command line carries no type and is dropped by
    rcl, so [none] means no camera); `options` are make_sim's keywords.
    """
    cameras = [c for c in cameras if c and c.lower() != "none"]
    sim = make_sim(env, task, render, cameras=cameras, **options)
    sim.preflight()
    sim.prefetch()  # imports for the first reset's build, in the background (nothing is built yet)
    ensure_offscreen_gl()
    return sim


def parse_reset_options(text: str) -> dict | None:
    """The reset service's `options` field: '' = none, else a JSON object (ValueError otherwise)."""
    if not text.strip():
        return None
    options = json.loads(text)  # json.JSONDecodeError is a ValueError
    if not isinstance(options, dict):
        raise ValueError("options must be a JSON object")
    return options


def describe_rejection(exc: ActionRejected, runner: SimRunner) -> tuple[str, bool]:
    """The log line for a rejected action and whether it was expected.

    An action racing the end of an episode is expected in closed loop (the policy acted on the last
    observation before it saw episode_status.done): logged quietly; anything else is a warning.
    """
    text = f"rejected action: {exc} (rejected so far: {rejected_summary(runner.validator)})"
    return text, exc.reason == "episode_done"


@dataclass(frozen=True)
class BridgeReport:
    """What the bridge puts on /diagnostics: `slow` (realtime below 0.95 real time) is a warning."""

    slow: bool
    message: str
    values: dict[str, str]


class SimBridge:
    """One simulator driven by actions: lockstep steps per action, realtime steps per `tick()`.

    `publish(frame)` is called after every step; `rejected(exc)` for every action that was not stepped
    (already counted by the runner's validator). `clock_ns` is the wall clock realtime mode schedules on.
    """

    def __init__(
        self,
        sim: SimEnv,
        mode: str,
        publish: Callable[[Frame], None],
        rejected: Callable[[ActionRejected], None],
        clock_ns: Callable[[], int] = time.monotonic_ns,
        episode_limit: str = "enforced",
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if episode_limit == "marked" and not sim.steps_past_limit:
            raise ValueError(
                f"episode_limit:=marked needs a simulator that can step past its episode limit (the SO-101 twin); "
                f"{sim.kind} cannot"
            )
        self.sim, self.mode = sim, mode
        self.publish, self.rejected, self.clock_ns = publish, rejected, clock_ns
        self.runner = SimRunner(sim, marked=episode_limit == "marked")
        self.schedule = ActionSchedule(self.runner.period_ns)
        self.closed = False
        self.last_reset_s = 0.0
        #: part -> (indices into the action, the part's own names): SimEnv.parts, each arm of a pair
        self.parts = {
            part: (
                np.array([sim.action_names.index(n) for n in names]),
                tuple(n.removeprefix(f"{part}_") for n in names),
            )
            for part, names in sim.parts.items()
        }

    @property
    def started(self) -> bool:
        return self.runner.episode.episode_index >= 0

    def describe(self, render: RenderSettings) -> str:
        """The start-up log line."""
        sim = self.sim
        return (
            f"{sim.kind} bridge ({self.mode}): task {sim.task!r}, {sim.fps:g} fps, action {list(sim.action_names)}, "
            f"cameras {sorted(sim.cameras)} at {render.width}x{render.height}, "
            f"shadows {'on' if render.shadows else 'off'}"
        )

    def reset(self, seed: int | None, options: dict | None = None) -> Frame:
        """A new episode (seed None or < 0: unseeded); pending realtime actions are dropped.

        The caller publishes the frame (after the task); `last_reset_s` is how long the reset took.
        """
        t0 = time.monotonic()
        frame = self.runner.reset(None if seed is None or seed < 0 else int(seed), options)
        self.schedule.clear()
        self.last_reset_s = time.monotonic() - t0
        return frame

    def malformed(self, text: str) -> None:
        """An action message that could not be decoded: counted and reported as rejected."""
        self.rejected(self.runner.validator.reject("malformed", text))

    def command(self, values) -> None:
        """lockstep: step now and publish; realtime: due at once, stepped by the next tick."""
        try:
            if self.mode == "lockstep":
                self.publish(self.runner.step(values))
            else:
                self.schedule.command(self.runner.check(values), self.clock_ns())
        except ActionRejected as exc:
            self.rejected(exc)

    def part_command(self, part: str, values) -> None:
        """A part's own command (e.g. `left/commands`: one arm of a pair): its values replace its share of the newest
        action (before any: where the episode began), and that action is due at once. Realtime mode only: in
        lockstep each half would step the simulator on its own."""
        index, names = self.parts[part]
        validator = self.runner.validator
        try:
            if self.mode == "lockstep":
                raise validator.reject(
                    "part_in_lockstep", f"{part}/commands drives realtime mode only; in lockstep send the whole action"
                )
            v = np.asarray(values, dtype=np.float64).reshape(-1)
            if v.size != len(index):
                raise validator.reject(
                    "wrong_length", f"{part}/commands has {v.size} values, expected {len(index)} ({', '.join(names)})"
                )
            self.runner.check_episode()
            base = self.schedule.latest()
            action = (self.runner.idle_action() if base is None else base).copy()
            action[index] = v
            self.schedule.command(self.runner.validator.check(action), self.clock_ns())
        except ActionRejected as exc:
            self.rejected(exc)

    def trajectory(self, joint_names, times_ns, positions) -> None:
        """Points in `joint_names` order (reordered to the action's; '' names = already in order).

        lockstep: one step per point, published after each, stopping at the first rejected step;
        realtime: every point scheduled on its time_from_start. A bad point rejects the whole trajectory.
        """
        try:
            actions = [self.runner.validator.check_named(joint_names, row) for row in positions]
            if not actions:
                return
            if self.mode == "lockstep":
                for action in actions:
                    self.publish(self.runner.step(action, prechecked=True))
            else:
                self.runner.check_episode()  # the points are checked (and counted) above
                self.schedule.trajectory(times_ns, actions, self.clock_ns())
        except ActionRejected as exc:
            self.rejected(exc)

    def tick(self) -> str | None:
        """Realtime mode's step: the newest due action, else the held one, else the idle action.

        Returns the runner's slow warning (once, when the real-time factor falls behind), else None.
        Does nothing before the first episode, after the episode is done (unless episodes are marked) and once
        closed.
        """
        ep = self.runner.episode
        if self.closed or ep.episode_index < 0 or (ep.done and not self.runner.marked):
            return None
        action = self.schedule.take(self.clock_ns())
        if action is None:  # no action yet this episode
            action = self.runner.idle_action()
        self.publish(self.runner.step(action, prechecked=True))
        return self.runner.rtf.slow_warning()

    @property
    def counters(self) -> dict:
        return {
            "accepted": self.runner.validator.accepted,
            "rejected": dict(self.runner.validator.rejected),
            "steps": self.runner.total_steps,
            "late_ticks": self.schedule.late_ticks,
        }

    def report(self) -> BridgeReport:
        rtf = self.runner.rtf
        rtf_values = rtf.values()
        # rtf.current is None with no gaps or a zero wall time over them: nothing measured is not slow
        slow = self.mode == "realtime" and rtf.samples >= 30 and rtf.current is not None and rtf.current < 0.95
        values = {
            **rtf_values,
            "mode": self.mode,
            **{k: str(v) for k, v in self.counters.items()},
            **{k: str(v) for k, v in getattr(self.sim, "render_info", {}).items()},
        }
        return BridgeReport(slow, f"real-time factor {rtf_values['real_time_factor']} ({self.mode})", values)

    def close(self) -> None:
        """No more ticks; the simulator is freed after the step in progress (if any). Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.runner.close()


__all__ = ["MODES", "BridgeReport", "SimBridge", "describe_rejection", "open_sim", "parse_reset_options"]
