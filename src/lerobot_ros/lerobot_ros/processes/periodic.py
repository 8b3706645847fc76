"""One mechanism for a process's housekeeping threads: call something every period until stopped.

Used by the heap trimmer (processes.memory) and the shutdown watch (ros.shutdown_watch). Not for control loops:
`hardware.control_loop.SteadyLoop` keeps a fixed rate and reports a tick's errors; this waits a full period
between calls and calls first one period after `start`."""

from __future__ import annotations

import threading
from collections.abc import Callable


class PeriodicThread:
    """A daemon thread calling `action()` every `period_s` seconds until `stop()`; `calls` counts the calls."""

    def __init__(self, action: Callable[[], object], period_s: float, name: str):
        self.action, self.period_s = action, period_s
        self.calls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.action()
            self.calls += 1

    def stop(self, timeout: float = 5.0) -> None:
        """Stop and join (an action under way finishes first). Idempotent."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)


__all__ = ["PeriodicThread"]
