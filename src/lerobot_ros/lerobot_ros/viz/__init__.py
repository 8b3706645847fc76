"""Visualisation helpers: URDF forward kinematics and rviz markers for a policy's predicted chunk."""

from lerobot_ros.viz.urdf_kinematics import Joint, UrdfError, UrdfModel, parse_urdf
from lerobot_ros.viz.chunk_markers import (
    JOINT_ZEROS,
    NAMESPACE,
    ChunkGeometry,
    MarkerStyle,
    chunk_geometry,
    chunk_markers,
    geometry_to_markers,
    urdf_positions,
)

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
    "parse_urdf",
    "urdf_positions",
]
