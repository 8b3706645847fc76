"""`lerobot-eval --env.type=ros_bridge`: a simulator behind a ROS sim bridge as a LeRobot env."""

from lerobot_ros.plugins.env.bridge_env import RosBridgeEnv
from lerobot_ros.plugins.env.config_ros_bridge_env import ENV_TYPE, RosBridgeEnvConfig

__all__ = ["ENV_TYPE", "RosBridgeEnv", "RosBridgeEnvConfig"]
