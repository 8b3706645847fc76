"""LeRobot imports this module by the distribution's name; the import registers `type: ros_image` for LeRobot cameras."""

from lerobot_ros.plugins.camera import RosImageCamera, RosImageCameraConfig

__all__ = ["RosImageCamera", "RosImageCameraConfig"]
