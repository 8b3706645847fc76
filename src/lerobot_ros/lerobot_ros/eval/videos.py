"""Episode videos with LeRobot's own writer (PyAV, libx264), as lerobot-eval writes them."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np


class VideoWriter:
    """Writes videos in background threads (encoding must not hold up the next episode)."""

    def __init__(self, fps: float):
        self.fps = fps
        self._threads: list[threading.Thread] = []
        self.errors: list[str] = []
        self.failed: set[str] = set()  # paths write() returned whose encoding failed (no file there)

    def write(self, path: Path, frames: list[np.ndarray]) -> str | None:
        if not frames:
            return None
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        t = threading.Thread(target=self._write, args=(path, frames), daemon=True)
        t.start()
        self._threads.append(t)
        return str(path)

    def _write(self, path: Path, frames: list[np.ndarray]) -> None:
        from lerobot.utils.io_utils import write_video

        tmp = path.with_name(f".{path.name}.part.mp4")
        try:
            write_video(str(tmp), np.stack(frames), int(round(self.fps)))
            tmp.replace(path)
        except Exception as exc:  # noqa: BLE001 - reported in the summary, the evaluation stands
            tmp.unlink(missing_ok=True)
            self.errors.append(f"{path.name}: {type(exc).__name__}: {exc}")
            self.failed.add(str(path))

    def join(self) -> None:
        for t in self._threads:
            t.join()
        self._threads.clear()
