"""One control tick, without ROS: gate on fresh observations, run the policy (inline or via the inference
thread), make the action safe, and say what happened. `policy_node` only moves data between this and ROS.

The policy is a `ChunkBackend` (policy.backend): the in-process `PolicyRunner`, or a remote policy server,
which runs through the inference thread only (the tick never waits on the network).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from lerobot_ros.policy.async_inference import AsyncInference, AsyncInferenceConfig
from lerobot_ros.policy.backend import ChunkBackend, InlineBackend, RtcBackend
from lerobot_ros.policy.rtc import enable_rtc
from lerobot_ros.policy.safety import SafetyFilter, staleness_reason
from lerobot_ros.policy.stats import RollingStats

ON_STALE = ("hold", "nothing")


@dataclass
class TickResult:
    status: str  # ok | held | gated | dry | error | dropped | stopped
    action: np.ndarray | None = None  # safe (D,) action to publish this tick (LeRobot units)
    trajectory: np.ndarray | None = None  # safe (T, D) chunk to publish as a trajectory this tick
    trajectory_offset_ticks: int = 0  # point i of `trajectory` is meant for tick (this + offset + i)
    plan: np.ndarray | None = None  # the policy's latest predicted chunk (for rviz), when new
    reason: str | None = None
    dry: bool = False  # async: no queued action for this tick
    depth: int | None = None  # actions still queued after this tick
    inference_ms: float | None = None


class PolicyController:
    """Holds the tick state: safety filter, last action, async worker, counters and latency stats."""

    def __init__(
        self,
        runner: ChunkBackend,
        safety: SafetyFilter | None = None,
        max_age_ns: Mapping[str, int] | None = None,
        on_stale: str = "hold",
        async_inference: AsyncInferenceConfig | None = None,
        trajectory_mode: bool = False,
    ):
        if on_stale not in ON_STALE:
            raise ValueError(f"on_stale must be one of {ON_STALE}, got {on_stale!r}")
        self.runner = runner
        self.safety = safety or SafetyFilter()
        self.on_stale = on_stale
        self.trajectory_mode = trajectory_mode
        self.n_action_steps = runner.loaded.n_action_steps
        self.worker: AsyncInference | None = None
        if async_inference is None and not runner.steps_inline:
            raise ValueError(f"the {runner.name} backend yields whole chunks: it runs with async inference only")
        if async_inference is not None:
            n_obs = getattr(runner.loaded.config, "n_obs_steps", 1) or 1
            if n_obs > 1:
                raise ValueError(
                    f"async inference sends one observation per inference (as LeRobot's policy server does), but this "
                    f"{runner.loaded.type} policy uses n_obs_steps={n_obs}; set async_inference:=false"
                )
            # (frame, task) -> chunk; with rtc, (frame, task, **guidance) -> (chunk, raw): see AsyncInference
            predict: Callable[..., Any] = runner.predict_chunk
            if async_inference.rtc is not None:
                if not runner.rtc_in_process:
                    raise ValueError(
                        f"chunking:=rtc runs LeRobot's real-time chunking in process; backend {runner.name} "
                        "does not support it: use chunking:=aggregate or backend:=local"
                    )
                enable_rtc(runner.loaded, async_inference.rtc)  # ValueError for a policy without RTC
                predict = cast(RtcBackend, runner).predict_chunk_rtc  # rtc_in_process, checked above
            self.worker = AsyncInference(predict, runner.loaded.chunk_length, async_inference)
        self.max_age_ns = max_age_ns or {}
        self._seen_chunks = 0
        self.last_action: np.ndarray | None = None
        self.inference_ms = RollingStats()
        self.counts = dict.fromkeys(("ticks", "ok", "held", "gated", "dry", "error", "dropped", "stopped"), 0)
        self.last_reason: str | None = None
        self.last_error: str | None = None
        self.last_status: str | None = None  # of the latest tick
        self.discards = 0  # gaps after which queued actions were thrown away (see _discard_queued)
        self._queue_fresh = True  # nothing queued from before the current gap
        self._trajectory: tuple[int, np.ndarray] | None = None  # trajectory mode: (first tick, points) of the last sent

    @property
    def is_async(self) -> bool:
        return self.worker is not None

    @property
    def chunking(self) -> str:
        """How chunks hand over: switch (inline, the policy's own queue), aggregate or rtc (async)."""
        if self.worker is None:
            return "switch"
        return self.worker.config.chunking

    @property
    def max_age_ns(self) -> dict[str, int]:
        return self._max_age_ns

    @max_age_ns.setter
    def max_age_ns(self, value: Mapping[str, int]) -> None:
        """Per-stream staleness limits: for the tick's frame and for a chunk arriving from inference."""
        self._max_age_ns = dict(value)
        if self.worker is not None:
            self.worker.max_age_ns = self._max_age_ns

    @property
    def backend_name(self) -> str:
        return self.runner.name

    def backend_problem(self) -> str | None:
        """Why the backend cannot give chunks now (a remote server down), None when it can."""
        return self.runner.problem()

    @property
    def inference_stats(self) -> RollingStats:
        """Inference latency (ms): measured inline, or in the inference thread in async mode."""
        return self.worker.latency_ms if self.worker is not None else self.inference_ms

    def reset(self) -> None:
        """New episode: clear queues, policy state, safety history."""
        if self.worker is not None:
            self.worker.reset()
            self.worker.wait_idle(30.0)
        self.runner.reset()
        self.safety.reset()
        self.last_action = None
        self._trajectory = None
        self._seen_chunks = self.worker.chunks if self.worker else 0

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
        self.runner.close()

    def _discard_queued(self) -> bool:
        """A gated tick: forget the actions queued from earlier observations (and any inference in flight), so
        that after a gap (link down, camera lost) the robot never executes an action computed before it; the
        next fresh frame starts a new chunk. Once per gap."""
        if self._queue_fresh:
            return False
        self._queue_fresh = True
        self.discards += 1
        if self.worker is not None:
            self.worker.reset()  # does not wait: a result still in flight is dropped when it lands
        else:
            cast(InlineBackend, self.runner).discard_queue()  # no worker: the backend steps inline (__init__)
        return True

    def _count(self, result: TickResult) -> TickResult:
        self.counts["ticks"] += 1
        self.counts[result.status] += 1
        self.last_status = result.status
        if result.status != "ok":
            self.last_reason = result.reason
        return result

    def _fallback(self, status: str, reason: str, **extra) -> TickResult:
        """Gated/dry/error ticks: repeat the last command (hold) or publish nothing."""
        action = self.last_action if (self.on_stale == "hold" and status in ("gated", "dry")) else None
        if action is not None and status == "gated":
            status = "held"
        return TickResult(status=status, action=action, reason=reason, **extra)

    def stopped(self, tick: int) -> TickResult:
        """A tick while ~/stop holds the policy: a gap like any other, so what was queued before it is thrown away
        (after ~/start the first action comes from a frame seen after the stop, not from the old plan). In
        trajectory mode the first stopped tick also replaces the trajectory the controller runs with a hold."""
        reason = "stopped (call ~/start)"
        if self._discard_queued() and self.trajectory_mode and self._trajectory is not None:
            return self._count(self._hold_trajectory(tick, reason, status="stopped"))
        return self._count(TickResult(status="stopped", reason=reason))

    def step(
        self,
        tick: int,
        values: Mapping[str, np.ndarray | None],
        ages_ns: Mapping[str, int | None],
        task: str = "",
        not_ready: list[str] | None = None,
    ) -> TickResult:
        """One tick on a frame (`values` per observation feature, None when missing; `ages_ns` per stream)."""
        reason = staleness_reason(ages_ns, self.max_age_ns)
        # A stale stream discards what was queued before the gap. A frame only off its alignment tolerance does
        # too inline (the policy's queue is not indexed by tick), not in async mode: there the queue drops the
        # ticks that passed by itself, and discarding each time would starve a loaded machine of chunks.
        discarded = False
        if reason is not None or (not_ready and self.worker is None):
            discarded = self._discard_queued()
        if reason is None and not_ready:
            reason = "; ".join(not_ready)
        if reason is not None:
            if discarded and self.trajectory_mode and self.on_stale == "hold":
                return self._count(self._hold_trajectory(tick, reason))
            return self._count(self._fallback("gated", reason))
        self._queue_fresh = False
        if self.worker is not None:
            return self._count(self._step_async(tick, values, task, ages_ns))
        return self._count(self._step_sync(tick, values, task))

    def _hold_trajectory(self, tick: int, reason: str, status: str = "held") -> TickResult:
        """Trajectory mode, first tick of a gap: the controller would run the rest of the trajectory it has (planned
        on frames from before the gap); a one-point trajectory at what it commands now replaces it: the arm holds."""
        if self._trajectory is None:
            return self._fallback("gated", reason)
        here = self._commanded_at(max(tick, self._trajectory[0]))  # one that starts later: hold at its first point
        assert here is not None  # a trajectory was sent and the tick is not before its start
        self._trajectory = (tick, here[None, :])
        self.safety.last = here
        return TickResult(status=status, trajectory=here[None, :], reason=f"{reason}; holding the arm where it is")

    def _step_sync(self, tick, values, task) -> TickResult:
        start = time.perf_counter()
        try:
            # no worker: the backend steps inline (__init__)
            action, chunk = cast(InlineBackend, self.runner).select_action(values, task)
        except Exception as exc:  # noqa: BLE001 - a failing policy skips the tick, the node lives on
            self.last_error = f"{type(exc).__name__}: {exc}"
            return TickResult(status="error", reason=f"policy raised {self.last_error}; tick skipped")
        ms = (time.perf_counter() - start) * 1e3
        self.inference_ms.add(ms)
        if self.trajectory_mode:
            if chunk is None:
                return TickResult(status="ok", inference_ms=ms)
            safe, note = self.safety.apply_chunk(chunk[: self.n_action_steps])
            if safe is None:
                return TickResult(status="dropped", reason=note, plan=chunk, inference_ms=ms)
            self.last_action = safe[-1]
            self._trajectory = (tick, safe)
            return TickResult(status="ok", trajectory=safe, plan=chunk, reason=note, inference_ms=ms)
        safe, note = self.safety.apply(action)
        if safe is None:
            return TickResult(status="dropped", reason=note, plan=chunk, inference_ms=ms)
        self.last_action = safe
        return TickResult(status="ok", action=safe, plan=chunk, reason=note, inference_ms=ms)

    def _step_async(self, tick, values, task, ages_ns) -> TickResult:
        worker = self.worker
        assert worker is not None  # step() comes here in async mode only
        out = worker.tick(tick, dict(values), task, dict(ages_ns))
        plan = None
        if worker.chunks != self._seen_chunks:  # a new chunk was merged since the last tick
            self._seen_chunks = worker.chunks
            plan = self.runner.last_chunk
        if worker.last_error and worker.last_error != self.last_error:
            self.last_error = worker.last_error
        if self.trajectory_mode:
            if plan is None:
                return TickResult(status="ok", depth=out.depth, dry=out.action is None)
            ticks, pending = worker.queue.pending()
            if out.action is not None:  # this tick's action, then what is queued after it
                chunk = out.action[None, :] if pending is None else np.vstack([out.action[None, :], pending])
                start = tick
            elif pending is not None:
                chunk, start = pending, ticks[0]
            else:
                return TickResult(status="dry", dry=True, depth=0, reason=self._dry_reason())
            self._chain_from(start)
            safe, note = self.safety.apply_chunk(chunk)
            if safe is None:
                return TickResult(status="dropped", reason=note, plan=plan, depth=out.depth)
            self.last_action = safe[-1]
            self._trajectory = (start, safe)
            return TickResult(
                status="ok",
                trajectory=safe,
                trajectory_offset_ticks=start - tick,
                plan=plan,
                reason=note,
                depth=out.depth,
            )
        if out.action is None:
            return self._fallback("dry", self._dry_reason(), dry=True, depth=out.depth, plan=plan)
        safe, note = self.safety.apply(out.action)
        if safe is None:
            return TickResult(status="dropped", reason=note, plan=plan, depth=out.depth)
        self.last_action = safe
        return TickResult(status="ok", action=safe, plan=plan, reason=note, depth=out.depth)

    def _chain_from(self, start: int) -> None:
        """Async trajectories replace one another mid-way (and a hold replaces one): the change limit of the new one
        starts from what the previous one commands at the tick before `start`, not from its end (still in the
        future)."""
        before = self._commanded_at(start - 1)
        if before is not None:
            self.safety.last = before

    def _commanded_at(self, tick: int) -> np.ndarray | None:
        """The point the last trajectory sent commands at `tick` (its last one once it has run out; None before it
        began, or when none was sent)."""
        if self._trajectory is None or tick < self._trajectory[0]:
            return None
        start, points = self._trajectory
        return points[min(tick - start, len(points) - 1)]

    def _dry_reason(self) -> str:
        """Why the queue has no action for this tick: the backend's problem, a discarded late chunk, or speed."""
        problem = self.backend_problem()
        if problem:
            return f"{problem}; holding" if self.on_stale == "hold" and self.last_action is not None else problem
        assert self.worker is not None  # a dry queue: async mode only (_step_async)
        if self.worker.last_stale:  # since the last chunk that was queued
            return self.worker.last_stale
        if self.last_action is not None:
            return "queue ran dry (inference slower than the queue)"
        return "waiting for the first chunk"
