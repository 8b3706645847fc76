"""Real-time factor of a stepping simulator: sim seconds advanced per wall second, from step times.

Only the wall time between two consecutive steps of one episode counts (a reset, which may take
seconds, starts a new run of steps), so the figure says how fast the simulator steps, not how long
episodes take to set up. A sliding window gives the current factor, totals give the mean since start.
"""

from __future__ import annotations

from collections import deque

SLOW_THRESHOLD = 0.95


class RealTimeFactor:
    def __init__(self, period_s: float, window: int = 60):
        self.period_s = float(period_s)
        self._gaps: deque[float] = deque(maxlen=max(2, int(window)))
        self._last: float | None = None
        self.total_wall_s = 0.0
        self.total_steps = 0
        self._step_s: deque[float] = deque(maxlen=max(2, int(window)))
        self._warned = False

    def restart(self) -> None:
        """A reset: the next step starts a new run (its gap to the last step is not counted)."""
        self._last = None

    def step(self, now_s: float, step_s: float = 0.0) -> None:
        """A step ended at `now_s` (monotonic seconds); `step_s`: its time inside the simulator."""
        if self._last is not None:
            gap = now_s - self._last
            self._gaps.append(gap)
            self.total_wall_s += gap
            self.total_steps += 1
        self._last = now_s
        self._step_s.append(step_s)

    @property
    def samples(self) -> int:
        return len(self._gaps)

    @property
    def current(self) -> float | None:
        """Over the last `window` steps; None before two steps."""
        wall = sum(self._gaps)
        return None if not self._gaps or wall <= 0 else self.period_s * len(self._gaps) / wall

    @property
    def mean(self) -> float | None:
        return None if self.total_wall_s <= 0 else self.period_s * self.total_steps / self.total_wall_s

    @property
    def steps_per_s(self) -> float | None:
        rtf = self.current
        return None if rtf is None else rtf / self.period_s

    @property
    def step_ms(self) -> float | None:
        """Mean time inside the simulator per step over the window (physics + rendering)."""
        return None if not self._step_s else 1000.0 * sum(self._step_s) / len(self._step_s)

    def slow_warning(self, threshold: float = SLOW_THRESHOLD, min_samples: int = 30) -> str | None:
        """Once per meter: the warning text when the current factor fell below `threshold` (after
        `min_samples` gaps, so start-up hiccups do not trigger it); None otherwise."""
        rtf = self.current
        if self._warned or rtf is None or self.samples < min_samples or rtf >= threshold:
            return None
        self._warned = True
        fps = 1.0 / self.period_s
        return (
            f"the simulator runs at {rtf:.2f}x real time ({rtf * fps:.1f} of {fps:g} steps/s; "
            f"{self.step_ms:.0f} ms per step inside it): wall-clock consumers see it slower than the real robot. "
            "Render fewer or smaller images (cameras, render_width/height, camera_fps) or free CPU"
        )

    def values(self) -> dict[str, str]:
        """For /diagnostics."""

        def fmt(v, digits=3):
            return "nan" if v is None else f"{v:.{digits}f}"

        return {
            "real_time_factor": fmt(self.current),
            "real_time_factor_mean": fmt(self.mean),
            "steps_per_s": fmt(self.steps_per_s, 2),
            "target_steps_per_s": f"{1.0 / self.period_s:g}",
            "step_ms": fmt(self.step_ms, 1),
        }
