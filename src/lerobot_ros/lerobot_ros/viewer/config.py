"""Settings of the rerun viewer (viewer_node, `lerobot-ros view`), declared once."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param


@dataclass(frozen=True)
class ViewerConfig:
    """viewer_node's parameters; all read-only (they shape the layout and the served viewer at start-up)."""

    contract: str = param("so101", "contract file or shipped name whose topics are shown")
    urdf: str = param("", "URDF text or file for the 3D view; '' = the SO-101 URDF for SO-101 contracts")
    tip_link: str = param("gripper_frame_link", "URDF link drawn as the gripper's path")
    joint_zero: str = param(
        "mid_range", "zero of joint_states: mid_range (this project's drivers) or urdf", choices=("mid_range", "urdf")
    )
    jpeg_quality: int = param(75, "JPEG quality of the frames sent to the viewer", min=1, max=100)
    max_image_hz: float = param(
        10.0, "frames per second shown per camera (the newest; others dropped); 0 = all", unit="Hz", min=0.0
    )
    window_s: float = param(10.0, "time window of the plots", unit="s", min=0.0, min_exclusive=True)
    viewer: str = param(
        "auto", "auto (native when a display and the rerun binary exist, else web), web, native, file or none"
    )
    web_port: int = param(9090, "port of the served web viewer", min=1, max=65535)
    grpc_port: int = param(9876, "port of rerun's gRPC server the web viewer reads", min=1, max=65535)
    memory_limit: str = param("25%", "rerun server memory limit (oldest data dropped beyond it)")
    save: str = param("", "also write the recording to this .rrd file ('' = no)")
    predicted_chunk: str = param("/policy/predicted_chunk", "the policy's predicted chunk (JointTrajectory)")
    diagnostics: str = param("/diagnostics", "diagnostics topic whose levels are plotted")
