"""Frame sources for camera_node: LeRobot's cameras for devices, a paced reader for video files.

A source returns `(rgb_frame, capture_ns)` or None when no frame came. Capture time is taken when
the frame left the device (LeRobot's read thread records it) or, for a file, when it was decoded.
LeRobot's OpenCV camera reads a video file as fast as it decodes (its read thread free-runs), so files
use `VideoFileSource`, which hands out one frame per call and lets the node's timer set the pace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from lerobot_ros.conventions.errors import UserError

VIDEO_SUFFIXES = {".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg"}


class CameraSourceError(UserError, ValueError):
    """A camera parameter that cannot work; the message says what to change."""


class VideoFileSource:
    """Frames of a video file, one per `read()`, resized to (width, height) when those are given."""

    def __init__(
        self, path: str, width: int = 0, height: int = 0, loop: bool = False, clock: Callable[[], int] = time.time_ns
    ):
        self.path, self.loop, self.clock = str(path), loop, clock
        self.capture = cv2.VideoCapture(self.path)
        if not self.capture.isOpened():
            raise ConnectionError(f"OpenCV cannot open video file {self.path}")
        native_w = int(self.capture.get(cv2.CAP_PROP_FRAME_WIDTH))
        native_h = int(self.capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        self.width, self.height = (width or native_w), (height or native_h)
        self.file_fps = float(self.capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.frames_read = 0

    def read(self) -> tuple[np.ndarray, int] | None:
        ok, bgr = self.capture.read()
        if not ok and self.loop and self.frames_read:
            self.capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, bgr = self.capture.read()
        if not ok:
            return None
        stamp = self.clock()
        if bgr.shape[1] != self.width or bgr.shape[0] != self.height:
            bgr = cv2.resize(bgr, (self.width, self.height), interpolation=cv2.INTER_AREA)
        self.frames_read += 1
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), stamp

    def close(self) -> None:
        self.capture.release()


class LeRobotCameraSource:
    """A LeRobot camera (OpenCV index/device path, or RealSense); frames from its read thread, stamped at capture."""

    def __init__(
        self,
        index_or_path,
        fps: float,
        width: int = 0,
        height: int = 0,
        clock: Callable[[], int] = time.time_ns,
        realsense: bool = False,
    ):
        size = dict(fps=int(fps) if fps else None, width=width or None, height=height or None)
        if realsense:
            from lerobot.cameras.realsense import RealSenseCamera, RealSenseCameraConfig

            self.camera = RealSenseCamera(RealSenseCameraConfig(serial_number_or_name=str(index_or_path), **size))
        else:
            from lerobot.cameras.opencv import OpenCVCamera, OpenCVCameraConfig

            self.camera = OpenCVCamera(OpenCVCameraConfig(index_or_path=index_or_path, **size))
        self.camera.connect()
        self.width, self.height = self.camera.width, self.camera.height
        self.clock = clock
        self._last_stamp = None

    def read(self, timeout_ms: float = 200) -> tuple[np.ndarray, int] | None:
        frame = self.camera.async_read(timeout_ms=timeout_ms)  # waits for a new frame (LeRobot's errors, timeout)
        with self.camera.frame_lock:  # the newest frame and its own stamp together: the read thread may have stored
            captured = self.camera.latest_timestamp  # the next frame since async_read returned
            latest = getattr(self.camera, "latest_frame", getattr(self.camera, "latest_color_frame", None))
        if latest is not None:
            frame = latest
        if captured == self._last_stamp:
            return None  # nothing new since the last call
        self._last_stamp = captured
        age_ns = int((time.perf_counter() - captured) * 1e9) if captured is not None else 0
        return frame, self.clock() - age_ns

    def close(self) -> None:
        if self.camera.is_connected:
            self.camera.disconnect()


def open_camera_source(
    source: str, fps: float, width: int = 0, height: int = 0, loop: bool = False, clock=time.time_ns
):
    """A source from a parameter string: a camera index ("0"), a device path (/dev/video2), a video file,
    or `realsense:<serial number or name>` (needs pyrealsense2)."""
    source = str(source).strip()
    if not source:
        raise CameraSourceError("parameter 'source' is empty: give a camera index (0), a device path or a video file")
    if source.startswith("realsense:"):
        import importlib.util

        if importlib.util.find_spec("pyrealsense2") is None:
            raise CameraSourceError(
                "RealSense sources need the pyrealsense2 package, which is not installed (pip install pyrealsense2)"
            )
        return LeRobotCameraSource(source.split(":", 1)[1], fps, width, height, clock, realsense=True)
    if source.isdigit():
        return LeRobotCameraSource(int(source), fps, width, height, clock)
    path = Path(source).expanduser()
    if path.is_file() or path.suffix.lower() in VIDEO_SUFFIXES:
        if not path.is_file():
            raise CameraSourceError(f"video file {path} does not exist")
        return VideoFileSource(str(path), width, height, loop, clock)
    if not path.exists():
        raise CameraSourceError(f"camera device {path} does not exist; list cameras with `lerobot-find-cameras opencv`")
    return LeRobotCameraSource(path, fps, width, height, clock)
