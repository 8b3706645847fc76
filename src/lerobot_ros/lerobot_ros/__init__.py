"""lerobot_ros: the LeRobot robot-learning workflow on ROS 2 topics.

Layers, inner to outer (an inner layer never imports an outer one):
codecs -> contract -> bag -> nodes -> cli/launch.
"""

__version__ = "0.1.0"
