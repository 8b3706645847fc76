"""sensor_msgs/CameraInfo for cameras without a calibration (pinhole guess) and back to a dict."""

from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import CameraInfo

from lerobot_ros.codecs.time import ns_to_time


def make_camera_info(
    width: int,
    height: int,
    frame_id: str = "",
    fx: float | None = None,
    fy: float | None = None,
    cx: float | None = None,
    cy: float | None = None,
    hfov_deg: float = 60.0,
    stamp_ns: int | None = None,
) -> CameraInfo:
    """A plumb_bob CameraInfo with zero distortion; focal length from `hfov_deg` unless given."""
    if width <= 0 or height <= 0:
        raise ValueError(f"camera size must be positive, got {width}x{height}")
    if fx is None:
        fx = (width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    fy = fx if fy is None else fy
    cx = (width - 1) / 2.0 if cx is None else cx
    cy = (height - 1) / 2.0 if cy is None else cy
    msg = CameraInfo()
    if stamp_ns is not None:
        msg.header.stamp = ns_to_time(stamp_ns)
    msg.header.frame_id = frame_id
    msg.width, msg.height = int(width), int(height)
    msg.distortion_model = "plumb_bob"
    msg.d = [0.0] * 5
    msg.k = np.array([fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0])
    msg.r = np.eye(3).reshape(-1)
    msg.p = np.array([fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0])
    return msg


def camera_info_to_dict(msg) -> dict:
    """Plain values of a CameraInfo: width, height, distortion model, D, K (3x3), R (3x3), P (3x4)."""
    return {
        "width": int(msg.width),
        "height": int(msg.height),
        "frame_id": msg.header.frame_id,
        "distortion_model": msg.distortion_model,
        "d": np.asarray(msg.d, dtype=np.float64),
        "k": np.asarray(msg.k, dtype=np.float64).reshape(3, 3),
        "r": np.asarray(msg.r, dtype=np.float64).reshape(3, 3),
        "p": np.asarray(msg.p, dtype=np.float64).reshape(3, 4),
    }
