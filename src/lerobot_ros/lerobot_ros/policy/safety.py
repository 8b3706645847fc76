"""Safety between the policy and the robot: what may be published this tick, and why not.

Gates (warm-up, staleness) decide whether to act at all; the filter cleans one action (NaN/inf drop,
joint-limit clamp, max change per tick). Values are in the action's LeRobot units (the policy's units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import numpy as np


def staleness_reason(ages_ns: Mapping[str, int | None], max_age_ns: Mapping[str, int]) -> str | None:
    """None when every required stream is present and fresh, else a reason naming the streams.

    `ages_ns[name]` is None for a stream that has never delivered (warm-up).
    """
    missing = sorted(name for name, age in ages_ns.items() if age is None)
    if missing:
        return f"waiting for first message on {', '.join(missing)}"
    ages = cast(Mapping[str, int], ages_ns)  # no None left: those returned above
    stale = [
        f"{name} {ages[name] / 1e6:.0f} ms old (max {limit / 1e6:.0f} ms)"
        for name, limit in sorted(max_age_ns.items())
        if limit > 0 and name in ages and ages[name] > limit
    ]
    if stale:
        return "stale: " + "; ".join(stale)
    return None


@dataclass
class SafetyFilter:
    """Clamp to [lower, upper], limit the change from the last published action, drop non-finite actions."""

    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    max_delta: np.ndarray | None = None
    last: np.ndarray | None = field(default=None, init=False)

    @classmethod
    def from_lists(cls, dim: int, lower=(), upper=(), max_delta=()) -> SafetyFilter:
        """Build from parameter lists; empty = off; one value = for every joint; else one per joint."""

        def vec(values, what):
            values = [float(v) for v in values or ()]
            if not values:
                return None
            if len(values) == 1:
                values = values * dim
            if len(values) != dim:
                raise ValueError(f"{what} has {len(values)} values for an action of {dim}")
            if any(np.isnan(values)):  # a NaN bound would make np.clip return NaN actions
                raise ValueError(f"{what} has NaN values ({values}); use numbers (inf: no limit)")
            return np.asarray(values, dtype=np.float64)

        out = cls(vec(lower, "action_lower"), vec(upper, "action_upper"), vec(max_delta, "max_delta"))
        if out.lower is not None and out.upper is not None and np.any(out.lower > out.upper):
            raise ValueError("action_lower is above action_upper for some joint")
        if out.max_delta is not None and np.any(out.max_delta <= 0):
            raise ValueError("max_delta must be positive")
        return out

    def reset(self) -> None:
        self.last = None

    def apply(self, action) -> tuple[np.ndarray | None, str | None]:
        """(safe action, note): action None when dropped; note says what was changed or why it was dropped."""
        a: np.ndarray = np.asarray(action, dtype=np.float64).reshape(-1)
        values = a.tolist()  # a tick's few values: plain floats beat numpy's per-call cost (ElementwisePath)
        if not all(map(math.isfinite, values)):
            bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
            return None, f"dropped non-finite action (index {bad})"
        notes: list[str] = []
        limits = self.lower is not None or self.upper is not None
        if limits:
            a = self._clamp(a, notes)
        if self.max_delta is not None and self.last is not None:
            limited = np.clip(a, self.last - self.max_delta, self.last + self.max_delta)
            if not np.array_equal(limited, a):
                notes.append("limited change per tick")
            a = limited
            if limits:  # the last action may lie outside limits tightened since: the limits win
                a = self._clamp(a, notes)
        self.last = a
        return a, ("; ".join(notes) or None)

    def _clamp(self, a: np.ndarray, notes: list[str]) -> np.ndarray:
        clamped = np.clip(
            a, self.lower if self.lower is not None else -np.inf, self.upper if self.upper is not None else np.inf
        )
        if not np.array_equal(clamped, a) and "clamped to joint limits" not in notes:
            notes.append("clamped to joint limits")
        return clamped

    def apply_chunk(self, chunk) -> tuple[np.ndarray | None, str | None]:
        """Filter a (T, D) chunk point by point (the change limit chains through the points)."""
        rows, notes = [], set()
        saved = None if self.last is None else self.last.copy()
        for row in np.asarray(chunk, dtype=np.float64):
            safe, note = self.apply(row)
            if safe is None:
                self.last = saved
                return None, note
            if note:
                notes.add(note)
            rows.append(safe)
        return np.stack(rows), ("; ".join(sorted(notes)) or None)
