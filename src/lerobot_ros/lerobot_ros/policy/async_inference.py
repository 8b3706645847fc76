"""Inference in its own thread, so the control tick never waits for the policy.

Each tick: if the queue holds at most `threshold * chunk_length` actions for the coming ticks and no
inference is running, the tick hands its frame to the worker (tagged with its tick number), then pops
the action for this tick from the queue. The worker predicts a chunk and merges it into the queue, row i
meant for tick (observation tick + i); rows for ticks already executed are dropped, overlaps are blended.
With real-time chunking (`rtc` set) the inference also gets the previous chunk's leftover and the expected
delay (policy.rtc.RtcGuide), and the new chunk replaces the queue instead of blending into it.
A chunk that arrives when its observations have grown older than `max_age_ns` (their age at the tick plus
the inference's wall time; a slow or reconnecting policy server) is discarded, never queued.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from lerobot_ros.policy.chunks import DEFAULT_AGGREGATE, ActionQueue, aggregate_function
from lerobot_ros.policy.rtc import RtcGuide, RtcSettings
from lerobot_ros.policy.safety import staleness_reason
from lerobot_ros.policy.stats import RollingStats

#: policy_node's `chunking`: how one chunk hands over to the next
CHUNKING_MODES = ("switch", "aggregate", "rtc")


def resolve_chunking(chunking: str, async_inference: bool) -> str:
    """The chunking mode from policy_node's `chunking` and `async_inference` parameters ('auto' = aggregate when
    async, else switch). aggregate and rtc run inference in its own thread; switch runs it inline."""
    if chunking not in ("auto", *CHUNKING_MODES):
        raise ValueError(f"unknown chunking {chunking!r}; use one of {['auto', *CHUNKING_MODES]}")
    mode = chunking if chunking != "auto" else ("aggregate" if async_inference else "switch")
    if mode == "switch" and async_inference:
        raise ValueError(
            "chunking:=switch runs inference inline (the policy's own queue, the next chunk when it runs "
            "out) but async_inference is true; drop async_inference, or use chunking:=aggregate or rtc"
        )
    return mode


@dataclass(frozen=True)
class AsyncInferenceConfig:
    """Settings of async inference, one source for the node's parameter defaults, the controller and eval.

    threshold: start an inference once at most `threshold * chunk_length` actions are queued (LeRobot's
    `chunk_size_threshold`, default 0.5); aggregate: how an incoming chunk blends with queued actions;
    actions_per_chunk: use only the first N actions of a chunk (None: the policy's chunk length);
    rtc: real-time chunking settings (None: chunks blend by `aggregate`; set: RTC guidance, chunks replace).
    """

    threshold: float = 0.5
    aggregate: str = DEFAULT_AGGREGATE
    actions_per_chunk: int | None = None
    rtc: RtcSettings | None = None

    @property
    def chunking(self) -> str:
        return "aggregate" if self.rtc is None else "rtc"

    def __post_init__(self):
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"chunk threshold must be in [0, 1], got {self.threshold}")
        aggregate_function(self.aggregate)  # ValueError naming the known functions
        if self.actions_per_chunk is not None and self.actions_per_chunk < 1:
            raise ValueError(f"actions_per_chunk must be at least 1 (or unset), got {self.actions_per_chunk}")


@dataclass
class AsyncTick:
    action: np.ndarray | None  # None: the queue ran dry this tick
    submitted: bool  # this tick started an inference
    depth: int  # actions queued for later ticks, after this pop


class AsyncInference:
    """A worker thread running `predict(frame, task) -> (T, D) chunk` on demand; with `config.rtc`,
    `predict(frame, task, inference_delay=, prev_chunk_left_over=) -> (chunk, model-space chunk)`."""

    def __init__(
        self,
        predict: Callable[[Mapping[str, np.ndarray], str], np.ndarray],
        chunk_length: int,
        config: AsyncInferenceConfig | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ):
        config = config or AsyncInferenceConfig()
        self.config = config
        self.predict = predict
        self.chunk_length = max(1, int(config.actions_per_chunk or chunk_length))
        self.threshold = config.threshold
        self.rtc = RtcGuide(config.rtc) if config.rtc is not None else None
        self.queue = ActionQueue("latest_only" if self.rtc is not None else config.aggregate)
        self.on_error = on_error
        self.latency_ms = RollingStats()
        self.errors = 0
        self.last_error: str | None = None
        self.failing = False  # the newest inference raised (cleared by the next chunk queued)
        self.chunks = 0
        self.max_age_ns: Mapping[str, int] = {}  # per stream (0 = no limit); checked when a chunk arrives
        self.stale_chunks = 0
        self.expired_chunks = 0  # arrived after the last of their ticks
        #: why no chunk was queued since the last one (a late or expired chunk, a failed inference); None once one is
        self.last_stale: str | None = None
        self._job: tuple[int, Mapping, str, int, Mapping | None, dict] | None = None
        self._busy = False
        self._epoch = 0  # bumped by reset(): results of older jobs are discarded
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="policy-inference", daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._busy or self._job is not None

    def tick(
        self,
        tick: int,
        frame: Mapping[str, np.ndarray] | None,
        task: str = "",
        ages_ns: Mapping[str, int] | None = None,
    ) -> AsyncTick:
        """One control tick: maybe start an inference on `frame` (its streams `ages_ns` old now), then take this
        tick's action. Never blocks on inference."""
        submitted = False
        if frame is not None and self.queue.depth(tick) <= self.threshold * self.chunk_length:
            with self._cond:
                if not self._busy and self._job is None and not self._stop:
                    guidance = self.rtc.prepare(tick) if self.rtc is not None else {}
                    self._job = (tick, frame, task, self._epoch, ages_ns, guidance)
                    self._cond.notify()
                    submitted = True
        action = self.queue.pop(tick)
        return AsyncTick(action=action, submitted=submitted, depth=self.queue.depth(tick + 1))

    def reset(self) -> None:
        """Forget queued actions and any inference in flight (its result is discarded)."""
        with self._cond:
            self._epoch += 1
            self._job = None
        self.queue.clear()
        if self.rtc is not None:
            self.rtc.reset()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until no inference is pending or running (for tests and orderly shutdown)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy or self._job is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._job = None
            self._cond.notify_all()
        self._thread.join(timeout=30.0)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._job is None and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                job = self._job
                assert job is not None  # the wait above ends on a job or on stop (returned)
                tick, frame, task, epoch, ages, guidance = job
                self._job = None
                self._busy = True
            start = time.perf_counter()
            raw = None
            try:
                if self.rtc is not None:
                    chunk, raw = self.predict(frame, task, **guidance)
                    raw = np.asarray(raw)[: self.chunk_length]
                else:
                    chunk = self.predict(frame, task)
                chunk = np.asarray(chunk)[: self.chunk_length]
            except Exception as exc:  # noqa: BLE001 - a failing policy must not kill the worker
                self.errors += 1
                self.last_error = f"{type(exc).__name__}: {exc}"
                self.last_stale = f"policy raised {self.last_error}; no chunk from that observation"
                self.failing = True
                if self.on_error is not None:
                    self.on_error(exc)
                chunk = None
            elapsed_s = time.perf_counter() - start
            self.latency_ms.add(elapsed_s * 1e3)
            if chunk is not None and ages:
                stale = staleness_reason({n: a + int(elapsed_s * 1e9) for n, a in ages.items()}, self.max_age_ns)
                if stale is not None:
                    self.stale_chunks += 1
                    self.last_stale = (
                        f"discarded a chunk that came {elapsed_s * 1e3:.0f} ms after its observation ({stale})"
                    )
                    chunk = None
            with self._cond:
                if chunk is not None and epoch == self._epoch:
                    kept = self.queue.merge(tick, chunk)
                    if self.rtc is not None:
                        assert raw is not None  # a chunk came from the rtc branch above, which set it
                        self.rtc.merged(tick, raw, self.queue.last_tick)
                    if kept:
                        self.chunks += 1
                        self.failing = False
                        self.last_stale = None  # the reason a late chunk was discarded: kept until one is queued
                    else:  # every row was meant for a tick that has run: nothing of it can execute
                        self.expired_chunks += 1
                        self.last_stale = (
                            f"a chunk came {elapsed_s * 1e3:.0f} ms after its observation, when all "
                            f"{len(chunk)} of its ticks had passed: inference is slower than a chunk "
                            "lasts (use a faster device or a longer chunk)"
                        )
                self._busy = False
                self._cond.notify_all()
