"""Convert rosbag2 recordings into a LeRobotDataset v3, per a topic contract.

Each bag is one episode (or several, where the contract's episode_boundary topic says so). With
--num_workers N, up to N processes read and decode bags while this one encodes them into a single dataset
(as many as the cores beyond the encoder's: none on 2 cores). With --executor ray, shards of the bags are
converted as Ray tasks (a local cluster, or --ray_address) and merged. Each episode is written whole or not
at all; bad bags are reported and skipped; the dataset is reloaded with LeRobotDataset as a check; a QA
report (JSON and a table) says per episode and stream what the resampler had to do. Ctrl-C keeps the
finished episodes. The work is `lerobot_ros.dataset.conversion.convert`.

  lerobot-ros convert recordings/ --contract so101 --dataset.root outputs/my_dataset
"""

from __future__ import annotations

import argparse
import sys

from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args
from lerobot_ros.dataset.config import ConvertConfig


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bags", nargs="+", help="bag folders, .mcap/.db3 files, or folders holding bags")
    add_config_arguments(p, ConvertConfig, exclude=("bags",), required=("contract", "dataset.root"))


def run(args) -> int:
    from lerobot_ros.dataset.converter import convert

    cfg = from_args(ConvertConfig, args, bags=list(args.bags))
    result = convert(cfg, say=lambda text: print(f"lerobot-ros convert: {text}", file=sys.stderr))
    print_result(result)
    if result.interrupted:
        return 130
    return 0 if result.ok else 1


def print_result(result) -> None:
    """The QA table, where the report and the dataset are, and what failed (shared with `record`)."""
    from lerobot_ros.dataset.qa import format_table

    if result.report.get("summary") is not None:
        print(format_table(result.report))
    if result.report_path is not None:
        print(f"QA report: {result.report_path}")
    if result.dataset is not None:
        print(f"dataset: {result.dataset} (repo id {result.repo_id})")
    elif result.interrupted:
        print("interrupted; nothing written", file=sys.stderr)
    else:
        print("no episode converted; no dataset written", file=sys.stderr)
    if result.uploaded:
        print(f"uploaded: {result.uploaded}")
    if result.upload_error:
        print(f"lerobot-ros convert: {result.upload_error}", file=sys.stderr)
