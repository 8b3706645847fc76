"""A LeRobot camera type for the footprint bench's LeRobot side: LeRobot's own OpenCVCamera on a video file, paced at
its fps and looping, as a real camera delivers frames (OpenCVCamera alone reads a file as fast as it decodes, then
fails at its end). Everything else (the read thread, colour conversion, async_read, the record loop) is LeRobot's.

Registered as `--robot.cameras='{front: {type: paced_file, index_or_path: FILE, fps: 30, width: W, height: H}}'`
by importing this module before lerobot-record parses its arguments (footprint_support/lerobot_record_paced.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import cv2
from lerobot.cameras.configs import CameraConfig
from lerobot.cameras.opencv import OpenCVCamera, OpenCVCameraConfig


@CameraConfig.register_subclass("paced_file")
@dataclass
class PacedFileCameraConfig(OpenCVCameraConfig):
    """OpenCVCameraConfig of a video file whose frames come at `fps`."""


class PacedFileCamera(OpenCVCamera):
    def __init__(self, config: PacedFileCameraConfig):
        super().__init__(config)
        self._next_frame_t: float | None = None

    def _configure_capture_settings(self) -> None:
        """A file has the size it has: check it instead of setting capture properties (a file refuses them)."""
        width = int(self.videocapture.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(self.videocapture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        if (self.capture_width, self.capture_height) != (width, height):
            raise RuntimeError(f"{self}: the file is {width}x{height}, not {self.capture_width}x{self.capture_height}")

    def _read_from_hardware(self):
        now = time.perf_counter()
        if self._next_frame_t is None:
            self._next_frame_t = now
        if self._next_frame_t > now:
            time.sleep(self._next_frame_t - now)
        self._next_frame_t = max(self._next_frame_t + 1.0 / self.fps, time.perf_counter() - 1.0 / self.fps)
        ok, frame = self.videocapture.read()
        if not ok:  # the end of the file: start over, as a camera never runs out
            self.videocapture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, frame = self.videocapture.read()
        if not ok:
            raise RuntimeError(f"{self} read failed")
        return frame
