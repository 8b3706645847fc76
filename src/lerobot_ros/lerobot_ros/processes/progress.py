"""A long child process's progress on this console: a bar with an ETA, read from the child's own log.

The demo runs its steps (lerobot-train, `lerobot-ros convert`, `lerobot-ros eval`) as child processes whose
output goes to log files; `LogProgress` follows such a log while the child runs and moves a tqdm bar on
stderr from what the child already writes there (lerobot-train's `step:N`, eval's `[k/n]`, a tqdm bar's
`k/n [`). The child needs no change and the log keeps everything; without a terminal the bar is off.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

#: what the project's children write: lerobot-train's log lines, eval's episode lines, a tqdm bar
TRAIN_STEP = r"\bstep:(\d+)"
EVAL_EPISODE = r"^\[(\d+)/(\d+)\]"
TQDM_COUNT = r"(\d+)/(\d+) \["


class LogProgress:
    """Follow `log` while a child writes it; each match of `pattern` (group 1: done, optional group 2: total)
    moves a bar described `desc`. A context manager: the bar closes (and the thread stops) on exit."""

    def __init__(
        self,
        log: str | Path,
        pattern: str,
        total: int | None,
        desc: str,
        unit: str = "it",
        enabled: bool | None = None,
        poll_s: float = 0.5,
    ):
        self.log, self.pattern = Path(log), re.compile(pattern, re.MULTILINE)
        self.total, self.desc, self.unit, self.poll_s = total, desc, unit, poll_s
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = None
        self._offset = 0
        self._tail = ""

    def __enter__(self) -> LogProgress:
        if self.enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=self.desc, unit=self.unit, file=sys.stderr, dynamic_ncols=True)
            self._thread = threading.Thread(target=self._follow, name=f"progress-{self.desc}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.read()  # what the child wrote last
        if self._bar is not None:
            self._bar.close()

    def _follow(self) -> None:
        while not self._stop.wait(self.poll_s):
            self.read()

    def read(self) -> int:
        """Take what the log gained since the last read; the count of done items so far."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:  # not created yet
            return self.done
        self._offset += len(chunk)
        text = self._tail + chunk.decode(errors="replace").replace("\r", "\n")
        text, _, self._tail = text.rpartition("\n")  # a partial last line waits for the rest
        for m in self.pattern.finditer(text):
            self._update(int(m.group(1)), int(m.group(2)) if m.lastindex and m.lastindex >= 2 else None)
        return self.done

    def _update(self, done: int, total: int | None) -> None:
        if total is not None and total != self.total:
            self.total = total
            if self._bar is not None:
                self._bar.total = total
        if done > self.done:
            if self._bar is not None:
                self._bar.update(done - self.done)
            self.done = done
