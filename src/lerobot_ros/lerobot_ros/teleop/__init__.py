"""End-effector teleoperation without a leader arm: gamepad (sensor_msgs/Joy) or terminal keys give tool-tip
velocities, which become joint targets through the arm's URDF kinematics (`lerobot_ros.viz`)."""

from lerobot_ros.teleop.ee_jog import EndEffectorJog, JogLimits
from lerobot_ros.teleop.inputs import InputWatch, JoyMapping, KeyJog, TeleopCommand

__all__ = ["EndEffectorJog", "JogLimits", "JoyMapping", "KeyJog", "TeleopCommand", "InputWatch"]
