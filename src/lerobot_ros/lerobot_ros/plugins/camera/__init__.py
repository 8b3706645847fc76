"""`type: ros_image`: a ROS 2 image topic as a LeRobot camera (inside any LeRobot robot's `cameras`)."""

from lerobot_ros.plugins.camera.config_ros_image_camera import CAMERA_TYPE, RosImageCameraConfig
from lerobot_ros.plugins.camera.ros_image_camera import RosImageCamera

__all__ = ["CAMERA_TYPE", "RosImageCamera", "RosImageCameraConfig"]
