"""Streaming resampling (the live policy node): push samples as they arrive, ask for a frame at a time.

Plans with `plan_one`, the single-frame form of the batch converter's `plan_stream` (same rules, tested
equal), on a bounded buffer of recent samples, so a frame taken live equals the batch frame at the same
time whenever the same samples had arrived.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from lerobot_ros.resample.core import HELD, INTERP, MISSING, STALE, STATUS_NAMES, plan_one
from lerobot_ros.resample.report import StreamReport


@dataclass
class StreamSpec:
    policy: str = "hold"
    tolerance_ns: int | None = None
    numeric: bool = True


@dataclass
class Frame:
    """Values at one time; `ready` is False when a stream has no usable value (reasons say which and why)."""

    t_ns: int
    values: dict[str, Any]
    status: dict[str, str]
    staleness_ns: dict[str, int]
    ready: bool
    reasons: list[str] = field(default_factory=list)


class StreamingResampler:
    """Thread-safe: DDS callbacks `push`, a timer calls `frame_at`."""

    def __init__(self, streams: Mapping[str, StreamSpec], buffer: int = 64):
        for name, spec in streams.items():
            if spec.policy == "interpolate" and not spec.numeric:
                raise ValueError(f"{name}: only numeric streams can be interpolated")
        self.specs = dict(streams)
        self._times: dict[str, deque[int]] = {n: deque(maxlen=buffer) for n in streams}
        self._values: dict[str, deque[Any]] = {n: deque(maxlen=buffer) for n in streams}
        self._lock = threading.Lock()
        self.reports = {
            n: StreamReport(n, s.policy, None if s.tolerance_ns is None else s.tolerance_ns / 1e6)
            for n, s in streams.items()
        }

    @classmethod
    def from_contract(cls, contract, buffer: int = 64) -> StreamingResampler:
        return cls(
            {
                name: StreamSpec(f.alignment.policy, f.alignment.tolerance_ns, not f.is_image)
                for name, f in contract.features.items()
            },
            buffer,
        )

    def push(self, stream: str, t_ns: int, value) -> bool:
        """Add a sample; False (and counted) when it is older than the newest one (out of order)."""
        with self._lock:
            times = self._times[stream]
            report = self.reports[stream]
            if times and t_ns < times[-1]:
                report.dropped_out_of_order += 1
                return False
            if times and t_ns == times[-1]:  # same stamp: the newer sample wins
                report.duplicate_stamps += 1
                self._values[stream][-1] = value
                return True
            times.append(int(t_ns))
            self._values[stream].append(value)
            report.samples += 1
            return True

    def clear(self) -> None:
        with self._lock:
            for n in self.specs:
                self._times[n].clear()
                self._values[n].clear()

    def frame_at(self, t_ns: int) -> Frame:
        """The frame at `t_ns` from the samples received so far."""
        values: dict[str, Any]
        status: dict[str, str]
        staleness: dict[str, int]
        reasons: list[str]
        values, status, staleness, reasons = {}, {}, {}, []
        with self._lock:
            for name, spec in self.specs.items():
                a, b, w, code, stale_ns = plan_one(self._times[name], t_ns, spec.policy, spec.tolerance_ns)
                self.reports[name].add_frame(code, stale_ns)
                status[name] = STATUS_NAMES[code]
                staleness[name] = int(stale_ns)
                if code == MISSING:
                    values[name] = None
                    reasons.append(f"{name}: no sample yet")
                    continue
                buf = self._values[name]
                if code == INTERP and w > 0.0:
                    values[name] = (
                        np.asarray(buf[a], np.float64) * (1.0 - w) + np.asarray(buf[b], np.float64) * w
                    ).astype(np.float32)
                else:
                    values[name] = buf[a]
                if code == STALE and spec.policy != "hold":
                    reasons.append(
                        f"{name}: newest sample is {stale_ns / 1e6:.1f} ms old (tolerance {cast(int, spec.tolerance_ns) / 1e6:g} ms)"
                    )
        return Frame(int(t_ns), values, status, staleness, ready=not reasons, reasons=reasons)

    def latest_time(self, stream: str) -> int | None:
        with self._lock:
            times = self._times[stream]
            return times[-1] if times else None


__all__ = ["Frame", "HELD", "StreamSpec", "StreamingResampler"]
