"""The robot in rerun, live and replayed (`lerobot-ros view`): a pip-only install has no rviz.

- layout: what is shown where (entity paths, blueprint), from a contract or a dataset's features;
- log: streams -> rerun (JPEG frames, scalar columns, chunk geometry, status panel, events);
- live: never-blocking hand-over from ROS callbacks to one logging thread (latest-only frames, rate cap);
- replay: a rosbag2 episode or a LeRobotDataset episode into the same layout;
- robot: URDF forward kinematics (lerobot_ros.viz) of the pose and the predicted chunk;
- serve: native viewer, served web viewer, or an .rrd file;
- screenshot: the served web viewer in headless Chromium over DevTools (tests, README).
The ROS node is lerobot_ros.nodes.viewer_node; none of these modules creates one.
"""

from lerobot_ros.processes.memory import purge_mimalloc_promptly

purge_mimalloc_promptly()  # before rerun (and its allocator) loads: see processes.memory

from lerobot_ros.viewer.layout import TIMELINE, JointPlot, ViewerLayout, camera_label, entity_paths  # noqa: E402
from lerobot_ros.viewer.live import LatestSlots, LiveFeed, RateGate  # noqa: E402
from lerobot_ros.viewer.log import EpisodeInfo, ViewerLog  # noqa: E402
from lerobot_ros.viewer.replay import ReplayError, ReplayStats, is_dataset, replay_bag, replay_dataset, state_joints  # noqa: E402
from lerobot_ros.viewer.robot import RobotGeometry, load_robot  # noqa: E402
from lerobot_ros.viewer.serve import Endpoint, open_viewer, web_viewer_url  # noqa: E402

__all__ = [
    "TIMELINE",
    "Endpoint",
    "EpisodeInfo",
    "JointPlot",
    "LatestSlots",
    "LiveFeed",
    "RateGate",
    "ReplayError",
    "ReplayStats",
    "RobotGeometry",
    "ViewerLayout",
    "ViewerLog",
    "camera_label",
    "entity_paths",
    "is_dataset",
    "load_robot",
    "open_viewer",
    "replay_bag",
    "replay_dataset",
    "state_joints",
    "web_viewer_url",
]
