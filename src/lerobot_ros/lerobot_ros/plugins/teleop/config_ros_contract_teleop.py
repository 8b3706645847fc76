"""The teleoperator plugin's config, registered with LeRobot as `ros_contract` (`--teleop.type=ros_contract`).

A leader (arm, keyboard or gamepad teleop) that is already on ROS topics, e.g. `teleop_node` on another host:
its joint states (or the commands it sends) become the action of the robot the contract describes, in that
contract's LeRobot names and units. LeRobot finds the device class from this class's name and module
(`RosContractTeleopConfig` -> `RosContractTeleop` in `lerobot_ros.plugins.teleop`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot.teleoperators.config import TeleoperatorConfig

TELEOP_TYPE = "ros_contract"
SOURCE_TYPES = ("sensor_msgs/msg/JointState", "std_msgs/msg/Float64MultiArray")


@TeleoperatorConfig.register_subclass(TELEOP_TYPE)
@dataclass(kw_only=True)
class RosContractTeleopConfig(TeleoperatorConfig):
    """`contract`: the robot's contract (a shipped name or a path); the action comes out in its names and units.
    `topic` / `msg_type`: the leader's joint states (sensor_msgs/msg/JointState, read by joint name, radians) or
    a command stream in the action topic's layout (std_msgs/msg/Float64MultiArray, e.g. another teleop's
    `commands`). `max_age_s`: the oldest message `get_action()` accepts; an older one raises, naming the topic.
    """

    contract: str = "so101"
    topic: str = "/leader/joint_states"
    msg_type: str = "sensor_msgs/msg/JointState"
    max_age_s: float = 0.5
    connect_timeout_s: float = 10.0
    domain_id: int | None = None
    qos: str = "sensor"

    def __post_init__(self) -> None:
        if self.msg_type not in SOURCE_TYPES:
            raise ValueError(f"msg_type must be one of {', '.join(SOURCE_TYPES)}, got {self.msg_type!r}")
        if self.max_age_s <= 0:
            raise ValueError(f"max_age_s must be > 0, got {self.max_age_s}")
