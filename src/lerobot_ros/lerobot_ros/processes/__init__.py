"""Child processes supervised the one way every part of the project needs: own process group, output to a
log or a callback, stop escalated SIGINT -> SIGTERM -> SIGKILL (`supervisor.ChildProcess`). No ROS here, so
the launch runner, eval, the demo and the viewer's headless browser all use it."""

from lerobot_ros.processes.supervisor import CLEAN_STOP_CODES, ChildProcess

__all__ = ["CLEAN_STOP_CODES", "ChildProcess"]
