"""Layer 3: rosbag2 read/write with `rosbags` (no ROS install), truncated-MCAP recovery, bag -> episodes.

- `BagReader` / `open_bag(path)` -> `BagMessage`s: folders (split files), bare .mcap/.db3, zstd, versions 1 to 9; truncated MCAP
  read front to back.
- `recover_mcap(src, dst) -> RecoveryReport`: a readable copy of a truncated MCAP.
- `BagWriter`, `write_bag(path, messages)`: bags from rclpy messages (export, tests).
"""

from lerobot_ros.bag.errors import BagError
from lerobot_ros.bag.layout import find_bags
from lerobot_ros.bag.mcap_stream import RecoveryReport, recover_mcap
from lerobot_ros.bag.reader import BagMessage, BagReader, TopicInfo, open_bag
from lerobot_ros.bag.typestore import make_typestore
from lerobot_ros.bag.writer import BagWriter, write_bag
from lerobot_ros.codecs.cdr import header_stamp_ns

__all__ = [
    "BagError",
    "BagMessage",
    "BagReader",
    "BagWriter",
    "RecoveryReport",
    "TopicInfo",
    "find_bags",
    "header_stamp_ns",
    "make_typestore",
    "open_bag",
    "recover_mcap",
    "write_bag",
]
