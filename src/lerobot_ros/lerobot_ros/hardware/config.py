"""Settings of the hardware nodes (robot_node, teleop_node, motor_bus_node, camera_node, image_republish_node),
declared once: node parameters, launch-file checks and the reference tables come from these dataclasses.

Robot and teleoperator settings carry LeRobot's names (`robot.type`, `robot.port`, `robot.id`,
`teleop.type` ... as `lerobot-record --robot.type=so101_follower --robot.port=...` spells them).
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param
from lerobot_ros.conventions.images import DEFAULT_JPEG_QUALITY, JPEG_QUALITY_RANGE


@dataclass(frozen=True)
class ArmLoopConfig:
    """What robot_node and motor_bus_node share: the loop, the watchdog, shutdown, diagnostics."""

    fps: float = param(
        30.0,
        "control loop rate: read, write and publish joint_states",
        unit="Hz",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    watchdog_s: float = param(
        0.5,
        "no command for this long -> hold the present position",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    torque_off_on_shutdown: bool = param(True, "switch torque off when the node stops", reconfigurable=True)
    frame_id: str = param("", "frame_id of joint_states")
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )


@dataclass(frozen=True)
class RobotNodeConfig(ArmLoopConfig):
    """robot_node: a LeRobot follower arm on its serial bus."""

    robot_port: str = param(
        "", "serial port of the arm's bus, e.g. /dev/ttyACM0 (a virtual-arm pty works too)", name="robot.port"
    )
    robot_type: str = param(
        "so101_follower",
        "LeRobot robot type (so100_follower, so101_follower, koch_follower, omx_follower, any single-bus LeRobot arm)",
        name="robot.type",
    )
    robot_id: str = param(
        "follower", "LeRobot robot id: names the calibration file in robot.calibration_dir", name="robot.id"
    )
    calibration_file: str = param(
        "", "LeRobot calibration JSON; '' = <robot.calibration_dir>/<robot.id>.json", name="robot.calibration_file"
    )
    calibration_dir: str = param(
        "", "folder of calibration files; '' = LeRobot's default", name="robot.calibration_dir"
    )
    max_relative_target: float = param(
        0.0,
        "LeRobot's max_relative_target: the largest step per command; 0 = off",
        unit="LeRobot units (degrees, gripper 0..100)",
        min=0.0,
        reconfigurable=True,
        name="robot.max_relative_target",
    )


@dataclass(frozen=True)
class TeleopNodeConfig:
    """teleop_node: a LeRobot leader arm driving a follower's commands."""

    teleop_type: str = param(
        "so101_leader", "LeRobot teleoperator type (so100_leader, so101_leader, koch_leader, ...)", name="teleop.type"
    )
    teleop_port: str = param("", "serial port of the leader arm, e.g. /dev/ttyACM1", name="teleop.port")
    teleop_id: str = param(
        "leader", "LeRobot teleoperator id: names the calibration file in teleop.calibration_dir", name="teleop.id"
    )
    calibration_file: str = param(
        "", "LeRobot calibration JSON; '' = <teleop.calibration_dir>/<teleop.id>.json", name="teleop.calibration_file"
    )
    calibration_dir: str = param(
        "", "folder of calibration files; '' = LeRobot's default", name="teleop.calibration_dir"
    )
    fps: float = param(
        30.0,
        "rate at which the leader is read and the action published",
        unit="Hz",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    commands_topic: str = param("/follower/commands", "the follower's commands topic (Float64MultiArray)")
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )


@dataclass(frozen=True)
class MotorBusConfig(ArmLoopConfig):
    """motor_bus_node: a raw Feetech / Dynamixel bus from a motor list."""

    port: str = param("", "serial port of the bus, e.g. /dev/ttyACM0 (a virtual-arm pty works too)")
    bus_type: str = param("feetech", "motor bus protocol", choices=("feetech", "dynamixel"))
    motor_names: list[str] = param(["joint1"], "joint names, in bus order (the joint_states order)")
    motor_ids: list[int] = param([1], "motor ids on the bus, one per name")
    motor_models: list[str] = param(["sts3215"], "motor models (e.g. sts3215, xl330-m288), one per name")
    calibration_file: str = param(
        "", "LeRobot calibration JSON; '' = the motors' own position limits and homing offset"
    )


