"""Settings of the smoke-test pair (talker, listener), declared once."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param


@dataclass(frozen=True)
class TalkerConfig:
    fps: float = param(
        30.0,
        "publish rate of the joint state and the image",
        unit="Hz",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    width: int = param(640, "synthetic image width", unit="px", min=1)
    height: int = param(480, "synthetic image height", unit="px", min=1)
    frame_id: str = param("camera_optical_frame", "frame_id of the image and camera_info")


@dataclass(frozen=True)
class ListenerConfig:
    count: int = param(
        0, "exit with a JSON summary after this many joint states and images; 0 = run on", min=0, reconfigurable=True
    )
