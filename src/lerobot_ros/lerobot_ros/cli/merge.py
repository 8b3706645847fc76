"""Join LeRobotDatasets into one with LeRobot's own aggregation (no re-encoding), e.g. the parts of a
sharded conversion (`lerobot-ros convert --num_shards K --shard_index I` run as K batch jobs).

Parts are joined in the order given; their conversion QA reports (meta/lerobot_ros_qa.json) are merged
into one with the episode numbers of the joined dataset. The output is built in a `.partial` folder and
renamed when the joined dataset has reloaded with the expected episodes (`lerobot_ros.dataset.merge`).

  lerobot-ros merge shard_0 shard_1 --dataset.root outputs/joined
"""

from __future__ import annotations

import argparse

from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args
from lerobot_ros.dataset.config import MergeConfig


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("parts", nargs="+", help="LeRobotDataset folders to join, in this order")
    add_config_arguments(p, MergeConfig, exclude=("parts",), required=("dataset.root",))


def run(args) -> int:
    from lerobot_ros.dataset.conversion import QA_NAME
    from lerobot_ros.dataset.merge import merge
    from lerobot_ros.dataset.qa import format_table

    result = merge(from_args(MergeConfig, args, parts=list(args.parts)))
    if result.report is not None:
        print(format_table(result.report))
        print(f"QA report: {result.dataset / QA_NAME} ({result.reports} of {result.parts} parts had one)")
    print(f"dataset: {result.dataset} (repo id {result.repo_id}; {result.episodes} episodes from {result.parts} parts)")
    return 0