@dataclass(frozen=True)
class CameraNodeConfig:
    source: str = param("0", "camera index (0), device path (/dev/video2), video file, or realsense:<serial or name>")
    camera_name: str = param("camera", "topic prefix: <camera_name>/image_raw, .../compressed, .../camera_info")
    fps: float = param(
        30.0,
        "publish rate (a device camera keeps the rate it was opened with)",
        unit="Hz",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    width: int = param(0, "image width; 0 = the source's own", unit="px", min=0)
    height: int = param(0, "image height; 0 = the source's own", unit="px", min=0)
    frame_id: str = param("", "frame_id of images and camera_info; '' = <camera_name>_optical_frame")
    publish_compressed: bool = param(True, "also offer <camera_name>/image_raw/compressed (jpeg)")
    jpeg_quality: int = param(
        DEFAULT_JPEG_QUALITY,
        "jpeg quality of the compressed topic (640x480 at 90: 20-60 kB a frame, bench/compressed.py)",
        min=JPEG_QUALITY_RANGE[0],
        max=JPEG_QUALITY_RANGE[1],
        reconfigurable=True,
    )
    qos: str = param("sensor", "QoS profile of the image topics: sensor (best effort) or reliable")
    loop: bool = param(False, "video files: start over at the end")
    hfov_deg: float = param(
        60.0,
        "horizontal field of view for camera_info's pinhole guess",
        unit="deg",
        min=0.0,
        max=180.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    max_missed: int = param(3, "missed frames in a row before the source is reopened", min=1, reconfigurable=True)
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )


@dataclass(frozen=True)
class RepublishConfig:
    in_topic: str = param("image_raw", "sensor_msgs/Image topic to read")
    out_topic: str = param("", "sensor_msgs/CompressedImage topic to publish; '' = <in_topic>/compressed")
    format: str = param("jpeg", "compression of the output", choices=("jpeg", "png"))
    jpeg_quality: int = param(
        DEFAULT_JPEG_QUALITY,
        "jpeg quality (640x480 at 90: 20-60 kB a frame, bench/compressed.py)",
        min=JPEG_QUALITY_RANGE[0],
        max=JPEG_QUALITY_RANGE[1],
        reconfigurable=True,
    )
    qos: str = param("sensor", "QoS profile of both topics: sensor (best effort) or reliable")
    lazy: bool = param(True, "subscribe to in_topic only while out_topic has a subscriber")
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )


@dataclass(frozen=True)
class BaseNodeConfig:
    """base_node: LeKiwi's omniwheel base (three Feetech wheel servos in velocity mode) on cmd_vel / odom.

    Limits are in ROS units (REP 103: m/s, rad/s), as nav2's velocity_smoother names them; LeRobot's
    `theta.vel` is deg/s (mobile.omni converts)."""

    port: str = param("", "serial port of the wheels' bus, e.g. /dev/ttyACM0 (a virtual base's pty works too)")
    wheel_ids: list[int] = param([7, 8, 9], "servo ids of the left, back and right wheels (LeKiwi: 7, 8, 9)")
    fps: float = param(
        50.0, "control loop rate: wheel goals out, wheel speeds in, odom", unit="Hz", min=0.0, min_exclusive=True
    )
    command_timeout_s: float = param(
        0.5, "no cmd_vel for this long -> the base stops", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )
    max_linear_velocity: float = param(
        0.4,
        "speed limit in the x/y plane (a faster command is scaled down, direction kept)",
        unit="m/s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    max_angular_velocity: float = param(
        1.5708, "yaw rate limit", unit="rad/s", min=0.0, min_exclusive=True, reconfigurable=True
    )
    max_linear_acceleration: float = param(
        1.0, "how fast the commanded speed may change", unit="m/s^2", min=0.0, min_exclusive=True, reconfigurable=True
    )
    max_angular_acceleration: float = param(
        6.2832,
        "how fast the commanded yaw rate may change",
        unit="rad/s^2",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    wheel_radius: float = param(0.05, "wheel radius (LeRobot's LeKiwi: 0.05)", unit="m", min=0.0, min_exclusive=True)
    base_radius: float = param(
        0.125,
        "distance from the base's centre to each wheel (LeRobot's LeKiwi: 0.125)",
        unit="m",
        min=0.0,
        min_exclusive=True,
    )
    odom_frame: str = param("odom", "frame_id of odom (REP 105)")
    base_frame: str = param("base_link", "child_frame_id of odom (REP 105)")
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )


@dataclass(frozen=True)
class BimanualNodeConfig:
    """bimanual_node: two arms (each its own robot_node) as one robot with LeRobot's bi_so_follower joint names."""

    left_namespace: str = param("/left", "namespace of the left arm's robot_node (its joint_states and commands)")
    right_namespace: str = param("/right", "namespace of the right arm's robot_node")
    stale_s: float = param(
        0.5,
        "an arm whose joint_states stopped this long stops the pair: commands are refused, both arms hold",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )


@dataclass(frozen=True)
class LeKiwiRobotConfig:
    """lekiwi_node's `robot` node: the arm and the base as LeRobot's lekiwi vector (robot_state, robot_commands)."""

    stale_s: float = param(
        0.5,
        "the arm's joint_states or the base's odom stopped this long: commands are refused, the robot holds",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    diagnostics_period_s: float = param(
        1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )
