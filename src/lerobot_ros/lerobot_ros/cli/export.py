"""Export a LeRobotDataset to rosbag2 (MCAP) on a contract's topics, with message definitions and
metadata.yaml, for `ros2 bag play`, Foxglove or rviz, and for reading back with `rosbags`.

Without --contract the contract stored by `lerobot-ros convert` (meta/lerobot_ros_contract.yaml) is used.
Episodes go into one bag when the contract has an episode_boundary topic, else one bag per episode in
OUTPUT_DIR (`lerobot_ros.dataset.export.export`).

  lerobot-ros export --dataset.root outputs/my_dataset --output_dir outputs/my_dataset_bags
"""

from __future__ import annotations

import argparse

from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args
from lerobot_ros.dataset.config import ExportConfig


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, ExportConfig, required=("dataset.root", "output_dir"))


def run(args) -> int:
    from lerobot_ros.dataset.export import export

    written = export(from_args(ExportConfig, args))
    for path, frames in written.items():
        print(f"{path}: {len(frames)} episode(s), {sum(frames)} frame(s)")
    return 0
