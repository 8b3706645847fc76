"""A camera source kept alive: open, read, count missed frames, reopen with backoff (like ArmDriver for arms).

`poll()` never raises for a device problem: a missing frame is counted in `health`; after `max_missed`
in a row the source is closed and reopened with exponential backoff. A parameter that cannot work
(CameraSourceError: empty source, missing file, no pyrealsense2) propagates from `connect()` at start-up
and is counted like any other failure once running (e.g. the video file was deleted).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol, cast

import numpy as np

from lerobot_ros.hardware.camera import CameraSourceError, open_camera_source
from lerobot_ros.hardware.health import Backoff, Health

_log = logging.getLogger(__name__)


class CameraSource(Protocol):
    """What the driver uses of an open source (hardware.camera's sources, or a test's fake)."""

    width: int
    height: int

    def read(self) -> tuple[np.ndarray, int] | None: ...

    def close(self) -> None: ...


class CameraDriver:
    """Frames from `open_camera_source(spec, ...)`; `opener` is replaceable so tests can drive the state machine."""

    def __init__(
        self,
        spec: str,
        fps: float,
        width: int = 0,
        height: int = 0,
        loop: bool = False,
        clock: Callable[[], int] = time.time_ns,
        max_missed: int = 3,
        backoff: Backoff | None = None,
        opener: Callable[..., CameraSource] = open_camera_source,
        log=None,
        warn_period_s: float = 1.0,
    ):
        self.spec, self.fps, self.width, self.height, self.loop, self.clock = spec, fps, width, height, loop, clock
        self.max_missed = max_missed
        self.backoff = backoff or Backoff()
        self.opener = opener
        self.log = log or _log
        self.warn_period_s = warn_period_s
        self.health = Health()
        self.source: CameraSource | None = None
        self._next_warning = 0.0

    @property
    def size(self) -> tuple[int, int] | None:
        """(width, height) of the open source, None while closed."""
        return None if self.source is None else (self.source.width, self.source.height)

    def connect(self) -> bool:
        """Open the source; CameraSourceError (a bad parameter) propagates, device errors are retried."""
        try:
            self.source = self.opener(self.spec, self.fps, self.width, self.height, self.loop, clock=self.clock)
        except CameraSourceError:
            raise
        except Exception as exc:  # noqa: BLE001 - a device that is not there (yet): retry with backoff
            delay = self.backoff.failed()
            self.log.warning(f"cannot open camera {self.spec}: {self.health.error(exc)}; retry in {delay:.1f} s")
            return False
        self.backoff.succeeded()
        if self.health.errors:
            self.health.reconnects += 1
        self.health.connected = True
        return True

    def poll(self) -> tuple[np.ndarray, int] | None:
        """One tick: reopen when due, read a frame; (rgb frame, capture ns) or None when there is none."""
        if self.source is None:
            if not self.backoff.due():
                return None
            try:
                if not self.connect():
                    return None
            except CameraSourceError as exc:  # e.g. the video file was deleted while running
                self.health.error(exc)
                self.backoff.failed()
                return None
        error: Exception | str
        try:
            item = cast(CameraSource, self.source).read()  # open, or connect() just opened it
        except Exception as exc:  # noqa: BLE001
            item, error = None, exc
        else:
            error = "no frame from the camera"
        if item is None:
            self._missed(error)
            return None
        self.health.ok()
        self.health.tick()
        return item

    def _missed(self, error) -> None:
        text = self.health.error(error)
        now = time.monotonic()
        if now >= self._next_warning:
            self._next_warning = now + self.warn_period_s
            self.log.warning(text)
        if self.health.consecutive_errors >= self.max_missed:
            self.log.error(f"{self.health.consecutive_errors} frames missed: reopening {self.spec}")
            self._drop()
            self.backoff.failed()

    def _drop(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None
        self.health.connected = False

    def close(self) -> None:
        """Release the source (idempotent)."""
        self._drop()
