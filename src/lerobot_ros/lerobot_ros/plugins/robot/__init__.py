"""`--robot.type=ros_contract`: a LeRobot Robot whose observations and actions are a contract's ROS topics."""

from lerobot_ros.plugins.robot.config_ros_contract_robot import ROBOT_TYPE, RosContractRobotConfig
from lerobot_ros.plugins.robot.ros_contract_robot import RosContractRobot

__all__ = ["ROBOT_TYPE", "RosContractRobot", "RosContractRobotConfig"]
