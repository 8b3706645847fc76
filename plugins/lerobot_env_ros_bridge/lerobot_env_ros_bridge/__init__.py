"""LeRobot imports this module by the distribution's name; the import registers `--env.type=ros_bridge`."""

from lerobot_ros.plugins.env import RosBridgeEnv, RosBridgeEnvConfig

__all__ = ["RosBridgeEnv", "RosBridgeEnvConfig"]
