"""Rolling latency/rate statistics for diagnostics (p50/p99 over a window of recent samples)."""

from __future__ import annotations

import threading
from collections import deque

import numpy as np


class RollingStats:
    """The last `window` samples of a quantity (e.g. milliseconds); thread-safe."""

    def __init__(self, window: int = 500):
        self._values: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()
        self.count = 0

    def add(self, value: float) -> None:
        with self._lock:
            self._values.append(float(value))
            self.count += 1

    def percentile(self, q: float) -> float | None:
        with self._lock:
            if not self._values:
                return None
            return float(np.percentile(np.fromiter(self._values, dtype=np.float64), q))

    def summary(self) -> dict[str, float | None]:
        return {"p50": self.percentile(50), "p99": self.percentile(99), "count": self.count}

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
