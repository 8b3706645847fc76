"""Bookkeeping behind /diagnostics and reconnects: loop rate, error counts, last error, backoff."""

from __future__ import annotations

import time
from collections import deque


class Backoff:
    """Exponential backoff between reconnect attempts: initial, x factor each failure, capped."""

    def __init__(self, initial_s: float = 0.5, factor: float = 2.0, max_s: float = 5.0):
        self.initial_s, self.factor, self.max_s = initial_s, factor, max_s
        self.delay_s = initial_s
        self.next_attempt = 0.0
        self.attempts = 0

    def due(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) >= self.next_attempt

    def failed(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        self.attempts += 1
        self.next_attempt = now + self.delay_s
        delay, self.delay_s = self.delay_s, min(self.max_s, self.delay_s * self.factor)
        return delay

    def succeeded(self) -> None:
        self.delay_s, self.next_attempt = self.initial_s, 0.0


class Health:
    """Counts loop ticks and errors; knows whether the device is connected and what failed last."""

    def __init__(self, window_s: float = 2.0):
        self.window_s = window_s
        self._ticks: deque[float] = deque()
        self.errors = 0
        self.consecutive_errors = 0
        self.last_error = ""
        self.connected = False
        self.reconnects = 0
        self.values: dict[str, str] = {}
        self.loops = 0  # completed loops since start: rates over any span from two diagnostics samples

    def tick(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.loops += 1
        self._ticks.append(now)
        while self._ticks and now - self._ticks[0] > self.window_s:
            self._ticks.popleft()

    def rate_hz(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        while self._ticks and now - self._ticks[0] > self.window_s:
            self._ticks.popleft()
        return len(self._ticks) / self.window_s

    def error(self, exc: BaseException | str) -> str:
        text = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        text = " ".join(str(text).split())[:300]
        self.errors += 1
        self.consecutive_errors += 1
        self.last_error = text
        return text

    def ok(self) -> None:
        self.consecutive_errors = 0
