"""LeRobot imports this module by the distribution's name; the import registers `--teleop.type=ros_contract`."""

from lerobot_ros.plugins.teleop import RosContractTeleop, RosContractTeleopConfig

__all__ = ["RosContractTeleop", "RosContractTeleopConfig"]
