"""The robot plugin's config, registered with LeRobot as `ros_contract` (`--robot.type=ros_contract`).

LeRobot finds the device class from this class's name and module (`RosContractRobotConfig` ->
`RosContractRobot` in `lerobot_ros.plugins.robot`); a name no peer plugin registers (`ros2`, `rosetta` and
`so101_ros` are taken).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lerobot.cameras import CameraConfig
from lerobot.robots.config import RobotConfig

ROBOT_TYPE = "ros_contract"


@RobotConfig.register_subclass(ROBOT_TYPE)
@dataclass(kw_only=True)
class RosContractRobotConfig(RobotConfig):
    """A robot on ROS 2 topics, described by a contract (the file the recorder, converter and policy node read).

    `contract`: a shipped name (so101, so101_sim, koch, metaworld, libero, bi_so101, lekiwi) or a path to a contract YAML.
    `max_age_s`: the oldest observation `get_observation()` accepts; an older one raises, naming the topic.
    `connect_timeout_s`: how long `connect()` waits for every topic's publisher and first message.
    `domain_id`: the ROS domain (None: `ROS_DOMAIN_ID`, as every ROS 2 process).
    `check_on_create`: check the topics (and stay subscribed) as soon as the robot is made: lerobot-record
    creates its dataset folder before it connects, so a missing topic found then leaves no dataset behind.
    """

    contract: str = "so101"
    max_age_s: float = 0.5
    connect_timeout_s: float = 10.0
    domain_id: int | None = None
    check_on_create: bool = True
    # the images come from the contract's topics; LeRobot's own cameras are not used (kept for its CLIs)
    cameras: dict[str, CameraConfig] = field(default_factory=dict)
