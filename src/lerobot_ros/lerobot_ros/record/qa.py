"""Live QA of the streams being recorded: rate against the contract's fps, gaps, stalls.

The recorder observes arrival times (monotonic seconds) per topic. `snapshot()` is what /diagnostics and
the terminal show while recording; `report()` is written into the bag's custom_data at the end.
Gap statistics come from `stream_stats`, the same function whether live or offline.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

OK, WARN, ERROR = 0, 1, 2
LEVEL_NAMES = {OK: "ok", WARN: "warn", ERROR: "error"}


def stream_stats(stamps_s: list[float] | deque, expected_hz: float | None) -> dict:
    """Rate, largest gap and gap count of a sorted list of sample times (seconds).

    A gap is an interval longer than two frame periods of `expected_hz`: the resampler would have to hold
    a value over at least one whole frame there.
    """
    n = len(stamps_s)
    out = {"count": n, "rate_hz": 0.0, "max_gap_s": 0.0, "gaps": 0}
    if n < 2:
        return out
    span = stamps_s[-1] - stamps_s[0]
    out["rate_hz"] = (n - 1) / span if span > 0 else 0.0
    limit = 2.0 / expected_hz if expected_hz else None
    prev = stamps_s[0]
    for t in list(stamps_s)[1:]:
        gap = t - prev
        if gap > out["max_gap_s"]:
            out["max_gap_s"] = gap
        if limit is not None and gap > limit:
            out["gaps"] += 1
        prev = t
    return out


@dataclass
class _Stream:
    expected_hz: float | None
    count: int = 0
    first: float | None = None
    last: float | None = None
    max_gap_s: float = 0.0
    gaps: int = 0
    stalls: int = 0
    stalled: bool = False
    window: deque = field(default_factory=lambda: deque(maxlen=4096))


class StreamQA:
    """Thread-safe per-topic arrival statistics for one episode."""

    def __init__(self, stall_timeout_s: float = 1.0, window_s: float = 2.0, rate_tolerance: float = 0.9):
        self.stall_timeout_s = stall_timeout_s
        self.window_s = window_s
        self.rate_tolerance = rate_tolerance
        self.streams: dict[str, _Stream] = {}
        self._lock = threading.Lock()

    def add_stream(self, topic: str, expected_hz: float | None) -> None:
        with self._lock:
            self.streams.setdefault(topic, _Stream(expected_hz))

    def observe(self, topic: str, t: float) -> None:
        with self._lock:
            s = self.streams.get(topic)
            if s is None:
                return
            if s.last is not None:
                gap = t - s.last
                if gap > s.max_gap_s:
                    s.max_gap_s = gap
                if s.expected_hz and gap > 2.0 / s.expected_hz:
                    s.gaps += 1
            else:
                s.first = t
            s.last = t
            s.count += 1
            s.stalled = False
            s.window.append(t)

    def snapshot(self, now: float, started: float | None = None) -> dict[str, dict]:
        """Per topic: count, recent rate, expected rate, max gap, stall state, level and a message."""
        out = {}
        with self._lock:
            for topic, s in self.streams.items():
                while s.window and now - s.window[0] > self.window_s:
                    s.window.popleft()
                recent = stream_stats(s.window, s.expected_hz)["rate_hz"]
                since = now - (s.last if s.last is not None else (started if started is not None else now))
                stalled = since > self.stall_timeout_s
                if stalled and not s.stalled:
                    s.stalls += 1
                s.stalled = stalled
                level, message = OK, "ok"
                if s.count == 0 and stalled:
                    level, message = WARN, f"no message for {since:.1f} s"
                elif stalled:
                    level, message = WARN, f"stalled: last message {since:.1f} s ago"
                elif s.expected_hz and len(s.window) >= 2 and recent < self.rate_tolerance * s.expected_hz:
                    level, message = WARN, f"rate {recent:.1f} Hz below the contract's {s.expected_hz:g} Hz"
                out[topic] = {
                    "count": s.count, "rate_hz": round(recent, 2), "expected_hz": s.expected_hz,
                    "max_gap_ms": round(s.max_gap_s * 1e3, 1), "gaps": s.gaps, "stalls": s.stalls,
                    "last_age_s": round(since, 3), "level": level, "message": message,
                }
        return out

    def report(self, now: float) -> dict[str, dict]:
        """End-of-episode summary: mean rate over the episode plus the live figures."""
        snap = self.snapshot(now)
        with self._lock:
            for topic, s in self.streams.items():
                span = (s.last - s.first) if s.count > 1 else 0.0
                snap[topic]["mean_rate_hz"] = round((s.count - 1) / span, 2) if span > 0 else 0.0
                snap[topic]["level"] = LEVEL_NAMES[snap[topic]["level"]]
        return snap
