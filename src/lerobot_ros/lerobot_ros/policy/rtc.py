"""Real-time chunking (RTC) around the async inference thread, with LeRobot's own implementation.

LeRobot's `lerobot.policies.rtc` guides a flow-matching policy's denoising so that the first actions of a
new chunk follow the unexecuted leftover of the previous one (`predict_action_chunk(batch,
inference_delay=d, prev_chunk_left_over=leftover)`): the first `d` actions, which execute from the old chunk
while the inference runs, are frozen (weight 1), the next ones up to `execution_horizon` blend with a
linearly decaying weight. What this module adds is the bookkeeping LeRobot's RTC engine
(`lerobot.rollout.inference.rtc`) does around it, on our tick-indexed queue:

- the leftover at submission: the model-space (normalized, pre-post-processor) rows of the last merged
  chunk for the ticks from the submitting tick on (row j meant for tick submit + j, as the new chunk's row j);
- the delay in control ticks measured online: ticks executed between the submission and the merge, each
  inference; the estimate for the next one is the maximum over the last `delay_window` inferences (LeRobot's
  engine takes the all-time maximum of its `LatencyTracker` in seconds; a window lets the estimate come down
  again after a warm-up or a load spike, and ticks work on sim time too);
- the merge replaces the queue from the first tick not yet executed (LeRobot's RTC queue does the same).
"""

from __future__ import annotations

import inspect
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

#: prefix weight schedules of LeRobot's RTCConfig (lerobot.configs.RTCAttentionSchedule)
RTC_SCHEDULES = ("LINEAR", "EXP", "ONES", "ZEROS")


@dataclass(frozen=True)
class RtcSettings:
    """RTC's knobs: LeRobot's RTCConfig defaults (execution_horizon 10, max_guidance_weight 10, LINEAR),
    plus how many recent inferences the delay estimate spans."""

    execution_horizon: int = 10
    max_guidance_weight: float = 10.0
    schedule: str = "LINEAR"
    delay_window: int = 10

    def __post_init__(self):
        if self.execution_horizon < 1:
            raise ValueError(f"rtc execution_horizon must be at least 1, got {self.execution_horizon}")
        if not self.max_guidance_weight > 0:
            raise ValueError(f"rtc max_guidance_weight must be positive, got {self.max_guidance_weight}")
        if self.schedule not in RTC_SCHEDULES:
            raise ValueError(f"unknown rtc schedule {self.schedule!r}; use one of {list(RTC_SCHEDULES)}")
        if self.delay_window < 1:
            raise ValueError(f"rtc delay_window must be at least 1, got {self.delay_window}")


def supports_rtc(policy) -> bool:
    """LeRobot's test (`supports_rtc_inference`): the policy says so and its predict_action_chunk takes the
    RTC arguments (SmolVLA, pi0, pi05 in LeRobot 0.6.1; not ACT or Diffusion)."""
    check = getattr(policy, "supports_rtc", None)
    if not callable(check) or not check():
        return False
    try:
        inspect.signature(policy.predict_action_chunk).bind(object(), inference_delay=0, prev_chunk_left_over=None)
    except (TypeError, ValueError):
        return False
    return True


def enable_rtc(loaded, settings: RtcSettings) -> None:
    """Switch RTC guidance on in a loaded policy, as lerobot-rollout does (`config.rtc_config`, then
    `init_rtc_processor`). ValueError (one line, what to do) for a policy without RTC."""
    if not supports_rtc(loaded.policy):
        raise ValueError(
            f"chunking:=rtc needs a flow-matching policy with real-time chunking (smolvla, pi0, pi05), "
            f"but {loaded.path} is a {loaded.type} policy; use chunking:=aggregate or chunking:=switch"
        )
    from lerobot.configs import RTCAttentionSchedule
    from lerobot.policies.rtc import RTCConfig

    loaded.policy.config.rtc_config = RTCConfig(
        enabled=True,
        prefix_attention_schedule=RTCAttentionSchedule(settings.schedule),
        max_guidance_weight=float(settings.max_guidance_weight),
        execution_horizon=int(settings.execution_horizon),
    )
    loaded.policy.init_rtc_processor()


class RtcGuide:
    """Leftover and delay bookkeeping between the control tick (prepare) and the inference thread (merged)."""

    def __init__(self, settings: RtcSettings | None = None):
        self.settings = settings or RtcSettings()
        self.delays: deque[int] = deque(maxlen=self.settings.delay_window)  # measured delays, in ticks
        self.last_delay: int | None = None  # measured on the last merged chunk
        self._raw: np.ndarray | None = None  # model-space rows of the last merged chunk
        self._raw_start = 0  # tick of its row 0
        self._lock = threading.Lock()

    def estimate(self) -> int:
        """Ticks the next inference is expected to take (0 before the first one was measured)."""
        with self._lock:
            return max(self.delays) if self.delays else 0

    def leftover(self, tick: int) -> np.ndarray | None:
        """Model-space rows of the last merged chunk for ticks >= `tick` (at most execution_horizon of them,
        as LeRobot's engine passes them); None when nothing is left."""
        with self._lock:
            if self._raw is None:
                return None
            rows = self._raw[max(0, tick - self._raw_start) :][: self.settings.execution_horizon]
            return rows.copy() if len(rows) else None

    def prepare(self, tick: int) -> dict:
        """predict_action_chunk's RTC arguments for an inference submitted at `tick` (before its action pops)."""
        return {"inference_delay": self.estimate(), "prev_chunk_left_over": self.leftover(tick)}

    def merged(self, tick: int, raw_chunk: np.ndarray, last_executed_tick: int) -> int:
        """A chunk submitted at `tick` entered the queue once ticks up to `last_executed_tick` had run: record
        the measured delay (ticks that ran from the old chunk meanwhile) and keep its rows as the next leftover."""
        delay = max(0, last_executed_tick - tick + 1)
        with self._lock:
            self.delays.append(delay)
            self.last_delay = delay
            self._raw = np.asarray(raw_chunk, dtype=np.float32)
            self._raw_start = tick
        return delay

    def reset(self) -> None:
        """New episode: no leftover (the measured delays stay: the machine did not change)."""
        with self._lock:
            self._raw = None
