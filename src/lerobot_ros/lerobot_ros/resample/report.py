"""What the resampler had to do, per stream: JSON-serializable dataclasses for the QA report."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from lerobot_ros.resample.core import EXACT, HELD, INTERP, MISSING, STALE, Plan

#: a frame "holds an old sample" when its value came from a sample older than the stream's tolerance (or this,
#: for a stream without one); past HELD_OLD_LIMIT of an episode's frames that is worth a warning, whatever the
#: stream's policy: a dataset whose actions mostly repeat a command from 200 ms ago teaches the wrong thing
DEFAULT_HELD_AGE_MS = 100.0
HELD_OLD_LIMIT = 0.2

_COUNTERS = {
    EXACT: "exact_frames",
    HELD: "held_frames",
    INTERP: "interpolated_frames",
    STALE: "stale_frames",
    MISSING: "missing_frames",
}


@dataclass
class StreamReport:
    """One stream of one episode."""

    name: str
    policy: str
    tolerance_ms: float | None
    samples: int = 0  # kept samples (after dropping out-of-order ones and duplicate stamps)
    dropped_out_of_order: int = 0
    duplicate_stamps: int = 0
    rate_hz: float = 0.0  # mean sample rate over the stream's own span
    median_period_ms: float = 0.0
    max_gap_ms: float = 0.0  # longest interval between consecutive samples
    gaps: int = 0  # intervals longer than the gap threshold (tolerance, else 3 median periods)
    frames: int = 0
    exact_frames: int = 0
    held_frames: int = 0
    interpolated_frames: int = 0
    stale_frames: int = 0  # value older (or further) than the tolerance; asof/nearest: a warning
    missing_frames: int = 0
    max_staleness_ms: float = 0.0
    mean_staleness_ms: float = 0.0
    held_old_frames: int = 0  # frames whose value is a sample older than `held_age_ms` (held, not interpolated)

    @property
    def held_age_ms(self) -> float:
        return self.tolerance_ms if self.tolerance_ms else DEFAULT_HELD_AGE_MS

    @property
    def held_old_share(self) -> float:
        """The share of frames filled by holding a sample older than `held_age_ms` (0 without frames)."""
        return self.held_old_frames / self.frames if self.frames else 0.0

    def add_frames(self, plan: Plan) -> None:
        """Count a plan's frames by status and fold their staleness into the max and mean (batch path)."""
        s = plan.status
        self.frames += int(s.size)
        for code, counter in _COUNTERS.items():
            setattr(self, counter, getattr(self, counter) + int((s == code).sum()))
        used = plan.staleness_ns[s != MISSING]
        if used.size:
            self._add_staleness(int(used.size), float(used.sum()) / 1e6, float(used.max()) / 1e6)
        held = (s == HELD) | (s == STALE)
        self.held_old_frames += int((held & (plan.staleness_ns > self.held_age_ms * 1e6)).sum())

    def add_frame(self, status: int, staleness_ns: int) -> None:
        """`add_frames` for one frame (the live path)."""
        self.frames += 1
        counter = _COUNTERS[status]
        setattr(self, counter, getattr(self, counter) + 1)
        if status != MISSING:
            ms = staleness_ns / 1e6
            self._add_staleness(1, ms, ms)
            if status in (HELD, STALE) and ms > self.held_age_ms:
                self.held_old_frames += 1

    def _add_staleness(self, count: int, total_ms: float, max_ms: float) -> None:
        """Running max and mean over every non-missing frame so far (frame counters already include these)."""
        before = self.frames - self.missing_frames - count
        self.max_staleness_ms = max(self.max_staleness_ms, max_ms)
        self.mean_staleness_ms = (self.mean_staleness_ms * before + total_ms) / (before + count)

    def add_sample_stats(self, times: np.ndarray) -> None:
        self.samples = int(times.size)
        if times.size < 2:
            return
        periods = np.diff(times)
        self.median_period_ms = float(np.median(periods)) / 1e6
        self.max_gap_ms = float(periods.max()) / 1e6
        self.rate_hz = (times.size - 1) / ((times[-1] - times[0]) / 1e9) if times[-1] > times[0] else 0.0
        threshold = self.tolerance_ms * 1e6 if self.tolerance_ms else 3 * float(np.median(periods))
        self.gaps = int((periods > threshold).sum())

    def warnings(self) -> list[str]:
        """Problems worth a warning (and a failure under --strict)."""
        out = []
        if self.dropped_out_of_order:
            out.append(
                f"{self.name}: dropped {self.dropped_out_of_order} out-of-order sample(s) (non-monotonic stamps)"
            )
        if self.stale_frames and self.policy in ("asof", "nearest", "interpolate"):
            out.append(
                f"{self.name}: {self.stale_frames} frame(s) had no sample within {self.tolerance_ms:g} ms "
                f"(max {self.max_staleness_ms:.1f} ms); the last value was held"
            )
        if self.missing_frames:
            out.append(f"{self.name}: {self.missing_frames} frame(s) had no value at all")
        if self.held_old_share > HELD_OLD_LIMIT:
            rate = f" (it ran at {self.rate_hz:.1f} Hz)" if self.rate_hz else ""
            out.append(
                f"{self.name}: {self.held_old_frames} of {self.frames} frames ({100 * self.held_old_share:.0f} %) "
                f"repeat a sample older than {self.held_age_ms:g} ms{rate}; those frames hold stale values "
                f"(limit {100 * HELD_OLD_LIMIT:.0f} %)"
            )
        return out


@dataclass
class ResampleReport:
    """All streams of one episode."""

    fps: int
    frames: int = 0
    start_ns: int = 0
    end_ns: int = 0
    streams: dict[str, StreamReport] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        return [w for s in self.streams.values() for w in s.warnings()]

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> ResampleReport:
        streams = {k: StreamReport(**v) for k, v in data.get("streams", {}).items()}
        return cls(**{**data, "streams": streams})
