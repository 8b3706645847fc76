"""Live QA of the streams being recorded, with the converter's own statistics (lerobot_ros.resample).

Per topic the recorder keeps the receive stamps (node clock, so sim time works). For /diagnostics and
the terminal, `snapshot()` runs the resampler's `plan_stream` over the last `window_s` on the contract's
frame grid and fills a `StreamReport` (rate, gaps, held/stale/missing frames, staleness), then adds what
only a live view can tell: a stream that stalled. `report()` does the same over the whole episode and
returns a `ResampleReport` dict, written into the bag's custom_data (`qa`), as the converter would report it
for receive-time alignment.
"""

from __future__ import annotations

import array
import threading
from dataclasses import asdict, dataclass, field
from enum import IntEnum

import numpy as np

from lerobot_ros.resample import ResampleReport, StreamReport, grid_between, plan_stream


class Level(IntEnum):
    """diagnostic_msgs/DiagnosticStatus levels."""

    OK = 0
    WARN = 1
    ERROR = 2


OK, WARN, ERROR = Level.OK, Level.WARN, Level.ERROR
LEVEL_NAMES = {OK: "ok", WARN: "warn", ERROR: "error"}


@dataclass(frozen=True)
class TopicQA:
    """One recorded topic over the last window: the resampler's figures, stall state, level and message."""

    count: int
    rate_hz: float
    expected_hz: float | None
    max_gap_ms: float
    gaps: int
    frames: int
    held_frames: int
    stale_frames: int
    missing_frames: int
    held_old_share: float  # frames filled by a sample older than the tolerance (or 100 ms), of all frames
    max_staleness_ms: float
    stalls: int
    last_age_s: float
    level: Level
    message: str

    def values(self) -> dict[str, object]:
        """The figures as /diagnostics key/values (everything but level and message)."""
        out = asdict(self)
        del out["level"], out["message"]
        return out


@dataclass
class _Stream:
    expected_hz: float | None
    policy: str
    tolerance_ns: int | None
    # int64 values in one buffer (8 bytes a stamp, no int objects): an episode's ~2000 stamps per stream are one
    # allocation, freed whole when it ends, instead of ~2000 small objects spread through Python's pools
    stamps: array.array = field(default_factory=lambda: array.array("q"))
    stalls: int = 0
    stalled: bool = False


def stream_report(
    name: str,
    stamps_ns,
    fps: float | None,
    start_ns: int,
    end_ns: int,
    policy: str = "hold",
    tolerance_ns: int | None = None,
) -> StreamReport:
    """The resampler's report of one stream over [start_ns, end_ns] (frames only when fps is known)."""
    times = np.asarray(stamps_ns, dtype=np.int64)
    report = StreamReport(name, policy, None if tolerance_ns is None else tolerance_ns / 1e6)
    report.add_sample_stats(times)
    if fps:
        grid = grid_between(start_ns, end_ns, int(round(fps)))
        report.add_frames(plan_stream(times, grid, policy, tolerance_ns))
    return report


class StreamQA:
    """Thread-safe per-topic arrival stamps of one episode, and the QA computed from them."""

    def __init__(self, stall_timeout_s: float = 1.0, window_s: float = 2.0, rate_tolerance: float = 0.9):
        self.stall_timeout_ns = int(stall_timeout_s * 1e9)
        self.window_ns = int(window_s * 1e9)
        self.rate_tolerance = rate_tolerance
        self.streams: dict[str, _Stream] = {}
        self._lock = threading.Lock()

    def add_stream(
        self, topic: str, expected_hz: float | None, policy: str = "hold", tolerance_ns: int | None = None
    ) -> None:
        with self._lock:
            self.streams.setdefault(topic, _Stream(expected_hz, policy, tolerance_ns))

    def observe(self, topic: str, stamp_ns: int) -> None:
        with self._lock:
            stream = self.streams.get(topic)
            if stream is not None:
                stream.stamps.append(int(stamp_ns))
                stream.stalled = False

    def snapshot(self, now_ns: int, started_ns: int) -> dict[str, TopicQA]:
        """Per topic over the last window: the resampler's figures, plus stall state, level and message."""
        out = {}
        with self._lock:
            items = [(t, s, s.stamps[:]) for t, s in self.streams.items()]
        for topic, s, stamps in items:
            start = max(started_ns, now_ns - self.window_ns)
            tail = np.asarray(stamps[-4096:], dtype=np.int64)
            recent = tail[tail >= start]
            rep = stream_report(topic, stamps, s.expected_hz, start, now_ns, s.policy, s.tolerance_ns)
            window_rate = stream_report(topic, recent, None, start, now_ns).rate_hz
            last = stamps[-1] if stamps else None
            age_ns = now_ns - (last if last is not None else started_ns)
            stalled = bool(s.expected_hz) and age_ns > self.stall_timeout_ns
            if stalled and not s.stalled:
                s.stalls += 1
            s.stalled = stalled
            level, message = OK, "ok"
            if stalled and last is None:
                level, message = WARN, f"no message for {age_ns / 1e9:.1f} s"
            elif stalled:
                level, message = WARN, f"stalled: last message {age_ns / 1e9:.1f} s ago"
            elif s.expected_hz and len(recent) >= 2 and window_rate < self.rate_tolerance * s.expected_hz:
                level, message = WARN, f"rate {window_rate:.1f} Hz below the contract's {s.expected_hz:g} Hz"
            elif rep.warnings():
                level, message = WARN, rep.warnings()[0]
            out[topic] = TopicQA(
                count=len(stamps),
                rate_hz=round(window_rate, 2),
                expected_hz=s.expected_hz,
                max_gap_ms=round(rep.max_gap_ms, 1),
                gaps=rep.gaps,
                frames=rep.frames,
                held_frames=rep.held_frames,
                stale_frames=rep.stale_frames,
                missing_frames=rep.missing_frames,
                held_old_share=round(rep.held_old_share, 3),
                max_staleness_ms=round(rep.max_staleness_ms, 1),
                stalls=s.stalls,
                last_age_s=round(age_ns / 1e9, 3),
                level=level,
                message=message,
            )
        return out

    def report(self, started_ns: int, stopped_ns: int) -> dict:
        """The whole episode as the resampler sees it (ResampleReport.to_dict()), plus stall counts."""
        with self._lock:
            items = [(t, s, s.stamps[:]) for t, s in self.streams.items()]
        fps = next((s.expected_hz for _, s, _ in items if s.expected_hz), None)
        result = ResampleReport(fps=int(round(fps)) if fps else 0, start_ns=started_ns, end_ns=stopped_ns)
        for topic, s, stamps in items:
            rep = stream_report(topic, stamps, s.expected_hz, started_ns, stopped_ns, s.policy, s.tolerance_ns)
            result.streams[topic] = rep
            result.frames = max(result.frames, rep.frames)
        doc = result.to_dict()
        doc["stalls"] = {t: s.stalls for t, s, _ in items}
        doc["warnings"] = result.warnings()
        return doc
