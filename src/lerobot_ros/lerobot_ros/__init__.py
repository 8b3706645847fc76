"""lerobot_ros: the LeRobot robot-learning workflow on ROS 2 topics.

The layers (an inner one never imports an outer one) are drawn in docs/explanation/architecture.md and held
by tests/unit/test_layers.py. The version has one source, src/lerobot_ros/package.xml, read by setup.py.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lerobot_ros")
except PackageNotFoundError:  # a source tree on sys.path without an install
    __version__ = "unknown"
