"""CameraDriver without ROS: real video files (written here with OpenCV) as the source, a file OpenCV cannot
open standing in for a camera that is not there yet, and one deleted while running."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from lerobot_ros.hardware.camera import CameraSourceError
from lerobot_ros.hardware.camera_driver import CameraDriver
from lerobot_ros.hardware.health import Backoff

N, W, H = 5, 32, 24


def write_video(path, n=N):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (W, H))
    for i in range(n):
        frame = np.zeros((H, W, 3), np.uint8)
        frame[:, :, 2] = 40 * i
        writer.write(frame)
    writer.release()


def no_wait() -> Backoff:
    return Backoff(initial_s=0.0, factor=1.0, max_s=0.0)


class Log:
    def __init__(self):
        self.lines: list[tuple[str, str]] = []

    def warning(self, text):
        self.lines.append(("warning", text))

    def error(self, text):
        self.lines.append(("error", text))


def test_frames_then_missed_frames_then_reopen(tmp_path):
    path = tmp_path / "clip.avi"
    write_video(path)
    log = Log()
    driver = CameraDriver(
        str(path), 30.0, max_missed=2, backoff=no_wait(), log=log, clock=iter(range(100, 10**6)).__next__
    )
    assert driver.connect() and driver.size == (W, H) and driver.health.connected
    frames = [driver.poll() for _ in range(N)]
    assert all(f is not None for f in frames)
    assert [round(int(f[0][0, 0, 0]) / 40) for f in frames] == list(range(N))  # red channel = frame index, in order
    assert [f[1] for f in frames] == sorted(f[1] for f in frames)
    assert driver.health.loops == N

    assert driver.poll() is None  # end of file: missed once, still open
    assert driver.source is not None and driver.health.consecutive_errors == 1
    assert driver.poll() is None  # max_missed in a row: closed, reopened on the next due poll
    assert driver.source is None and not driver.health.connected
    assert ("error", f"2 frames missed: reopening {path}") in log.lines
    again = driver.poll()
    assert again is not None and round(int(again[0][0, 0, 0]) / 40) == 0  # the file from its start
    assert driver.health.reconnects == 1 and driver.health.connected and driver.health.consecutive_errors == 0
    driver.close()
    assert driver.source is None


def test_a_source_that_cannot_be_opened_yet_is_retried_with_backoff(tmp_path):
    path = tmp_path / "late.avi"
    path.write_bytes(b"not a video yet")
    backoff = Backoff(initial_s=0.0, factor=1.0, max_s=0.0)
    log = Log()
    driver = CameraDriver(str(path), 30.0, backoff=backoff, log=log)
    assert driver.connect() is False
    assert driver.health.errors == 1 and "OpenCV cannot open video file" in driver.health.last_error
    assert backoff.attempts == 1 and log.lines[0][0] == "warning" and "retry in" in log.lines[0][1]
    assert driver.poll() is None and backoff.attempts == 2
    write_video(path)
    assert driver.poll() is not None
    assert driver.health.reconnects == 1 and driver.health.connected


def test_backoff_not_due_means_no_attempt(tmp_path):
    path = tmp_path / "late.avi"
    path.write_bytes(b"garbage")
    backoff = Backoff(initial_s=60.0)
    driver = CameraDriver(str(path), 30.0, backoff=backoff, log=Log())
    assert driver.connect() is False
    write_video(path)
    assert driver.poll() is None and backoff.attempts == 1  # next attempt only after 60 s


def test_bad_parameters_raise_at_connect_and_are_counted_while_running(tmp_path):
    with pytest.raises(CameraSourceError, match="does not exist"):
        CameraDriver(str(tmp_path / "nope.mp4"), 30.0).connect()
    path = tmp_path / "gone.avi"
    write_video(path, n=1)
    driver = CameraDriver(str(path), 30.0, max_missed=1, backoff=no_wait(), log=Log())
    assert driver.connect() and driver.poll() is not None
    path.unlink()
    assert driver.poll() is None  # end of the single frame: closed
    assert driver.poll() is None  # reopening fails: the file was deleted
    assert "does not exist" in driver.health.last_error and not driver.health.connected
