"""Visualisation helpers: URDF forward kinematics, rviz markers for a policy's predicted chunk, and
joint_states converted to URDF joint values for robot_state_publisher."""

from lerobot_ros.viz.chunk_markers import (
    JOINT_ZEROS,
    NAMESPACE,
    ChunkGeometry,
    MarkerStyle,
    chunk_geometry,
    chunk_markers,
    geometry_to_markers,
    joint_zero_offsets,
    urdf_positions,
)
from lerobot_ros.viz.joint_states import urdf_joint_state
from lerobot_ros.viz.urdf_kinematics import Joint, UrdfError, UrdfModel, parse_urdf

__all__ = [
    "JOINT_ZEROS",
    "NAMESPACE",
    "ChunkGeometry",
    "Joint",
    "MarkerStyle",
    "UrdfError",
    "UrdfModel",
    "chunk_geometry",
    "chunk_markers",
    "geometry_to_markers",
    "joint_zero_offsets",
    "parse_urdf",
    "urdf_joint_state",
    "urdf_positions",
]
