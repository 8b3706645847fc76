"""Settings of the visualisation nodes (chunk_markers_node, urdf_joint_states_node), declared once."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param
from lerobot_ros.viz import JOINT_ZEROS, MarkerStyle

DEFAULT_TIP = "gripper_frame_link"


@dataclass(frozen=True)
class ChunkMarkersConfig:
    robot_description: str = param("", "URDF text; '' = take it from the latched robot_description topic")
    tip_link: str = param(DEFAULT_TIP, "link whose path is drawn (SO-101: gripper_frame_link, the tool frame)")
    frame_id: str = param("", "frame of the markers; '' = the URDF's root link", reconfigurable=True)
    joint_zero: str = param(
        "mid_range",
        "mid_range: ROS 0 = middle of the URDF limits (the project's convention); "
        "urdf: positions are URDF joint values",
        choices=JOINT_ZEROS,
    )
    line_width: float = param(
        MarkerStyle.line_width, "width of the tip's path", unit="m", min=0.0, min_exclusive=True, reconfigurable=True
    )
    sphere_size: float = param(
        MarkerStyle.sphere_size,
        "diameter of the chunk's points",
        unit="m",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    ghost: bool = param(True, "draw the final pose's links", reconfigurable=True)


@dataclass(frozen=True)
class UrdfJointStatesConfig:
    robot_description: str = param("", "URDF text; '' = take it from the latched robot_description topic")
    joint_zero: str = param(
        "mid_range",
        "mid_range: ROS 0 = middle of the URDF limits (the project's convention); "
        "urdf: positions already are URDF values (pass-through)",
        choices=JOINT_ZEROS,
    )
