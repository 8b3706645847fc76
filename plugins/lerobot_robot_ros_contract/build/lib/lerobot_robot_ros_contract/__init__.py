"""LeRobot imports this module by the distribution's name; the import registers `--robot.type=ros_contract`."""

from lerobot_ros.plugins.robot import RosContractRobot, RosContractRobotConfig

__all__ = ["RosContractRobot", "RosContractRobotConfig"]
