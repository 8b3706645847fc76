"""`--teleop.type=ros_contract`: a leader already on ROS topics as a LeRobot teleoperator."""

from lerobot_ros.plugins.teleop.config_ros_contract_teleop import TELEOP_TYPE, RosContractTeleopConfig
from lerobot_ros.plugins.teleop.ros_contract_teleop import RosContractTeleop

__all__ = ["TELEOP_TYPE", "RosContractTeleop", "RosContractTeleopConfig"]
