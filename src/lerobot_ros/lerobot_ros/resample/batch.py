"""Batch resampling (the bag converter): all samples of an episode at once, vectorized."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lerobot_ros.resample.core import Plan, clean_order, gather_numeric, grid_between, plan_stream
from lerobot_ros.resample.report import ResampleReport, StreamReport


@dataclass
class Stream:
    """Samples of one stream in arrival order: stamps (ns) and values.

    Numeric streams hold an (N, D) array; others (images) hold any sequence, e.g. raw messages to decode
    lazily: they are only indexed, never combined.
    """

    times: np.ndarray
    values: Any
    numeric: bool = True
    policy: str = "hold"
    tolerance_ns: int | None = None


@dataclass
class Resampled:
    """Frames of one episode: the grid, one plan per stream, and the report."""

    grid: np.ndarray
    plans: dict[str, Plan]
    streams: dict[str, Stream]  # with samples sorted and cleaned
    report: ResampleReport

    def numeric(self, name: str) -> np.ndarray:
        """(frames, D) float32 values of a numeric stream."""
        stream = self.streams[name]
        return gather_numeric(stream.values, self.plans[name])

    def sample(self, name: str, frame: int):
        return self.streams[name].values[int(self.plans[name].a[frame])]


def _cleaned(stream: Stream, report: StreamReport) -> Stream:
    keep, dropped, dups = clean_order(stream.times)
    report.dropped_out_of_order, report.duplicate_stamps = dropped, dups
    times = np.asarray(stream.times, dtype=np.int64)[keep]
    if stream.numeric:
        values = np.asarray(stream.values)[keep] if len(keep) else np.zeros((0,) + np.asarray(stream.values).shape[1:])
    else:
        values = [stream.values[i] for i in keep]
    report.add_sample_stats(times)
    return Stream(times, values, stream.numeric, stream.policy, stream.tolerance_ns)


def resample(
    streams: Mapping[str, Stream], fps: int, start_ns: int | None = None, end_ns: int | None = None
) -> Resampled:
    """Frames on the fps grid from the latest first sample to the earliest last sample of all streams
    (or the given span), each stream aligned with its own policy."""
    cleaned: dict[str, Stream] = {}
    report = ResampleReport(fps=int(fps))
    for name, stream in streams.items():
        if not stream.numeric and stream.policy == "interpolate":
            raise ValueError(f"{name}: only numeric streams can be interpolated")
        tol = None if stream.tolerance_ns is None else stream.tolerance_ns / 1e6
        report.streams[name] = StreamReport(name=name, policy=stream.policy, tolerance_ms=tol)
        cleaned[name] = _cleaned(stream, report.streams[name])
    non_empty = [s.times for s in cleaned.values() if s.times.size]
    if len(non_empty) < len(cleaned) or not cleaned:
        grid = np.zeros(0, dtype=np.int64)
    else:
        start = max(int(t[0]) for t in non_empty) if start_ns is None else int(start_ns)
        end = min(int(t[-1]) for t in non_empty) if end_ns is None else int(end_ns)
        grid = grid_between(start, end, fps)
    plans = {}
    for name, stream in cleaned.items():
        plans[name] = plan_stream(stream.times, grid, stream.policy, stream.tolerance_ns)
        report.streams[name].add_frames(plans[name])
    report.frames = int(grid.size)
    report.start_ns = int(grid[0]) if grid.size else 0
    report.end_ns = int(grid[-1]) if grid.size else 0
    return Resampled(grid=grid, plans=plans, streams=cleaned, report=report)
